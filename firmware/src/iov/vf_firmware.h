/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' view of one VF: its one vport, its queues and filters, which
 * only its PF's ramrods change (hsi_iov.h: vf_vport), served with the VF's
 * own DMA, status blocks, GTT page (Rx producers, statistics) and doorbell
 * page; and its RDMA, whose slowpath queue, RoCE firmware and objects are
 * its own (hsi_iov.h: RDMA on a VF). A violation of a queue's protocol or
 * of its SPQ's makes the VF malicious: its queues stop being served at once
 * and its PF is told.
 */
#pragma once

#include <cstdint>
#include <functional>

#include "hsi_iov.h"
#include "l2/function_firmware.h"
#include "roce/roce_firmware.h"
#include "slowpath/slowpath_queue.h"

namespace cna::fw {

/* What one VF may be granted: the storms hold its ramrods to it. */
inline constexpr Grant VF_GRANT{.num_sbs = hsi::iov::MAX_VF_SBS,
                                .num_rx_queues = hsi::iov::MAX_VF_QUEUES,
                                .num_tx_queues = hsi::iov::MAX_VF_QUEUES,
                                .num_vports = 1,
                                .num_mac_filters = hsi::iov::MAX_VF_MAC_FILTERS + hsi::iov::MAX_VF_MCAST_FILTERS,
                                .num_vlan_filters = hsi::iov::MAX_VF_VLAN_FILTERS,
                                .num_rdma_qps = hsi::iov::VF_RDMA_QPS,
                                .num_tids = hsi::iov::VF_RDMA_TIDS,
                                .num_dpis = hsi::iov::VF_DPI + 1};

class VfFirmware final : public FunctionFirmware, private SlowpathQueue::Storm {
public:
    /* Engine thread of the VF, or the slowpath: it broke a protocol (what:
     * which, for the log and its PF). */
    using Malicious = std::function<void(uint32_t vf, const char* what)>;

    VfFirmware(FunctionHw& hw, StormRam& ram, Storms& storms, PtpClock& clock, Malicious on_malicious);

    uint32_t vf() const { return hw_.vf_id(); }
    roce::RoceFirmware& roce() { return roce_; }
    /* Its RDMA slowpath (engine thread 0, slowpath lock held; pending()
     * lock-free). */
    SlowpathQueue& spq() { return spq_; }
    /* Its BAR0's slowpath registers, by their STORM_PF twins' addresses
     * (slowpath lock held). */
    bool read(uint32_t addr, uint32_t& value) const { return spq_.read(addr - hsi::reg::STORM_PF_BASE, value); }
    bool write(uint32_t addr, uint32_t value) { return spq_.write(addr - hsi::reg::STORM_PF_BASE, value); }
    /* Every engine thread held: the VF's objects forgotten, its RDMA
     * slowpath back at power-on (FLR, disable, malice). */
    void reset();

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

    /* SlowpathQueue::Storm */
    hsi::FwReturn start(const hsi::PfStartRamrodData& d) override;
    void stopped() override {}
    hsi::FwReturn execute(const hsi::SlowPathElement& elem, uint64_t& data) override;
    void fw_assert(uint32_t code) override;
    /* Nothing of it served from now on; the PF is told. */
    void mark_malicious(const char* what);

    const Malicious on_malicious_;
    SlowpathQueue spq_;
    roce::RoceFirmware roce_;
};

} // namespace cna::fw
