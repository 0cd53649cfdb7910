/* SPDX-License-Identifier: BSD-3-Clause
 * The PTT pool: allocation, acquire and release.
 */
#include "ecore_ptt.h"

#include "ecore_log.h"

namespace cna::ecore {

namespace {

/* How long ptt_acquire waits for another flow to release a PTT. */
constexpr uint32_t PTT_ACQUIRE_TIMEOUT_MS = 1000;

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

} // namespace cna::ecore
