/* SPDX-License-Identifier: BSD-3-Clause
 * The fastpath, on lcores: WQEs written into the SQ, RQ or SRQ ring and
 * the producer published in the QP's doorbell slot (one release store per
 * call, however many WQEs); CQEs taken by their phase byte and the
 * consumer published for the device. No lock, no syscall, no allocation.
 */
#include <cerrno>
#include <cstring>
#include <type_traits>

#include "cna_rdma_log.h"
#include "cna_rdma_objects.h"

namespace cna::rdma {

static_assert(sizeof(ibv_sge) == sizeof(hsi::rdma::Sge) && offsetof(ibv_sge, lkey) == offsetof(hsi::rdma::Sge, lkey),
              "an ibv_sge is an hsi::rdma::Sge: SGE lists are copied as they are");

namespace {

using hsi::rdma::SqOpcode;

/* The WR's opcode as the application stored it: a C application may store
 * any value in the enum, which C++ may not load as the enum. */
bool sq_opcode(const ibv_send_wr& wr, uint8_t* out)
{
    std::underlying_type_t<ibv_wr_opcode> op;
    std::memcpy(&op, &wr.opcode, sizeof(op));
    switch (op) {
    case IBV_WR_SEND: *out = uint8_t(SqOpcode::send); return true;
    case IBV_WR_SEND_WITH_IMM: *out = uint8_t(SqOpcode::send_with_imm); return true;
    case IBV_WR_RDMA_WRITE: *out = uint8_t(SqOpcode::rdma_write); return true;
    case IBV_WR_RDMA_WRITE_WITH_IMM: *out = uint8_t(SqOpcode::rdma_write_with_imm); return true;
    case IBV_WR_RDMA_READ: *out = uint8_t(SqOpcode::rdma_read); return true;
    case IBV_WR_ATOMIC_CMP_AND_SWP: *out = uint8_t(SqOpcode::atomic_cmp_swap); return true;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: *out = uint8_t(SqOpcode::atomic_fetch_add); return true;
    default: return false;
    }
}

/* A 16-bit ring index the device reported, as the free-running count
 * one past it. */
uint32_t past(uint32_t now, uint16_t index) { return now + static_cast<uint16_t>(index + 1 - now); }

/* An SRQ's WQEs complete on the CQs of all its QPs, polled by as many
 * threads: the consumer only moves forward. */
void advance(std::atomic<uint32_t>& cons, uint16_t index)
{
    uint32_t now = cons.load(std::memory_order_relaxed);
    uint32_t next = past(now, index);
    while (static_cast<int32_t>(next - now) > 0 && !cons.compare_exchange_weak(now, next, std::memory_order_release))
        next = past(now, index);
}

} // namespace

namespace {

ibv_wc_opcode wc_opcode(uint8_t op)
{
    using hsi::rdma::CqeOpcode;
    switch (static_cast<CqeOpcode>(op)) {
    case CqeOpcode::send: return IBV_WC_SEND;
    case CqeOpcode::rdma_write: return IBV_WC_RDMA_WRITE;
    case CqeOpcode::rdma_read: return IBV_WC_RDMA_READ;
    case CqeOpcode::atomic_cmp_swap: return IBV_WC_COMP_SWAP;
    case CqeOpcode::atomic_fetch_add: return IBV_WC_FETCH_ADD;
    case CqeOpcode::recv_rdma_with_imm: return IBV_WC_RECV_RDMA_WITH_IMM;
    case CqeOpcode::recv: break;
    }
    return IBV_WC_RECV;
}

} // namespace

void take_cqe(Cq* cq, const hsi::rdma::RdmaCqe& c, ibv_wc& w)
{
    w.wr_id = c.wr_id;
    w.status = static_cast<ibv_wc_status>(c.status);
    w.opcode = wc_opcode(c.opcode);
    w.vendor_err = c.vendor_error;
    w.byte_len = c.byte_len;
    w.imm_data = c.imm_data;
    const std::vector<Qp*>& qps = cq->dev->qps;
    Qp* qp = c.qp_id < qps.size() ? qps[c.qp_id] : nullptr;
    w.qp_num = qp != nullptr ? qp->ibv.qp_num : hsi::rdma::qpn_of(c.qp_id); /* the GSI QP's is 1 */
    w.src_qp = c.src_qp;
    w.wc_flags = (c.flags & hsi::rdma::cqe::WITH_IMM ? IBV_WC_WITH_IMM : 0) |
                 (c.flags & hsi::rdma::cqe::GRH ? IBV_WC_GRH : 0);
    w.pkey_index = 0;
    w.slid = 0;
    w.sl = c.sl;
    w.dlid_path_bits = 0;
    if (qp != nullptr) {
        if (c.flags & hsi::rdma::cqe::REQUESTER)
            qp->sq_cons.store(past(qp->sq_cons.load(std::memory_order_relaxed), c.wqe_index),
                              std::memory_order_release);
        else if (c.flags & hsi::rdma::cqe::FROM_SRQ)
            advance(qp->srq->cons, c.wqe_index);
        else
            qp->rq_cons.store(past(qp->rq_cons.load(std::memory_order_relaxed), c.wqe_index),
                              std::memory_order_release);
    }
}

namespace {

/* The completions the ring has ready, up to `max`, taken and their
 * consumer published. */
int take_ready(Cq* cq, ibv_wc* wc, int max)
{
    const auto* ring = cq->ring.as<hsi::rdma::RdmaCqe>();
    uint32_t cons = cq->cons;
    int n = 0;
    for (; n < max; n++) {
        const uint32_t at = cons - cq->ring_start;
        const hsi::rdma::RdmaCqe& c = ring[at & cq->mask];
        const uint8_t phase = ((at >> cq->shift) & 1) == 0 ? 1 : 0;
        if (__atomic_load_n(&c.phase, __ATOMIC_ACQUIRE) != phase)
            break;
        take_cqe(cq, c, wc[n]);
        cons++;
    }
    if (n != 0) {
        cq->cons = cons;
        osal::publish(cq->db_cons, cons);
    }
    return n;
}

} // namespace

} // namespace cna::rdma

