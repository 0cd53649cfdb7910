/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna across DPDK processes. The PCI function (and so every register) is
 * the primary process's; a secondary attaches to the primary's ports, maps
 * their GTT window and doorbell BAR from the files the primary passes, and
 * drives queues with the real burst functions. It asks the primary, over
 * EAL's multi-process channel, for what only the device knows: statistics
 * and the link.
 */
#pragma once

struct rte_eth_dev;
struct rte_vdev_device;

namespace cna::net {

/* Primary: every probed port holds the request handler, registered with
 * the first and unregistered with the last. */
void mp_primary_hold();
void mp_primary_release();
/* Primary: tells the secondaries a port's queues start (after dev_start
 * chose its bursts) or stop (before dev_stop tears them down), so their
 * bursts follow. */
void mp_primary_rxtx(rte_eth_dev* dev, bool started);

/* Secondary: attaches to the port the primary probed under the vdev's name. */
int mp_secondary_probe(rte_vdev_device* vdev);

} // namespace cna::net
