/* SPDX-License-Identifier: BSD-3-Clause
 * The requester: SQ WQEs out as packets cut to the path MTU, each WQE's
 * PSNs remembered until its ACK (or its READ responses, or its atomic
 * ACK) retires it; go-back-N from the oldest unacknowledged PSN on a
 * timeout or a sequence NAK, a wait on an RNR NAK, and the QP to ERR when
 * the retries run out or the responder refuses.
 */
#include <algorithm>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/roce_storm.h"
#include "roce/timers.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

/* PSNs a QP may have outstanding: what the responder's window allows
 * is half the PSN space; this keeps retransmissions short. */
constexpr int32_t MAX_OUTSTANDING_PSNS = 1024;
/* Ask for an ACK this often within a long message, so the window moves. */
constexpr uint32_t ACK_REQUEST_EVERY = 64;

bool has_imm(uint8_t op)
{
    return op == static_cast<uint8_t>(SqOpcode::send_with_imm) ||
           op == static_cast<uint8_t>(SqOpcode::rdma_write_with_imm);
}

} // namespace

bool RoceStorm::read_wqe(const Qp& qp, uint32_t index, SqWqe& wqe, Sge* sges)
{
    const uint64_t slot = uint64_t{index & qp.sq_mask} << (qp.sq_wqe_shift + 6);
    Qp& q = const_cast<Qp&>(qp);
    if (!hw_.dma().read(q.sq, slot, &wqe, sizeof(wqe)))
        return false;
    if (sges == nullptr || (wqe.flags & sq_wqe::INLINE) || wqe.num_sge == 0 || wqe.num_sge > qp.max_send_sge)
        return true;
    return hw_.dma().read(q.sq, slot + sizeof(SqWqe), sges, wqe.num_sge * sizeof(Sge));
}

void RoceStorm::arm_ack_timer(Qp& qp, uint64_t now_ns)
{
    const uint64_t t = ack_timeout_ns(qp.timeout);
    qp.req.ack_deadline_ns = t == 0 || qp.req.sq_cons == qp.req.sq_next ? 0 : now_ns + t;
}

bool RoceStorm::poll_requester(Qp& qp, uint64_t now_ns, FrameBurst& out)
{
    Requester& r = qp.req;
    const uint32_t prod = sq_prod(qp);
    if (prod - r.sq_cons > qp.sq_mask + 1) {
        fail_qp(qp, RdmaError::bad_wqe, RdmaEvent::qp_fatal);
        return true;
    }
    if (r.ack_deadline_ns != 0 && now_ns >= r.ack_deadline_ns) {
        qp.counters.timeouts++;
        counter_add(stats_.timeouts, 1);
        if (r.retries_left == 0) {
            fail_wqe(qp, r.sq_cons, RdmaError::retry_exhausted);
            return true;
        }
        r.retries_left--;
        go_back(qp, r.unacked_psn);
        arm_ack_timer(qp, now_ns);
    }
    if (r.rnr_until_ns != 0) {
        if (now_ns < r.rnr_until_ns)
            return false;
        r.rnr_until_ns = 0;
    }
    bool work = false;
    while (!out.full() && qp.state != QpState::err) {
        if (r.tx_wqe == r.sq_next) {
            /* Everything started is sent: start the next WQE, if it may. */
            if (r.sq_next == prod || qp.state == QpState::sqd ||
                psn_diff(r.next_psn, r.unacked_psn) >= MAX_OUTSTANDING_PSNS)
                break;
            SqWqe wqe;
            if (!read_wqe(qp, r.sq_next, wqe, nullptr)) {
                fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
                return true;
            }
            if (is_read_or_atomic(wqe.opcode) && r.reads_outstanding >= std::max<uint8_t>(qp.max_rd_atomic, 1))
                break;
            if ((wqe.flags & sq_wqe::FENCE) && r.reads_outstanding != 0)
                break;
            if (!start_wqe(qp, wqe))
                return true;
        }
        if (r.cur_index != r.tx_wqe) {
            if (!read_wqe(qp, r.tx_wqe, r.cur, r.cur_sges.data())) {
                fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
                return true;
            }
            r.cur_index = r.tx_wqe;
        }
        if (!send_packet(qp, r.cur, out))
            return true;
        if (r.ack_deadline_ns == 0)
            arm_ack_timer(qp, now_ns);
        work = true;
    }
    if (qp.state == QpState::sqd && r.sq_cons == r.sq_next && qp.sqd_notify) {
        qp.sqd_notify = false;
        raise(RdmaEvent::sq_drained, qp.id);
    }
    return work;
}