using namespace cna;
using namespace cna::rdma;

extern "C" {

int cna_rdma_post_send(ibv_qp* ibv, ibv_send_wr* wr, ibv_send_wr** bad_wr)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    const ibv_qp_state state = qp->state.load(std::memory_order_relaxed);
    if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) {
        *bad_wr = wr;
        return EINVAL;
    }
    uint8_t* const ring = qp->sq.as<uint8_t>();
    const uint32_t cons = qp->sq_cons.load(std::memory_order_acquire);
    uint32_t prod = qp->sq_prod;
    int rc = 0;
    for (; wr != nullptr; wr = wr->next) {
        hsi::rdma::SqWqe w{};
        if (prod - cons > qp->sq_mask) {
            rc = ENOMEM;
            break;
        }
        const bool inline_data = (wr->send_flags & IBV_SEND_INLINE) != 0;
        if (!sq_opcode(*wr, &w.opcode) || wr->num_sge < 0 ||
            (!inline_data && static_cast<uint32_t>(wr->num_sge) > qp->max_send_sge)) {
            rc = EINVAL;
            break;
        }
        uint8_t* slot = ring + (std::size_t{prod & qp->sq_mask} << (qp->sq_shift + 6));
        uint8_t* data = slot + qp->sq_data;
        uint64_t length = 0;
        for (int i = 0; i < wr->num_sge; i++)
            length += wr->sg_list[i].length;
        if (inline_data) {
            if (length > qp->max_inline) {
                rc = EINVAL;
                break;
            }
            for (int i = 0; i < wr->num_sge; i++) {
                std::memcpy(data, reinterpret_cast<const void*>(wr->sg_list[i].addr), wr->sg_list[i].length);
                data += wr->sg_list[i].length;
            }
            w.flags |= hsi::rdma::sq_wqe::INLINE;
        } else {
            std::memcpy(data, wr->sg_list, sizeof(ibv_sge) * static_cast<std::size_t>(wr->num_sge));
            w.num_sge = static_cast<uint8_t>(wr->num_sge);
        }
        w.wr_id = wr->wr_id;
        w.length = static_cast<uint32_t>(length);
        w.flags |= (wr->send_flags & IBV_SEND_SIGNALED ? hsi::rdma::sq_wqe::SIGNALED : 0) |
                   (wr->send_flags & IBV_SEND_SOLICITED ? hsi::rdma::sq_wqe::SOLICITED : 0) |
                   (wr->send_flags & IBV_SEND_FENCE ? hsi::rdma::sq_wqe::FENCE : 0);
        w.imm_data = wr->imm_data;
        if (qp->ud) {
            /* The device takes SENDs only; the address handle's path goes
             * into the WQE. */
            const auto* ah = reinterpret_cast<const cna_rdma_ah*>(wr->wr.ud.ah);
            if (ah == nullptr || w.opcode > uint8_t(SqOpcode::send_with_imm)) {
                rc = EINVAL;
                break;
            }
            hsi::rdma::UdAddress to{};
            to.dest_qpn = wr->wr.ud.remote_qpn;
            to.qkey = wr->wr.ud.remote_qkey;
            std::memcpy(&to.path, ah->path, sizeof(to.path));
            std::memcpy(slot + sizeof(w), &to, sizeof(to));
        } else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
            w.remote_addr = wr->wr.atomic.remote_addr;
            w.rkey = wr->wr.atomic.rkey;
            w.compare_add = wr->wr.atomic.compare_add;
            w.swap = wr->wr.atomic.swap;
        } else {
            w.remote_addr = wr->wr.rdma.remote_addr;
            w.rkey = wr->wr.rdma.rkey;
        }
        std::memcpy(slot, &w, sizeof(w));
        prod++;
    }
    if (prod != qp->sq_prod) {
        qp->sq_prod = prod;
        osal::publish(qp->sq_db, prod);
        if (osal::PciFunction* adapter = qp->dev->inline_adapter)
            adapter->adapter_pass(osal::PciFunction::PassCause::doorbell); /* engine=inline: served now */
    }
    if (rc != 0)
        *bad_wr = wr;
    return rc;
}

