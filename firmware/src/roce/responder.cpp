/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/responder.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "bus/dma.h"
#include "function/function.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

constexpr uint32_t IPV4_HLEN = 20;

bool may_respond(QpState s) { return s == QpState::rtr || s == QpState::rts || s == QpState::sqd; }

/* Whether a QP of protection domain `pd` may access [va, va + len) through
 * `rkey` as `need`. A zero-length access touches no memory and its R_Key
 * and VA are not checked (IBA C9-88): *mr then stays null. */
bool remote_access_ok(const MrTable& mrs, uint32_t rkey, uint16_t pd, uint64_t va, uint64_t len, uint8_t need,
                      const MemoryRegion** mr)
{
    return len == 0 || mrs.check(rkey, pd, va, len, need, mr) == MrCheck::ok;
}

} // namespace

/* ---- A request's steps ---------------------------------------------------------- */

void Responder::on_request(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len)
{
    /* The steps in the order the transport takes them: a packet a step
     * stops goes no further. The keys come before the receive, so a
     * request they refuse takes no receive WQE. */
    static constexpr Step STEPS[] = {
        &Responder::check_psn,
        &Responder::check_opcode,
        &Responder::check_rkey,
        &Responder::check_length,
        &Responder::check_resources,
        &Responder::execute,
        &Responder::acknowledge,
    };
    if (!may_respond(qp.state))
        return;
    qp.counters.packets_received++;
    const uint16_t f = opcode_flags(bth.opcode);
    Request req{.bth = bth,
                .flags = f,
                .hdrs = hdrs,
                .payload = payload,
                .len = len,
                .imm = f & opf::IMMDT ? hdrs + (f & opf::RETH ? RETH_LEN : 0) : nullptr};
    Verdict verdict = Verdict::next;
    for (Step step : STEPS) {
        verdict = (this->*step)(qp, req);
        if (verdict != Verdict::next)
            break;
    }
    if (verdict != Verdict::done)
        refuse(qp, req, verdict);
}

Responder::Verdict Responder::check_psn(Qp& qp, Request& req)
{
    switch (classify_psn(req.bth.psn, qp.resp.epsn)) {
    case PsnClass::duplicate: return Verdict::duplicate;
    case PsnClass::ahead: return Verdict::out_of_sequence;
    case PsnClass::expected: break;
    }
    qp.resp.nak_sent = false;
    return Verdict::next;
}

/* The opcode fits the message in progress, the payload the opcode. */
Responder::Verdict Responder::check_opcode(Qp& qp, Request& req)
{
    if (!opcode_in_sequence(qp.resp.in_progress, req.bth.opcode) ||
        !payload_length_ok(req.bth.opcode, req.len, qp.path_mtu))
        return Verdict::invalid_request;
    return Verdict::next;
}

/* What a RETH or an AtomicETH asks for: its R_Key, the range at its VA
 * and the access, which the QP must allow too. A SEND carries neither; a
 * WRITE's RETH comes with its first packet, and each packet's own range
 * is checked again as it is placed. */
Responder::Verdict Responder::check_rkey(Qp& qp, Request& req)
{
    const uint16_t f = req.flags;
    if (f & opf::ATOMIC) {
        req.atomic = read_atomic_eth(req.hdrs);
        if (!atomic_aligned(req.atomic.va))
            return Verdict::invalid_request;
        if (!(qp.access & access::REMOTE_ATOMIC) ||
            ctx_.mrs.check(req.atomic.rkey, qp.pd, req.atomic.va, ATOMIC_SIZE, access::REMOTE_ATOMIC, &req.mr) !=
                MrCheck::ok)
            return Verdict::access_error;
        return Verdict::next;
    }
    if (!(f & opf::RETH))
        return Verdict::next;
    req.reth = read_reth(req.hdrs);
    const bool read = (f & opf::READ) != 0;
    const uint8_t need = read ? access::REMOTE_READ : access::REMOTE_WRITE;
    const MemoryRegion* mr = nullptr;
    if (!(qp.access & need) || (read && req.reth.length > MAX_MSG_SIZE) ||
        !remote_access_ok(ctx_.mrs, req.reth.rkey, qp.pd, req.reth.va, req.reth.length, need, &mr))
        return Verdict::access_error;
    return Verdict::next;
}

