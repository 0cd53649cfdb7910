/* SPDX-License-Identifier: BSD-3-Clause
 * Register access through PTT windows, and the PTT pool.
 */
#include "ecore_hw.h"

#include <cstring>

#include "ecore_log.h"
#include "ecore_ptt.h"

namespace cna::ecore {

namespace {

/* How long ptt_acquire waits for another flow to release a PTT. */
constexpr uint32_t PTT_ACQUIRE_TIMEOUT_MS = 1000;

/* Points the PTT's window at the 4 KiB containing addr (if it is not there
 * already) and returns the BAR0 offset that reaches addr. */
uint32_t ptt_bar0_offset(Hwfn& hwfn, Ptt& ptt, uint32_t addr)
{
    const uint32_t window = addr & ~(hsi::WINDOW_SIZE - 1);
    if (!ptt.pointed || ptt.window != window) {
        hwfn.dev->pci->reg_wr(hsi::bar0_ptt_entry(ptt.idx), window);
        ptt.window = window;
        ptt.pointed = true;
    }
    return hsi::bar0_ptt_window(ptt.idx) + (addr - window);
}

} // namespace

Status ptt_pool_alloc(Hwfn& hwfn)
{
    auto pool = std::make_unique<PttPool>();
    for (uint32_t i = 0; i < hsi::PTT_WINDOWS; i++)
        pool->ptts[i] = Ptt{i, 0, false};
    pool->free_mask = ((1u << hsi::PTT_WINDOWS) - 1) & ~(1u << PTT_DPC);
    hwfn.ptt_pool = std::move(pool);
    return Status::success;
}

void ptt_pool_free(Hwfn& hwfn) { hwfn.ptt_pool.reset(); }

Ptt* ptt_acquire(Hwfn& hwfn)
{
    if (!hwfn.ptt_pool) {
        DP_ERR(hwfn, "no PTT pool: %s", is_vf(hwfn) ? "a VF has no PTT" : "the device is not prepared");
        return nullptr;
    }
    PttPool& pool = *hwfn.ptt_pool;
    osal::Deadline deadline(PTT_ACQUIRE_TIMEOUT_MS);
    for (;;) {
        {
            std::lock_guard guard(pool.lock);
            if (pool.free_mask != 0) {
                uint32_t idx = static_cast<uint32_t>(__builtin_ctz(pool.free_mask));
                pool.free_mask &= ~(1u << idx);
                DP_VERBOSE(hwfn, osal::dp_module::HW, "acquired PTT %u", idx);
                return &pool.ptts[idx];
            }
        }
        if (deadline.expired())
            break;
        osal::usleep(100);
    }
    DP_ERR(hwfn, "no PTT released within %u ms: all %u windows in use", PTT_ACQUIRE_TIMEOUT_MS,
           hsi::PTT_WINDOWS - 1);
    return nullptr;
}

void ptt_release(Hwfn& hwfn, Ptt* ptt)
{
    PttPool& pool = *hwfn.ptt_pool;
    std::lock_guard guard(pool.lock);
    pool.free_mask |= 1u << ptt->idx;
}

uint32_t rd(Hwfn& hwfn, Ptt& ptt, uint32_t addr)
{
    return hwfn.dev->pci->reg_rd(ptt_bar0_offset(hwfn, ptt, addr));
}

void wr(Hwfn& hwfn, Ptt& ptt, uint32_t addr, uint32_t value)
{
    hwfn.dev->pci->reg_wr(ptt_bar0_offset(hwfn, ptt, addr), value);
}

void memcpy_from(Hwfn& hwfn, Ptt& ptt, void* dst, uint32_t addr, std::size_t len)
{
    auto* out = static_cast<uint8_t*>(dst);
    for (std::size_t off = 0; off + 4 <= len; off += 4) {
        uint32_t v = rd(hwfn, ptt, addr + static_cast<uint32_t>(off));
        memcpy(out + off, &v, 4);
    }
}

void memcpy_to(Hwfn& hwfn, Ptt& ptt, uint32_t addr, const void* src, std::size_t len)
{
    const auto* in = static_cast<const uint8_t*>(src);
    for (std::size_t off = 0; off + 4 <= len; off += 4) {
        uint32_t v;
        memcpy(&v, in + off, 4);
        wr(hwfn, ptt, addr + static_cast<uint32_t>(off), v);
    }
}

} // namespace cna::ecore
