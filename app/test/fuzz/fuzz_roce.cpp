/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: what the wire can say to the RoCE storms. Two PFs on a cable,
 * an RC QP each, connected. Each input is a list of operations: a RoCEv2
 * packet to PF b from PF a's address (any BTH, extended headers and
 * payload, to b's QP or any QPN, its ICRC right or wrong, sent through a's
 * L2 Tx as a user could), an ARP or ICMPv6 frame with any body, a WQE on
 * a's QP with any opcode, lengths, keys and addresses, a receive on b's.
 * The storms may NAK, drop, count or move QPs to ERR; they must never
 * crash or touch host memory they were not given (ASan). QPs in ERR are
 * connected again before the next input.
 */
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fake_rdma.h"
#include "fuzz_input.h"
#include "roce/encap.h"
#include "roce/transport.h"
#include "util/log.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::test;
using namespace cna::hsi;
using namespace cna::hsi::rdma;

constexpr uint16_t QP = 3;
constexpr std::size_t BUF = 256 * 1024;

using Input = FuzzInput;

struct Side {
    Side(Adapter& adapter, uint32_t pf) : drv(adapter, pf), rdma(drv) {}
    FakeDriver drv;
    FakeRdma rdma;
    HostMem buf;
    uint32_t key = 0;
};

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
    if (flags & 1) /* mostly to the QP that exists */
        store_be32(body.data() + 4, (load_be32(body.data() + 4) & 0xff000000u) | qpn_of(QP));
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
    roce::finish_frame(frame.data(), l);
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

void recv(Input& in)
{
    const uint32_t off = in.take<uint16_t>();
    const uint32_t len = in.take<uint32_t>() % BUF;
    rig->b->rdma.post_recv(QP, in.take<uint8_t>(), {Sge{FakeRdma::va_of(rig->b->buf, off), len, rig->b->key}});
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
    }
    connect();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    Input in(data, size);
    for (uint32_t op = 0; op < 16 && !in.empty(); op++) {
        switch (in.take<uint8_t>() % 4) {
        case 0: roce_packet(in); break;
        case 1: neighbour_frame(in); break;
        case 2: wqe(in); break;
        case 3: recv(in); break;
        }
    }
    rig->a->drv.wait_tx_done(0);
    for (Side* s : {rig->a.get(), rig->b.get()}) {
        s->rdma.poll_cq(0);
        s->drv.take_async_events();
    }
    if (rig->a->rdma.state(QP) != QpState::rts || rig->b->rdma.state(QP) != QpState::rts)
        connect();
    return 0;
}
