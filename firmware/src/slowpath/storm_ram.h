/* SPDX-License-Identifier: BSD-3-Clause
 * Storm RAM: the storms' internal memory. Its first GTT_SIZE bytes are
 * GTT-mapped into every function's BAR0, where the host writes Rx producers
 * and EQ consumers with plain stores; the statistics the storms keep there
 * are read by ecore through PTTs. Every access is single-copy atomic.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "hsi_common.h"
#include "hsi_eth.h"
#include "hsi_rdma.h"
#include "base/shared_memory.h"

namespace cna::fw {

class StormRam {
public:
    StormRam();
    StormRam(const StormRam&) = delete;
    StormRam& operator=(const StormRam&) = delete;

    bool valid() const { return base_ != nullptr; }
    /* The GTT windows: storm RAM from offset 0, and the file behind them
     * for a host in another process. */
    uint8_t* gtt() { return base_; }
    int gtt_fd() const { return memory_.fd(); }

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

private:
    SharedMemory memory_;
    uint8_t* base_;
};

} // namespace cna::fw