/* A WRITE's packets add up to the length its RETH announced: none goes
 * past it, the last ends on it. */
Responder::Verdict Responder::check_length(Qp& qp, Request& req)
{
    if (!(req.flags & opf::WRITE))
        return Verdict::next;
    const uint32_t left = req.flags & opf::FIRST ? req.reth.length : qp.resp.write_left;
    if (req.len > left || ((req.flags & opf::LAST) && req.len != left))
        return Verdict::invalid_request;
    return Verdict::next;
}

/* A SEND's first packet and a WRITE with immediate each consume a receive
 * WQE: none posted is RNR, before anything is placed. */
Responder::Verdict Responder::check_resources(Qp& qp, Request& req)
{
    const bool consumes = req.flags & opf::SEND ? (req.flags & opf::FIRST) != 0 : req.imm != nullptr;
    return !consumes || take_receive(qp) ? Verdict::next : Verdict::no_receive;
}

Responder::Verdict Responder::execute(Qp& qp, Request& req)
{
    if (req.flags & opf::SEND)
        return execute_send(qp, req);
    if (req.flags & opf::WRITE)
        return execute_write(qp, req);
    if (req.flags & opf::ATOMIC)
        return execute_atomic(qp, req);
    /* A READ: its data is read as its responses go out. */
    qp.resp.msn = psn_add(qp.resp.msn, 1);
    return Verdict::next;
}

Responder::Verdict Responder::execute_send(Qp& qp, Request& req)
{
    Receive& recv = qp.resp.recv;
    if (!memory_.copy_to_sges(qp, recv.sges.data(), recv.num_sge, recv.placed, req.payload, req.len, req.why)) {
        complete_receive(qp, CqeOpcode::recv, recv.placed, req.bth, nullptr, req.why);
        return Verdict::placement_failed;
    }
    recv.placed += req.len;
    if (req.flags & opf::LAST) {
        complete_receive(qp, CqeOpcode::recv, recv.placed, req.bth, req.imm, RdmaError::none);
        qp.resp.msn = psn_add(qp.resp.msn, 1);
    }
    return Verdict::next;
}

Responder::Verdict Responder::execute_write(Qp& qp, Request& req)
{
    ResponderState& r = qp.resp;
    if (req.flags & opf::FIRST) {
        r.write_va = req.reth.va;
        r.write_rkey = req.reth.rkey;
        r.write_left = r.write_length = req.reth.length;
    }
    /* The region may have gone since the first packet was checked. */
    const MemoryRegion* mr = nullptr;
    const uint64_t va = r.write_va + (r.write_length - r.write_left);
    if (!remote_access_ok(ctx_.mrs, r.write_rkey, qp.pd, va, req.len, access::REMOTE_WRITE, &mr) ||
        (req.len != 0 && !memory_.copy_mr(*mr, va, const_cast<uint8_t*>(req.payload), req.len, true)))
        return Verdict::access_error;
    r.write_left -= req.len;
    if (req.imm != nullptr) {
        complete_receive(qp, CqeOpcode::recv_rdma_with_imm, r.write_length, req.bth, req.imm, RdmaError::none);
        r.msn = psn_add(r.msn, 1);
    } else if (req.flags & opf::LAST) {
        r.msn = psn_add(r.msn, 1);
    }
    return Verdict::next;
}

Responder::Verdict Responder::execute_atomic(Qp& qp, Request& req)
{
    ResponderState& r = qp.resp;
    uint64_t* target = memory_.map_atomic(*req.mr, req.atomic.va);
    if (target == nullptr)
        return Verdict::access_error;
    std::atomic_ref<uint64_t> word(*target);
    if (req.bth.opcode == op::CMP_SWAP) {
        req.original = req.atomic.compare;
        word.compare_exchange_strong(req.original, req.atomic.swap_add);
    } else {
        req.original = word.fetch_add(req.atomic.swap_add);
    }
    r.atomics[r.atomic_next++ % r.atomics.size()] = AtomicReplay{true, req.bth.psn, req.original};
    r.msn = psn_add(r.msn, 1);
    return Verdict::next;
}

/* A READ is answered by its responses, an atomic by its ACK with the value
 * it found, a SEND or WRITE packet by an ACK; then the next PSN is
 * expected (after the READ's responses, which take PSNs of their own). */