bool RoceStorm::start_wqe(Qp& qp, const SqWqe& wqe)
{
    Requester& r = qp.req;
    const auto op = static_cast<SqOpcode>(wqe.opcode);
    const bool inline_data = (wqe.flags & sq_wqe::INLINE) != 0;
    bool ok = wqe.opcode <= static_cast<uint8_t>(SqOpcode::atomic_fetch_add) && wqe.length <= MAX_MSG_SIZE;
    if (inline_data)
        ok = ok && wqe.length <= qp.max_inline && (op == SqOpcode::send || op == SqOpcode::send_with_imm ||
                                                   op == SqOpcode::rdma_write || op == SqOpcode::rdma_write_with_imm);
    else
        ok = ok && wqe.num_sge <= qp.max_send_sge;
    if (ok && is_read_or_atomic(wqe.opcode) && op != SqOpcode::rdma_read)
        ok = wqe.length == ATOMIC_SIZE && atomic_aligned(wqe.remote_addr);
    if (!ok) {
        /* Retire it in error at once: it took no PSN. */
        r.sent[r.sq_next & qp.sq_mask] = SentWqe{r.next_psn, 0, wqe.opcode, true};
        r.sq_next++;
        fail_wqe(qp, r.sq_next - 1, RdmaError::bad_wqe);
        return false;
    }
    const uint32_t packets = is_read_or_atomic(wqe.opcode) && op != SqOpcode::rdma_read
                                 ? 1
                                 : packets_of(wqe.length, qp.path_mtu);
    r.sent[r.sq_next & qp.sq_mask] =
        SentWqe{r.next_psn, packets, wqe.opcode, (wqe.flags & sq_wqe::SIGNALED) != 0 || qp.signal_all};
    if (r.sq_cons == r.sq_next)
        r.read_next_psn = r.next_psn;
    if (is_read_or_atomic(wqe.opcode))
        r.reads_outstanding++;
    r.next_psn = psn_add(r.next_psn, packets);
    r.sq_next++;
    return true;
}

