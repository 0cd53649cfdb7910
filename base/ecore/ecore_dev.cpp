/* SPDX-License-Identifier: BSD-3-Clause
 * The device's life outside hw_init/hw_stop: init_struct, hw_prepare (BAR
 * access and configuration), resource allocation and set-up, removal.
 */
#include "ecore_dev_api.h"

#include "ecore_cxt.h"
#include "ecore_init_ops.h"
#include "ecore_int.h"
#include "ecore_l2.h"
#include "ecore_log.h"
#include "ecore_mcp.h"
#include "ecore_ptt.h"
#include "ecore_rdma.h"
#include "ecore_spq.h"
#include "ecore_sriov.h"
#include "ecore_switch.h"
#include "ecore_vf.h"
#include "hsi_eth.h"

namespace cna::ecore {

/* Out of line: the unique_ptr members need their complete types. */
Hwfn::Hwfn() = default;
Hwfn::~Hwfn() = default;

void init_struct(Dev& dev, std::string name, osal::PciFunction& pci, UpperOps ops)
{
    dev.name = std::move(name);
    dev.pci = &pci;
    dev.is_vf = pci.is_vf();
    dev.ops = std::move(ops);
    dev.hwfn.dev = &dev;
}

void init_dp(Dev&, uint32_t dp_module, osal::DpLevel dp_level)
{
    osal::set_dp_module(dp_module);
    osal::set_dp_level(dp_level);
}

namespace {

/* Opens the BAR beyond MISC/PGLUE/MCP and learns what the registers tell. */
Status hw_prepare_bar(Hwfn& hwfn, Ptt& ptt)
{
    HwInfo& info = hwfn.hw_info;
    info.chip_id = rd(hwfn, ptt, hsi::reg::MISC_CHIP_ID);
    if (info.chip_id == 0xffffffff) {
        DP_ERR(hwfn, "BAR0 does not answer (MISC_CHIP_ID reads 0xffffffff)");
        return Status::nodev;
    }
    wr(hwfn, ptt, hsi::reg::PGLUE_PTT_ACCESS_ENABLE, 1);
    info.pf_id = rd(hwfn, ptt, hsi::reg::MISC_PF_ID);
    info.port_id = rd(hwfn, ptt, hsi::reg::MISC_PORT_ID);
    info.num_ports = rd(hwfn, ptt, hsi::reg::MISC_NUM_PORTS);
    return Status::success;
}

} // namespace

Status hw_prepare(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    if (dev.is_vf)
        return vf_hw_prepare(hwfn, VfAcquireParams{});
    if (hwfn.hw_prepared) {
        DP_ERR(hwfn, "hw_prepare called twice");
        return Status::busy;
    }
    Status rc = ptt_pool_alloc(hwfn);
    if (rc != Status::success)
        return rc;
    {
        PttGuard ptt(hwfn);
        if (!ptt)
            rc = Status::again;
        if (rc == Status::success)
            rc = hw_prepare_bar(hwfn, *ptt);
        if (rc == Status::success)
            rc = mcp_info_init(hwfn, *ptt);
        if (rc == Status::success && hwfn.hw_info.port_id != rd(hwfn, *ptt, hsi::reg::MISC_PORT_ID))
            DP_NOTICE(hwfn, "SHMEM puts this PF on port %u, MISC_PORT_ID says %u: using SHMEM's",
                      hwfn.hw_info.port_id, rd(hwfn, *ptt, hsi::reg::MISC_PORT_ID));
    }
    if (rc != Status::success) {
        DP_ERR(hwfn, "hw_prepare failed: %s", status_name(rc));
        hw_remove(dev);
        return rc;
    }
    hwfn.hw_prepared = true;
    const HwInfo& info = hwfn.hw_info;
    DP_INFO(hwfn, "PF %u: MAC %02x:%02x:%02x:%02x:%02x:%02x, %u SBs, %u/%u Rx/Tx queues, %u vports",
            info.pf_id, info.mac[0], info.mac[1], info.mac[2], info.mac[3], info.mac[4], info.mac[5],
            info.resc.num_sbs, info.resc.num_rx_queues, info.resc.num_tx_queues, info.resc.num_vports);
    return Status::success;
}

Status resc_alloc(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    if (!hwfn.hw_prepared || hwfn.resc_allocated) {
        DP_ERR(hwfn, "resc_alloc needs a prepared device without resources");
        return Status::busy;
    }
    /* A VF's slowpath is its PF's, but for its RDMA's (ecore_rdma_vf.cpp):
     * its queues are its own, and its RDMA objects with what makes them. */
    const bool slowpath = !dev.is_vf || hwfn.pf_params.rdma.num_qps != 0;
    Status rc = Status::success;
    if (slowpath)
        rc = cxt_mngr_alloc(hwfn);
    if (rc == Status::success && slowpath)
        rc = spq_alloc(hwfn);
    if (rc == Status::success && slowpath)
        rc = eq_alloc(hwfn);
    if (rc == Status::success && !dev.is_vf)
        rc = sp_sb_alloc(hwfn);
    if (rc == Status::success && !dev.is_vf)
        rc = rt_data_alloc(hwfn);
    if (rc == Status::success)
        rc = l2_alloc(hwfn);
    if (rc == Status::success)
        rc = rdma_alloc(hwfn);
    if (rc == Status::success && !dev.is_vf)
        rc = iov_alloc(hwfn);
    if (rc != Status::success) {
        DP_ERR(hwfn, "resc_alloc failed: %s", status_name(rc));
        resc_free(dev);
        return rc;
    }
    hwfn.resc_allocated = true;
    return Status::success;
}

void resc_setup(Dev& dev)
{
    if (dev.is_vf)
        return; /* no runtime array: a VF loads no firmware image */
    Hwfn& hwfn = dev.hwfn;
    using namespace hsi::init;
    Spq& spq = *hwfn.spq;
    spq.chain.reset();
    hwfn.eq->chain.reset();
    store_rt_reg(hwfn, rt::SPQ_BASE_LO, static_cast<uint32_t>(spq.chain.iova()));
    store_rt_reg(hwfn, rt::SPQ_BASE_HI, static_cast<uint32_t>(spq.chain.iova() >> 32));
    store_rt_reg(hwfn, rt::SPQ_SIZE, spq.chain.size());
    cxt_setup(hwfn);
    /* The port admits the largest frame any vport may allow; vports
     * enforce their own MTU. */
    store_rt_reg(hwfn, rt::PORT_MAX_FRAME, hsi::eth::MAX_MTU + hsi::eth::ETH_OVERHEAD);
}

void resc_free(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    iov_free(hwfn);
    switch_free(hwfn);
    rdma_free(hwfn);
    l2_free(hwfn);
    rt_data_free(hwfn);
    sp_sb_free(hwfn);
    eq_free(hwfn);
    spq_free(hwfn);
    cxt_mngr_free(hwfn);
    hwfn.resc_allocated = false;
}

void hw_remove(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    if (dev.is_vf) {
        vf_release(hwfn);
        return;
    }
    if (hwfn.ptt_pool) {
        PttGuard ptt(hwfn);
        if (ptt)
            wr(hwfn, *ptt, hsi::reg::PGLUE_PTT_ACCESS_ENABLE, 0);
    }
    mcp_info_free(hwfn);
    ptt_pool_free(hwfn);
    hwfn.hw_prepared = false;
}

} // namespace cna::ecore
