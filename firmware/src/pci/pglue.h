/* SPDX-License-Identifier: BSD-3-Clause
 * PGLUE_B: the host interface of a function. It gates register access until
 * hw_prepare opens it, gates DMA until the PF phase master-enables the
 * function, and latches DMA faults.
 */
#pragma once

#include <atomic>
#include <cstdint>

namespace cna::fw {

class Attention;

class Pglue {
public:
    explicit Pglue(Attention& attention) : attention_(attention) {}

    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    bool ptt_access_enabled() const { return ptt_access_enable_.load(std::memory_order_relaxed) != 0; }
    bool master_enabled() const { return master_enable_.load(std::memory_order_acquire) != 0; }
    /* Engine thread: latch a translation miss and raise the attention. */
    void dma_fault(uint64_t iova);
    uint64_t dma_fault_count() const { return fault_count_.load(std::memory_order_relaxed); }
    /* Function-level reset of the host interface (UNLOAD_DONE). */
    void reset();

private:
    Attention& attention_;
    std::atomic<uint32_t> master_enable_{0};
    std::atomic<uint32_t> ptt_access_enable_{0};
    std::atomic<uint64_t> fault_addr_{0};
    std::atomic<uint64_t> fault_count_{0};
};

} // namespace cna::fw
