/* SPDX-License-Identifier: BSD-3-Clause
 * PTTs and their pool: one PTT per BAR0 window, one of them reserved for the
 * slowpath DPC so that interrupt handling never waits for the pool. A flow
 * acquires a PTT, reaches registers through it (ecore_hw.h) and releases it.
 */
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ecore.h"
#include "hsi_common.h"
#include "osal_sync.h"

namespace cna::ecore {

struct Ptt {
    uint32_t idx = 0;     /* entry in the PTT table of BAR0 */
    uint32_t window = 0;  /* internal address the window points at */
    bool pointed = false; /* window valid (entry written since acquire) */
};

/* Takes a PTT from the pool, waiting a bounded time for one to be released.
 * nullptr (logged) if the pool stays empty. */
Ptt* ptt_acquire(Hwfn& hwfn);
void ptt_release(Hwfn& hwfn, Ptt* ptt);

/* RAII PTT: released when the guard goes out of scope. */
class PttGuard {
public:
    explicit PttGuard(Hwfn& hwfn) : hwfn_(hwfn), ptt_(ptt_acquire(hwfn)) {}
    ~PttGuard()
    {
        if (ptt_)
            ptt_release(hwfn_, ptt_);
    }
    PttGuard(const PttGuard&) = delete;
    PttGuard& operator=(const PttGuard&) = delete;
    explicit operator bool() const { return ptt_ != nullptr; }
    Ptt& operator*() const { return *ptt_; }
    Ptt* operator->() const { return ptt_; }
    Ptt* get() const { return ptt_; }

private:
    Hwfn& hwfn_;
    Ptt* ptt_;
};

/* A PTT for the calls that take one, on a PF or a VF: a VF has none, and
 * those calls ignore the one this gives it. False if a PF's pool stayed
 * empty. */
class FunctionPtt {
public:
    explicit FunctionPtt(Hwfn& hwfn)
    {
        if (!is_vf(hwfn))
            guard_.emplace(hwfn);
    }
    explicit operator bool() const { return !guard_ || *guard_; }
    Ptt& operator*() { return guard_ ? **guard_ : none_; }

private:
    std::optional<PttGuard> guard_;
    Ptt none_{};
};

struct PttPool {
    std::array<Ptt, hsi::PTT_WINDOWS> ptts;
    uint32_t free_mask = 0; /* bit per PTT in the pool */
    osal::Spinlock lock;
};

inline constexpr uint32_t PTT_DPC = 0; /* reserved for int_sp_dpc */

Status ptt_pool_alloc(Hwfn& hwfn);
void ptt_pool_free(Hwfn& hwfn);
inline Ptt& dpc_ptt(Hwfn& hwfn) { return hwfn.ptt_pool->ptts[PTT_DPC]; }

} // namespace cna::ecore
