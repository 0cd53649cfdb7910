/* SPDX-License-Identifier: BSD-3-Clause
 * CAU: the status blocks of a function. ecore configures each SB's host
 * address and MSI-X vector through the CAU registers; the storms change
 * protocol indices in the adapter's copy, and once per engine batch every
 * changed SB gets its prod_index bumped and is DMA-written whole (several
 * index changes in one write: the coalescing of the CAU), after which the
 * IGU learns the new producer.
 *
 * Passes that run at once (engine=inline's queue passes) change and flush
 * one function's SBs, most often each its own queues' SBs: a spinlock per
 * SB, held for a few stores, makes every change and write-back whole, and
 * the changed SBs are bits of an atomic map, so that passes on different
 * SBs share no lock. A pass writes back through its own view of the
 * function's DMA.
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
    /* GRC CAU block (host threads). */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);
    /* The MSI-X vector ecore bound to the SB, or -1 while it is not valid. */
    int vector(uint32_t sb) const;

    /* Engine: change a protocol index; takes effect at flush(). Inline:
     * every queue a burst reaches moves its index. */
    void set_pi(uint32_t sb, uint32_t pi, uint16_t value)
    {
        change_pi(sb, pi, [value](uint16_t) { return value; });
    }
    void bump_pi(uint32_t sb, uint32_t pi)
    {
        change_pi(sb, pi, [](uint16_t index) { return static_cast<uint16_t>(index + 1); });
    }
    /* Engine: write back every changed SB through dma (the pass's view)
     * and tell the IGU. */
    void flush(Dma& dma, Igu& igu);
    bool dirty() const
    {
        for (const auto& word : dirty_)
            if (word.load(std::memory_order_relaxed) != 0)
                return true;
        return false;
    }
    /* Function level reset, with the engine held: no SB configured. */
    void reset();

private:
    static constexpr uint32_t WORD_BITS = 64;
    struct alignas(64) Sb { /* a line each: passes on different SBs share none */
        std::atomic<uint32_t> addr_lo{0}, addr_hi{0}, conf{0}; /* host-written */
        hsi::StatusBlock shadow{};                              /* the engines', under lock_ */
        std::atomic_flag lock_;

        void lock()
        {
            while (lock_.test_and_set(std::memory_order_acquire))
                while (lock_.test(std::memory_order_relaxed))
                    cpu_relax();
        }
        void unlock() { lock_.clear(std::memory_order_release); }
    };

    /* A protocol index becomes change(index), under the SB's lock, and
     * the SB is marked changed. */
    template <typename Change>
    void change_pi(uint32_t sb, uint32_t pi, Change change)
    {
        if (sb >= SB_COUNT || pi >= hsi::PIS_PER_SB)
            return;
        Sb& s = sbs_[sb];
        s.lock();
        s.shadow.pi_array[pi] = change(s.shadow.pi_array[pi]);
        s.unlock();
        mark_dirty(sb);
    }
    /* After the change, under the SB's lock: a flush that takes the bit
     * first then takes the lock, and so sees the change. */
    void mark_dirty(uint32_t sb)
    {
        std::atomic<uint64_t>& word = dirty_[sb / WORD_BITS];
        const uint64_t bit = uint64_t{1} << (sb % WORD_BITS);
        if (!(word.load(std::memory_order_relaxed) & bit))
            word.fetch_or(bit, std::memory_order_release);
    }
    /* The SB's indices to the host, and the IGU told; its lock held. */
    void write_back(Dma& dma, Igu& igu, uint32_t sb);

    std::array<Sb, SB_COUNT> sbs_;
    std::array<std::atomic<uint64_t>, (SB_COUNT + WORD_BITS - 1) / WORD_BITS> dirty_{};
};

} // namespace cna::fw
