/* SPDX-License-Identifier: BSD-3-Clause
 * The engine's side of RoCE: a pass over the PF's QPs, each driving its
 * engines as its state allows, and the dispatch of a received packet to
 * its QP's responder (requests, datagrams) or requester (responses).
 */
#include <cstring>

#include "function/function.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/roce_firmware.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

uint32_t RoceFirmware::port() const { return ctx_.hw.port_id(); }

void RoceFirmware::post_events(SlowpathQueue& spq)
{
    completer_.take_events([&](RdmaEvent event, uint64_t data) {
        return spq.post_async(hsi::ProtocolId::roce, static_cast<uint8_t>(event), 0, data);
    });
}

bool RoceFirmware::poll(uint64_t now_ns, FrameBurst& out)
{
    if (memory_.host_gone())
        return false;
    bool work = neighbours_.poll(out, packets_.buffers(), PacketWriter::FRAME_BUFFER);
    const uint32_t n = static_cast<uint32_t>(live_qps_.size());
    for (uint32_t i = 0; i < n && !out.full(); i++)
        work |= poll_qp(ctx_.qps[live_qps_[(poll_start_ + i) % n]], now_ns, out);
    poll_start_ = n == 0 ? 0 : (poll_start_ + 1) % n;
    return work;
}

bool RoceFirmware::poll_qp(Qp& qp, uint64_t now_ns, FrameBurst& out)
{
    if (is_datagram(qp.type))
        return requester_.poll_datagrams(qp, out);
    switch (qp.state) {
    case QpState::rtr: return responder_.poll(qp, out);
    case QpState::rts:
    case QpState::sqd: {
        const bool answered = responder_.poll(qp, out);
        return requester_.poll(qp, now_ns, out) || answered;
    }
    case QpState::err: {
        const bool answered = responder_.poll(qp, out); /* the NAK that ended it */
        return completer_.flush(qp) || answered;
    }
    default: return false;
    }
}

void RoceFirmware::receive(const WireFrame& frame, uint64_t now_ns)
{
    const FrameLayout& l = frame.layout;
    if (memory_.host_gone())
        return;
    counter_add(ctx_.stats.rx_packets, 1);
    counter_add(ctx_.stats.rx_bytes, l.l3_end);
    if (frame.pending_icrc == nullptr && !icrc_ok(frame.data, l)) {
        counter_add(ctx_.stats.icrc_errors, 1);
        return;
    }
    const uint8_t* bth_at = frame.data + l.l4_off + UDP_HLEN;
    const Bth bth = read_bth(bth_at);
    const uint16_t f = opcode_flags(bth.opcode);
    const uint32_t roce_end = l.l3_end - ICRC_LEN;
    const uint32_t hdr_end = l.l4_off + UDP_HLEN + BTH_LEN + ext_headers_len(f);
    const uint32_t qp_id = bth.dest_qp == GSI_QPN ? gsi_qp_ : bth.dest_qp - QPN_BASE;
    if (!(f & opf::VALID) || bth_tver(bth_at) != 0 || hdr_end + bth.pad > roce_end || qp_id >= ctx_.qps.size() ||
        !ctx_.qps[qp_id].exists) {
        counter_add(ctx_.stats.bad_packets, 1);
        return;
    }
    /* IBTA 9.6.1.1 (C9-42): the port has the one partition, full member
     * (DEFAULT_PKEY); a packet of another, or of a P_Key no member has,
     * goes no further. */
    if (!pkey_matches(bth.pkey)) {
        counter_add(ctx_.stats.pkey_violations, 1);
        return;
    }
    Qp& qp = ctx_.qps[qp_id];
    const uint8_t* hdrs = bth_at + BTH_LEN;
    const uint8_t* payload = frame.data + hdr_end;
    const uint32_t len = roce_end - hdr_end - bth.pad;
    /* A datagram to a connection, or a connection's packet to a UD QP, is
     * no packet of that QP's transport; only the peer a connection is
     * connected to speaks to it. */
    const bool ud = is_datagram(qp.type);
    if (((f & opf::DETH) != 0) != ud || (!ud && !from_peer(qp, frame))) {
        counter_add(ctx_.stats.bad_packets, 1);
        return;
    }
    if (ud)
        responder_.on_datagram(qp, frame, bth, hdrs, payload, len);
    else if (f & opf::REQUEST)
        responder_.on_request(qp, bth, hdrs, payload, len);
    else
        requester_.on_response(qp, bth, hdrs, payload, len, now_ns);
}

bool RoceFirmware::from_peer(const Qp& qp, const WireFrame& frame)
{
    const FrameLayout& l = frame.layout;
    const uint32_t ip_len = l.l3 == L3::ipv4 ? 4 : 16;
    const uint32_t src_off = l.l2_len + (l.l3 == L3::ipv4 ? 12 : 8);
    const uint8_t* peer = qp.path.dst_ip + (l.l3 == L3::ipv4 ? 12 : 0);
    return qp.path.ip_version == (l.l3 == L3::ipv4 ? IP_VERSION_4 : IP_VERSION_6) &&
           std::memcmp(frame.data + src_off, peer, ip_len) == 0;
}

void RoceFirmware::neighbour_frame(const WireFrame& frame)
{
    neighbours_.receive(frame, [this](const uint8_t(&mac)[6], uint16_t tag) {
        completer_.raise(RdmaEvent::neighbour, neighbour_event(mac, tag));
    });
}

} // namespace cna::fw::roce
