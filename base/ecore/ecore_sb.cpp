/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks: noticing a new index, acknowledging it to the IGU.
 */
#include "ecore_sb.h"

namespace cna::ecore {

bool sb_update_sb_idx(SbInfo& sb_info)
{
    /* The indices of the block are read after the producer covering them. */
    const uint32_t prod = osal::observe(&sb_info.sb_virt->prod_index);
    if (prod == sb_info.sb_ack)
        return false;
    sb_info.sb_ack = prod;
    return true;
}

void sb_ack(SbInfo& sb_info, hsi::IguIntOp op)
{
    sb_info.pci->reg_wr(hsi::bar0_igu_cmd(sb_info.sb_id), hsi::igu_cmd(sb_info.sb_ack, op));
}

Status sp_sb_alloc(Hwfn& hwfn)
{
    auto sp_sb = std::make_unique<SpSbInfo>();
    if (sp_sb->mem.alloc(sizeof(hsi::StatusBlock), "slowpath status block") < 0)
        return Status::nomem;
    hwfn.sp_sb = std::move(sp_sb);
    return Status::success;
}

void sp_sb_free(Hwfn& hwfn) { hwfn.sp_sb.reset(); }

} // namespace cna::ecore
