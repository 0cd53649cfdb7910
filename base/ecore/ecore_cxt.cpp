/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_cxt.h"

#include "ecore_init_ops.h"
#include "ecore_log.h"
#include "hsi_rdma.h"

namespace cna::ecore {

Status cxt_mngr_alloc(Hwfn& hwfn)
{
    auto cxt = std::make_unique<CxtMngr>();
    /* L2's connections, then two per RDMA QP. */
    cxt->cids = hsi::MAX_CIDS_PER_PF + hsi::rdma::CIDS_PER_QP * hwfn.pf_params.rdma.num_qps;
    if (cxt->ilt.alloc(std::size_t{cxt->cids} * hsi::CONN_CONTEXT_SIZE, "ILT context memory") < 0)
        return Status::nomem;
    DP_VERBOSE(hwfn, osal::dp_module::ILT, "%u contexts of %u bytes", cxt->cids, hsi::CONN_CONTEXT_SIZE);
    hwfn.cxt_mngr = std::move(cxt);
    return Status::success;
}

void cxt_mngr_free(Hwfn& hwfn) { hwfn.cxt_mngr.reset(); }

void cxt_setup(Hwfn& hwfn)
{
    const CxtMngr& cxt = *hwfn.cxt_mngr;
    store_rt_reg(hwfn, hsi::init::rt::ILT_BASE_LO, static_cast<uint32_t>(cxt.ilt.iova()));
    store_rt_reg(hwfn, hsi::init::rt::ILT_BASE_HI, static_cast<uint32_t>(cxt.ilt.iova() >> 32));
    store_rt_reg(hwfn, hsi::init::rt::ILT_CIDS, cxt.cids);
}

} // namespace cna::ecore
