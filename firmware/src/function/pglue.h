/* SPDX-License-Identifier: BSD-3-Clause
 * PGLUE_B: the host interface of a function. It gates register access until
 * hw_prepare opens it, gates DMA until the PF phase master-enables the
 * function, and latches DMA faults and accesses no register decodes.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "bus/dma.h"

namespace cna::fw {

class Attention;

class Pglue final : public BusMaster {
public:
    /* who: the function, for the log ("pf0", "pf0 vf1"). */
    Pglue(std::string who, Attention& attention) : who_(std::move(who)), attention_(attention) {}

    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    bool ptt_access_enabled() const { return ptt_access_enable_.load(std::memory_order_relaxed) != 0; }
    /* Engine thread: latch a translation miss of [iova, iova + len) and
     * raise the attention. The adapter's log says so too (the 1st, 2nd,
     * 4th, 8th... fault): the attention reaches the driver only through
     * its status block, itself DMA, once it enabled attentions. */
    void dma_fault(uint64_t iova, std::size_t len) override;
    uint64_t dma_fault_count() const { return fault_count_.load(std::memory_order_relaxed); }
    /* Any thread: latch an access no register decoded (info: the
     * reg::BAD_ACCESS_* bits) and raise the attention; logged like faults. */
    void bad_access(uint32_t addr, uint32_t info);
    /* Function-level reset of the host interface (UNLOAD_DONE). */
    void reset();

private:
    const std::string who_;
    Attention& attention_;
    std::atomic<uint32_t> ptt_access_enable_{0};
    std::atomic<uint64_t> fault_addr_{0};
    std::atomic<uint64_t> fault_count_{0};
    /* Address and info in one word: two racing accesses latch one of them whole. */
    std::atomic<uint64_t> bad_access_{0};
    std::atomic<uint32_t> bad_access_count_{0};
};

} // namespace cna::fw
