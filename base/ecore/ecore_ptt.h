/* SPDX-License-Identifier: BSD-3-Clause
 * The PTT pool (ecore-internal): one PTT per BAR0 window, one of them
 * reserved for the slowpath DPC so that interrupt handling never waits for
 * the pool.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore_hw.h"
#include "hsi_common.h"
#include "osal_sync.h"

namespace cna::ecore {

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
