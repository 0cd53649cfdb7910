/* SPDX-License-Identifier: BSD-3-Clause
 * CAU: the status blocks of a function. ecore configures each SB's host
 * address and MSI-X vector through the CAU registers; the storms change
 * protocol indices in the adapter's copy, and once per engine batch every
 * changed SB gets its prod_index bumped and is DMA-written whole (several
 * index changes in one write: the coalescing of the CAU), after which the
 * IGU learns the new producer.
 *
 * Passes that run at once (engine=inline's queue passes) change and flush
 * one function's SBs, each its own queues' indices: a spinlock per CAU
 * makes every change and write-back whole. It is held for a few stores.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "base/backoff.h"
#include "hsi_common.h"

namespace cna::fw {

class Dma;
class Igu;

inline constexpr uint32_t SB_COUNT = hsi::SP_SB_ID + 1; /* fastpath SBs + the slowpath SB */

class Cau {
public:
    explicit Cau(Dma& dma) : dma_(dma) {}

    /* GRC CAU block (host threads). */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);
    /* The MSI-X vector ecore bound to the SB, or -1 while it is not valid. */
    int vector(uint32_t sb) const;

    /* Engine: change a protocol index; takes effect at flush(). Inline:
     * every queue a burst reaches moves its index. */
    void set_pi(uint32_t sb, uint32_t pi, uint16_t value)
    {
        if (sb >= SB_COUNT || pi >= hsi::PIS_PER_SB)
            return;
        lock();
        change_pi(sb, pi, value);
        unlock();
    }
    void bump_pi(uint32_t sb, uint32_t pi);
    /* Engine: write back every changed SB and tell the IGU. */
    void flush(Igu& igu);
    bool dirty() const { return dirty_count_.load(std::memory_order_relaxed) != 0; }
    /* Function level reset, with the engine held: no SB configured. */
    void reset();

private:
    struct Sb {
        std::atomic<uint32_t> addr_lo{0}, addr_hi{0}, conf{0}; /* host-written */
        hsi::StatusBlock shadow{};                              /* engine-owned */
        bool dirty = false;
    };

    void lock()
    {
        while (lock_.test_and_set(std::memory_order_acquire))
            while (lock_.test(std::memory_order_relaxed))
                cpu_relax();
    }
    void unlock() { lock_.clear(std::memory_order_release); }
    /* lock_ held. */
    void change_pi(uint32_t sb, uint32_t pi, uint16_t value)
    {
        sbs_[sb].shadow.pi_array[pi] = value;
        if (!sbs_[sb].dirty) {
            sbs_[sb].dirty = true;
            const uint32_t n = dirty_count_.load(std::memory_order_relaxed);
            dirty_list_[n] = static_cast<uint8_t>(sb);
            dirty_count_.store(n + 1, std::memory_order_relaxed);
        }
    }

    Dma& dma_;
    std::atomic_flag lock_;
    std::array<Sb, SB_COUNT> sbs_;
    std::array<uint8_t, SB_COUNT> dirty_list_{};
    std::atomic<uint32_t> dirty_count_{0}; /* written under lock_; dirty() reads it without */
};

} // namespace cna::fw
