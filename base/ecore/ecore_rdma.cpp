/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PF: start and stop, users (DPIs), protection domains, TIDs,
 * what the device and its port can do, and the asynchronous events.
 */
#include "ecore_rdma.h"

#include <algorithm>
#include <cstring>

#include "ecore_hw.h"
#include "ecore_log.h"
#include "ecore_mcp_api.h"
#include "ecore_spq.h"
#include "ecore_vf.h"

namespace cna::ecore {

using namespace hsi::rdma;

bool IdPool::acquire(uint32_t* id)
{
    auto it = std::find(used_.begin(), used_.end(), false);
    if (it == used_.end())
        return false;
    *it = true;
    *id = static_cast<uint32_t>(it - used_.begin());
    return true;
}

bool IdPool::release(uint32_t id)
{
    if (!in_use(id))
        return false;
    used_[id] = false;
    return true;
}

uint32_t IdPool::used() const { return static_cast<uint32_t>(std::count(used_.begin(), used_.end(), true)); }

Status rdma_alloc(Hwfn& hwfn)
{
    const RdmaPfParams& p = hwfn.pf_params.rdma;
    if (p.num_qps == 0)
        return Status::success;
    /* What the storms hold a VF's ramrods to. */
    const uint32_t max_qps = is_vf(hwfn) ? hsi::iov::VF_RDMA_QPS : MAX_QPS;
    const uint32_t max_tids = is_vf(hwfn) ? hsi::iov::VF_RDMA_TIDS : MAX_TIDS;
    if (p.num_qps > max_qps || p.num_mrs == 0 || p.num_mrs > max_tids) {
        DP_ERR(hwfn, "RDMA of %u QPs and %u MRs: at most %u QPs and 1..%u MRs", p.num_qps, p.num_mrs, max_qps,
               max_tids);
        return Status::inval;
    }
    if (is_vf(hwfn) && hwfn.hw_info.resc.num_sbs < 2) {
        DP_ERR(hwfn, "RDMA on a VF takes a status block of its own, which its PF programs (sb_setup): "
                     "granted %u status blocks", hwfn.hw_info.resc.num_sbs);
        return Status::notimpl;
    }
    auto rdma = std::make_unique<RdmaInfo>();
    if (is_vf(hwfn))
        rdma->dpis = IdPool(hsi::iov::VF_DPI + 1); /* its one DPI page */
    /* The TIDs' contexts are ILT memory the device writes, as the QPs'. */
    if (rdma->tid_contexts.alloc(std::size_t{p.num_mrs} * sizeof(TidContext), "RDMA TID contexts") < 0)
        return Status::nomem;
    rdma->tids = IdPool(p.num_mrs);
    rdma->qps = IdPool(p.num_qps);
    rdma->tid_keys.assign(p.num_mrs, 0);
    rdma->qp_info.assign(p.num_qps, RdmaQpInfo{});
    hwfn.rdma = std::move(rdma);
    /* CNQ 0's status block, with its EQ: the vport may stop and start
     * under RDMA, so it never takes it, RDMA started or not. */
    if (is_vf(hwfn))
        vf_hold_sb(hwfn, rdma_get_sb_id(hwfn, 0), true);
    spq_register_async_cb(hwfn, hsi::ProtocolId::roce, rdma_async_event);
    return Status::success;
}

void rdma_free(Hwfn& hwfn)
{
    if (hwfn.rdma && is_vf(hwfn))
        vf_hold_sb(hwfn, rdma_get_sb_id(hwfn, 0), false);
    hwfn.rdma.reset();
}

uint32_t rdma_l2_sbs(const Hwfn& hwfn, uint32_t cnqs)
{
    const uint32_t sbs = hwfn.hw_info.resc.num_sbs;
    return sbs > cnqs ? sbs - cnqs : 0;
}

uint16_t rdma_get_sb_id(const Hwfn& hwfn, uint32_t cnq)
{
    return static_cast<uint16_t>(hwfn.hw_info.resc.num_sbs - 1 - cnq);
}

bool rdma_started(const Hwfn& hwfn) { return hwfn.rdma && hwfn.rdma->started; }

Status post_rdma(Hwfn& hwfn, RdmaCmd cmd, const void* data, std::size_t len, uint64_t* comp_data)
{
    /* A VF its PF disabled (or took for malicious) has no storms serving
     * its SPQ: a ramrod would wait out its timeout. */
    if (is_vf(hwfn) && !vf_channel_open(hwfn))
        return Status::nodev;
    return spq_post(hwfn, SpqRequest{hsi::ProtocolId::roce, static_cast<uint8_t>(cmd), hsi::CID_SPQ, data, len},
                    comp_data);
}

Status rdma_start(Hwfn& hwfn, const RdmaStartParams& params)
{
    if (!hwfn.rdma) {
        DP_ERR(hwfn, "rdma_start: pf_params.rdma asked for no QPs before resc_alloc");
        return Status::inval;
    }
    RdmaInfo& rdma = *hwfn.rdma;
    if (rdma.started)
        return Status::busy;
    if (params.desired_cnq == 0 || params.desired_cnq > MAX_CNQS ||
        params.desired_cnq >= hwfn.hw_info.resc.num_sbs ||
        std::any_of(params.cnq.begin(), params.cnq.begin() + params.desired_cnq,
                    [&](const RdmaCnqParams& c) { return c.sb_id >= hwfn.hw_info.resc.num_sbs; })) {
        DP_ERR(hwfn, "rdma_start: %u CNQs (1..%u, fewer than the function's %u SBs, each on one of them)",
               params.desired_cnq, MAX_CNQS, hwfn.hw_info.resc.num_sbs);
        return Status::inval;
    }
    if (is_vf(hwfn)) {
        /* Its EQ shares the first CNQ's status block. */
        if (Status rc = vf_rdma_slowpath_start(hwfn, params); rc != Status::success)
            return rc;
    }
    FuncInitRamrodData d{};
    d.num_cnqs = params.desired_cnq;
    std::memcpy(d.mac, params.mac_addr.data(), 6);
    d.num_qps = hwfn.pf_params.rdma.num_qps;
    d.num_tids = hwfn.pf_params.rdma.num_mrs;
    d.max_mtu = params.max_mtu;
    d.tid_context_base = hsi::make_regpair(rdma.tid_contexts.iova());
    for (uint32_t i = 0; i < params.desired_cnq; i++) {
        d.cnq[i].ring_base = hsi::make_regpair(params.cnq[i].ring_iova);
        d.cnq[i].ring_size = params.cnq[i].ring_size;
        d.cnq[i].sb_id = params.cnq[i].sb_id;
    }
    Status rc = post_rdma(hwfn, RdmaCmd::func_init, &d, sizeof(d));
    if (rc != Status::success) {
        if (is_vf(hwfn))
            vf_rdma_slowpath_stop(hwfn);
        return rc;
    }
    std::lock_guard guard(rdma.lock);
    rdma.events = params.events;
    rdma.num_cnqs = params.desired_cnq;
    rdma.max_mtu = params.max_mtu;
    rdma.started = true;
    DP_INFO(hwfn, "RDMA started: %u QPs, %u MRs, %u CNQs", d.num_qps, d.num_tids, d.num_cnqs);
    return Status::success;
}

Status rdma_stop(Hwfn& hwfn)
{
    if (!rdma_started(hwfn))
        return Status::success;
    RdmaInfo& rdma = *hwfn.rdma;
    {
        std::lock_guard guard(rdma.lock);
        const uint32_t left = rdma.qps.used() + rdma.cqs.used() + rdma.srqs.used() + rdma.tids.used();
        if (left != 0) {
            DP_ERR(hwfn, "rdma_stop: %u QPs, %u CQs, %u SRQs and %u MRs still exist", rdma.qps.used(),
                   rdma.cqs.used(), rdma.srqs.used(), rdma.tids.used());
            return Status::busy;
        }
    }
    FuncCloseRamrodData d{};
    Status rc = post_rdma(hwfn, RdmaCmd::func_close, &d, sizeof(d));
    if (is_vf(hwfn))
        vf_rdma_slowpath_stop(hwfn);
    std::lock_guard guard(rdma.lock);
    rdma.started = false;
    rdma.events = nullptr;
    return rc;
}

Status rdma_add_user(Hwfn& hwfn, RdmaUser* user)
{
    if (!rdma_started(hwfn))
        return Status::inval;
    RdmaInfo& rdma = *hwfn.rdma;
    uint32_t dpi;
    {
        std::lock_guard guard(rdma.lock);
        if (!rdma.dpis.acquire(&dpi)) {
            DP_ERR(hwfn, "no DPI left: %u users at most", rdma.dpis.size());
            return Status::nospc;
        }
    }
    user->dpi = static_cast<uint16_t>(dpi);
    user->doorbells = hwfn.dev->pci->doorbells() + hsi::dpi_offset(dpi);
    return Status::success;
}

void rdma_remove_user(Hwfn& hwfn, uint16_t dpi)
{
    if (!hwfn.rdma)
        return;
    std::lock_guard guard(hwfn.rdma->lock);
    hwfn.rdma->dpis.release(dpi);
}

RdmaDevice rdma_query_device(const Hwfn& hwfn)
{
    RdmaDevice d;
    const HwInfo& info = hwfn.hw_info;
    d.vendor_id = 0x1af4;           /* the virtual device's vendor */
    d.vendor_part_id = 0x10cb;
    d.hw_ver = info.chip_id;
    d.fw_ver = info.fw_version;
    /* EUI-64 from the MAC: flip the U/L bit, ff:fe in the middle. */
    const auto& m = info.mac;
    const uint8_t guid[8] = {static_cast<uint8_t>(m[0] ^ 0x02), m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
    std::memcpy(&d.node_guid, guid, sizeof(guid));
    d.max_mr_size = MAX_MR_SIZE;
    for (uint32_t shift = MIN_PAGE_SHIFT; shift <= MAX_PAGE_SHIFT; shift++)
        d.page_size_cap |= 1ull << shift;
    d.max_qp = hwfn.pf_params.rdma.num_qps;
    d.max_qp_wr = MAX_WQES;
    d.max_sge = MAX_SGE;
    d.max_inline = MAX_INLINE;
    d.max_cq = MAX_CQS;
    d.max_cqe = MAX_CQES;
    d.max_mr = hwfn.pf_params.rdma.num_mrs;
    d.max_pd = MAX_PDS;
    d.max_qp_rd_atom = MAX_RD_ATOMIC;
    d.max_qp_init_rd_atom = MAX_RD_ATOMIC;
    d.max_srq = MAX_SRQS;
    d.max_srq_wr = MAX_WQES;
    d.max_srq_sge = MAX_SGE;
    d.num_cnqs = hwfn.rdma ? hwfn.rdma->num_cnqs : 0;
    return d;
}

RdmaPort rdma_query_port(Hwfn& hwfn)
{
    RdmaPort p;
    if (is_vf(hwfn)) {
        p.active = vf_link_up(hwfn, &p.link_speed_mbps);
    } else {
        const McpLinkState link = mcp_get_link_state(hwfn);
        p.active = link.link_up;
        p.link_speed_mbps = link.speed_mbps;
    }
    p.max_mtu = 4096;
    p.active_mtu = hsi::rdma::ib_mtu_within(hwfn.rdma ? hwfn.rdma->max_mtu : 0);
    return p;
}

Status rdma_get_stats(Hwfn& hwfn, Ptt& ptt, hsi::rdma::RoceStats* stats)
{
    if (is_vf(hwfn))
        vf_get_roce_stats(hwfn, stats);
    else
        read_storm_stats(hwfn, ptt, hsi::iro::roce_stats(hwfn.hw_info.pf_id), stats);
    return Status::success;
}

void rdma_process_eq(Hwfn& hwfn)
{
    if (is_vf(hwfn) && hwfn.eq)
        eq_dpc(hwfn);
}

Status rdma_alloc_pd(Hwfn& hwfn, uint16_t* pd)
{
    if (!rdma_started(hwfn))
        return Status::inval;
    std::lock_guard guard(hwfn.rdma->lock);
    uint32_t id;
    if (!hwfn.rdma->pds.acquire(&id))
        return Status::nospc;
    *pd = static_cast<uint16_t>(id);
    return Status::success;
}

void rdma_free_pd(Hwfn& hwfn, uint16_t pd)
{
    if (!hwfn.rdma)
        return;
    std::lock_guard guard(hwfn.rdma->lock);
    hwfn.rdma->pds.release(pd);
}

Status rdma_alloc_tid(Hwfn& hwfn, uint32_t* tid)
{
    if (!rdma_started(hwfn))
        return Status::inval;
    std::lock_guard guard(hwfn.rdma->lock);
    if (!hwfn.rdma->tids.acquire(tid)) {
        DP_ERR(hwfn, "no memory region left: %u at most", hwfn.pf_params.rdma.num_mrs);
        return Status::nospc;
    }
    return Status::success;
}

void rdma_free_tid(Hwfn& hwfn, uint32_t tid)
{
    if (!hwfn.rdma)
        return;
    std::lock_guard guard(hwfn.rdma->lock);
    if (hwfn.rdma->tids.release(tid))
        hwfn.rdma->tid_keys[tid]++; /* the next registration's keys differ */
}

void rdma_async_event(Hwfn& hwfn, uint8_t opcode, uint16_t /* echo */, uint64_t data)
{
    if (opcode == static_cast<uint8_t>(RdmaEvent::neighbour)) {
        roce_neighbour_answered(hwfn, data);
        return;
    }
    DP_VERBOSE(hwfn, osal::dp_module::RDMA, "RDMA event %u for %u", opcode, static_cast<uint32_t>(data));
    RdmaEventCallback cb;
    if (hwfn.rdma) {
        std::lock_guard guard(hwfn.rdma->lock);
        cb = hwfn.rdma->events;
    }
    if (cb)
        cb(static_cast<RdmaEvent>(opcode), static_cast<uint32_t>(data));
}

} // namespace cna::ecore