Responder::Verdict Responder::acknowledge(Qp& qp, Request& req)
{
    ResponderState& r = qp.resp;
    if (req.flags & opf::READ) {
        make_room_for_read(qp);
        owe_read(qp, req.bth.psn, req.reth);
        r.epsn = psn_add(r.epsn, packets_of(req.reth.length, qp.path_mtu));
    } else if (req.flags & opf::ATOMIC) {
        make_room_for_read(qp);
        owe_atomic(qp, req.bth.psn, req.original);
        r.epsn = psn_add(r.epsn, 1);
    } else {
        r.epsn = psn_add(r.epsn, 1);
        r.in_progress = after(req.bth.opcode);
        owe_ack(qp, syndrome::ack(), req.bth.psn);
        r.requests_unacked++;
        r.request_since_poll = true;
        r.ack_may_wait = r.ack_may_wait && (req.flags & (opf::WRITE | opf::IMMDT)) == opf::WRITE;
    }
    return Verdict::done;
}

void Responder::refuse(Qp& qp, const Request& req, Verdict verdict)
{
    if (memory_.host_gone())
        return;
    switch (verdict) {
    case Verdict::duplicate:
        qp.counters.duplicates++;
        counter_add(ctx_.stats.duplicates, 1);
        on_duplicate(qp, req);
        return;
    case Verdict::out_of_sequence:
        qp.counters.out_of_sequence++;
        counter_add(ctx_.stats.out_of_sequence, 1);
        if (!qp.resp.nak_sent) {
            qp.resp.nak_sent = true;
            owe_nak(qp, NakCode::psn_sequence_error);
        }
        return;
    case Verdict::invalid_request:
        responder_error(qp, NakCode::invalid_request, RdmaError::nak_invalid_request, RdmaEvent::qp_request_error);
        return;
    case Verdict::access_error:
        responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access, RdmaEvent::qp_access_error);
        return;
    case Verdict::no_receive:
        owe_ack(qp, syndrome::rnr_nak(qp.min_rnr_timer), req.bth.psn);
        qp.counters.rnr_naks_sent++;
        counter_add(ctx_.stats.rnr_naks_sent, 1);
        return;
    case Verdict::placement_failed: {
        const bool too_long = req.why == RdmaError::sges_too_short;
        responder_error(qp, too_long ? NakCode::invalid_request : NakCode::remote_operational_error, req.why,
                        req.why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
        return;
    }
    case Verdict::next:
    case Verdict::done: return;
    }
}

void Responder::on_duplicate(Qp& qp, const Request& req)
{
    ResponderState& r = qp.resp;
    const uint32_t psn = req.bth.psn;
    if (req.flags & (opf::SEND | opf::WRITE)) {
        owe_ack(qp, syndrome::ack(), psn_add(r.epsn, PSN_MASK)); /* epsn - 1 */
        r.ack_may_wait = false; /* the requester is retransmitting: it waits already */
        return;
    }
    if (req.flags & opf::READ) {
        /* Answered again from the duplicate's own RETH, as asked. */
        const Reth reth = read_reth(req.hdrs);
        const MemoryRegion* mr = nullptr;
        if (psn_diff(psn_add(psn, packets_of(reth.length, qp.path_mtu)), r.epsn) > 0 ||
            !remote_access_ok(ctx_.mrs, reth.rkey, qp.pd, reth.va, reth.length, access::REMOTE_READ, &mr))
            return;
        /* The requester went back to this PSN: what is owed from it on
         * it asks for again, so it is answered once, from here. */
        forget_responses_from(qp, psn);
        owe_read(qp, psn, reth);
        return;
    }
    for (const AtomicReplay& a : r.atomics) {
        if (a.valid && a.psn == psn) {
            forget_responses_from(qp, psn);
            owe_atomic(qp, psn, a.original);
            return;
        }
    }
}

/* ---- Receives and what is owed -------------------------------------------------- */

Response* Responder::owe(Qp& qp)
{
    ResponderState& r = qp.resp;
    if (r.out_tail - r.out_head == ResponderState::MAX_RESPONSES)
        return nullptr; /* cannot happen within max_dest_rd_atomic; the requester retries */
    Response* resp = &r.out[r.out_tail++ % ResponderState::MAX_RESPONSES];
    *resp = Response{};
    resp->msn = r.msn;
    return resp;
}

