/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/requester.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/timers.h"
#include "base/log.h"

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

void Requester::configure(uint16_t max_mtu) { ud_mtu_ = ib_mtu_within(max_mtu); }

/* ---- Sending ------------------------------------------------------------------- */

bool Requester::read_wqe(const Qp& qp, uint32_t index, SqWqe& wqe, Sge* sges)
{
    const uint64_t slot = uint64_t{index & qp.sq_mask} << (qp.sq_wqe_shift + 6);
    Qp& q = const_cast<Qp&>(qp);
    if (!ctx_.hw.dma().read(q.sq, slot, &wqe, sizeof(wqe)))
        return false;
    if (sges == nullptr || (wqe.flags & sq_wqe::INLINE) || wqe.num_sge == 0 || wqe.num_sge > qp.max_send_sge)
        return true;
    return ctx_.hw.dma().read(q.sq, slot + sizeof(SqWqe), sges, wqe.num_sge * sizeof(Sge));
}

bool Requester::read_payload(Qp& qp, const SqWqe& wqe, uint64_t inline_at, const Sge* sges, uint32_t offset,
                             uint8_t* dst, uint32_t len, RdmaError& why)
{
    if (wqe.flags & sq_wqe::INLINE) {
        why = RdmaError::dma_fault;
        return ctx_.hw.dma().read(qp.sq, inline_at + offset, dst, len);
    }
    return memory_.copy_from_sges(qp, sges, wqe.num_sge, offset, dst, len, why);
}

void Requester::arm_ack_timer(Qp& qp, uint64_t now_ns)
{
    const uint64_t t = ack_timeout_ns(qp.timeout);
    qp.req.ack_deadline_ns = t == 0 || qp.req.sq_cons == qp.req.sq_next ? 0 : now_ns + t;
}

bool Requester::poll(Qp& qp, uint64_t now_ns, FrameBurst& out)
{
    RequesterState& r = qp.req;
    const uint32_t prod = ctx_.sq_prod(qp);
    if (prod - r.sq_cons > qp.sq_mask + 1) {
        completer_.fail_qp(qp, RdmaError::bad_wqe, RdmaEvent::qp_fatal);
        return true;
    }
    if (r.ack_deadline_ns != 0 && now_ns >= r.ack_deadline_ns && !ack_timed_out(qp, now_ns))
        return true;
    if (r.rnr_until_ns != 0) {
        if (now_ns < r.rnr_until_ns)
            return false;
        r.rnr_until_ns = 0;
    }
    const bool work = send_due(qp, prod, now_ns, out);
    if (qp.state == QpState::sqd && r.sq_cons == r.sq_next && qp.sqd_notify) {
        qp.sqd_notify = false;
        completer_.raise(RdmaEvent::sq_drained, qp.id);
    }
    return work;
}

/* The ACK timer ran out: back to the oldest PSN not acknowledged, or, the
 * retries spent, the QP to ERR (false). */
bool Requester::ack_timed_out(Qp& qp, uint64_t now_ns)
{
    RequesterState& r = qp.req;
    qp.counters.timeouts++;
    counter_add(ctx_.stats.timeouts, 1);
    if (r.retries_left == 0) {
        fail_wqe(qp, r.sq_cons, RdmaError::retry_exhausted);
        return false;
    }
    r.retries_left--;
    go_back(qp, r.unacked_psn);
    arm_ack_timer(qp, now_ns);
    return true;
}

/* Packets from the SQ while the burst has room; true as well when the QP
 * failed on the way. */
