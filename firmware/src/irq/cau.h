/* SPDX-License-Identifier: BSD-3-Clause
 * CAU: the status blocks of a function. ecore configures each SB's host
 * address and MSI-X vector through the CAU registers; the storms change
 * protocol indices in the adapter's copy, and once per engine batch every
 * changed SB gets its prod_index bumped and is DMA-written whole (several
 * index changes in one write: the coalescing of the CAU), after which the
 * IGU learns the new producer.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

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

    /* Engine thread: change a protocol index; takes effect at flush().
     * Inline: every queue a burst reaches moves its index. */
    void set_pi(uint32_t sb, uint32_t pi, uint16_t value)
    {
        if (sb >= SB_COUNT || pi >= hsi::PIS_PER_SB)
            return;
        sbs_[sb].shadow.pi_array[pi] = value;
        if (!sbs_[sb].dirty) {
            sbs_[sb].dirty = true;
            dirty_list_[dirty_count_++] = static_cast<uint8_t>(sb);
        }
    }
    void bump_pi(uint32_t sb, uint32_t pi);
    /* Engine thread: write back every changed SB and tell the IGU. */
    void flush(Igu& igu);
    bool dirty() const { return dirty_count_ != 0; }
    /* Function level reset, with the engine held: no SB configured. */
    void reset();

private:
    struct Sb {
        std::atomic<uint32_t> addr_lo{0}, addr_hi{0}, conf{0}; /* host-written */
        hsi::StatusBlock shadow{};                              /* engine-owned */
        bool dirty = false;
    };

    Dma& dma_;
    std::array<Sb, SB_COUNT> sbs_;
    std::array<uint8_t, SB_COUNT> dirty_list_{};
    uint32_t dirty_count_ = 0;
};

} // namespace cna::fw
