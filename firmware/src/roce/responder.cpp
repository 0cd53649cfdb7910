/* SPDX-License-Identifier: BSD-3-Clause
 * The responder: request packets checked in the transport's order (PSN,
 * opcode sequence, length, then keys and access), placed into receive
 * buffers or memory regions, and answered in order — ACKs (coalesced),
 * NAKs, READ responses and atomic ACKs — by the next poll. A duplicate
 * is acknowledged again, a duplicate READ answered again, a duplicate
 * atomic answered from the replay cache without executing it twice.
 */
#include <atomic>
#include <cstring>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/roce_storm.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

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

Response* RoceStorm::owe(Qp& qp)
{
    Responder& r = qp.resp;
    if (r.out_tail - r.out_head == Responder::MAX_RESPONSES)
        return nullptr; /* cannot happen within max_dest_rd_atomic; the requester retries */
    Response* resp = &r.out[r.out_tail++ % Responder::MAX_RESPONSES];
    *resp = Response{};
    resp->msn = r.msn;
    return resp;
}

void RoceStorm::forget_responses_from(Qp& qp, uint32_t psn)
{
    Responder& r = qp.resp;
    while (r.out_tail != r.out_head) {
        const Response& last = r.out[(r.out_tail - 1) % Responder::MAX_RESPONSES];
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
void RoceStorm::make_room_for_read(Qp& qp)
{
    Responder& r = qp.resp;
    if (reads_owed(qp) < std::max<uint8_t>(qp.max_dest_rd_atomic, 1))
        return;
    uint32_t i = r.out_head;
    while (r.out[i % Responder::MAX_RESPONSES].kind == Response::Kind::ack)
        i++;
    for (; i + 1 != r.out_tail; i++)
        r.out[i % Responder::MAX_RESPONSES] = r.out[(i + 1) % Responder::MAX_RESPONSES];
    r.out_tail--;
}

void RoceStorm::owe_read(Qp& qp, uint32_t psn, const Reth& reth)
{
    if (Response* resp = owe(qp)) {
        resp->kind = Response::Kind::read;
        resp->psn = psn;
        resp->va = reth.va;
        resp->rkey = reth.rkey;
        resp->length = reth.length;
    }
}

void RoceStorm::owe_atomic(Qp& qp, uint32_t psn, uint64_t original)
{
    if (Response* resp = owe(qp)) {
        resp->kind = Response::Kind::atomic;
        resp->psn = psn;
        resp->original = original;
    }
}

void RoceStorm::owe_ack(Qp& qp, uint8_t syndrome, uint32_t psn)
{
    Responder& r = qp.resp;
    if (r.out_tail != r.out_head) {
        Response& last = r.out[(r.out_tail - 1) % Responder::MAX_RESPONSES];
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

void RoceStorm::responder_error(Qp& qp, NakCode code, RdmaError why, std::optional<RdmaEvent> event)
{
    owe_ack(qp, syndrome::nak(code), qp.resp.epsn);
    qp.counters.naks_sent++;
    counter_add(stats_.naks_sent, 1);
    fail_qp(qp, why, event);
}

bool RoceStorm::take_receive(Qp& qp)
{
    Receive& recv = qp.resp.recv;
    RqWqe wqe;
    DmaRing* ring;
    uint64_t slot;
    uint32_t max_sge;
    if (qp.srq != NO_SRQ) {
        Srq& srq = srqs_[qp.srq];
        const uint32_t prod = srq_prod(srq);
        if (prod == srq.cons || prod - srq.cons > srq.mask + 1)
            return false;
        ring = &srq.ring;
        slot = uint64_t{srq.cons & srq.mask} << (srq.wqe_shift + 4);
        max_sge = srq.max_sge;
        recv.index = srq.cons++;
        if (srq.limit != 0 && prod - srq.cons < srq.limit) {
            srq.limit = 0;
            raise(RdmaEvent::srq_limit, qp.srq);
        }
    } else {
        const uint32_t prod = rq_prod(qp);
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
    Dma& dma = hw_.dma();
    if (!dma.read(*ring, slot, &wqe, sizeof(wqe)))
        return true;
    recv.wr_id = wqe.wr_id;
    if (wqe.num_sge <= max_sge && dma.read(*ring, slot + sizeof(wqe), recv.sges.data(), wqe.num_sge * sizeof(Sge)))
        recv.num_sge = wqe.num_sge;
    return true;
}

/* Completes the receive in progress. */
void RoceStorm::complete_receive(Qp& qp, CqeOpcode opcode, uint32_t byte_len, const Bth& bth, const uint8_t* imm,
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
                                     (qp.type == QpType::ud ? cqe::GRH : 0));
    cqe.src_qp = from.src_qp;
    cqe.sl = from.sl;
    if (imm != nullptr) {
        std::memcpy(&cqe.imm_data, imm, IMMDT_LEN);
        cqe.flags |= cqe::WITH_IMM;
    }
    recv.active = false;
    complete(qp.rq_cq, cqe);
}

void RoceStorm::on_request(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len)
{
    Responder& r = qp.resp;
    if (!may_respond(qp.state))
        return;
    qp.counters.packets_received++;
    switch (classify_psn(bth.psn, r.epsn)) {
    case PsnClass::duplicate:
        qp.counters.duplicates++;
        counter_add(stats_.duplicates, 1);
        on_duplicate(qp, bth, hdrs);
        return;
    case PsnClass::ahead:
        qp.counters.out_of_sequence++;
        counter_add(stats_.out_of_sequence, 1);
        if (!r.nak_sent) {
            r.nak_sent = true;
            owe_ack(qp, syndrome::nak(NakCode::psn_sequence_error), r.epsn);
            qp.counters.naks_sent++;
            counter_add(stats_.naks_sent, 1);
        }
        return;
    case PsnClass::expected: r.nak_sent = false; break;
    }
    const uint16_t f = opcode_flags(bth.opcode);
    if (!opcode_in_sequence(r.in_progress, bth.opcode) || !payload_length_ok(bth.opcode, len, qp.path_mtu)) {
        responder_error(qp, NakCode::invalid_request, RdmaError::nak_invalid_request, RdmaEvent::qp_request_error);
        return;
    }
    const uint8_t* imm = nullptr;
    if (f & opf::IMMDT)
        imm = hdrs + (f & opf::RETH ? RETH_LEN : 0);

    if (f & opf::SEND) {
        if ((f & opf::FIRST) && !take_receive(qp)) {
            owe_ack(qp, syndrome::rnr_nak(qp.min_rnr_timer), bth.psn);
            qp.counters.rnr_naks_sent++;
            counter_add(stats_.rnr_naks_sent, 1);
            return;
        }
        RdmaError why = RdmaError::none;
        if (!copy_to_sges(qp, r.recv.sges.data(), r.recv.num_sge, r.recv.placed, payload, len, why)) {
            complete_receive(qp, CqeOpcode::recv, r.recv.placed, bth, nullptr, why);
            const bool too_long = why == RdmaError::sges_too_short;
            responder_error(qp, too_long ? NakCode::invalid_request : NakCode::remote_operational_error, why,
                            why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
            return;
        }
        r.recv.placed += len;
        if (f & opf::LAST) {
            complete_receive(qp, CqeOpcode::recv, r.recv.placed, bth, imm, RdmaError::none);
            r.msn = psn_add(r.msn, 1);
        }
    } else if (f & opf::WRITE) {
        if (f & opf::FIRST) {
            const Reth reth = read_reth(hdrs);
            const MemoryRegion* mr = nullptr;
            if (!(qp.access & access::REMOTE_WRITE) ||
                !remote_access_ok(mrs_, reth.rkey, qp.pd, reth.va, reth.length, access::REMOTE_WRITE, &mr)) {
                responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access,
                                RdmaEvent::qp_access_error);
                return;
            }
            r.write_va = reth.va;
            r.write_rkey = reth.rkey;
            r.write_left = r.write_length = reth.length;
        }
        if (len > r.write_left || ((f & opf::LAST) && len != r.write_left)) {
            responder_error(qp, NakCode::invalid_request, RdmaError::nak_invalid_request, RdmaEvent::qp_request_error);
            return;
        }
        /* WRITE with immediate consumes a receive: none posted is RNR,
         * before anything is placed. */
        if (imm != nullptr && !take_receive(qp)) {
            owe_ack(qp, syndrome::rnr_nak(qp.min_rnr_timer), bth.psn);
            qp.counters.rnr_naks_sent++;
            counter_add(stats_.rnr_naks_sent, 1);
            return;
        }
        const MemoryRegion* mr = nullptr;
        const uint64_t va = r.write_va + (r.write_length - r.write_left);
        if (!remote_access_ok(mrs_, r.write_rkey, qp.pd, va, len, access::REMOTE_WRITE, &mr) ||
            (len != 0 && !copy_mr(*mr, va, const_cast<uint8_t*>(payload), len, true))) {
            responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access, RdmaEvent::qp_access_error);
            return;
        }
        r.write_left -= len;
        if (imm != nullptr) {
            complete_receive(qp, CqeOpcode::recv_rdma_with_imm, r.write_length, bth, imm, RdmaError::none);
            r.msn = psn_add(r.msn, 1);
        } else if (f & opf::LAST) {
            r.msn = psn_add(r.msn, 1);
        }
    } else if (f & opf::READ) {
        const Reth reth = read_reth(hdrs);
        const MemoryRegion* mr = nullptr;
        if (!(qp.access & access::REMOTE_READ) || reth.length > MAX_MSG_SIZE ||
            !remote_access_ok(mrs_, reth.rkey, qp.pd, reth.va, reth.length, access::REMOTE_READ, &mr)) {
            responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access, RdmaEvent::qp_access_error);
            return;
        }
        make_room_for_read(qp);
        r.msn = psn_add(r.msn, 1);
        owe_read(qp, bth.psn, reth);
        r.epsn = psn_add(r.epsn, packets_of(reth.length, qp.path_mtu));
        return;
    } else {
        const AtomicEth a = read_atomic_eth(hdrs);
        const MemoryRegion* mr = nullptr;
        if (!atomic_aligned(a.va)) {
            responder_error(qp, NakCode::invalid_request, RdmaError::nak_invalid_request, RdmaEvent::qp_request_error);
            return;
        }
        uint64_t* target = nullptr;
        if ((qp.access & access::REMOTE_ATOMIC) &&
            mrs_.check(a.rkey, qp.pd, a.va, ATOMIC_SIZE, access::REMOTE_ATOMIC, &mr) == MrCheck::ok)
            MrTable::for_each_piece(*mr, a.va, ATOMIC_SIZE, [&](uint64_t iova, uint64_t) {
                target = reinterpret_cast<uint64_t*>(hw_.dma().map(iova, ATOMIC_SIZE));
                return false;
            });
        if (target == nullptr) {
            responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access, RdmaEvent::qp_access_error);
            return;
        }
        make_room_for_read(qp);
        std::atomic_ref<uint64_t> word(*target);
        uint64_t original;
        if (bth.opcode == op::CMP_SWAP) {
            original = a.compare;
            word.compare_exchange_strong(original, a.swap_add);
        } else {
            original = word.fetch_add(a.swap_add);
        }
        r.atomics[r.atomic_next++ % r.atomics.size()] = AtomicReplay{true, bth.psn, original};
        r.msn = psn_add(r.msn, 1);
        owe_atomic(qp, bth.psn, original);
        r.epsn = psn_add(r.epsn, 1);
        return;
    }
    r.epsn = psn_add(r.epsn, 1);
    r.in_progress = after(bth.opcode);
    owe_ack(qp, syndrome::ack(), bth.psn);
}

uint32_t RoceStorm::reads_owed(const Qp& qp) const
{
    uint32_t n = 0;
    for (uint32_t i = qp.resp.out_head; i != qp.resp.out_tail; i++)
        n += qp.resp.out[i % Responder::MAX_RESPONSES].kind != Response::Kind::ack;
    return n;
}

void RoceStorm::on_duplicate(Qp& qp, const Bth& bth, const uint8_t* hdrs)
{
    Responder& r = qp.resp;
    const uint16_t f = opcode_flags(bth.opcode);
    if (f & (opf::SEND | opf::WRITE)) {
        owe_ack(qp, syndrome::ack(), psn_add(r.epsn, PSN_MASK)); /* epsn - 1 */
        return;
    }
    if (f & opf::READ) {
        /* Answered again from the duplicate's own RETH, as asked. */
        const Reth reth = read_reth(hdrs);
        const MemoryRegion* mr = nullptr;
        if (psn_diff(psn_add(bth.psn, packets_of(reth.length, qp.path_mtu)), r.epsn) > 0 ||
            !remote_access_ok(mrs_, reth.rkey, qp.pd, reth.va, reth.length, access::REMOTE_READ, &mr))
            return;
        /* The requester went back to this PSN: what is owed from it on
         * it asks for again, so it is answered once, from here. */
        forget_responses_from(qp, bth.psn);
        owe_read(qp, bth.psn, reth);
        return;
    }
    for (const AtomicReplay& a : r.atomics) {
        if (a.valid && a.psn == bth.psn) {
            forget_responses_from(qp, bth.psn);
            owe_atomic(qp, bth.psn, a.original);
            return;
        }
    }
}

bool RoceStorm::poll_responder(Qp& qp, FrameBurst& out)
{
    Responder& r = qp.resp;
    bool work = false;
    while (r.out_head != r.out_tail && !out.full()) {
        Response& resp = r.out[r.out_head % Responder::MAX_RESPONSES];
        if (resp.kind != Response::Kind::ack && qp.state == QpState::err) {
            r.out_head++; /* no data after an error */
            continue;
        }
        Bth bth{.dest_qp = qp.dest_qpn, .psn = resp.psn};
        if (resp.kind == Response::Kind::ack) {
            bth.opcode = op::ACKNOWLEDGE;
            uint8_t* p = begin_packet(qp.path, out, bth, AETH_LEN, 0);
            write_aeth(p + BTH_LEN, Aeth{resp.syndrome, resp.msn});
            end_packet(out);
            r.out_head++;
        } else if (resp.kind == Response::Kind::atomic) {
            bth.opcode = op::ATOMIC_ACKNOWLEDGE;
            uint8_t* p = begin_packet(qp.path, out, bth, AETH_LEN + ATOMIC_ACK_ETH_LEN, 0);
            write_aeth(p + BTH_LEN, Aeth{syndrome::ack(), resp.msn});
            store_be64(p + BTH_LEN + AETH_LEN, resp.original);
            end_packet(out);
            r.out_head++;
        } else {
            const uint32_t packets = packets_of(resp.length, qp.path_mtu);
            const uint32_t k = resp.sent / qp.path_mtu;
            const uint32_t n = std::min<uint32_t>(qp.path_mtu, resp.length - resp.sent);
            const Position pos = position(k, packets);
            bth.opcode = read_response_opcode(pos);
            bth.psn = psn_add(resp.psn, k);
            const bool aeth = pos != Position::middle;
            uint8_t* p = begin_packet(qp.path, out, bth, aeth ? AETH_LEN : 0, n);
            if (aeth)
                write_aeth(p + BTH_LEN, Aeth{syndrome::ack(), resp.msn});
            const MemoryRegion* mr = nullptr;
            const uint64_t va = resp.va + resp.sent;
            if (!remote_access_ok(mrs_, resp.rkey, qp.pd, va, n, access::REMOTE_READ, &mr) ||
                (n != 0 && !copy_mr(*mr, va, p + BTH_LEN + (aeth ? AETH_LEN : 0), n, false))) {
                /* The region went away (or faulted) under the READ. */
                r.out_head++;
                responder_error(qp, NakCode::remote_access_error, RdmaError::nak_remote_access,
                                RdmaEvent::qp_access_error);
                continue;
            }
            end_packet(out);
            resp.sent += n;
            if (resp.sent >= resp.length)
                r.out_head++;
        }
        work = true;
    }
    return work;
}

} // namespace cna::fw::roce
