/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks, the IGU, attentions and the slowpath DPC.
 */
#include "ecore_int.h"

#include <cinttypes>
#include <cstring>
#include <mutex>

#include "ecore_log.h"
#include "ecore_mcp.h"
#include "ecore_ptt.h"
#include "ecore_spq.h"
#include "ecore_sriov.h"
#include "ecore_vf.h"

namespace cna::ecore {

namespace {

/* Handles the latched attentions; returns whether the link changed. */
bool int_attn_handle(Hwfn& hwfn, Ptt& ptt)
{
    using namespace hsi;
    AttnStats& stats = hwfn.sp_sb->attn_stats;
    const uint32_t status = rd(hwfn, ptt, reg::ATTN_STATUS);
    if (status == 0)
        return false;
    /* Acknowledge before handling: a cause raised again while it is handled
     * latches anew and raises another attention rather than being lost. */
    wr(hwfn, ptt, reg::ATTN_ACK, status);

    bool link_changed = false;
    if (status & attn::MFW_EVENT) {
        stats.mfw_events++;
        link_changed = mcp_handle_events(hwfn, ptt);
    }
    if (status & attn::DMA_FAULT) {
        const uint64_t iova = (uint64_t{rd(hwfn, ptt, reg::PGLUE_DMA_FAULT_ADDR_HI)} << 32) |
                              rd(hwfn, ptt, reg::PGLUE_DMA_FAULT_ADDR_LO);
        const uint32_t count = rd(hwfn, ptt, reg::PGLUE_DMA_FAULT_COUNT);
        stats.dma_faults++;
        stats.last_fault_iova = iova;
        DP_ERR(hwfn, "DMA fault: the device could not reach IOVA 0x%" PRIx64 " (%u faults so far)", iova, count);
    }
    if (status & attn::FW_ASSERT) {
        const uint32_t code = rd(hwfn, ptt, reg::ATTN_FW_ASSERT_CODE);
        stats.fw_asserts++;
        stats.last_assert_code = code;
        DP_ERR(hwfn, "firmware assert, code 0x%08x", code);
    }
    if (status & attn::QUEUE_ERROR) {
        const uint32_t error = rd(hwfn, ptt, reg::STORM_PF_QUEUE_ERROR);
        const uint32_t count = rd(hwfn, ptt, reg::STORM_PF_QUEUE_ERROR_COUNT);
        static constexpr const char* KINDS[] = {"Tx queue", "Rx queue", "SPQ", "?"};
        stats.queue_errors++;
        stats.last_queue_error = error;
        DP_ERR(hwfn, "the device refused a request on %s %u: error %u (%u so far; see the HSI reference)",
               KINDS[static_cast<uint32_t>(queue_error_kind(error))], queue_error_queue(error),
               static_cast<uint32_t>(queue_error_why(error)), count);
    }
    if (status & attn::BAD_ACCESS) {
        const uint32_t addr = rd(hwfn, ptt, reg::PGLUE_BAD_ACCESS_ADDR);
        const uint32_t info = rd(hwfn, ptt, reg::PGLUE_BAD_ACCESS_INFO);
        const uint32_t count = rd(hwfn, ptt, reg::PGLUE_BAD_ACCESS_COUNT);
        stats.bad_accesses++;
        stats.last_bad_access = addr;
        DP_ERR(hwfn, "%s of %s 0x%x decoded by no register (%u so far)",
               info & reg::BAD_ACCESS_WRITE ? "write" : "read",
               info & reg::BAD_ACCESS_GRC ? "GRC address" : "BAR0 offset", addr, count);
    }
    if (status & ~attn::ALL)
        DP_NOTICE(hwfn, "unknown attention bits 0x%08x acknowledged", status & ~attn::ALL);
    return link_changed;
}

} // namespace

Status int_sb_init(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info, void* sb_virt, uint64_t sb_phys, uint32_t sb_id)
{
    /* A VF has no slowpath status block. */
    if ((sb_id != hsi::SP_SB_ID || is_vf(hwfn)) && sb_id >= hwfn.hw_info.resc.num_sbs) {
        DP_ERR(hwfn, "status block %u is beyond the %u granted to this function", sb_id, hwfn.hw_info.resc.num_sbs);
        return Status::inval;
    }
    if (sb_virt == nullptr || sb_phys == 0) {
        DP_ERR(hwfn, "status block %u has no memory", sb_id);
        return Status::inval;
    }
    memset(sb_virt, 0, sizeof(hsi::StatusBlock));
    sb_info = SbInfo{static_cast<volatile hsi::StatusBlock*>(sb_virt), sb_phys, sb_id, 0, hwfn.dev->pci};
    if (is_vf(hwfn)) {
        vf_sb_init(hwfn, sb_info);
        return Status::success;
    }

    const uint32_t vector = hsi::msix_vector_of_sb(sb_id);
    wr(hwfn, ptt, hsi::reg::cau_sb_addr_lo(sb_id), static_cast<uint32_t>(sb_phys));
    wr(hwfn, ptt, hsi::reg::cau_sb_addr_hi(sb_id), static_cast<uint32_t>(sb_phys >> 32));
    wr(hwfn, ptt, hsi::reg::cau_sb_conf(sb_id), hsi::reg::CAU_SB_CONF_VALID | vector << hsi::reg::CAU_SB_CONF_VECTOR_SHIFT);
    DP_VERBOSE(hwfn, osal::dp_module::INTR, "SB %u at IOVA 0x%" PRIx64 " on vector %u", sb_id, sb_phys, vector);
    return Status::success;
}

void int_sb_release(Hwfn& hwfn, Ptt& ptt, SbInfo& sb_info)
{
    if (sb_info.sb_virt == nullptr)
        return;
    sb_ack(sb_info, hsi::IguIntOp::disable);
    if (is_vf(hwfn)) {
        vf_sb_release(hwfn, sb_info);
    } else {
        wr(hwfn, ptt, hsi::reg::cau_sb_conf(sb_info.sb_id), 0);
        wr(hwfn, ptt, hsi::reg::cau_sb_addr_lo(sb_info.sb_id), 0);
        wr(hwfn, ptt, hsi::reg::cau_sb_addr_hi(sb_info.sb_id), 0);
    }
    sb_info.sb_virt = nullptr;
}

void int_sp_dpc(Hwfn& hwfn)
{
    /* A device that is gone raises nothing: its registers read all ones,
     * which no attention is. */
    if (!hwfn.sp_sb || hwfn.sp_sb->info.sb_virt == nullptr || !hwfn.eq || device_gone(hwfn))
        return;
    SpSbInfo& sp = *hwfn.sp_sb;
    bool link_changed = false;
    {
        hwfn.dpc_lock.lock();
        DpcOwnership owner(hwfn);
        sb_update_sb_idx(sp.info);
        eq_process(hwfn);
        const uint16_t attn_idx = osal::observe(&sp.info.sb_virt->pi_array[hsi::SP_PI_ATTN]);
        if (attn_idx != sp.attn_idx) {
            sp.attn_idx = attn_idx;
            link_changed = int_attn_handle(hwfn, dpc_ptt(hwfn));
        }
        sb_ack(sp.info, hwfn.int_mode == IntMode::msix ? hsi::IguIntOp::enable : hsi::IguIntOp::nop);
    }
    /* VF requests wait for ramrods: outside the lock, as any caller. */
    iov_process_pending(hwfn);
    if (link_changed)
        iov_link_changed(hwfn);
    if (link_changed && hwfn.dev->ops.link_update)
        hwfn.dev->ops.link_update(hwfn);
}

void int_igu_enable_int(Hwfn& hwfn, Ptt& ptt, IntMode mode)
{
    hwfn.int_mode = mode;
    wr(hwfn, ptt, hsi::reg::ATTN_MASK, hsi::attn::ALL);
    if (mode == IntMode::msix)
        sb_ack(hwfn.sp_sb->info, hsi::IguIntOp::enable);
}

void int_igu_disable_int(Hwfn& hwfn, Ptt& ptt)
{
    wr(hwfn, ptt, hsi::reg::ATTN_MASK, 0);
    if (hwfn.sp_sb && hwfn.sp_sb->info.sb_virt != nullptr) {
        /* A DPC still running acknowledges the index it read: after it. */
        std::lock_guard lock(hwfn.dpc_lock);
        sb_ack(hwfn.sp_sb->info, hsi::IguIntOp::disable);
    }
}

} // namespace cna::ecore
