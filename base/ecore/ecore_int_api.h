/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks and interrupts (guide chapter "Status blocks and
 * interrupts").
 *
 * The device DMA-writes a status block to host memory whenever it moves one
 * of its protocol indices, bumping prod_index. The driver notices the new
 * prod_index (sb_update_sb_idx), handles the indices, then acknowledges it to
 * the IGU (sb_ack), which re-arms the vector.
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "hsi_common.h"

namespace cna::ecore {

/* A status block: its host memory (owned by whoever allocated it: the upper
 * layer for fastpath SBs, ecore for the slowpath SB) and the IGU state. */
struct SbInfo {
    volatile hsi::StatusBlock* sb_virt = nullptr;
    uint64_t sb_phys = 0;
    uint32_t sb_id = 0;         /* 0..num_sbs-1, or hsi::SP_SB_ID */
    uint32_t sb_ack = 0;        /* last prod_index seen (acknowledged on sb_ack) */
    osal::PciFunction* pci = nullptr; /* its IGU command register is in BAR0 */
};

/* Configures the CAU to write status block sb_id at sb_phys (and clears the
 * memory) with MSI-X vector hsi::msix_vector_of_sb(sb_id). The SB starts
 * disarmed: sb_ack(..., enable) arms it. A VF's SB is configured by its PF
 * with the vport (sp_vport_start), on vector sb_id; ptt is unused then. */
Status int_sb_init(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info, void* sb_virt, uint64_t sb_phys,
                   uint32_t sb_id);

/* Stops the CAU from writing the status block (before its memory is freed). */
void int_sb_release(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info);

/* Returns true if the device updated the SB since the last call, recording
 * the new prod_index for the next sb_ack. */
bool sb_update_sb_idx(SbInfo& sb_info);

/* Acknowledges the recorded index to the IGU; op enable re-arms the vector
 * (it fires at once if the SB moved meanwhile), disable disarms it. */
void sb_ack(SbInfo& sb_info, hsi::IguIntOp op);

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