void Responder::forget_responses_from(Qp& qp, uint32_t psn)
{
    ResponderState& r = qp.resp;
    while (r.out_tail != r.out_head) {
        const Response& last = r.out[(r.out_tail - 1) % ResponderState::MAX_RESPONSES];
        const uint32_t packets = last.kind == Response::Kind::read ? packets_of(last.length, qp.path_mtu) : 1;
        if (psn_diff(psn_add(last.psn, packets - 1), psn) < 0)
            return;
        r.out_tail--;
    }
}

/* A new READ or atomic while max_dest_rd_atomic are owed: the requester
 * never has more outstanding than that, so the oldest owed is one it no
 * longer waits for (a duplicate it asked for while the original answer was
 * on its way). That one goes, as rxe recycles its oldest read resource. */
void Responder::make_room_for_read(Qp& qp)
{
    ResponderState& r = qp.resp;
    if (reads_owed(qp) < std::max<uint8_t>(qp.max_dest_rd_atomic, 1))
        return;
    uint32_t i = r.out_head;
    while (r.out[i % ResponderState::MAX_RESPONSES].kind == Response::Kind::ack)
        i++;
    for (; i + 1 != r.out_tail; i++)
        r.out[i % ResponderState::MAX_RESPONSES] = r.out[(i + 1) % ResponderState::MAX_RESPONSES];
    r.out_tail--;
}

void Responder::owe_read(Qp& qp, uint32_t psn, const Reth& reth)
{
    if (Response* resp = owe(qp)) {
        resp->kind = Response::Kind::read;
        resp->psn = psn;
        resp->va = reth.va;
        resp->rkey = reth.rkey;
        resp->length = reth.length;
    }
}

void Responder::owe_atomic(Qp& qp, uint32_t psn, uint64_t original)
{
    if (Response* resp = owe(qp)) {
        resp->kind = Response::Kind::atomic;
        resp->psn = psn;
        resp->original = original;
    }
}

void Responder::owe_ack(Qp& qp, uint8_t syndrome, uint32_t psn)
{
    ResponderState& r = qp.resp;
    if (r.out_tail != r.out_head) {
        Response& last = r.out[(r.out_tail - 1) % ResponderState::MAX_RESPONSES];
        /* ACKs coalesce: the latest acknowledges everything before it. */
        if (last.kind == Response::Kind::ack && last.syndrome == syndrome::ack() && syndrome == syndrome::ack()) {
            last.psn = psn;
            last.msn = r.msn;
            return;
        }
    }
    if (Response* resp = owe(qp)) {
        resp->kind = Response::Kind::ack;
        resp->syndrome = syndrome;
        resp->psn = psn;
    }
}

void Responder::owe_nak(Qp& qp, NakCode code)
{
    owe_ack(qp, syndrome::nak(code), qp.resp.epsn);
    qp.counters.naks_sent++;
    counter_add(ctx_.stats.naks_sent, 1);
}

void Responder::responder_error(Qp& qp, NakCode code, RdmaError why, std::optional<RdmaEvent> event)
{
    owe_nak(qp, code);
    completer_.fail_qp(qp, why, event);
}

bool Responder::take_receive(Qp& qp)
{
    Receive& recv = qp.resp.recv;
    RqWqe wqe;
    DmaRing* ring;
    uint64_t slot;
    uint32_t max_sge;
    if (qp.srq != NO_SRQ) {
        Srq& srq = ctx_.srqs[qp.srq];
        const uint32_t prod = ctx_.srq_prod(srq);
        if (prod == srq.cons || prod - srq.cons > srq.mask + 1)
            return false;
        ring = &srq.ring;
        slot = uint64_t{srq.cons & srq.mask} << (srq.wqe_shift + 4);
        max_sge = srq.max_sge;
        recv.index = srq.cons++;
        if (srq.limit != 0 && prod - srq.cons < srq.limit) {
            srq.limit = 0;
            completer_.raise(RdmaEvent::srq_limit, qp.srq);
        }
    } else {
        const uint32_t prod = ctx_.rq_prod(qp);
        if (prod == qp.resp.rq_cons || prod - qp.resp.rq_cons > qp.rq_mask + 1)
            return false;
        ring = &qp.rq;
        slot = uint64_t{qp.resp.rq_cons & qp.rq_mask} << (qp.rq_wqe_shift + 4);
        max_sge = qp.max_recv_sge;
        recv.index = qp.resp.rq_cons++;
    }
    recv.active = true;
    recv.from_srq = qp.srq != NO_SRQ;
    recv.placed = 0;
    recv.num_sge = UINT8_MAX; /* until read: a broken WQE, whose placement fails the QP */
    recv.wr_id = 0;
    Dma& dma = ctx_.hw.dma();
    if (!dma.read(*ring, slot, &wqe, sizeof(wqe)))
        return true;
    recv.wr_id = wqe.wr_id;
    if (wqe.num_sge <= max_sge && dma.read(*ring, slot + sizeof(wqe), recv.sges.data(), wqe.num_sge * sizeof(Sge)))
        recv.num_sge = wqe.num_sge;
    return true;
}

