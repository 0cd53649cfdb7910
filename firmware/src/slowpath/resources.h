/* SPDX-License-Identifier: BSD-3-Clause
 * What the MFW grants each PF (published in SHMEM func[pf]); the storms
 * enforce the same numbers on ramrods.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "hsi_common.h"
#include "hsi_iov.h"
#include "hsi_rdma.h"

namespace cna::fw {

struct Grant {
    /* One per queue pair, and one per RDMA CNQ (RDMA takes the last ones). */
    uint32_t num_sbs = 16 + 8;
    uint32_t num_rx_queues = 16;
    uint32_t num_tx_queues = 16;
    uint32_t num_vports = hsi::MAX_VPORTS_PER_PF;
    uint32_t num_mac_filters = 32; /* MAC and MAC+VLAN entries */
    uint32_t num_vlan_filters = 16;
    /* RDMA: QPs, memory regions (TIDs) and doorbell pages (DPIs 0..n-1,
     * each one a CQ, QP or SRQ may ring). */
    uint32_t num_rdma_qps = hsi::rdma::MAX_QPS;
    uint32_t num_tids = hsi::rdma::MAX_TIDS;
    uint32_t num_dpis = hsi::MAX_DPIS;
};
static_assert(Grant{}.num_sbs <= hsi::MAX_SB_PER_PF && Grant{}.num_sbs >= Grant{}.num_rx_queues + hsi::rdma::MAX_CNQS &&
              Grant{}.num_rx_queues <= hsi::MAX_QUEUES_PER_PF &&
              Grant{}.num_tx_queues <= hsi::MAX_QUEUES_PER_PF);

inline constexpr uint32_t DEFAULT_MTU = 1500;
/* Every PF and every VF it can enable. */
inline constexpr std::size_t MAX_FUNCTIONS = hsi::MAX_PFS * (1 + hsi::iov::MAX_VFS_PER_PF);

} // namespace cna::fw
