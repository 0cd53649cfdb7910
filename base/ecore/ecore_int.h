/* SPDX-License-Identifier: BSD-3-Clause
 * Interrupts, ecore-internal part: the slowpath status block and the
 * ownership of the DPC.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include "ecore_int_api.h"
#include "osal_mem.h"

namespace cna::ecore {

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

Status int_sp_sb_alloc(Hwfn& hwfn);
void int_sp_sb_free(Hwfn& hwfn);

/* Processes the EQ now if this thread may: it holds the DPC lock already
 * (a ramrod posted from the DPC's own context) or can take it. */
void int_try_process_eq(Hwfn& hwfn);

/* After a timeout: logs the DMA faults the device latched, if any, read from
 * its PGLUE registers. Their attention reaches the driver only through the
 * slowpath status block (itself DMA) and only once attentions are enabled,
 * so a device that cannot reach host memory at all, e.g. during hw_init,
 * is otherwise silent. */
void int_report_dma_faults(Hwfn& hwfn, const char* after);

} // namespace cna::ecore
