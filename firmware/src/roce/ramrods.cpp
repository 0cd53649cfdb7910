/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA ramrods: every field checked before anything changes (a refusal
 * leaves the PF as it was), then the object created, changed or destroyed.
 */
#include <algorithm>
#include <bit>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/roce_firmware.h"
#include "roce/timers.h"
#include "base/log.h"

namespace cna::fw::roce {

using namespace hsi::rdma;
using hsi::FwReturn;
using hsi::from_regpair;

namespace {

bool ring_size_ok(uint32_t size, uint32_t max) { return std::has_single_bit(size) && size >= MIN_WQES && size <= max; }

bool path_mtu_ok(uint32_t mtu) { return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096; }

uint64_t sq_bytes(const CreateQpRamrodData& d) { return uint64_t{d.sq_size} << (d.sq_wqe_shift + 6); }
uint64_t rq_bytes(const CreateQpRamrodData& d) { return uint64_t{d.rq_size} << (d.rq_wqe_shift + 4); }

/* CREATE_QP's fields, each within its bounds and its WQEs large enough
 * for the SGEs and inline data asked for. */
bool create_qp_params_ok(const CreateQpRamrodData& d)
{
    const bool with_srq = d.srq_id != NO_SRQ;
    const auto type = static_cast<QpType>(d.qp_type);
    const uint32_t sq_header = sizeof(SqWqe) + (is_datagram(type) ? sizeof(UdAddress) : 0);
    return d.qp_id < MAX_QPS && d.dpi < hsi::MAX_DPIS && d.sq_cq_id < MAX_CQS && d.rq_cq_id < MAX_CQS &&
           (!with_srq || d.srq_id < MAX_SRQS) && ring_size_ok(d.sq_size, MAX_WQES) &&
           (with_srq ? d.rq_size == 0 : ring_size_ok(d.rq_size, MAX_WQES)) && d.max_send_sge <= MAX_SGE &&
           d.max_recv_sge <= MAX_SGE && d.max_inline <= MAX_INLINE && d.sq_wqe_shift <= 3 && d.rq_wqe_shift <= 5 &&
           (type == QpType::rc || type == QpType::ud || type == QpType::gsi) &&
           (SQ_WQE_UNIT << d.sq_wqe_shift) >=
               sq_header + std::max<uint32_t>(d.max_send_sge * sizeof(Sge), d.max_inline) &&
           (RQ_WQE_UNIT << d.rq_wqe_shift) >= sizeof(RqWqe) + d.max_recv_sge * sizeof(Sge);
}

/* A QP as CREATE_QP makes it: in RESET, its attributes still to come. */
Qp new_qp(const CreateQpRamrodData& d)
{
    Qp qp{.exists = true,
          .type = static_cast<QpType>(d.qp_type),
          .id = d.qp_id,
          .pd = d.pd,
          .dpi = d.dpi,
          .srq = d.srq_id,
          .sq_cq = d.sq_cq_id,
          .rq_cq = d.rq_cq_id,
          .sq_wqe_shift = d.sq_wqe_shift,
          .rq_wqe_shift = d.rq_wqe_shift,
          .max_send_sge = d.max_send_sge,
          .max_recv_sge = d.max_recv_sge,
          .max_inline = d.max_inline,
          .signal_all = d.signal_all != 0,
          .sq = DmaRing(from_regpair(d.sq_base), sq_bytes(d)),
          .rq = DmaRing(from_regpair(d.rq_base), rq_bytes(d)),
          .sq_mask = d.sq_size - 1u,
          .rq_mask = d.srq_id != NO_SRQ ? 0 : d.rq_size - 1u,
          .qkey = static_cast<QpType>(d.qp_type) == QpType::gsi ? GSI_QKEY : 0};
    qp.req.sent.assign(d.sq_size, SentWqe{});
    return qp;
}

} // namespace

template <typename Data> FwReturn RoceFirmware::run(uint64_t ptr, FwReturn (RoceFirmware::*handler)(const Data&))
{
    Data data;
    if (!ctx_.hw.dma().read(ptr, &data, sizeof(data)))
        return FwReturn::dma_error;
    return (this->*handler)(data);
}

FwReturn RoceFirmware::ramrod(uint8_t cmd, uint64_t ptr, const Ilt& ilt, uint64_t& data)
{
    ilt_ = ilt;
    completion_data_ = 0;
    auto command = static_cast<RdmaCmd>(cmd);
    if (!active_ && command != RdmaCmd::func_init && command <= RdmaCmd::resolve_neighbour)
        return FwReturn::bad_state;
    FwReturn rc = FwReturn::invalid_command;
    switch (command) {
    case RdmaCmd::func_init: rc = run(ptr, &RoceFirmware::func_init); break;
    case RdmaCmd::func_close: rc = run(ptr, &RoceFirmware::func_close); break;
    case RdmaCmd::create_cq: rc = run(ptr, &RoceFirmware::create_cq); break;
    case RdmaCmd::resize_cq: rc = run(ptr, &RoceFirmware::resize_cq); break;
    case RdmaCmd::destroy_cq: rc = run(ptr, &RoceFirmware::destroy_cq); break;
    case RdmaCmd::create_qp: rc = run(ptr, &RoceFirmware::create_qp); break;
    case RdmaCmd::modify_qp: rc = run(ptr, &RoceFirmware::modify_qp); break;
    case RdmaCmd::query_qp: rc = run(ptr, &RoceFirmware::query_qp); break;
    case RdmaCmd::destroy_qp: rc = run(ptr, &RoceFirmware::destroy_qp); break;
    case RdmaCmd::register_tid: rc = run(ptr, &RoceFirmware::register_tid); break;
    case RdmaCmd::deregister_tid: rc = run(ptr, &RoceFirmware::deregister_tid); break;
    case RdmaCmd::create_srq: rc = run(ptr, &RoceFirmware::create_srq); break;
    case RdmaCmd::modify_srq: rc = run(ptr, &RoceFirmware::modify_srq); break;
    case RdmaCmd::destroy_srq: rc = run(ptr, &RoceFirmware::destroy_srq); break;
    case RdmaCmd::set_addresses: rc = run(ptr, &RoceFirmware::set_addresses); break;
    case RdmaCmd::resolve_neighbour: rc = run(ptr, &RoceFirmware::resolve_neighbour); break;
    }
    data = completion_data_;
    return rc;
}

void RoceFirmware::reset()
{
    active_ = false;
    ctx_.cnqs = {};
    ctx_.cqs.clear();
    ctx_.srqs.clear();
    ctx_.qps.clear();
    live_qps_.clear();
    ctx_.mrs.clear();
    neighbours_.clear();
    completer_.forget_events();
}

FwReturn RoceFirmware::check_func_init(const FuncInitRamrodData& d)
{
    if (active_)
        return FwReturn::bad_state;
    if (d.num_cnqs == 0 || d.num_cnqs > MAX_CNQS || d.num_qps == 0 || d.num_qps > MAX_QPS || d.num_tids == 0 ||
        d.num_tids > MAX_TIDS || d.max_mtu < 256 || (d.mac[0] & 1) != 0)
        return FwReturn::invalid_param;
    if (may_use_mac_ && !may_use_mac_(d.mac))
        return FwReturn::invalid_param;
    if (d.num_qps > grant_.num_rdma_qps || d.num_tids > grant_.num_tids || responder_cid(d.num_qps - 1) >= ilt_.cids)
        return FwReturn::no_resource;
    for (uint32_t i = 0; i < d.num_cnqs; i++) {
        const CnqParams& c = d.cnq[i];
        if (!ring_size_ok(c.ring_size, 0x8000))
            return FwReturn::invalid_param;
        if (c.sb_id >= hsi::MAX_SB_PER_PF)
            return FwReturn::invalid_param;
        if (c.sb_id >= grant_.num_sbs)
            return FwReturn::no_resource;
        if (ctx_.hw.dma().map(from_regpair(c.ring_base), uint64_t{c.ring_size} * sizeof(CnqEntry)) == nullptr)
            return FwReturn::dma_error;
    }
    if (ctx_.hw.dma().map(from_regpair(d.tid_context_base), uint64_t{d.num_tids} * sizeof(TidContext)) == nullptr)
        return FwReturn::dma_error;
    return FwReturn::ok;
}

FwReturn RoceFirmware::func_init(const FuncInitRamrodData& d)
{
    if (FwReturn rc = check_func_init(d); rc != FwReturn::ok)
        return rc;
    for (uint32_t i = 0; i < d.num_cnqs; i++) {
        const CnqParams& c = d.cnq[i];
        ctx_.cnqs[i] = Cnq{.exists = true,
                           .ring = DmaRing(from_regpair(c.ring_base), uint64_t{c.ring_size} * sizeof(CnqEntry)),
                           .mask = c.ring_size - 1u,
                           .prod = 0,
                           .sb_id = c.sb_id};
    }
    std::copy(std::begin(d.mac), std::end(d.mac), mac_.begin());
    neighbours_.set_mac(d.mac);
    max_mtu_ = d.max_mtu;
    requester_.configure(max_mtu_);
    num_qps_ = d.num_qps;
    tid_context_base_ = from_regpair(d.tid_context_base);
    ctx_.cqs.assign(MAX_CQS, Cq{});
    ctx_.srqs.assign(MAX_SRQS, Srq{});
    ctx_.qps.assign(d.num_qps, Qp{});
    live_qps_.clear();
    live_qps_.reserve(d.num_qps);
    ctx_.mrs.configure(d.num_tids);
    active_ = true;
    log(LogLevel::info, "roce: %s RDMA up: %u QPs, %u TIDs, %u CNQs", ctx_.hw.name().c_str(), d.num_qps, d.num_tids,
        d.num_cnqs);
    return FwReturn::ok;
}

FwReturn RoceFirmware::func_close(const FuncCloseRamrodData&)
{
    const bool in_use = !live_qps_.empty() ||
                        std::any_of(ctx_.cqs.begin(), ctx_.cqs.end(), [](const Cq& c) { return c.exists; }) ||
                        std::any_of(ctx_.srqs.begin(), ctx_.srqs.end(), [](const Srq& s) { return s.exists; });
    bool mrs_left = false;
    for (uint32_t tid = 0; ctx_.mrs.region(tid) != nullptr; tid++)
        mrs_left |= ctx_.mrs.region(tid)->valid;
    if (in_use || mrs_left)
        return FwReturn::bad_state;
    reset();
    log(LogLevel::info, "roce: %s RDMA closed", ctx_.hw.name().c_str());
    return FwReturn::ok;
}

/* ---- CQs ------------------------------------------------------------------ */

FwReturn RoceFirmware::create_cq(const CreateCqRamrodData& d)
{
    if (d.cq_id >= MAX_CQS || d.dpi >= hsi::MAX_DPIS || !ring_size_ok(d.ring_size, MAX_CQES) || d.cnq_id >= MAX_CNQS ||
        !ctx_.cnqs[d.cnq_id].exists)
        return FwReturn::invalid_param;
    if (d.dpi >= grant_.num_dpis)
        return FwReturn::no_resource;
    if (ctx_.cqs[d.cq_id].exists)
        return FwReturn::bad_state;
    const uint64_t bytes = uint64_t{d.ring_size} * sizeof(RdmaCqe);
    if (ctx_.hw.dma().map(from_regpair(d.ring_base), bytes) == nullptr)
        return FwReturn::dma_error;
    ctx_.hw.clear_doorbell_slot(cq_db_offset(d.dpi, d.cq_id));
    ctx_.cqs[d.cq_id] = Cq{.exists = true,
                           .dpi = d.dpi,
                           .cnq = d.cnq_id,
                           .ring = DmaRing(from_regpair(d.ring_base), bytes),
                           .mask = d.ring_size - 1,
                           .handle = from_regpair(d.cq_handle)};
    return FwReturn::ok;
}

FwReturn RoceFirmware::resize_cq(const ResizeCqRamrodData& d)
{
    if (d.cq_id >= MAX_CQS || !ring_size_ok(d.ring_size, MAX_CQES))
        return FwReturn::invalid_param;
    Cq& cq = ctx_.cqs[d.cq_id];
    if (!cq.exists)
        return FwReturn::not_found;
    if (cq.prod - ctx_.hw.doorbell_word(cq_db_offset(cq.dpi, d.cq_id)) >= d.ring_size)
        return FwReturn::invalid_param; /* the CQEs not yet returned would not fit */
    const uint64_t bytes = uint64_t{d.ring_size} * sizeof(RdmaCqe);
    if (ctx_.hw.dma().map(from_regpair(d.ring_base), bytes) == nullptr)
        return FwReturn::dma_error;
    completion_data_ = cq.prod;
    cq.ring = DmaRing(from_regpair(d.ring_base), bytes);
    cq.mask = d.ring_size - 1;
    cq.ring_start = cq.prod;
    return FwReturn::ok;
}

FwReturn RoceFirmware::destroy_cq(const DestroyCqRamrodData& d)
{
    if (d.cq_id >= MAX_CQS)
        return FwReturn::invalid_param;
    Cq& cq = ctx_.cqs[d.cq_id];
    if (!cq.exists)
        return FwReturn::not_found;
    if (cq.users != 0)
        return FwReturn::bad_state;
    completion_data_ = cq.prod;
    cq = Cq{};
    return FwReturn::ok;
}

/* ---- QPs ------------------------------------------------------------------ */

FwReturn RoceFirmware::check_create_qp(const CreateQpRamrodData& d)
{
    const bool with_srq = d.srq_id != NO_SRQ;
    if (!create_qp_params_ok(d))
        return FwReturn::invalid_param;
    if (d.qp_id >= num_qps_ || d.dpi >= grant_.num_dpis)
        return FwReturn::no_resource;
    if (ctx_.qps[d.qp_id].exists || (static_cast<QpType>(d.qp_type) == QpType::gsi && gsi_qp_ != NO_GSI_QP))
        return FwReturn::bad_state;
    if (!ctx_.cqs[d.sq_cq_id].exists || !ctx_.cqs[d.rq_cq_id].exists || (with_srq && !ctx_.srqs[d.srq_id].exists))
        return FwReturn::not_found;
    if (ctx_.hw.dma().map(from_regpair(d.sq_base), sq_bytes(d)) == nullptr ||
        (!with_srq && ctx_.hw.dma().map(from_regpair(d.rq_base), rq_bytes(d)) == nullptr))
        return FwReturn::dma_error;
    return FwReturn::ok;
}

FwReturn RoceFirmware::create_qp(const CreateQpRamrodData& d)
{
    if (FwReturn rc = check_create_qp(d); rc != FwReturn::ok)
        return rc;
    ctx_.qps[d.qp_id] = new_qp(d);
    if (ctx_.qps[d.qp_id].type == QpType::gsi)
        gsi_qp_ = d.qp_id;
    ctx_.cqs[d.sq_cq_id].users++;
    ctx_.cqs[d.rq_cq_id].users++;
    if (d.srq_id != NO_SRQ)
        ctx_.srqs[d.srq_id].users++;
    ctx_.hw.clear_doorbell_slot(qp_db_offset(d.dpi, d.qp_id));
    live_qps_.push_back(d.qp_id);
    return FwReturn::ok;
}

FwReturn RoceFirmware::check_modify(const Qp& qp, const ModifyQpRamrodData& d) const
{
    const auto cur = static_cast<QpState>(d.cur_state), next = static_cast<QpState>(d.new_state);
    if (!qp_transition_allowed(cur, next))
        return FwReturn::invalid_param;
    /* To ERR or RESET from whatever state the QP is in: the driver may not
     * yet know that the QP went to ERR by itself (retries exhausted). */
    if (cur != qp.state && next != QpState::err && next != QpState::reset)
        return FwReturn::bad_state;
    const uint32_t m = d.modify;
    if (((m & qp_modify::ACCESS) && (d.access & ~access::ALL) != 0) ||
        ((m & qp_modify::PATH_MTU) && (!path_mtu_ok(d.path_mtu) || d.path_mtu > max_mtu_)) ||
        ((m & qp_modify::DEST_QPN) && d.dest_qpn > PSN_MASK) || ((m & qp_modify::RQ_PSN) && d.rq_psn > PSN_MASK) ||
        ((m & qp_modify::SQ_PSN) && d.sq_psn > PSN_MASK) || ((m & qp_modify::TIMEOUT) && d.timeout > 31) ||
        ((m & qp_modify::RETRY_CNT) && d.retry_cnt > 7) || ((m & qp_modify::RNR_RETRY) && d.rnr_retry > 7) ||
        ((m & qp_modify::MIN_RNR_TIMER) && d.min_rnr_timer > 31) ||
        ((m & qp_modify::MAX_RD_ATOMIC) && d.max_rd_atomic > MAX_RD_ATOMIC) ||
        ((m & qp_modify::MAX_DEST_RD_ATOMIC) && d.max_dest_rd_atomic > MAX_RD_ATOMIC))
        return FwReturn::invalid_param;
    if (m & qp_modify::PATH) {
        if (!path_well_formed(d.path) || (d.path.dst_mac[0] & 1) != 0)
            return FwReturn::invalid_param;
    }
    if (is_datagram(qp.type)) {
        /* A datagram's path and MTU come with each WQE; the GSI QP's Q_Key
         * is InfiniBand's, which a modify may repeat but not change. */
        const bool qkey_ok = !(m & qp_modify::QKEY) || qp.type == QpType::ud || d.qkey == GSI_QKEY;
        return (m & ~(qp_modify::QKEY | qp_modify::SQ_PSN | qp_modify::SQD_ASYNC_NOTIFY)) == 0 && qkey_ok
                   ? FwReturn::ok
                   : FwReturn::invalid_param;
    }
    /* What a QP needs to receive, and to send, before it may. */
    const bool has_path = (m & qp_modify::PATH) || qp.path.ip_version != 0;
    const bool has_mtu = (m & qp_modify::PATH_MTU) || qp.path_mtu != 0;
    if (next == QpState::rtr && cur == QpState::init && (!has_path || !has_mtu))
        return FwReturn::invalid_param;
    return FwReturn::ok;
}

FwReturn RoceFirmware::modify_qp(const ModifyQpRamrodData& d)
{
    if (d.qp_id >= ctx_.qps.size() || !ctx_.qps[d.qp_id].exists)
        return FwReturn::not_found;
    Qp& qp = ctx_.qps[d.qp_id];
    if (FwReturn rc = check_modify(qp, d); rc != FwReturn::ok)
        return rc;
    const uint32_t m = d.modify;
    if (m & qp_modify::ACCESS)
        qp.access = d.access;
    if (m & qp_modify::PATH)
        qp.path = d.path;
    if (m & qp_modify::PATH_MTU)
        qp.path_mtu = d.path_mtu;
    if (m & qp_modify::DEST_QPN)
        qp.dest_qpn = d.dest_qpn;
    if (m & qp_modify::RQ_PSN) {
        qp.resp.epsn = d.rq_psn;
        qp.resp.nak_sent = false;
    }
    if (m & qp_modify::SQ_PSN)
        qp.req.next_psn = qp.req.tx_psn = qp.req.unacked_psn = qp.req.sent_psn = d.sq_psn;
    if (m & qp_modify::TIMEOUT)
        qp.timeout = d.timeout;
    if (m & qp_modify::RETRY_CNT)
        qp.retry_cnt = qp.req.retries_left = d.retry_cnt;
    if (m & qp_modify::RNR_RETRY)
        qp.rnr_retry = qp.req.rnr_retries_left = d.rnr_retry;
    if (m & qp_modify::MIN_RNR_TIMER)
        qp.min_rnr_timer = d.min_rnr_timer;
    if (m & qp_modify::MAX_RD_ATOMIC)
        qp.max_rd_atomic = d.max_rd_atomic;
    if (m & qp_modify::MAX_DEST_RD_ATOMIC)
        qp.max_dest_rd_atomic = d.max_dest_rd_atomic;
    if (m & qp_modify::SQD_ASYNC_NOTIFY)
        qp.sqd_notify = d.sqd_async_notify != 0;
    if (m & qp_modify::QKEY)
        qp.qkey = d.qkey;
    enter_state(qp, static_cast<QpState>(d.new_state));
    return FwReturn::ok;
}

void RoceFirmware::enter_state(Qp& qp, QpState state)
{
    const QpState was = qp.state;
    qp.state = state;
    switch (state) {
    case QpState::reset: {
        /* The queues are empty again; the attributes stay until set anew. */
        qp.req = RequesterState{};
        qp.req.sent.assign(qp.sq_mask + 1, SentWqe{});
        qp.resp = ResponderState{};
        qp.last_error = RdmaError::none;
        ctx_.hw.clear_doorbell_slot(qp_db_offset(qp.dpi, qp.id));
        break;
    }
    case QpState::err:
        if (was != QpState::err)
            completer_.fail_qp(qp, RdmaError::flushed, std::nullopt);
        break;
    default: break;
    }
}

bool RoceFirmware::write_contexts(const Qp& qp)
{
    RoceRequesterContext rq{};
    rq.state = static_cast<uint8_t>(qp.state);
    rq.last_error = static_cast<uint8_t>(qp.last_error);
    rq.access = qp.access;
    rq.timeout = qp.timeout;
    rq.retry_cnt = qp.retry_cnt;
    rq.rnr_retry = qp.rnr_retry;
    rq.max_rd_atomic = qp.max_rd_atomic;
    rq.sq_wqe_shift = qp.sq_wqe_shift;
    rq.pd = qp.pd;
    rq.dpi = qp.dpi;
    rq.sq_cq_id = qp.sq_cq;
    rq.sq_size = static_cast<uint16_t>(qp.sq_mask + 1);
    rq.dest_qpn = qp.dest_qpn;
    rq.sq_psn = qp.req.next_psn;
    rq.unacked_psn = qp.req.unacked_psn;
    rq.sq_prod = ctx_.sq_prod(qp);
    rq.sq_cons = qp.req.sq_cons;
    rq.path_mtu = qp.path_mtu;
    rq.sq_base = hsi::make_regpair(qp.sq.iova);
    rq.packets_sent = qp.counters.packets_sent;
    rq.retransmitted = qp.counters.retransmitted;
    rq.naks_received = qp.counters.naks_received;
    rq.rnr_naks_received = qp.counters.rnr_naks_received;
    rq.timeouts = qp.counters.timeouts;

    RoceResponderContext rs{};
    rs.state = static_cast<uint8_t>(qp.state);
    rs.min_rnr_timer = qp.min_rnr_timer;
    rs.max_dest_rd_atomic = qp.max_dest_rd_atomic;
    rs.rq_wqe_shift = qp.rq_wqe_shift;
    rs.rq_cq_id = qp.rq_cq;
    rs.srq_id = qp.srq;
    rs.rq_size = static_cast<uint16_t>(qp.srq == NO_SRQ ? qp.rq_mask + 1 : 0);
    rs.rq_psn = qp.resp.epsn;
    rs.msn = qp.resp.msn;
    rs.rq_prod = qp.srq == NO_SRQ ? ctx_.rq_prod(qp) : 0;
    rs.rq_cons = qp.resp.rq_cons;
    rs.rq_base = hsi::make_regpair(qp.rq.iova);
    rs.packets_received = qp.counters.packets_received;
    rs.duplicates = qp.counters.duplicates;
    rs.naks_sent = qp.counters.naks_sent;
    rs.rnr_naks_sent = qp.counters.rnr_naks_sent;
    rs.out_of_sequence = qp.counters.out_of_sequence;
    rs.qkey = qp.qkey;
    rs.qp_type = static_cast<uint8_t>(qp.type);

    Dma& dma = ctx_.hw.dma();
    return dma.write(ilt_.base + uint64_t{requester_cid(qp.id)} * hsi::CONN_CONTEXT_SIZE, &rq, sizeof(rq)) &&
           dma.write(ilt_.base + uint64_t{responder_cid(qp.id)} * hsi::CONN_CONTEXT_SIZE, &rs, sizeof(rs));
}

FwReturn RoceFirmware::query_qp(const QueryQpRamrodData& d)
{
    if (d.qp_id >= ctx_.qps.size() || !ctx_.qps[d.qp_id].exists)
        return FwReturn::not_found;
    if (responder_cid(d.qp_id) >= ilt_.cids)
        return FwReturn::no_resource;
    return write_contexts(ctx_.qps[d.qp_id]) ? FwReturn::ok : FwReturn::dma_error;
}

FwReturn RoceFirmware::destroy_qp(const DestroyQpRamrodData& d)
{
    if (d.qp_id >= ctx_.qps.size() || !ctx_.qps[d.qp_id].exists)
        return FwReturn::not_found;
    Qp& qp = ctx_.qps[d.qp_id];
    completion_data_ = uint64_t{qp.req.sq_cons} << 32 | qp.resp.rq_cons;
    ctx_.cqs[qp.sq_cq].users--;
    ctx_.cqs[qp.rq_cq].users--;
    if (qp.srq != NO_SRQ)
        ctx_.srqs[qp.srq].users--;
    ctx_.hw.clear_doorbell_slot(qp_db_offset(qp.dpi, qp.id));
    std::erase(live_qps_, qp.id);
    if (qp.type == QpType::gsi)
        gsi_qp_ = NO_GSI_QP;
    qp = Qp{};
    return FwReturn::ok;
}

/* ---- MRs ------------------------------------------------------------------- */

bool RoceFirmware::write_tid_context(uint32_t tid)
{
    TidContext ctx{};
    if (const MemoryRegion* mr = ctx_.mrs.region(tid); mr != nullptr && mr->valid) {
        ctx.valid = 1;
        ctx.key = mr->key;
        ctx.access = mr->access;
        ctx.page_shift = mr->page_shift;
        ctx.pd = mr->pd;
        ctx.zero_based = mr->zero_based;
        ctx.va = mr->va;
        ctx.length = mr->length;
        ctx.first_page_offset = mr->first_page_offset;
        ctx.num_pages = mr->num_pages;
    }
    return ctx_.hw.dma().write(tid_context_base_ + uint64_t{tid} * sizeof(ctx), &ctx, sizeof(ctx));
}

FwReturn RoceFirmware::register_tid(const RegisterTidRamrodData& d)
{
    FwReturn rc = ctx_.mrs.register_tid(d, ctx_.hw.dma());
    if (rc == FwReturn::ok && !write_tid_context(d.tid)) {
        ctx_.mrs.deregister_tid(d.tid);
        return FwReturn::dma_error;
    }
    return rc;
}

FwReturn RoceFirmware::deregister_tid(const DeregisterTidRamrodData& d)
{
    FwReturn rc = ctx_.mrs.deregister_tid(d.tid);
    if (rc == FwReturn::ok)
        write_tid_context(d.tid);
    return rc;
}

/* ---- SRQs ------------------------------------------------------------------ */

FwReturn RoceFirmware::create_srq(const CreateSrqRamrodData& d)
{
    if (d.srq_id >= MAX_SRQS || d.dpi >= hsi::MAX_DPIS || !ring_size_ok(d.ring_size, MAX_WQES) ||
        d.max_sge > MAX_SGE || d.wqe_shift > 5 || (RQ_WQE_UNIT << d.wqe_shift) < sizeof(RqWqe) + d.max_sge * sizeof(Sge) ||
        d.limit > d.ring_size)
        return FwReturn::invalid_param;
    if (d.dpi >= grant_.num_dpis)
        return FwReturn::no_resource;
    if (ctx_.srqs[d.srq_id].exists)
        return FwReturn::bad_state;
    const uint64_t bytes = uint64_t{d.ring_size} << (d.wqe_shift + 4);
    if (ctx_.hw.dma().map(from_regpair(d.ring_base), bytes) == nullptr)
        return FwReturn::dma_error;
    ctx_.hw.clear_doorbell_slot(srq_db_offset(d.dpi, d.srq_id));
    ctx_.srqs[d.srq_id] = Srq{.exists = true,
                              .pd = d.pd,
                              .dpi = d.dpi,
                              .wqe_shift = d.wqe_shift,
                              .max_sge = d.max_sge,
                              .ring = DmaRing(from_regpair(d.ring_base), bytes),
                              .mask = d.ring_size - 1u,
                              .limit = d.limit};
    return FwReturn::ok;
}

FwReturn RoceFirmware::modify_srq(const ModifySrqRamrodData& d)
{
    if (d.srq_id >= MAX_SRQS)
        return FwReturn::invalid_param;
    Srq& srq = ctx_.srqs[d.srq_id];
    if (!srq.exists)
        return FwReturn::not_found;
    if (d.limit > srq.mask + 1)
        return FwReturn::invalid_param;
    srq.limit = d.limit;
    return FwReturn::ok;
}

FwReturn RoceFirmware::destroy_srq(const DestroySrqRamrodData& d)
{
    if (d.srq_id >= MAX_SRQS)
        return FwReturn::invalid_param;
    Srq& srq = ctx_.srqs[d.srq_id];
    if (!srq.exists)
        return FwReturn::not_found;
    if (srq.users != 0)
        return FwReturn::bad_state;
    srq = Srq{};
    return FwReturn::ok;
}

} // namespace cna::fw::roce

namespace cna::fw::roce {

/* ---- Neighbours ---------------------------------------------------------------- */

FwReturn RoceFirmware::set_addresses(const SetAddressesRamrodData& d)
{
    if (d.num_ipv4 > MAX_IPV4_ADDRESSES || d.num_ipv6 > MAX_IPV6_ADDRESSES)
        return FwReturn::invalid_param;
    neighbours_.set_addresses(d);
    return FwReturn::ok;
}

FwReturn RoceFirmware::resolve_neighbour(const ResolveNeighbourRamrodData& d)
{
    if (d.ip_version != IP_VERSION_4 && d.ip_version != IP_VERSION_6)
        return FwReturn::invalid_param;
    neighbours_.ask(d);
    return FwReturn::ok;
}

} // namespace cna::fw::roce
