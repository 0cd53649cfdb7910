/* SPDX-License-Identifier: BSD-3-Clause
 * Interrupts (guide chapter "Status blocks and interrupts"): status blocks
 * configured in the CAU, the slowpath DPC, slowpath interrupt generation.
 * The status blocks themselves are ecore_sb.h's.
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "ecore_sb.h"
#include "hsi_common.h"

namespace cna::ecore {


/* Configures the CAU to write status block sb_id at sb_phys (and clears the
 * memory) with MSI-X vector hsi::msix_vector_of_sb(sb_id). The SB starts
 * disarmed: sb_ack(..., enable) arms it. A VF's SB is configured by its PF
 * with the vport (sp_vport_start), on vector sb_id; ptt is unused then. */
Status int_sb_init(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info, void* sb_virt, uint64_t sb_phys,
                   uint32_t sb_id);

/* Stops the CAU from writing the status block (before its memory is freed). */
void int_sb_release(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info);



/* The slowpath DPC (guide: ecore_int_sp_dpc): processes the event queue
 * (ramrod completions) and attentions (MFW events -> link changes, DMA
 * faults, firmware asserts), then re-arms the slowpath SB in MSIX mode. Runs
 * on the EAL interrupt thread from the slowpath IRQ handler; in POLL mode the
 * upper layer calls it periodically. Never blocks. */
void int_sp_dpc(Hwfn& hwfn);

/* Enables/disables slowpath interrupt generation (attentions and the
 * slowpath SB) after hw_init. */
void int_igu_enable_int(Hwfn& hwfn, Ptt& ptt, IntMode mode);
void int_igu_disable_int(Hwfn& hwfn, Ptt& ptt);

} // namespace cna::ecore
