/* SPDX-License-Identifier: BSD-3-Clause
 * Storm RAM: the storms' internal memory. Each PF's GTT page is GTT-mapped
 * into its BAR0, where the host writes Rx producers and the EQ consumer
 * with plain stores; the page is a file of its own, so that a host in
 * another process maps that page and no other PF's. The statistics the
 * storms keep are read by ecore through PTTs. Every access is single-copy
 * atomic.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "hsi_common.h"
#include "hsi_eth.h"
#include "hsi_rdma.h"
#include "hsi_switch.h"
#include "base/shared_memory.h"

namespace cna::fw {

class StormRam {
public:
    StormRam();
    ~StormRam();
    StormRam(const StormRam&) = delete;
    StormRam& operator=(const StormRam&) = delete;

    bool valid() const;
    /* PF pf's GTT window, and the file behind it for its host. */
    uint8_t* gtt_page(uint32_t pf) { return base_ + hsi::iro::gtt_page(pf); }
    int gtt_fd(uint32_t pf) const { return gtt_pages_[pf]->fd(); }

    /* GRC accesses (offset relative to STORM_RAM_BASE). */
    /* Inline: the Rx path reads a queue's producers for every frame. */
    uint32_t read32(uint32_t offset) const
    {
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(base_ + offset)).load(std::memory_order_acquire);
    }
    void write32(uint32_t offset, uint32_t value);
    uint8_t* at(uint32_t offset) { return base_ + offset; }
    const uint8_t* at(uint32_t offset) const { return base_ + offset; }
    void zero(uint32_t offset, uint32_t len);

    hsi::RxProdData rx_prod(uint32_t pf, uint32_t queue) const
    {
        uint32_t raw = read32(hsi::iro::rx_prod(pf, queue));
        hsi::RxProdData data;
        std::memcpy(&data, &raw, sizeof(data));
        return data;
    }
    uint16_t eq_cons(uint32_t pf) const;
    hsi::eth::VportStats& vport_stats(uint32_t pf, uint32_t vport);
    hsi::eth::QueueStats& rx_queue_stats(uint32_t pf, uint32_t queue);
    hsi::eth::QueueStats& tx_queue_stats(uint32_t pf, uint32_t queue);
    hsi::eth::FlowCounters& flow_counters(uint32_t pf, uint32_t rule);
    hsi::rdma::RoceStats& roce_stats(uint32_t pf);
    hsi::eswitch::SwitchStats& switch_stats(uint32_t pf);

private:
    uint8_t* base_ = nullptr;
    std::array<std::unique_ptr<SharedMemory>, hsi::MAX_PFS> gtt_pages_; /* placed in [base_, ...) */
};

} // namespace cna::fw
