/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA on a VF, the VF's side of its slowpath (hsi_iov.h, "RDMA on a VF").
 *
 * A VF's RDMA objects are its own, so is the slowpath that makes them: the
 * SPQ, EQ and ILT resc_alloc gave it, set through its BAR0 as a PF's are
 * through the runtime array, then PF_START. Its EQ shares the status block
 * of its first CNQ (each has its own PI). The PF programs the CNQs' status
 * blocks at once and apart from the vport's: the VF's L2 may stop and
 * start under its RDMA.
 */
#include "ecore_cxt.h"
#include "ecore_log.h"
#include "ecore_rdma.h"
#include "ecore_spq.h"
#include "ecore_vf.h"

namespace cna::ecore {

namespace {

namespace vf_bar0 = hsi::iov::vf_bar0;

/* Its twin of a PF's STORM_* register. */
void wr_slowpath(Hwfn& hwfn, uint32_t storm_reg, uint32_t value)
{
    hwfn.dev->pci->reg_wr(vf_bar0::slowpath(storm_reg), value);
}

void wr_slowpath64(Hwfn& hwfn, uint32_t storm_reg_lo, uint32_t storm_reg_hi, uint64_t value)
{
    wr_slowpath(hwfn, storm_reg_lo, static_cast<uint32_t>(value));
    wr_slowpath(hwfn, storm_reg_hi, static_cast<uint32_t>(value >> 32));
}

} // namespace

Status vf_rdma_slowpath_start(Hwfn& hwfn, const RdmaStartParams& params)
{
    Status rc = Status::success;
    for (uint32_t i = 0; i < params.desired_cnq && rc == Status::success; i++)
        rc = vf_sb_setup(hwfn, params.cnq[i].sb_id, true);
    if (rc != Status::success) {
        vf_sb_setup_clear_all(hwfn);
        return rc;
    }
    const uint32_t sb_id = params.cnq[0].sb_id;
    using namespace hsi::reg;
    /* The SPQ goes on where it was: the storms keep its consumer across
     * PF_STOP. */
    const Spq& spq = *hwfn.spq;
    wr_slowpath64(hwfn, STORM_SPQ_BASE_LO, STORM_SPQ_BASE_HI, spq.chain.iova());
    wr_slowpath(hwfn, STORM_SPQ_SIZE, spq.chain.size());
    const CxtMngr& cxt = *hwfn.cxt_mngr;
    wr_slowpath64(hwfn, STORM_ILT_BASE_LO, STORM_ILT_BASE_HI, cxt.ilt.iova());
    wr_slowpath(hwfn, STORM_ILT_CIDS, cxt.cids);
    wr_slowpath(hwfn, STORM_PF_ENABLE, 1);

    const SbInfo* eq_sb;
    {
        std::lock_guard guard(hwfn.vf_iov->lock);
        eq_sb = hwfn.vf_iov->sbs[sb_id];
    }
    auto* eq_cons = reinterpret_cast<volatile uint16_t*>(hwfn.dev->pci->gtt() + hsi::iov::vf_page::EQ_CONS);
    rc = spq_pf_start(hwfn, *eq_sb, eq_cons);
    if (rc != Status::success) {
        DP_ERR(hwfn, "the VF's RDMA slowpath did not start: %s", status_name(rc));
        wr_slowpath(hwfn, STORM_PF_ENABLE, 0);
        vf_sb_setup_clear_all(hwfn);
        return rc;
    }
    DP_VERBOSE(hwfn, osal::dp_module::SPQ, "RDMA slowpath started, its EQ on SB %u", sb_id);
    return Status::success;
}

void vf_rdma_slowpath_stop(Hwfn& hwfn)
{
    if (!device_gone(hwfn) && vf_channel_open(hwfn)) {
        if (const Status rc = spq_pf_stop(hwfn); rc != Status::success)
            DP_ERR(hwfn, "PF_STOP of the VF's RDMA slowpath: %s", status_name(rc));
        wr_slowpath(hwfn, hsi::reg::STORM_PF_ENABLE, 0);
    } else {
        eq_detach(hwfn);
    }
    vf_sb_setup_clear_all(hwfn);
}

} // namespace cna::ecore
