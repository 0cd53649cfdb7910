/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna across DPDK processes. The adapter (and so every register) lives in
 * the primary process; a secondary attaches to the primary's ports and asks
 * the primary, over EAL's multi-process channel, for what only the adapter
 * knows: statistics and the link.
 */
#pragma once

struct rte_vdev_device;

namespace cna::pmd {

/* Primary: every probed port holds the request handler, registered with
 * the first and unregistered with the last. */
void mp_primary_hold();
void mp_primary_release();

/* Secondary: attaches to the port the primary probed under the vdev's name. */
int mp_secondary_probe(rte_vdev_device* vdev);

} // namespace cna::pmd
