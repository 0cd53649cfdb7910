/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: what the wire can say to the RoCE firmware. Two PFs on a cable,
 * an RC QP each, connected, and a UD QP each. Each input is a list of
 * operations: a RoCEv2 packet to PF b from PF a's address (any BTH,
 * extended headers and payload, to b's RC or UD QP or any QPN, its ICRC
 * right or wrong, sent through a's L2 Tx as a user could), an ARP or
 * ICMPv6 frame with any body, a WQE on a's RC QP with any opcode, lengths,
 * keys and addresses, a datagram WQE on a's UD QP with any address, Q_Key
 * and length, a receive on b's RC or UD QP. The storms may NAK, drop,
 * count or move QPs to SQE or ERR; they must never crash or touch host
 * memory they were not given (ASan). QPs that left RTS are brought back
 * before the next input.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "rdma_side.h"
#include "fuzz_input.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/transport.h"
#include "base/log.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::test;
using namespace cna::hsi;
using namespace cna::hsi::rdma;

constexpr uint16_t QP = 3;
constexpr uint16_t UD_QP = 5;
constexpr uint32_t UD_QKEY = 0x11111111;
constexpr std::size_t BUF = 256 * 1024;

using Input = FuzzInput;

struct Rig {
    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<Side> a, b;
};
Rig* rig;

void connect()
{
    for (auto [s, peer] : {std::pair{rig->a.get(), rig->b.get()}, std::pair{rig->b.get(), rig->a.get()}}) {
        ModifyQpRamrodData d{};
        d.qp_id = QP;
        d.cur_state = static_cast<uint8_t>(s->rdma.state(QP));
        d.new_state = static_cast<uint8_t>(QpState::reset);
        s->rdma.modify_qp(d);
        s->rdma.connect(QP, {peer->rdma.mac(), peer->rdma.ipv4(), qpn_of(QP)}, FakeRdma::ConnectOptions{});
    }
}

/* A RoCEv2 packet from a's address to b's: its UDP payload is the input's. */
void roce_packet(Input& in)
{
    const uint8_t flags = in.take<uint8_t>();
    /* Within the vport's MTU of 1500: a's L2 Tx sends it as it is. */
    std::vector<uint8_t> body = in.bytes(in.take<uint16_t>() % 1400);
    if (body.size() < roce::BTH_LEN)
        body.resize(roce::BTH_LEN);
    if (flags & 1) /* mostly to a QP that exists */
        store_be32(body.data() + 4, (load_be32(body.data() + 4) & 0xff000000u) | qpn_of(flags & 4 ? UD_QP : QP));
    if (flags & 8) /* a datagram, with or without immediate */
        body[0] = static_cast<uint8_t>(roce::op::UD_SEND_ONLY + (flags >> 7));
    RocePath path{};
    const auto a_mac = rig->a->rdma.mac(), b_mac = rig->b->rdma.mac();
    std::memcpy(path.src_mac, a_mac.data(), 6);
    std::memcpy(path.dst_mac, b_mac.data(), 6);
    path.vlan_tci = NO_VLAN;
    path.ip_version = IP_VERSION_4;
    path.hop_limit = 64;
    path.udp_src_port = 0xc000;
    store_be32(path.src_ip + 12, rig->a->rdma.ipv4());
    store_be32(path.dst_ip + 12, rig->b->rdma.ipv4());
    std::vector<uint8_t> frame(roce::encap_len(path) + body.size() + roce::ICRC_LEN);
    FrameLayout l = roce::write_encap(frame.data(), path, static_cast<uint32_t>(body.size() + roce::ICRC_LEN));
    std::memcpy(frame.data() + l.l4_off + roce::UDP_HLEN, body.data(), body.size());
    roce::icrc_insert(frame.data(), l);
    if (flags & 2)
        frame[frame.size() - 1] ^= 0x5a; /* a wrong ICRC */
    rig->a->drv.send(0, frame);
}

void neighbour_frame(Input& in)
{
    const bool arp = in.take<uint8_t>() & 1;
    std::vector<uint8_t> body = in.bytes(in.take<uint8_t>());
    const auto a_mac = rig->a->rdma.mac(), b_mac = rig->b->rdma.mac();
    std::vector<uint8_t> frame = eth_frame(b_mac.data(), a_mac.data(), arp ? 0x0806 : 0x86dd, std::max<std::size_t>(body.size(), 46));
    std::copy(body.begin(), body.end(), frame.begin() + 14);
    if (!arp && frame.size() >= 14 + 8)
        frame[14 + 6] = 58; /* ICMPv6 */
    rig->a->drv.send(0, frame);
}