void Responder::complete_receive(Qp& qp, CqeOpcode opcode, uint32_t byte_len, const Bth& bth, const uint8_t* imm,
                                 RdmaError why, Datagram from)
{
    Receive& recv = qp.resp.recv;
    RdmaCqe cqe{};
    cqe.wr_id = recv.wr_id;
    cqe.byte_len = byte_len;
    cqe.qp_id = qp.id;
    cqe.wqe_index = static_cast<uint16_t>(recv.index);
    cqe.status = static_cast<uint8_t>(status_of(why));
    cqe.vendor_error = static_cast<uint8_t>(why);
    cqe.opcode = static_cast<uint8_t>(opcode);
    cqe.flags = static_cast<uint8_t>((recv.from_srq ? cqe::FROM_SRQ : 0) | (bth.solicited ? cqe::SOLICITED : 0) |
                                     (is_datagram(qp.type) ? cqe::GRH : 0));
    cqe.src_qp = from.src_qp;
    cqe.sl = from.sl;
    if (imm != nullptr) {
        std::memcpy(&cqe.imm_data, imm, IMMDT_LEN);
        cqe.flags |= cqe::WITH_IMM;
    }
    recv.active = false;
    completer_.complete(qp.rq_cq, cqe);
}

uint32_t Responder::reads_owed(const Qp& qp) const
{
    uint32_t n = 0;
    for (uint32_t i = qp.resp.out_head; i != qp.resp.out_tail; i++)
        n += qp.resp.out[i % ResponderState::MAX_RESPONSES].kind != Response::Kind::ack;
    return n;
}

/* ---- Answers ------------------------------------------------------------------- */

bool Responder::poll(Qp& qp, FrameBurst& out)
{
    ResponderState& r = qp.resp;
    const bool arriving = std::exchange(r.request_since_poll, false);
    if (arriving && r.ack_may_wait && r.requests_unacked < ACK_HOLD && r.out_tail - r.out_head == 1) {
        const Response& only = r.out[r.out_head % ResponderState::MAX_RESPONSES];
        if (only.kind == Response::Kind::ack && only.syndrome == syndrome::ack())
            return false;
    }
    bool work = false;
    while (r.out_head != r.out_tail && !out.full()) {
        Response& resp = r.out[r.out_head % ResponderState::MAX_RESPONSES];
        if (resp.kind != Response::Kind::ack && qp.state == QpState::err) {
            r.out_head++; /* no data after an error */
            continue;
        }
        const Bth bth{.dest_qp = qp.dest_qpn, .psn = resp.psn};
        if (resp.kind == Response::Kind::read) {
            if (!send_read_response(qp, resp, bth, out))
                continue;
        } else {
            send_ack(qp, resp, bth, out);
            r.out_head++;
            r.requests_unacked = 0;
            r.ack_may_wait = true;
        }
        work = true;
    }
    return work;
}

/* An ACK or a NAK, or an atomic's ACK with the value it found. */
void Responder::send_ack(Qp& qp, const Response& resp, Bth bth, FrameBurst& out)
{
    const bool atomic = resp.kind == Response::Kind::atomic;
    bth.opcode = atomic ? op::ATOMIC_ACKNOWLEDGE : op::ACKNOWLEDGE;
    uint8_t* p = packets_.begin_packet(qp.path, out, bth, AETH_LEN + (atomic ? ATOMIC_ACK_ETH_LEN : 0), 0);
    write_aeth(p + BTH_LEN, Aeth{atomic ? syndrome::ack() : resp.syndrome, resp.msn});
    if (atomic)
        store_be64(p + BTH_LEN + AETH_LEN, resp.original);
    packets_.end_packet(out);
}

