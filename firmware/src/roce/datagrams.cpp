/* SPDX-License-Identifier: BSD-3-Clause
 * Unreliable datagrams: a UD QP's SEND WQEs out as single packets, each to
 * the address its WQE carries, and datagrams in, their Q_Key checked,
 * placed with their GRH into the QP's next receive. Nothing is
 * acknowledged or retried: a datagram no receive waits for is dropped and
 * counted, as the transport allows (IBA 9.7.2).
 */
#include <array>
#include <cstring>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/roce_storm.h"
#include "base/log.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

constexpr uint32_t IPV4_HLEN = 20;

} // namespace

bool RoceStorm::poll_datagrams(Qp& qp, FrameBurst& out)
{
    Requester& r = qp.req;
    switch (qp.state) {
    case QpState::rts: {
        const uint32_t prod = sq_prod(qp);
        if (prod - r.sq_cons > qp.sq_mask + 1) {
            fail_qp(qp, RdmaError::bad_wqe, RdmaEvent::qp_fatal);
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
        raise(RdmaEvent::sq_drained, qp.id);
        return true;
    case QpState::sqe: {
        const bool work = flush_ring(qp, true, r.sq_cons, sq_prod(qp));
        r.sq_next = r.tx_wqe = r.sq_cons;
        return work;
    }
    case QpState::err: return flush(qp);
    default: return false;
    }
}

void RoceStorm::send_datagram(Qp& qp, FrameBurst& out)
{
    Requester& r = qp.req;
    Dma& dma = hw_.dma();
    const uint64_t slot = uint64_t{r.sq_cons & qp.sq_mask} << (qp.sq_wqe_shift + 6);
    const uint64_t data_at = slot + sizeof(SqWqe) + sizeof(UdAddress);
    SqWqe wqe;
    UdAddress to;
    if (!dma.read(qp.sq, slot, &wqe, sizeof(wqe)) || !dma.read(qp.sq, slot + sizeof(wqe), &to, sizeof(to))) {
        fail_qp(qp, RdmaError::dma_fault, RdmaEvent::qp_fatal);
        return;
    }
    const auto opcode = static_cast<SqOpcode>(wqe.opcode);
    const bool imm = opcode == SqOpcode::send_with_imm;
    /* The requester's books as for any WQE: retire() completes it. A
     * datagram is a SEND: another opcode fails as one (no READ counted). */
    r.sent[r.sq_cons & qp.sq_mask] = SentWqe{r.next_psn, 1, imm ? wqe.opcode : uint8_t(SqOpcode::send),
                                             (wqe.flags & sq_wqe::SIGNALED) != 0 || qp.signal_all};
    r.sq_next = r.sq_cons + 1;
    const bool inline_data = (wqe.flags & sq_wqe::INLINE) != 0;
    std::array<Sge, MAX_SGE> sges;
    RdmaError why = RdmaError::none;
    if ((opcode != SqOpcode::send && !imm) || !path_well_formed(to.path) ||
        (inline_data ? wqe.length > qp.max_inline : wqe.num_sge > qp.max_send_sge))
        why = RdmaError::bad_wqe;
    else if (wqe.length > ud_mtu_)
        why = RdmaError::ud_too_long;
    else if (!inline_data && wqe.num_sge != 0 && !dma.read(qp.sq, data_at, sges.data(), wqe.num_sge * sizeof(Sge)))
        why = RdmaError::dma_fault;
    if (why != RdmaError::none) {
        fail_datagram(qp, why);
        return;
    }

    const Bth bth{.opcode = imm ? op::UD_SEND_ONLY_IMM : op::UD_SEND_ONLY,
                  .solicited = (wqe.flags & sq_wqe::SOLICITED) != 0,
                  .dest_qp = to.dest_qpn & 0xffffff,
                  .psn = r.next_psn};
    uint8_t* p = begin_packet(to.path, out, bth, DETH_LEN + (imm ? IMMDT_LEN : 0), wqe.length);
    write_deth(p + BTH_LEN, Deth{to.qkey & QKEY_USE_QPS ? qp.qkey : to.qkey, qpn_of(qp.id)});
    uint8_t* payload = p + BTH_LEN + DETH_LEN;
    if (imm) {
        std::memcpy(payload, &wqe.imm_data, IMMDT_LEN); /* already in network order */
        payload += IMMDT_LEN;
    }
    bool copied;
    if (inline_data) {
        copied = dma.read(qp.sq, data_at, payload, wqe.length);
        why = RdmaError::dma_fault;
    } else {
        copied = copy_from_sges(qp, sges.data(), wqe.num_sge, 0, payload, wqe.length, why);
    }
    if (!copied) {
        /* The frame never joins the burst. */
        fail_datagram(qp, why);
        return;
    }
    end_packet(out);
    qp.counters.packets_sent++;
    r.next_psn = psn_add(r.next_psn, 1);
    retire(qp, CqeStatus::success, RdmaError::none);
}

void RoceStorm::fail_datagram(Qp& qp, RdmaError why)
{
    retire(qp, status_of(why), why);
    if (why == RdmaError::dma_fault) {
        fail_qp(qp, why, RdmaEvent::qp_fatal);
        return;
    }
    /* A local error of an unreliable QP stops its SQ only (IBA 10.3.1). */
    qp.state = QpState::sqe;
    qp.last_error = why;
    log(LogLevel::info, "roce: pf%u UD QP %u to SQE (error %u)", hw_.pf_id(), qp.id, static_cast<uint32_t>(why));
}

void RoceStorm::on_datagram(Qp& qp, const WireFrame& frame, const Bth& bth, const uint8_t* hdrs,
                            const uint8_t* payload, uint32_t len)
{
    if (qp.state != QpState::rtr && qp.state != QpState::rts && qp.state != QpState::sqd && qp.state != QpState::sqe)
        return;
    qp.counters.packets_received++;
    const Deth deth = read_deth(hdrs);
    if (deth.qkey != qp.qkey) {
        counter_add(stats_.qkey_violations, 1);
        return;
    }
    if (!take_receive(qp)) {
        counter_add(stats_.ud_dropped, 1);
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
    const bool placed = copy_to_sges(qp, recv.sges.data(), recv.num_sge, 0, grh.data(), GRH_LEN, why) &&
                        copy_to_sges(qp, recv.sges.data(), recv.num_sge, GRH_LEN, payload, len, why);
    const uint8_t* imm = bth.opcode == op::UD_SEND_ONLY_IMM ? hdrs + DETH_LEN : nullptr;
    const uint8_t sl = cqe_sl::UDP | (l.l3 == L3::ipv6 ? cqe_sl::IPV6 : cqe_sl::IPV4);
    complete_receive(qp, CqeOpcode::recv, placed ? GRH_LEN + len : 0, bth, placed ? imm : nullptr, why,
                     Datagram{deth.src_qp, sl});
    /* A datagram too long for its buffers costs that receive only; a bad
     * key or a fault is the QP's end. */
    if (!placed && why != RdmaError::sges_too_short)
        fail_qp(qp, why, why == RdmaError::dma_fault ? std::optional(RdmaEvent::qp_fatal) : std::nullopt);
}

} // namespace cna::fw::roce
