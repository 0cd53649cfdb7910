/* SPDX-License-Identifier: BSD-3-Clause */
#include "irq/attention.h"

#include "hsi_common.h"
#include "irq/cau.h"

namespace cna::fw {

using namespace hsi::reg;

bool Attention::read(uint32_t addr, uint32_t& value) const
{
    switch (addr) {
    case ATTN_STATUS: value = status_.load(); return true;
    case ATTN_ACK: value = 0; return true;
    case ATTN_MASK: value = mask_.load(); return true;
    case ATTN_FW_ASSERT_CODE: value = fw_assert_code_.load(); return true;
    default: return false;
    }
}

bool Attention::write(uint32_t addr, uint32_t value)
{
    switch (addr) {
    case ATTN_ACK: status_.fetch_and(~value); return true;
    case ATTN_MASK: {
        const uint32_t enabled = value & hsi::attn::ALL;
        /* The AEU's output is a level: a cause latched while masked
         * interrupts once enabled, as if it had just been raised. A driver
         * enabling its attentions after the MFW posted to it (a link that
         * came up while it loaded) would otherwise never hear of it. */
        const uint32_t before = mask_.exchange(enabled);
        /* The mask written before the status read, as raise() latches before
         * it reads the mask: of a raise and an enabling at once, at least
         * one sees the other's write and delivers. */
        if (status_.load() & enabled & ~before)
            undelivered_.store(true, std::memory_order_release);
        return true;
    }
    case ATTN_STATUS:
    case ATTN_FW_ASSERT_CODE: return true; /* read-only */
    default: return false;
    }
}

void Attention::raise(uint32_t causes)
{
    uint32_t newly = causes & ~status_.fetch_or(causes);
    if (newly & mask_.load())
        undelivered_.store(true, std::memory_order_release);
}

void Attention::reset()
{
    status_.store(0);
    mask_.store(0);
    fw_assert_code_.store(0);
    undelivered_.store(false, std::memory_order_release);
}

void Attention::deliver()
{
    if (undelivered_.exchange(false, std::memory_order_acq_rel))
        cau_.bump_pi(hsi::SP_SB_ID, hsi::SP_PI_ATTN);
}

} // namespace cna::fw
