/* SPDX-License-Identifier: BSD-3-Clause
 * Context memory (ecore-internal): the ILT holds one connection context per
 * cid in host memory, which the storms write when a connection starts.
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "osal_mem.h"

namespace cna::ecore {

struct CxtMngr {
    osal::DmaMem ilt;
    uint32_t cids = 0;
};

Status cxt_mngr_alloc(Hwfn& hwfn);
void cxt_mngr_free(Hwfn& hwfn);
/* Runtime array entries describing the ILT (resc_setup). */
void cxt_setup(Hwfn& hwfn);

} // namespace cna::ecore
