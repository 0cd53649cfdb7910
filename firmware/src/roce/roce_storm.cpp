/* SPDX-License-Identifier: BSD-3-Clause
 * The engine's side of RoCE: a pass over the PF's QPs, the dispatch of a
 * received packet to its QP's requester or responder, host memory through
 * SGE lists and memory regions, and the frames packets are built in.
 */
#include <cstring>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/roce_storm.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

bool RoceStorm::poll(uint64_t now_ns, FrameBurst& out)
{
    bool work = neighbours_.poll(out, tx_buffers_.data(), FRAME_BUFFER);
    const uint32_t n = static_cast<uint32_t>(live_qps_.size());
    for (uint32_t i = 0; i < n && !out.full(); i++) {
        Qp& qp = qps_[live_qps_[(poll_start_ + i) % n]];
        if (qp.type == QpType::ud) {
            work |= poll_datagrams(qp, out);
            continue;
        }
        switch (qp.state) {
        case QpState::rtr: work |= poll_responder(qp, out); break;
        case QpState::rts:
        case QpState::sqd:
            work |= poll_responder(qp, out);
            work |= poll_requester(qp, now_ns, out);
            break;
        case QpState::err:
            work |= poll_responder(qp, out); /* the NAK that ended it */
            work |= flush(qp);
            break;
        default: break;
        }
    }
    poll_start_ = n == 0 ? 0 : (poll_start_ + 1) % n;
    return work;
}

void RoceStorm::receive(const WireFrame& frame, uint64_t now_ns)
{
    const FrameLayout& l = frame.layout;
    counter_add(stats_.rx_packets, 1);
    counter_add(stats_.rx_bytes, l.l3_end);
    if (!icrc_ok(frame.data, l)) {
        counter_add(stats_.icrc_errors, 1);
        return;
    }
    const uint8_t* bth_at = frame.data + l.l4_off + UDP_HLEN;
    const Bth bth = read_bth(bth_at);
    const uint16_t f = opcode_flags(bth.opcode);
    const uint32_t ext = ext_headers_len(f);
    const uint32_t roce_end = l.l3_end - ICRC_LEN;
    const uint32_t hdr_end = l.l4_off + UDP_HLEN + BTH_LEN + ext;
    const uint32_t qp_id = bth.dest_qp - QPN_BASE;
    if (!(f & opf::VALID) || bth_tver(bth_at) != 0 || hdr_end + bth.pad > roce_end || qp_id >= qps_.size() ||
        !qps_[qp_id].exists) {
        counter_add(stats_.bad_packets, 1);
        return;
    }
    Qp& qp = qps_[qp_id];
    const uint8_t* hdrs = bth_at + BTH_LEN;
    const uint8_t* payload = frame.data + hdr_end;
    const uint32_t len = roce_end - hdr_end - bth.pad;
    /* A datagram to a connection, or a connection's packet to a UD QP, is
     * no packet of that QP's transport. */
    if (((f & opf::DETH) != 0) != (qp.type == QpType::ud)) {
        counter_add(stats_.bad_packets, 1);
        return;
    }
    if (qp.type == QpType::ud) {
        on_datagram(qp, frame, bth, hdrs, payload, len);
        return;
    }
    /* Only the peer the QP is connected to speaks to it. */
    const uint32_t ip_len = l.l3 == L3::ipv4 ? 4 : 16;
    const uint32_t src_off = l.l2_len + (l.l3 == L3::ipv4 ? 12 : 8);
    const uint8_t* peer = qp.path.dst_ip + (l.l3 == L3::ipv4 ? 12 : 0);
    if (qp.path.ip_version != (l.l3 == L3::ipv4 ? IP_VERSION_4 : IP_VERSION_6) ||
        std::memcmp(frame.data + src_off, peer, ip_len) != 0) {
        counter_add(stats_.bad_packets, 1);
        return;
    }
    if (f & opf::REQUEST)
        on_request(qp, bth, hdrs, payload, len);
    else
        on_response(qp, bth, hdrs, payload, len, now_ns);
}

