/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' view of one VF: its one vport, its queues and filters, which
 * only its PF's ramrods change (hsi_iov.h: vf_vport), served with the VF's
 * own DMA, status blocks, GTT page (Rx producers, statistics) and doorbell
 * page. A queue protocol violation makes the VF malicious: its queues stop
 * being served at once and its PF is told.
 */
#pragma once

#include <cstdint>
#include <functional>

#include "hsi_iov.h"
#include "l2/function_firmware.h"

namespace cna::fw {

/* What one VF may be granted: the storms hold its ramrods to it. */
inline constexpr Grant VF_GRANT{hsi::iov::MAX_VF_SBS,         hsi::iov::MAX_VF_QUEUES,
                                hsi::iov::MAX_VF_QUEUES,      1,
                                hsi::iov::MAX_VF_MAC_FILTERS + hsi::iov::MAX_VF_MCAST_FILTERS,
                                hsi::iov::MAX_VF_VLAN_FILTERS};

class VfFirmware final : public FunctionFirmware {
public:
    /* Engine thread of the VF: its queues broke their protocol. */
    using Malicious = std::function<void(uint32_t vf, hsi::QueueKind kind, uint32_t queue, hsi::QueueError why)>;

    VfFirmware(FunctionHw& hw, StormRam& ram, Malicious on_malicious);

    uint32_t vf() const { return hw_.vf_id(); }
    /* Every engine thread held: the VF's objects forgotten (FLR, disable,
     * malice). */
    void reset() { reset_l2(); }

    void queue_error(hsi::QueueKind kind, uint32_t queue, hsi::QueueError why) override;

private:
    hsi::eth::VportStats& vport_stats(uint32_t vport) override;
    hsi::eth::QueueStats& rx_queue_stats(uint32_t queue) override;
    hsi::eth::QueueStats& tx_queue_stats(uint32_t queue) override;
    hsi::FwReturn open_tx_connection(const hsi::eth::TxQueueStartRamrodData& d) override;
    void close_tx_connection(const TxQueue&, uint16_t) override {}
    template <typename T> T& in_page(uint32_t offset)
    {
        return *reinterpret_cast<T*>(const_cast<uint8_t*>(hw_.gtt_memory()) + offset);
    }

    const Malicious on_malicious_;
};

} // namespace cna::fw