bool RoceStorm::send_packet(Qp& qp, const SqWqe& wqe, FrameBurst& out)
{
    Requester& r = qp.req;
    const SentWqe& s = r.sent[r.tx_wqe & qp.sq_mask];
    const uint32_t k = static_cast<uint32_t>(psn_diff(r.tx_psn, s.first_psn));
    const auto op = static_cast<SqOpcode>(wqe.opcode);
    const bool retransmission = psn_before(r.tx_psn, r.sent_psn);
    Bth bth{.dest_qp = qp.dest_qpn, .psn = r.tx_psn};
    uint32_t psns = 1;

    if (op == SqOpcode::rdma_read) {
        const uint64_t offset = uint64_t{k} * qp.path_mtu;
        bth.opcode = op::READ_REQUEST;
        bth.ack_request = true;
        uint8_t* p = begin_packet(qp.path, out, bth, RETH_LEN, 0);
        write_reth(p + BTH_LEN, Reth{wqe.remote_addr + offset, wqe.rkey, static_cast<uint32_t>(wqe.length - offset)});
        end_packet(out);
        psns = s.packets - k;
    } else if (is_read_or_atomic(wqe.opcode)) {
        const bool cmp_swap = op == SqOpcode::atomic_cmp_swap;
        bth.opcode = cmp_swap ? op::CMP_SWAP : op::FETCH_ADD;
        bth.ack_request = true;
        uint8_t* p = begin_packet(qp.path, out, bth, ATOMIC_ETH_LEN, 0);
        write_atomic_eth(p + BTH_LEN, AtomicEth{wqe.remote_addr, wqe.rkey, cmp_swap ? wqe.swap : wqe.compare_add,
                                                cmp_swap ? wqe.compare_add : 0});
        end_packet(out);
    } else {
        const bool send = op == SqOpcode::send || op == SqOpcode::send_with_imm;
        const uint32_t offset = k * qp.path_mtu;
        const uint32_t payload = std::min<uint32_t>(qp.path_mtu, wqe.length - offset);
        const Position pos = position(k, s.packets);
        const bool last = pos == Position::last || pos == Position::only;
        const bool first = pos == Position::first || pos == Position::only;
        const bool imm = has_imm(wqe.opcode) && last;
        bth.opcode = send ? send_opcode(pos, imm) : write_opcode(pos, imm);
        bth.solicited = last && (wqe.flags & sq_wqe::SOLICITED) != 0;
        bth.ack_request = last || (k + 1) % ACK_REQUEST_EVERY == 0;
        const bool reth = !send && first;
        const uint32_t ext = (reth ? RETH_LEN : 0) + (imm ? IMMDT_LEN : 0);
        uint8_t* p = begin_packet(qp.path, out, bth, ext, payload);
        uint8_t* h = p + BTH_LEN;
        if (reth) {
            write_reth(h, Reth{wqe.remote_addr, wqe.rkey, wqe.length});
            h += RETH_LEN;
        }
        if (imm) {
            std::memcpy(h, &wqe.imm_data, IMMDT_LEN); /* already in network order */
            h += IMMDT_LEN;
        }
        RdmaError why = RdmaError::none;
        bool copied;
        if (wqe.flags & sq_wqe::INLINE) {
            const uint64_t slot = (uint64_t{r.tx_wqe & qp.sq_mask} << (qp.sq_wqe_shift + 6)) + sizeof(SqWqe);
            copied = hw_.dma().read(qp.sq, slot + offset, h, payload);
            why = RdmaError::dma_fault;
        } else {
            copied = copy_from_sges(qp, r.cur_sges.data(), wqe.num_sge, offset, h, payload, why);
        }
        if (!copied) {
            /* The frame never joins the burst: nothing half-built goes out. */
            fail_wqe(qp, r.tx_wqe, why);
            return false;
        }
        end_packet(out);
    }
    qp.counters.packets_sent++;
    if (retransmission) {
        qp.counters.retransmitted++;
        counter_add(stats_.retransmitted, 1);
    }
    r.tx_psn = psn_add(r.tx_psn, psns);
    if (psn_after(r.tx_psn, r.sent_psn))
        r.sent_psn = r.tx_psn;
    if (k + psns >= s.packets)
        r.tx_wqe++;
    return true;
}