namespace {

/* Receive WQEs into a ring (an RQ or an SRQ). */
int post_receives(uint8_t* ring, uint32_t mask, uint8_t shift, uint32_t max_sge, uint32_t cons, uint32_t* prod_io,
                  volatile uint32_t* db, ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    uint32_t prod = *prod_io;
    int rc = 0;
    for (; wr != nullptr; wr = wr->next) {
        if (prod - cons > mask) {
            rc = ENOMEM;
            break;
        }
        if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > max_sge) {
            rc = EINVAL;
            break;
        }
        uint8_t* slot = ring + (std::size_t{prod & mask} << (shift + 4));
        hsi::rdma::RqWqe w{};
        w.wr_id = wr->wr_id;
        w.num_sge = static_cast<uint8_t>(wr->num_sge);
        std::memcpy(slot, &w, sizeof(w));
        std::memcpy(slot + sizeof(w), wr->sg_list, sizeof(ibv_sge) * static_cast<std::size_t>(wr->num_sge));
        prod++;
    }
    if (prod != *prod_io) {
        *prod_io = prod;
        osal::publish(db, prod);
    }
    if (rc != 0)
        *bad_wr = wr;
    return rc;
}

} // namespace

int cna_rdma_post_recv(ibv_qp* ibv, ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    if (qp->srq != nullptr || qp->state.load(std::memory_order_relaxed) == IBV_QPS_RESET) {
        *bad_wr = wr;
        return EINVAL;
    }
    return post_receives(qp->rq.as<uint8_t>(), qp->rq_mask, qp->rq_shift, qp->max_recv_sge,
                         qp->rq_cons.load(std::memory_order_acquire), &qp->rq_prod, qp->rq_db, wr, bad_wr);
}

int cna_rdma_post_srq_recv(ibv_srq* ibv, ibv_recv_wr* wr, ibv_recv_wr** bad_wr)
{
    auto* srq = reinterpret_cast<Srq*>(ibv);
    return post_receives(srq->ring.as<uint8_t>(), srq->mask, srq->wqe_shift, srq->max_sge,
                         srq->cons.load(std::memory_order_acquire), &srq->prod, srq->db, wr, bad_wr);
}

int cna_rdma_poll_cq(ibv_cq* ibv, int num_entries, ibv_wc* wc)
{
    auto* cq = reinterpret_cast<Cq*>(ibv);
    int n = 0;
    if (cq->carried_next != cq->carried.size()) [[unlikely]] {
        for (; n < num_entries && cq->carried_next != cq->carried.size(); n++)
            wc[n] = cq->carried[cq->carried_next++];
        if (cq->carried_next == cq->carried.size()) {
            cq->carried.clear();
            cq->carried_next = 0;
        }
    }
    n += take_ready(cq, wc + n, num_entries - n);
    /* engine=inline: an empty poll gives the adapter a pass, and looks again. */
    if (n == 0 && cq->dev->inline_adapter != nullptr &&
        cq->dev->inline_adapter->adapter_pass(osal::PciFunction::PassCause::idle))
        n = take_ready(cq, wc, num_entries);
    return n;
}

int cna_rdma_req_notify_cq(ibv_cq* ibv, int solicited_only)
{
    auto* cq = reinterpret_cast<Cq*>(ibv);
    if (cq->dev->inline_adapter != nullptr) {
        /* Nothing would complete the work the event waits for. */
        RDMA_LOG(ERR, cq->dev, "no completion events with engine=inline: the adapter runs only in post_send and "
                               "poll_cq (engine=threads or engine=service)");
        return EOPNOTSUPP;
    }
    osal::publish(cq->db_arm, hsi::rdma::cq_arm::make(++cq->arm_seq, solicited_only != 0));
    return 0;
}

} // extern "C"