void RoceStorm::neighbour_frame(const WireFrame& frame)
{
    neighbours_.receive(frame, [this](const uint8_t(&mac)[6], uint16_t tag) {
        raise(RdmaEvent::neighbour, neighbour_event(mac, tag));
    });
}

void RoceStorm::on_response(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len,
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

/* ---- Host memory ------------------------------------------------------------ */

bool RoceStorm::copy_mr(const MemoryRegion& mr, uint64_t addr, uint8_t* buf, uint32_t len, bool to_host)
{
    Dma& dma = hw_.dma();
    return MrTable::for_each_piece(mr, addr, len, [&](uint64_t iova, uint64_t n) {
        uint8_t* host = dma.map(iova, n);
        if (host == nullptr)
            return false;
        if (to_host)
            std::memcpy(host, buf, n);
        else
            std::memcpy(buf, host, n);
        buf += n;
        return true;
    });
}

namespace {

RdmaError key_error(MrCheck c)
{
    switch (c) {
    case MrCheck::out_of_bounds: return RdmaError::lkey_bounds;
    case MrCheck::no_access: return RdmaError::lkey_access;
    default: return RdmaError::bad_lkey;
    }
}

} // namespace

template <bool TO_HOST>
bool RoceStorm::copy_sges(uint16_t pd, const Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* buf, uint32_t len,
                          RdmaError& why)
{
    if (nsge > MAX_SGE) {
        why = RdmaError::bad_wqe;
        return false;
    }
    for (uint32_t i = 0; i < nsge && len != 0; i++) {
        const Sge& sge = sges[i];
        if (offset >= sge.length) {
            offset -= sge.length;
            continue;
        }
        const uint32_t n = std::min(sge.length - offset, len);
        const MemoryRegion* mr = nullptr;
        const MrCheck c = mrs_.check(sge.lkey, pd, sge.addr + offset, n, TO_HOST ? access::LOCAL_WRITE : 0, &mr);
        if (c != MrCheck::ok) {
            why = key_error(c);
            return false;
        }
        if (!copy_mr(*mr, sge.addr + offset, buf, n, TO_HOST)) {
            why = RdmaError::dma_fault;
            return false;
        }
        buf += n;
        len -= n;
        offset = 0;
    }
    if (len != 0) {
        why = RdmaError::sges_too_short;
        return false;
    }
    return true;
}

bool RoceStorm::copy_from_sges(const Qp& qp, const Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* dst,
                               uint32_t len, RdmaError& why)
{
    return copy_sges<false>(qp.pd, sges, nsge, offset, dst, len, why);
}

bool RoceStorm::copy_to_sges(const Qp& qp, const Sge* sges, uint32_t nsge, uint32_t offset, const uint8_t* src,
                             uint32_t len, RdmaError& why)
{
    /* Only read from: the copy's direction is TO_HOST. */
    return copy_sges<true>(qp.pd, sges, nsge, offset, const_cast<uint8_t*>(src), len, why);
}

/* ---- Frames -------------------------------------------------------------------- */

uint8_t* RoceStorm::frame_buffer(FrameBurst& out) { return tx_buffers_.data() + out.count * FRAME_BUFFER; }

uint8_t* RoceStorm::begin_packet(const RocePath& path, FrameBurst& out, const Bth& bth, uint32_t ext, uint32_t payload)
{
    Bth b = bth;
    b.pad = static_cast<uint8_t>((4 - payload % 4) % 4);
    uint8_t* frame = frame_buffer(out);
    building_ = write_encap(frame, path, BTH_LEN + ext + payload + b.pad + ICRC_LEN);
    uint8_t* at = frame + building_.l4_off + UDP_HLEN;
    write_bth(at, b);
    std::memset(at + BTH_LEN + ext + payload, 0, b.pad);
    return at;
}

void RoceStorm::end_packet(FrameBurst& out)
{
    uint8_t* frame = frame_buffer(out);
    finish_frame(frame, building_);
    out.next_layout() = building_;
    out.join(frame, building_.l3_end);
    counter_add(stats_.tx_packets, 1);
    counter_add(stats_.tx_bytes, building_.l3_end);
}

} // namespace cna::fw::roce
