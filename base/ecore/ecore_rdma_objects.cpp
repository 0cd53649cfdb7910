/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA objects the device keeps: memory regions (TIDs), CQs, SRQs and
 * QPs. Each id comes from ecore's pool and goes back to it only once the
 * device has let go of the object.
 */
#include <cstring>

#include "ecore_cxt.h"
#include "ecore_log.h"
#include "ecore_rdma.h"

namespace cna::ecore {

using namespace hsi::rdma;

namespace {

/* The RDMA state of a started RDMA PF, else nullptr (logged). */
RdmaInfo* started(Hwfn& hwfn, const char* what)
{
    if (rdma_started(hwfn))
        return hwfn.rdma.get();
    DP_ERR(hwfn, "%s: RDMA is not started", what);
    return nullptr;
}

/* An id from `pool`, the ramrod, and the id back if the device refused. */
template <typename Post>
Status create(Hwfn& hwfn, IdPool RdmaInfo::*pool, const char* what, uint32_t* id, Post&& post)
{
    RdmaInfo* rdma = started(hwfn, what);
    if (rdma == nullptr)
        return Status::inval;
    {
        std::lock_guard guard(rdma->lock);
        if (!(rdma->*pool).acquire(id)) {
            DP_ERR(hwfn, "%s: none left", what);
            return Status::nospc;
        }
    }
    Status rc = post(*id);
    if (rc != Status::success) {
        std::lock_guard guard(rdma->lock);
        (rdma->*pool).release(*id);
    }
    return rc;
}

/* The ramrod, then the id back to `pool` once the device let it go. */
template <typename Post> Status destroy(Hwfn& hwfn, IdPool RdmaInfo::*pool, const char* what, uint32_t id, Post&& post)
{
    RdmaInfo* rdma = started(hwfn, what);
    if (rdma == nullptr)
        return Status::inval;
    {
        std::lock_guard guard(rdma->lock);
        if (!(rdma->*pool).in_use(id)) {
            DP_ERR(hwfn, "%s: %u does not exist", what, id);
            return Status::noent;
        }
    }
    Status rc = post();
    if (rc == Status::success) {
        std::lock_guard guard(rdma->lock);
        (rdma->*pool).release(id);
    }
    return rc;
}

} // namespace

/* ---- Memory regions -------------------------------------------------------- */

Status rdma_register_tid(Hwfn& hwfn, const RdmaRegisterTidParams& p)
{
    RdmaInfo* rdma = started(hwfn, "register_tid");
    if (rdma == nullptr)
        return Status::inval;
    RegisterTidRamrodData d{};
    {
        std::lock_guard guard(rdma->lock);
        if (!rdma->tids.in_use(p.tid)) {
            DP_ERR(hwfn, "register_tid: TID %u was not allocated", p.tid);
            return Status::inval;
        }
    }
    d.tid = p.tid;
    d.key = p.key;
    d.access = p.access;
    d.pd = p.pd;
    d.page_shift = p.page_shift;
    d.zero_based = p.zero_based;
    d.first_page_offset = p.first_page_offset;
    d.va = p.va;
    d.length = p.length;
    d.pbl_base = hsi::make_regpair(p.pbl_iova);
    d.num_pages = p.num_pages;
    return post_rdma(hwfn, RdmaCmd::register_tid, &d, sizeof(d));
}

Status rdma_deregister_tid(Hwfn& hwfn, uint32_t tid)
{
    if (started(hwfn, "deregister_tid") == nullptr)
        return Status::inval;
    DeregisterTidRamrodData d{};
    d.tid = tid;
    return post_rdma(hwfn, RdmaCmd::deregister_tid, &d, sizeof(d));
}

void rdma_release_tids(Hwfn& hwfn)
{
    if (!hwfn.rdma)
        return;
    for (uint32_t tid = 0; tid < hwfn.rdma->tids.size(); tid++) {
        bool in_use;
        {
            std::lock_guard guard(hwfn.rdma->lock);
            in_use = hwfn.rdma->tids.in_use(tid);
        }
        if (!in_use)
            continue;
        rdma_deregister_tid(hwfn, tid); /* one never registered: not_found, and nothing to undo */
        rdma_free_tid(hwfn, tid);
    }
}

/* ---- CQs ------------------------------------------------------------------- */

Status rdma_create_cq(Hwfn& hwfn, const RdmaCreateCqParams& p, uint16_t* cq_id)
{
    uint32_t id;
    Status rc = create(hwfn, &RdmaInfo::cqs, "create_cq", &id, [&](uint32_t cq) {
        CreateCqRamrodData d{};
        d.cq_id = static_cast<uint16_t>(cq);
        d.cnq_id = p.cnq;
        d.dpi = p.dpi;
        d.ring_base = hsi::make_regpair(p.ring_iova);
        d.ring_size = p.ring_size;
        d.cq_handle = hsi::make_regpair(cq);
        return post_rdma(hwfn, RdmaCmd::create_cq, &d, sizeof(d));
    });
    if (rc == Status::success)
        *cq_id = static_cast<uint16_t>(id);
    return rc;
}

Status rdma_resize_cq(Hwfn& hwfn, uint16_t cq_id, uint64_t ring_iova, uint32_t ring_size, uint32_t* old_cqes)
{
    if (started(hwfn, "resize_cq") == nullptr)
        return Status::inval;
    ResizeCqRamrodData d{};
    d.cq_id = cq_id;
    d.ring_base = hsi::make_regpair(ring_iova);
    d.ring_size = ring_size;
    uint64_t data = 0;
    Status rc = post_rdma(hwfn, RdmaCmd::resize_cq, &d, sizeof(d), &data);
    *old_cqes = static_cast<uint32_t>(data);
    return rc;
}

Status rdma_destroy_cq(Hwfn& hwfn, uint16_t cq_id)
{
    return destroy(hwfn, &RdmaInfo::cqs, "destroy_cq", cq_id, [&] {
        DestroyCqRamrodData d{};
        d.cq_id = cq_id;
        return post_rdma(hwfn, RdmaCmd::destroy_cq, &d, sizeof(d));
    });
}

/* ---- SRQs ------------------------------------------------------------------- */

Status rdma_create_srq(Hwfn& hwfn, const RdmaCreateSrqParams& p, uint16_t* srq_id)
{
    uint32_t id;
    Status rc = create(hwfn, &RdmaInfo::srqs, "create_srq", &id, [&](uint32_t srq) {
        CreateSrqRamrodData d{};
        d.srq_id = static_cast<uint16_t>(srq);
        d.pd = p.pd;
        d.dpi = p.dpi;
        d.wqe_shift = p.wqe_shift;
        d.max_sge = p.max_sge;
        d.ring_base = hsi::make_regpair(p.ring_iova);
        d.ring_size = p.ring_size;
        d.limit = p.limit;
        return post_rdma(hwfn, RdmaCmd::create_srq, &d, sizeof(d));
    });
    if (rc == Status::success)
        *srq_id = static_cast<uint16_t>(id);
    return rc;
}

Status rdma_modify_srq(Hwfn& hwfn, uint16_t srq_id, uint32_t limit)
{
    if (started(hwfn, "modify_srq") == nullptr)
        return Status::inval;
    ModifySrqRamrodData d{};
    d.srq_id = srq_id;
    d.limit = limit;
    return post_rdma(hwfn, RdmaCmd::modify_srq, &d, sizeof(d));
}

Status rdma_destroy_srq(Hwfn& hwfn, uint16_t srq_id)
{
    return destroy(hwfn, &RdmaInfo::srqs, "destroy_srq", srq_id, [&] {
        DestroySrqRamrodData d{};
        d.srq_id = srq_id;
        return post_rdma(hwfn, RdmaCmd::destroy_srq, &d, sizeof(d));
    });
}

/* ---- QPs ------------------------------------------------------------------- */

Status rdma_create_qp(Hwfn& hwfn, const RdmaCreateQpParams& p, uint16_t* qp_id, uint32_t* qpn)
{
    uint32_t id;
    Status rc = create(hwfn, &RdmaInfo::qps, "create_qp", &id, [&](uint32_t qp) {
        CreateQpRamrodData d{};
        d.qp_id = static_cast<uint16_t>(qp);
        d.pd = p.pd;
        d.dpi = p.dpi;
        d.srq_id = p.srq ? *p.srq : NO_SRQ;
        d.sq_cq_id = p.sq_cq;
        d.rq_cq_id = p.rq_cq;
        d.sq_wqe_shift = p.sq_wqe_shift;
        d.rq_wqe_shift = p.rq_wqe_shift;
        d.max_send_sge = p.max_send_sge;
        d.max_recv_sge = p.max_recv_sge;
        d.sq_base = hsi::make_regpair(p.sq_iova);
        d.rq_base = hsi::make_regpair(p.rq_iova);
        d.sq_size = p.sq_size;
        d.rq_size = p.rq_size;
        d.max_inline = p.max_inline;
        d.signal_all = p.signal_all;
        d.qp_type = static_cast<uint8_t>(p.type);
        return post_rdma(hwfn, RdmaCmd::create_qp, &d, sizeof(d));
    });
    if (rc != Status::success)
        return rc;
    std::lock_guard guard(hwfn.rdma->lock);
    hwfn.rdma->qp_info[id] = RdmaQpInfo{p.type, RdmaQpState::reset, p.pd};
    *qp_id = static_cast<uint16_t>(id);
    *qpn = qpn_of(id);
    return Status::success;
}

namespace {

/* The verbs rules of the transition, each broken one named. */
Status check_transition(Hwfn& hwfn, uint16_t qp_id, RdmaQpType type, RdmaQpState from, const RdmaModifyQpParams& p)
{
    const RdmaQpTransitionCheck c = rdma_qp_check_transition(type, from, p.new_state, p.modify_flags);
    if (!c.allowed) {
        DP_ERR(hwfn, "modify_qp %u: %s -> %s is no QP transition", qp_id, rdma_qp_state_name(from),
               rdma_qp_state_name(p.new_state));
        return Status::inval;
    }
    if (c.missing != 0) {
        DP_ERR(hwfn, "modify_qp %u: %s -> %s needs %s", qp_id, rdma_qp_state_name(from),
               rdma_qp_state_name(p.new_state), rdma_qp_attr_name(c.missing));
        return Status::inval;
    }
    if (c.unexpected != 0) {
        DP_ERR(hwfn, "modify_qp %u: %s -> %s does not take %s", qp_id, rdma_qp_state_name(from),
               rdma_qp_state_name(p.new_state), rdma_qp_attr_name(c.unexpected));
        return Status::inval;
    }
    if ((p.modify_flags & rdma_qp_attr::CUR_STATE) && p.cur_state != from) {
        DP_ERR(hwfn, "modify_qp %u: cur_qp_state %s, but the QP is in %s", qp_id, rdma_qp_state_name(p.cur_state),
               rdma_qp_state_name(from));
        return Status::inval;
    }
    if ((p.modify_flags & rdma_qp_attr::PATH_MTU) && p.path_mtu > hwfn.rdma->max_mtu) {
        DP_ERR(hwfn, "modify_qp %u: path_mtu %u is above the port's MTU %u", qp_id, p.path_mtu, hwfn.rdma->max_mtu);
        return Status::inval;
    }
    if ((p.modify_flags & rdma_qp_attr::PKEY_INDEX) && p.pkey_index != 0) {
        DP_ERR(hwfn, "modify_qp %u: pkey_index %u: the P_Key table has one entry", qp_id, p.pkey_index);
        return Status::inval;
    }
    if ((p.modify_flags & rdma_qp_attr::PORT) && p.port != 1) {
        DP_ERR(hwfn, "modify_qp %u: port_num %u: the device has port 1", qp_id, p.port);
        return Status::inval;
    }
    return Status::success;
}

uint32_t storm_modify_flags(uint32_t attrs)
{
    using namespace rdma_qp_attr;
    uint32_t m = 0;
    m |= attrs & ACCESS ? qp_modify::ACCESS : 0;
    m |= attrs & PATH ? qp_modify::PATH : 0;
    m |= attrs & PATH_MTU ? qp_modify::PATH_MTU : 0;
    m |= attrs & DEST_QPN ? qp_modify::DEST_QPN : 0;
    m |= attrs & RQ_PSN ? qp_modify::RQ_PSN : 0;
    m |= attrs & SQ_PSN ? qp_modify::SQ_PSN : 0;
    m |= attrs & TIMEOUT ? qp_modify::TIMEOUT : 0;
    m |= attrs & RETRY_CNT ? qp_modify::RETRY_CNT : 0;
    m |= attrs & RNR_RETRY ? qp_modify::RNR_RETRY : 0;
    m |= attrs & MIN_RNR_TIMER ? qp_modify::MIN_RNR_TIMER : 0;
    m |= attrs & MAX_RD_ATOMIC ? qp_modify::MAX_RD_ATOMIC : 0;
    m |= attrs & MAX_DEST_RD_ATOMIC ? qp_modify::MAX_DEST_RD_ATOMIC : 0;
    m |= attrs & SQD_ASYNC_NOTIFY ? qp_modify::SQD_ASYNC_NOTIFY : 0;
    m |= attrs & QKEY ? qp_modify::QKEY : 0;
    return m;
}

} // namespace

Status rdma_modify_qp(Hwfn& hwfn, uint16_t qp_id, const RdmaModifyQpParams& p)
{
    RdmaInfo* rdma = started(hwfn, "modify_qp");
    if (rdma == nullptr)
        return Status::inval;
    RdmaQpState from;
    RdmaQpType type;
    {
        std::lock_guard guard(rdma->lock);
        if (!rdma->qps.in_use(qp_id)) {
            DP_ERR(hwfn, "modify_qp: QP %u does not exist", qp_id);
            return Status::noent;
        }
        from = rdma->qp_info[qp_id].state;
        type = rdma->qp_info[qp_id].type;
    }
    /* The device moves a QP on its own (a UD QP to SQE, any to ERR): a
     * cur_qp_state ecore did not see is checked against the device's. */
    if ((p.modify_flags & rdma_qp_attr::CUR_STATE) && p.cur_state != from) {
        RdmaQueryQpOut q;
        if (rdma_query_qp(hwfn, qp_id, &q) == Status::success)
            from = q.state;
    }
    ModifyQpRamrodData d{};
    d.qp_id = qp_id;
    d.new_state = static_cast<uint8_t>(p.new_state);
    d.modify = storm_modify_flags(p.modify_flags);
    d.access = p.access;
    d.timeout = p.timeout;
    d.retry_cnt = p.retry_cnt;
    d.rnr_retry = p.rnr_retry;
    d.min_rnr_timer = p.min_rnr_timer;
    d.max_rd_atomic = p.max_rd_atomic;
    d.max_dest_rd_atomic = p.max_dest_rd_atomic;
    d.sqd_async_notify = p.sqd_async_notify;
    d.path_mtu = p.path_mtu;
    d.dest_qpn = p.dest_qpn;
    d.rq_psn = p.rq_psn;
    d.sq_psn = p.sq_psn;
    d.qkey = p.qkey;
    d.path = p.path;
    /* The device moves a QP to ERR on its own (retries exhausted, a NAK):
     * refused for a state ecore did not know, the request is judged again
     * from the state the device reports. */
    Status rc = Status::busy;
    for (int attempt = 0; attempt < 2 && rc == Status::busy; attempt++) {
        if (attempt == 1) {
            RdmaQueryQpOut q;
            if (rdma_query_qp(hwfn, qp_id, &q) != Status::success || q.state == from)
                break;
            from = q.state;
        }
        if (Status bad = check_transition(hwfn, qp_id, type, from, p); bad != Status::success)
            return bad;
        d.cur_state = static_cast<uint8_t>(from);
        rc = post_rdma(hwfn, RdmaCmd::modify_qp, &d, sizeof(d));
    }
    if (rc == Status::success) {
        std::lock_guard guard(rdma->lock);
        rdma->qp_info[qp_id].state = p.new_state;
    }
    return rc;
}

Status rdma_query_qp(Hwfn& hwfn, uint16_t qp_id, RdmaQueryQpOut* out)
{
    RdmaInfo* rdma = started(hwfn, "query_qp");
    if (rdma == nullptr)
        return Status::inval;
    QueryQpRamrodData d{};
    d.qp_id = qp_id;
    Status rc = post_rdma(hwfn, RdmaCmd::query_qp, &d, sizeof(d));
    if (rc != Status::success)
        return rc;
    const auto* ilt = static_cast<const uint8_t*>(hwfn.cxt_mngr->ilt.va());
    std::memcpy(&out->requester, ilt + std::size_t{requester_cid(qp_id)} * hsi::CONN_CONTEXT_SIZE,
                sizeof(out->requester));
    std::memcpy(&out->responder, ilt + std::size_t{responder_cid(qp_id)} * hsi::CONN_CONTEXT_SIZE,
                sizeof(out->responder));
    const RoceRequesterContext& rq = out->requester;
    out->state = static_cast<RdmaQpState>(rq.state);
    out->last_error = static_cast<RdmaError>(rq.last_error);
    out->path_mtu = rq.path_mtu;
    out->dest_qpn = rq.dest_qpn;
    out->sq_psn = rq.sq_psn;
    out->rq_psn = out->responder.rq_psn;
    out->access = rq.access;
    out->timeout = rq.timeout;
    out->retry_cnt = rq.retry_cnt;
    out->rnr_retry = rq.rnr_retry;
    out->min_rnr_timer = out->responder.min_rnr_timer;
    out->max_rd_atomic = rq.max_rd_atomic;
    out->max_dest_rd_atomic = out->responder.max_dest_rd_atomic;
    out->qkey = out->responder.qkey;
    out->type = static_cast<RdmaQpType>(out->responder.qp_type);
    /* The device moves QPs to ERR on its own: its word is the state. */
    std::lock_guard guard(rdma->lock);
    if (rdma->qps.in_use(qp_id))
        rdma->qp_info[qp_id].state = out->state;
    return Status::success;
}

Status rdma_destroy_qp(Hwfn& hwfn, uint16_t qp_id)
{
    return destroy(hwfn, &RdmaInfo::qps, "destroy_qp", qp_id, [&] {
        DestroyQpRamrodData d{};
        d.qp_id = qp_id;
        return post_rdma(hwfn, RdmaCmd::destroy_qp, &d, sizeof(d));
    });
}

} // namespace cna::ecore