void wqe(Input& in)
{
    SqWqe w{};
    w.wr_id = in.take<uint8_t>();
    w.opcode = in.take<uint8_t>() % 8;
    w.flags = in.take<uint8_t>() & 0x7;
    w.length = in.take<uint32_t>() % (BUF + 4096);
    w.rkey = in.take<uint8_t>() & 1 ? rig->b->key : in.take<uint32_t>();
    w.remote_addr = FakeRdma::va_of(rig->b->buf, in.take<uint32_t>() % (BUF + 4096));
    w.compare_add = in.take<uint64_t>();
    w.swap = in.take<uint64_t>();
    const uint32_t off = in.take<uint32_t>() % BUF;
    Sge sge{FakeRdma::va_of(rig->a->buf, off), w.length, in.take<uint8_t>() & 1 ? rig->a->key : in.take<uint32_t>()};
    rig->a->rdma.post_send(QP, w, {sge});
}

void datagram(Input& in)
{
    SqWqe w{};
    w.wr_id = in.take<uint8_t>();
    w.opcode = in.take<uint8_t>() % 8;
    w.flags = in.take<uint8_t>() & 0xf;
    w.length = in.take<uint16_t>() % 5000;
    UdAddress to{};
    const uint8_t pick = in.take<uint8_t>();
    to.dest_qpn = pick & 1 ? qpn_of(UD_QP) : in.take<uint32_t>();
    to.qkey = pick & 2 ? UD_QKEY : pick & 4 ? QKEY_USE_QPS : in.take<uint32_t>();
    to.path = rig->a->path_to(*rig->b);
    if (pick & 8)
        to.path.vlan_tci = in.take<uint16_t>();
    if (pick & 16)
        to.path.ip_version = in.take<uint8_t>();
    to.path.flow_label = in.take<uint32_t>() & 0x1fffff;
    const uint32_t off = in.take<uint32_t>() % BUF;
    Sge sge{FakeRdma::va_of(rig->a->buf, off), w.length, in.take<uint8_t>() & 1 ? rig->a->key : in.take<uint32_t>()};
    rig->a->rdma.post_datagram(UD_QP, w, to, {sge});
}

void recv(Input& in)
{
    const uint32_t off = in.take<uint16_t>();
    const uint32_t len = in.take<uint32_t>() % BUF;
    const uint16_t qp = in.take<uint8_t>() & 1 ? UD_QP : QP;
    rig->b->rdma.post_recv(qp, in.take<uint8_t>(), {Sge{FakeRdma::va_of(rig->b->buf, off), len, rig->b->key}});
}

void datagrams_ready()
{
    for (Side* s : {rig->a.get(), rig->b.get()})
        if (s->rdma.state(UD_QP) != QpState::rts)
            s->rdma.datagrams_ready(UD_QP, UD_QKEY);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    set_log_sink([](LogLevel, const std::string&) {});
    rig = new Rig;
    AdapterConfig config;
    config.name = "fuzzroce";
    config.ports = 2;
    config.wire = Wire::cable;
    config.link_up_delay_ms = 0;
    rig->adapter = Adapter::create(config, nullptr);
    rig->a = std::make_unique<Side>(*rig->adapter, 0);
    rig->b = std::make_unique<Side>(*rig->adapter, 1);
    bring_up_l2(rig->a->drv, L2Setup{});
    bring_up_l2(rig->b->drv, L2Setup{});
    for (Side* s : {rig->a.get(), rig->b.get()}) {
        wait_link(s->drv);
        s->rdma.init();
        s->rdma.create_cq(0, 4096);
        s->buf = s->drv.alloc(BUF);
        s->key = s->rdma.reg_mr(1, s->buf, 0, BUF, access::ALL);
        s->rdma.create_qp(QP);
        FakeRdma::QpOptions ud;
        ud.type = QpType::ud;
        s->rdma.create_qp(UD_QP, ud);
    }
    connect();
    datagrams_ready();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    Input in(data, size);
    for (uint32_t op = 0; op < 16 && !in.empty(); op++) {
        switch (in.take<uint8_t>() % 5) {
        case 0: roce_packet(in); break;
        case 1: neighbour_frame(in); break;
        case 2: wqe(in); break;
        case 3: recv(in); break;
        case 4: datagram(in); break;
        }
    }
    rig->a->drv.wait_tx_done(0);
    for (Side* s : {rig->a.get(), rig->b.get()}) {
        s->rdma.poll_cq(0);
        s->drv.take_async_events();
    }
    if (rig->a->rdma.state(QP) != QpState::rts || rig->b->rdma.state(QP) != QpState::rts)
        connect();
    datagrams_ready();
    return 0;
}