bool Requester::send_due(Qp& qp, uint32_t prod, uint64_t now_ns, FrameBurst& out)
{
    RequesterState& r = qp.req;
    bool work = false;
    while (!out.full() && qp.state != QpState::err) {
        if (r.tx_wqe == r.sq_next) {
            /* Everything started is sent: start the next WQE, if it may. */
            const Start start = start_next(qp, prod);
            if (start != Start::started)
                return start == Start::failed || work;
        }
        if (r.cur_index != r.tx_wqe) {
            if (!read_wqe(qp, r.tx_wqe, r.cur, r.cur_sges.data())) {
                completer_.fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
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
    return work;
}

Requester::Start Requester::start_next(Qp& qp, uint32_t prod)
{
    RequesterState& r = qp.req;
    if (r.sq_next == prod || qp.state == QpState::sqd || psn_diff(r.next_psn, r.unacked_psn) >= MAX_OUTSTANDING_PSNS)
        return Start::waits;
    SqWqe wqe;
    if (!read_wqe(qp, r.sq_next, wqe, nullptr)) {
        completer_.fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return Start::failed;
    }
    if (is_read_or_atomic(wqe.opcode) && r.reads_outstanding >= std::max<uint8_t>(qp.max_rd_atomic, 1))
        return Start::waits;
    if ((wqe.flags & sq_wqe::FENCE) && r.reads_outstanding != 0)
        return Start::waits;
    return start_wqe(qp, wqe) ? Start::started : Start::failed;
}

bool Requester::start_wqe(Qp& qp, const SqWqe& wqe)
{
    RequesterState& r = qp.req;
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

bool Requester::send_packet(Qp& qp, const SqWqe& wqe, FrameBurst& out)
{
    RequesterState& r = qp.req;
    const SentWqe& s = r.sent[r.tx_wqe & qp.sq_mask];
    const uint32_t k = static_cast<uint32_t>(psn_diff(r.tx_psn, s.first_psn));
    const bool retransmission = psn_before(r.tx_psn, r.sent_psn);
    const Bth bth{.dest_qp = qp.dest_qpn, .psn = r.tx_psn};
    uint32_t psns = 1;
    if (static_cast<SqOpcode>(wqe.opcode) == SqOpcode::rdma_read) {
        send_read_request(qp, wqe, bth, k, out);
        psns = s.packets - k; /* one request asks for every response still wanted */
    } else if (is_read_or_atomic(wqe.opcode)) {
        send_atomic(qp, wqe, bth, out);
    } else if (!send_data(qp, wqe, bth, k, out)) {
        return false;
    }
    qp.counters.packets_sent++;
    if (retransmission) {
        qp.counters.retransmitted++;
        counter_add(ctx_.stats.retransmitted, 1);
    }
    r.tx_psn = psn_add(r.tx_psn, psns);
    if (psn_after(r.tx_psn, r.sent_psn))
        r.sent_psn = r.tx_psn;
    if (k + psns >= s.packets)
        r.tx_wqe++;
    return true;
}

void Requester::send_read_request(Qp& qp, const SqWqe& wqe, Bth bth, uint32_t k, FrameBurst& out)
{
    const uint64_t offset = uint64_t{k} * qp.path_mtu;
    bth.opcode = op::READ_REQUEST;
    bth.ack_request = true;
    uint8_t* p = packets_.begin_packet(qp.path, out, bth, RETH_LEN, 0);
    write_reth(p + BTH_LEN, Reth{wqe.remote_addr + offset, wqe.rkey, static_cast<uint32_t>(wqe.length - offset)});
    packets_.end_packet(out);
}

void Requester::send_atomic(Qp& qp, const SqWqe& wqe, Bth bth, FrameBurst& out)
{
    const bool cmp_swap = static_cast<SqOpcode>(wqe.opcode) == SqOpcode::atomic_cmp_swap;
    bth.opcode = cmp_swap ? op::CMP_SWAP : op::FETCH_ADD;
    bth.ack_request = true;
    uint8_t* p = packets_.begin_packet(qp.path, out, bth, ATOMIC_ETH_LEN, 0);
    write_atomic_eth(p + BTH_LEN, AtomicEth{wqe.remote_addr, wqe.rkey, cmp_swap ? wqe.swap : wqe.compare_add,
                                            cmp_swap ? wqe.compare_add : 0});
    packets_.end_packet(out);
}

/* Packet k of a SEND or WRITE: a path MTU of its message at most. */
bool Requester::send_data(Qp& qp, const SqWqe& wqe, Bth bth, uint32_t k, FrameBurst& out)
{
    RequesterState& r = qp.req;
    const auto op = static_cast<SqOpcode>(wqe.opcode);
    const bool send = op == SqOpcode::send || op == SqOpcode::send_with_imm;
    const uint32_t offset = k * qp.path_mtu;
    const uint32_t payload = std::min<uint32_t>(qp.path_mtu, wqe.length - offset);
    const Position pos = position(k, r.sent[r.tx_wqe & qp.sq_mask].packets);
    const bool last = pos == Position::last || pos == Position::only;
    const bool first = pos == Position::first || pos == Position::only;
    const bool imm = has_imm(wqe.opcode) && last;
    bth.opcode = send ? send_opcode(pos, imm) : write_opcode(pos, imm);
    bth.solicited = last && (wqe.flags & sq_wqe::SOLICITED) != 0;
    bth.ack_request = last || (k + 1) % ACK_REQUEST_EVERY == 0;
    const bool reth = !send && first;
    const uint32_t ext = (reth ? RETH_LEN : 0) + (imm ? IMMDT_LEN : 0);
    uint8_t* h = packets_.begin_packet(qp.path, out, bth, ext, payload) + BTH_LEN;
    if (reth) {
        write_reth(h, Reth{wqe.remote_addr, wqe.rkey, wqe.length});
        h += RETH_LEN;
    }
    if (imm) {
        std::memcpy(h, &wqe.imm_data, IMMDT_LEN); /* already in network order */
        h += IMMDT_LEN;
    }
    const uint64_t inline_at = (uint64_t{r.tx_wqe & qp.sq_mask} << (qp.sq_wqe_shift + 6)) + sizeof(SqWqe);
    RdmaError why = RdmaError::none;
    if (!read_payload(qp, wqe, inline_at, r.cur_sges.data(), offset, h, payload, why)) {
        /* The frame never joins the burst: nothing half-built goes out. */
        fail_wqe(qp, r.tx_wqe, why);
        return false;
    }
    packets_.end_packet(out);
    return true;
}

void Requester::go_back(Qp& qp, uint32_t psn)
{
    RequesterState& r = qp.req;
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

/* ---- Retiring ------------------------------------------------------------------ */

void Requester::fail_wqe(Qp& qp, uint32_t index, RdmaError why)
{
    RequesterState& r = qp.req;
    while (r.sq_cons != index && r.sq_cons != r.sq_next)
        retire(qp, CqeStatus::work_request_flushed, RdmaError::flushed);
    retire(qp, status_of(why), why);
    completer_.fail_qp(qp, why, why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
}

void Requester::retire(Qp& qp, CqeStatus status, RdmaError why)
{
    RequesterState& r = qp.req;
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
            completer_.complete(qp.sq_cq, cqe);
        }
    }
    if (is_read_or_atomic(s.opcode))
        r.reads_outstanding--;
    r.sq_cons++;
    if (r.sq_cons != r.sq_next)
        r.read_next_psn = r.sent[r.sq_cons & qp.sq_mask].first_psn;
}

void Requester::retire_acked(Qp& qp, uint32_t psn, uint64_t now_ns)
{
    RequesterState& r = qp.req;
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

void Requester::on_response(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len,
                            uint64_t now_ns)
{
    if (qp.state != QpState::rts && qp.state != QpState::sqd)
        return;
    const uint16_t f = opcode_flags(bth.opcode);
    if (f & opf::READ) {
        on_read_response(qp, bth, payload, len, now_ns);
        return;
    }
    const Aeth aeth = read_aeth(hdrs);
    if (syndrome::kind(aeth.syndrome) != AethKind::ack) {
        on_nak(qp, bth, aeth.syndrome, now_ns);
        return;
    }
    if (f & opf::ATOMIC)
        on_atomic_ack(qp, bth, hdrs + AETH_LEN, now_ns);
    else
        on_ack(qp, bth, now_ns);
}

void Requester::on_ack(Qp& qp, const Bth& bth, uint64_t now_ns)
{
    /* An ACK for something never sent is ignored, as is a stale one. */
    if (psn_diff(bth.psn, qp.req.sent_psn) >= 0)
        return;
    retire_acked(qp, psn_add(bth.psn, 1), now_ns);
}

void Requester::on_read_response(Qp& qp, const Bth& bth, const uint8_t* payload, uint32_t len, uint64_t now_ns)
{
    RequesterState& r = qp.req;
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
        completer_.fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const uint32_t want = std::min<uint32_t>(qp.path_mtu, wqe.length - std::min(wqe.length, offset));
    if (len != want) {
        fail_wqe(qp, r.sq_cons, RdmaError::bad_response);
        return;
    }
    RdmaError why = RdmaError::none;
    if (!memory_.copy_to_sges(qp, sges.data(), wqe.num_sge, offset, payload, len, why)) {
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

void Requester::on_atomic_ack(Qp& qp, const Bth& bth, const uint8_t* original_be, uint64_t now_ns)
{
    RequesterState& r = qp.req;
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
        completer_.fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const uint64_t original = load_be64(original_be);
    RdmaError why = RdmaError::none;
    if (!memory_.copy_to_sges(qp, sges.data(), wqe.num_sge, 0, reinterpret_cast<const uint8_t*>(&original), ATOMIC_SIZE,
                              why)) {
        fail_wqe(qp, r.sq_cons, why);
        return;
    }
    retire(qp, CqeStatus::success, RdmaError::none);
    retire_acked(qp, psn_add(bth.psn, 1), now_ns);
}

void Requester::on_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns)
{
    RequesterState& r = qp.req;
    if (psn_diff(bth.psn, r.sent_psn) >= 0 || psn_before(bth.psn, r.unacked_psn))
        return;
    retire_acked(qp, bth.psn, now_ns); /* everything before the NAKed PSN arrived */
    qp.counters.naks_received++;
    counter_add(ctx_.stats.naks_received, 1);
    if (syndrome::kind(syndrome) == AethKind::rnr_nak) {
        on_rnr_nak(qp, bth, syndrome, now_ns);
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

/* The responder had no receive for it: the same PSN again once the time
 * the NAK asks for has passed, as often as rnr_retry allows. */
void Requester::on_rnr_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns)
{
    RequesterState& r = qp.req;
    qp.counters.rnr_naks_received++;
    counter_add(ctx_.stats.rnr_naks_received, 1);
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
}

/* ---- Datagrams ------------------------------------------------------------------ */

bool Requester::poll_datagrams(Qp& qp, FrameBurst& out)
{
    RequesterState& r = qp.req;
    switch (qp.state) {
    case QpState::rts: {
        const uint32_t prod = ctx_.sq_prod(qp);
        if (prod - r.sq_cons > qp.sq_mask + 1) {
            completer_.fail_qp(qp, RdmaError::bad_wqe, RdmaEvent::qp_fatal);
            return true;
        }
        bool work = false;
        while (r.sq_cons != prod && !out.full() && qp.state == QpState::rts) {
            send_datagram(qp, out);
            work = true;
        }
        return work;
    }
    case QpState::sqd:
        /* Every datagram started is complete: drained at once. */
        if (!qp.sqd_notify)
            return false;
        qp.sqd_notify = false;
        completer_.raise(RdmaEvent::sq_drained, qp.id);
        return true;
    case QpState::sqe: {
        const bool work = completer_.flush_ring(qp, true, r.sq_cons, ctx_.sq_prod(qp));
        r.sq_next = r.tx_wqe = r.sq_cons;
        return work;
    }
    case QpState::err: return completer_.flush(qp);
    default: return false;
    }
}

void Requester::send_datagram(Qp& qp, FrameBurst& out)
{
    RequesterState& r = qp.req;
    Dma& dma = ctx_.hw.dma();
    const uint64_t slot = uint64_t{r.sq_cons & qp.sq_mask} << (qp.sq_wqe_shift + 6);
    const uint64_t data_at = slot + sizeof(SqWqe) + sizeof(UdAddress);
    SqWqe wqe;
    UdAddress to;
    if (!dma.read(qp.sq, slot, &wqe, sizeof(wqe)) || !dma.read(qp.sq, slot + sizeof(wqe), &to, sizeof(to))) {
        completer_.fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const bool imm = static_cast<SqOpcode>(wqe.opcode) == SqOpcode::send_with_imm;
    /* The requester's books as for any WQE: retire() completes it. A
     * datagram is a SEND: another opcode fails as one (no READ counted). */
    r.sent[r.sq_cons & qp.sq_mask] = SentWqe{r.next_psn, 1, imm ? wqe.opcode : uint8_t(SqOpcode::send),
                                             (wqe.flags & sq_wqe::SIGNALED) != 0 || qp.signal_all};
    r.sq_next = r.sq_cons + 1;
    std::array<Sge, MAX_SGE> sges;
    RdmaError why = check_datagram(qp, wqe, to, data_at, sges.data());
    if (why != RdmaError::none) {
        fail_datagram(qp, why);
        return;
    }
    const Bth bth{.opcode = imm ? op::UD_SEND_ONLY_IMM : op::UD_SEND_ONLY,
                  .solicited = (wqe.flags & sq_wqe::SOLICITED) != 0,
                  .dest_qp = to.dest_qpn & 0xffffff,
                  .psn = r.next_psn};
    uint8_t* p = packets_.begin_packet(to.path, out, bth, DETH_LEN + (imm ? IMMDT_LEN : 0), wqe.length);
    const bool gsi = qp.type == QpType::gsi;
    write_deth(p + BTH_LEN, Deth{gsi || (to.qkey & QKEY_USE_QPS) ? qp.qkey : to.qkey, gsi ? GSI_QPN : qpn_of(qp.id)});
    uint8_t* payload = p + BTH_LEN + DETH_LEN;
    if (imm) {
        std::memcpy(payload, &wqe.imm_data, IMMDT_LEN); /* already in network order */
        payload += IMMDT_LEN;
    }
    if (!read_payload(qp, wqe, data_at, sges.data(), 0, payload, wqe.length, why)) {
        /* The frame never joins the burst. */
        fail_datagram(qp, why);
        return;
    }
    packets_.end_packet(out);
    qp.counters.packets_sent++;
    r.next_psn = psn_add(r.next_psn, 1);
    retire(qp, CqeStatus::success, RdmaError::none);
}

RdmaError Requester::check_datagram(Qp& qp, const SqWqe& wqe, const UdAddress& to, uint64_t data_at, Sge* sges)
{
    const auto opcode = static_cast<SqOpcode>(wqe.opcode);
    const bool inline_data = (wqe.flags & sq_wqe::INLINE) != 0;
    if ((opcode != SqOpcode::send && opcode != SqOpcode::send_with_imm) || !path_well_formed(to.path) ||
        (inline_data ? wqe.length > qp.max_inline : wqe.num_sge > qp.max_send_sge))
        return RdmaError::bad_wqe;
    if (wqe.length > ud_mtu_)
        return RdmaError::ud_too_long;
    if (!inline_data && wqe.num_sge != 0 && !ctx_.hw.dma().read(qp.sq, data_at, sges, wqe.num_sge * sizeof(Sge)))
        return RdmaError::dma_fault;
    return RdmaError::none;
}

void Requester::fail_datagram(Qp& qp, RdmaError why)
{
    retire(qp, status_of(why), why);
    if (why == RdmaError::dma_fault) {
        completer_.fail_qp(qp, why, RdmaEvent::qp_fatal);
        return;
    }
    /* A local error of an unreliable QP stops its SQ only (IBA 10.3.1). */
    qp.state = QpState::sqe;
    qp.last_error = why;
    log(LogLevel::info, "roce: %s UD QP %u to SQE (error %u)", ctx_.hw.name().c_str(), qp.id, static_cast<uint32_t>(why));
}

} // namespace cna::fw::roce