bool Responder::send_read_response(Qp& qp, Response& resp, Bth bth, FrameBurst& out)
{
    ResponderState& r = qp.resp;
    const uint32_t packets = packets_of(resp.length, qp.path_mtu);
    const uint32_t k = resp.sent / qp.path_mtu;
    const uint32_t n = std::min<uint32_t>(qp.path_mtu, resp.length - resp.sent);
    const Position pos = position(k, packets);
    bth.opcode = read_response_opcode(pos);
    bth.psn = psn_add(resp.psn, k);
    const bool aeth = pos != Position::middle;
    uint8_t* p = packets_.begin_packet(qp.path, out, bth, aeth ? AETH_LEN : 0, n);
    if (aeth)
        write_aeth(p + BTH_LEN, Aeth{syndrome::ack(), resp.msn});
    const MemoryRegion* mr = nullptr;
    const uint64_t va = resp.va + resp.sent;
    if (!remote_access_ok(ctx_.mrs, resp.rkey, qp.pd, va, n, access::REMOTE_READ, &mr) ||
        (n != 0 && !memory_.copy_mr(*mr, va, p + BTH_LEN + (aeth ? AETH_LEN : 0), n, false))) {
        if (memory_.host_gone())
            return false; /* the packet begun is never ended: nothing is sent */
        r.out_head++;
        responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access, RdmaEvent::qp_access_error);
        return false;
    }
    packets_.end_packet(out);
    resp.sent += n;
    if (resp.sent >= resp.length)
        r.out_head++;
    return true;
}

/* ---- Datagrams ------------------------------------------------------------------ */

void Responder::on_datagram(Qp& qp, const WireFrame& frame, const Bth& bth, const uint8_t* hdrs,
                            const uint8_t* payload, uint32_t len)
{
    if (qp.state != QpState::rtr && qp.state != QpState::rts && qp.state != QpState::sqd && qp.state != QpState::sqe)
        return;
    qp.counters.packets_received++;
    const Deth deth = read_deth(hdrs);
    if (deth.qkey != qp.qkey) {
        counter_add(ctx_.stats.qkey_violations, 1);
        return;
    }
    if (qp.type == QpType::gsi && (len != MAD_SIZE || payload[0] != MAD_BASE_VERSION)) {
        counter_add(ctx_.stats.mads_dropped, 1);
        return;
    }
    if (!take_receive(qp)) {
        counter_add(ctx_.stats.ud_dropped, 1);
        return;
    }
    /* The GRH as RoCEv2 gives it: the IPv6 header, or the IPv4 header in
     * its last 20 bytes. */
    const FrameLayout& l = frame.layout;
    std::array<uint8_t, GRH_LEN> grh{};
    if (l.l3 == L3::ipv6)
        std::memcpy(grh.data(), frame.data + l.l2_len, GRH_LEN);
    else
        std::memcpy(grh.data() + GRH_LEN - IPV4_HLEN, frame.data + l.l2_len, IPV4_HLEN);
    Receive& recv = qp.resp.recv;
    RdmaError why = RdmaError::none;
    const bool placed = memory_.copy_to_sges(qp, recv.sges.data(), recv.num_sge, 0, grh.data(), GRH_LEN, why) &&
                        memory_.copy_to_sges(qp, recv.sges.data(), recv.num_sge, GRH_LEN, payload, len, why);
    const uint8_t* imm = bth.opcode == op::UD_SEND_ONLY_IMM ? hdrs + DETH_LEN : nullptr;
    const uint8_t sl = cqe_sl::UDP | (l.l3 == L3::ipv6 ? cqe_sl::IPV6 : cqe_sl::IPV4);
    complete_receive(qp, CqeOpcode::recv, placed ? GRH_LEN + len : 0, bth, placed ? imm : nullptr, why,
                     Datagram{deth.src_qp, sl});
    /* A datagram too long for its buffers costs that receive only; a bad
     * key or a fault is the QP's end. */
    if (!placed && why != RdmaError::sges_too_short)
        completer_.fail_qp(qp, why, why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
}

} // namespace cna::fw::roce