void RoceStorm::fail_wqe(Qp& qp, uint32_t index, RdmaError why)
{
    Requester& r = qp.req;
    while (r.sq_cons != index && r.sq_cons != r.sq_next)
        retire(qp, CqeStatus::work_request_flushed, RdmaError::flushed);
    retire(qp, status_of(why), why);
    fail_qp(qp, why, why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
}

void RoceStorm::go_back(Qp& qp, uint32_t psn)
{
    Requester& r = qp.req;
    for (uint32_t i = r.sq_cons; i != r.sq_next; i++) {
        const SentWqe& s = r.sent[i & qp.sq_mask];
        if (psn_diff(psn, s.first_psn) >= 0 && psn_diff(psn, psn_add(s.first_psn, s.packets)) < 0) {
            r.tx_wqe = i;
            r.tx_psn = psn;
            return;
        }
    }
    r.tx_wqe = r.sq_next;
    r.tx_psn = r.next_psn;
}

void RoceStorm::retire(Qp& qp, CqeStatus status, RdmaError why)
{
    Requester& r = qp.req;
    if (r.sq_cons == r.sq_next)
        return;
    const SentWqe& s = r.sent[r.sq_cons & qp.sq_mask];
    if (s.signaled || status != CqeStatus::success) {
        SqWqe wqe;
        if (read_wqe(qp, r.sq_cons, wqe, nullptr)) {
            RdmaCqe cqe{};
            cqe.wr_id = wqe.wr_id;
            cqe.byte_len = wqe.length;
            cqe.qp_id = qp.id;
            cqe.wqe_index = static_cast<uint16_t>(r.sq_cons);
            cqe.status = static_cast<uint8_t>(status);
            cqe.vendor_error = static_cast<uint8_t>(why);
            cqe.opcode = requester_opcode(s.opcode);
            cqe.flags = cqe::REQUESTER;
            complete(qp.sq_cq, cqe);
        }
    }
    if (is_read_or_atomic(s.opcode))
        r.reads_outstanding--;
    r.sq_cons++;
    if (r.sq_cons != r.sq_next)
        r.read_next_psn = r.sent[r.sq_cons & qp.sq_mask].first_psn;
}

void RoceStorm::retire_acked(Qp& qp, uint32_t psn, uint64_t now_ns)
{
    Requester& r = qp.req;
    bool progress = false;
    while (r.sq_cons != r.sq_next) {
        const SentWqe& s = r.sent[r.sq_cons & qp.sq_mask];
        if (is_read_or_atomic(s.opcode) || psn_before(psn, psn_add(s.first_psn, s.packets)))
            break;
        retire(qp, CqeStatus::success, RdmaError::none);
        progress = true;
    }
    /* An ACK past a READ or atomic still waiting for its response means
     * the response was lost: ask again from there. */
    uint32_t acked = psn;
    if (r.sq_cons != r.sq_next && is_read_or_atomic(r.sent[r.sq_cons & qp.sq_mask].opcode) &&
        psn_after(psn, r.read_next_psn)) {
        acked = r.read_next_psn;
        go_back(qp, acked);
    }
    if (psn_after(acked, r.unacked_psn)) {
        r.unacked_psn = acked;
        progress = true;
    }
    if (progress) {
        r.retries_left = qp.retry_cnt;
        if (qp.rnr_retry != INFINITE_RNR_RETRY)
            r.rnr_retries_left = qp.rnr_retry;
        arm_ack_timer(qp, now_ns);
    }
}

void RoceStorm::on_ack(Qp& qp, const Bth& bth, uint64_t now_ns)
{
    /* An ACK for something never sent is ignored, as is a stale one. */
    if (psn_diff(bth.psn, qp.req.sent_psn) >= 0)
        return;
    retire_acked(qp, psn_add(bth.psn, 1), now_ns);
}

void RoceStorm::on_read_response(Qp& qp, const Bth& bth, const uint8_t* payload, uint32_t len, uint64_t now_ns)
{
    Requester& r = qp.req;
    if (psn_diff(bth.psn, r.sent_psn) >= 0)
        return;
    retire_acked(qp, bth.psn, now_ns); /* a response acknowledges every PSN before it */
    if (r.sq_cons == r.sq_next || r.sent[r.sq_cons & qp.sq_mask].opcode != static_cast<uint8_t>(SqOpcode::rdma_read))
        return;
    const SentWqe& s = r.sent[r.sq_cons & qp.sq_mask];
    if (bth.psn != r.read_next_psn) {
        if (psn_after(bth.psn, r.read_next_psn) && r.nak_psn_seen != r.read_next_psn) {
            r.nak_psn_seen = r.read_next_psn; /* a response was lost: ask once for the rest */
            go_back(qp, r.read_next_psn);
        }
        return;
    }
    SqWqe wqe;
    std::array<Sge, MAX_SGE> sges;
    const uint32_t k = static_cast<uint32_t>(psn_diff(bth.psn, s.first_psn));
    const uint32_t offset = k * qp.path_mtu;
    if (!read_wqe(qp, r.sq_cons, wqe, sges.data())) {
        fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const uint32_t want = std::min<uint32_t>(qp.path_mtu, wqe.length - std::min(wqe.length, offset));
    if (len != want) {
        fail_wqe(qp, r.sq_cons, RdmaError::bad_response);
        return;
    }
    RdmaError why = RdmaError::none;
    if (!copy_to_sges(qp, sges.data(), wqe.num_sge, offset, payload, len, why)) {
        fail_wqe(qp, r.sq_cons, why);
        return;
    }
    r.read_next_psn = psn_add(r.read_next_psn, 1);
    if (k + 1 >= s.packets) {
        const uint32_t end = psn_add(s.first_psn, s.packets);
        retire(qp, CqeStatus::success, RdmaError::none);
        retire_acked(qp, end, now_ns);
    }
}

void RoceStorm::on_atomic_ack(Qp& qp, const Bth& bth, const uint8_t* original_be, uint64_t now_ns)
{
    Requester& r = qp.req;
    if (psn_diff(bth.psn, r.sent_psn) >= 0)
        return;
    retire_acked(qp, bth.psn, now_ns);
    if (r.sq_cons == r.sq_next)
        return;
    const SentWqe& s = r.sent[r.sq_cons & qp.sq_mask];
    if (!is_read_or_atomic(s.opcode) || s.opcode == static_cast<uint8_t>(SqOpcode::rdma_read) ||
        s.first_psn != bth.psn)
        return;
    SqWqe wqe;
    std::array<Sge, MAX_SGE> sges;
    if (!read_wqe(qp, r.sq_cons, wqe, sges.data())) {
        fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const uint64_t original = load_be64(original_be);
    RdmaError why = RdmaError::none;
    if (!copy_to_sges(qp, sges.data(), wqe.num_sge, 0, reinterpret_cast<const uint8_t*>(&original), ATOMIC_SIZE,
                      why)) {
        fail_wqe(qp, r.sq_cons, why);
        return;
    }
    retire(qp, CqeStatus::success, RdmaError::none);
    retire_acked(qp, psn_add(bth.psn, 1), now_ns);
}

void RoceStorm::on_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns)
{
    Requester& r = qp.req;
    if (psn_diff(bth.psn, r.sent_psn) >= 0 || psn_before(bth.psn, r.unacked_psn))
        return;
    retire_acked(qp, bth.psn, now_ns); /* everything before the NAKed PSN arrived */
    qp.counters.naks_received++;
    counter_add(stats_.naks_received, 1);
    if (syndrome::kind(syndrome) == AethKind::rnr_nak) {
        qp.counters.rnr_naks_received++;
        counter_add(stats_.rnr_naks_received, 1);
        if (qp.rnr_retry != INFINITE_RNR_RETRY) {
            if (r.rnr_retries_left == 0) {
                fail_wqe(qp, r.sq_cons, RdmaError::rnr_retry_exhausted);
                return;
            }
            r.rnr_retries_left--;
        }
        r.rnr_until_ns = now_ns + rnr_timer_ns(syndrome::value(syndrome));
        go_back(qp, bth.psn);
        arm_ack_timer(qp, r.rnr_until_ns);
        return;
    }
    switch (static_cast<NakCode>(syndrome::value(syndrome))) {
    case NakCode::psn_sequence_error:
        if (r.nak_psn_seen == bth.psn)
            return; /* the same loss, reported again */
        r.nak_psn_seen = bth.psn;
        if (r.retries_left == 0) {
            fail_wqe(qp, r.sq_cons, RdmaError::retry_exhausted);
            return;
        }
        r.retries_left--;
        go_back(qp, bth.psn);
        return;
    case NakCode::remote_access_error: fail_wqe(qp, r.sq_cons, RdmaError::nak_remote_access); return;
    case NakCode::remote_operational_error: fail_wqe(qp, r.sq_cons, RdmaError::nak_remote_operation); return;
    default: fail_wqe(qp, r.sq_cons, RdmaError::nak_invalid_request); return;
    }
}

} // namespace cna::fw::roce
