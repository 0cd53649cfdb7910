/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks (guide chapter "Status blocks and interrupts").
 *
 * The device DMA-writes a status block to host memory whenever it moves one
 * of its protocol indices, bumping prod_index. The driver notices the new
 * prod_index (sb_update_sb_idx), handles the indices, then acknowledges it to
 * the IGU (sb_ack), which re-arms the vector.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include "ecore.h"
#include "hsi_common.h"
#include "osal_mem.h"

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

/* Returns true if the device updated the SB since the last call, recording
 * the new prod_index for the next sb_ack. */
bool sb_update_sb_idx(SbInfo& sb_info);
/* Acknowledges the recorded index to the IGU; op enable re-arms the vector
 * (it fires at once if the SB moved meanwhile), disable disarms it. */
void sb_ack(SbInfo& sb_info, hsi::IguIntOp op);

/* What attentions reported, for the upper layer's diagnostics and tests:
 * the DPC writes them, any thread may read them. */
struct AttnStats {
    std::atomic<uint64_t> dma_faults{0};
    std::atomic<uint64_t> last_fault_iova{0};
    std::atomic<uint64_t> fw_asserts{0};
    std::atomic<uint32_t> last_assert_code{0};
    std::atomic<uint64_t> mfw_events{0};
    /* The device's malicious-driver checks refused a queue's request. */
    std::atomic<uint64_t> queue_errors{0};
    std::atomic<uint32_t> last_queue_error{0}; /* reg::STORM_PF_QUEUE_ERROR */
    /* A BAR0 or GRC access no register decoded: a driver bug. */
    std::atomic<uint64_t> bad_accesses{0};
    std::atomic<uint32_t> last_bad_access{0}; /* the address */
};

struct SpSbInfo {
    SbInfo info;
    osal::DmaMem mem;
    uint16_t attn_idx = 0; /* last SP_PI_ATTN handled */
    bool irq_requested = false; /* UpperOps::slowpath_irq_req succeeded */
    AttnStats attn_stats;
};

/* The slowpath status block's memory, before hw_init configures it. */
Status sp_sb_alloc(Hwfn& hwfn);
void sp_sb_free(Hwfn& hwfn);

} // namespace cna::ecore
