/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: the InfiniBand CM (pmd/rdma/cm) between two PFs of a live
 * adapter, under MADs from anyone. The input is a script: consumer calls
 * on either side, the fabric delivering, dropping or doubling what is in
 * flight, time moving, and MADs made up from the input's bytes (most with
 * a CM header and comm IDs of live connections, so that they reach the
 * state machine rather than the header check) from a known peer or a
 * stranger. Whatever is delivered goes out on the sender's GSI QP (or, a
 * stranger's, as a RoCEv2 frame of any P_Key, Q_Key and length through
 * its L2) and reaches the other CM only as the adapter receives it there:
 * through the receiver's GSI QP, its GRH naming the sender.
 *
 * What must hold: nothing crashes or trips a sanitizer; every frame sent
 * to a GSI QP is received or counted as dropped; each side has at most
 * one connection per connect, REQ and SIDR REQ it saw; every event names
 * a connection that exists; and once every consumer destroys what it has
 * and the fabric drains and time runs out, no side keeps anything.
 */
#include <chrono>
#include <cstdlib>
#include <deque>
#include <memory>
#include <vector>

#include "base/bytes.h"
#include "base/log.h"
#include "cm_ip_service.h"
#include "cm_manager.h"
#include "fuzz_input.h"
#include "rdma_side.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/transport.h"

namespace {

using namespace cna::cm;
using cna::fw::test::FuzzInput;
namespace fw = cna::fw;
namespace hsi = cna::hsi;
namespace hr = cna::hsi::rdma;

constexpr uint16_t GSI = 5;
constexpr uint16_t SEND_CQ = 0, RECV_CQ = 1;
constexpr unsigned RECEIVES = 16;
constexpr std::size_t SLOT = 512; /* a receive: GRH and MAD */
constexpr std::size_t SEND_AT = RECEIVES * SLOT, BUF = SEND_AT + SLOT;
constexpr uint32_t STRANGER = 100; /* added to a PF's IPv4 address: nobody's */

/* Two PFs on a cable, a GSI QP each, built once as an adapter is. */
struct Rig {
    std::unique_ptr<fw::Adapter> adapter;
    std::unique_ptr<fw::test::Side> pfs[2];
};
Rig* rig;

Gid gid_of_ipv4(uint32_t ipv4)
{
    Gid g{};
    g[10] = g[11] = 0xff;
    fw::store_be32(g.data() + 12, ipv4);
    return g;
}

uint64_t stat(fw::test::Side& pf, std::size_t field)
{
    return pf.drv.rd(hsi::reg::STORM_RAM_BASE + hsi::iro::roce_stats(pf.drv.pf()) + field);
}

/* Frames the PF's RoCE firmware dropped, for any reason a GSI datagram can have. */
uint64_t dropped(fw::test::Side& pf)
{
    uint64_t n = 0;
    for (std::size_t field : {offsetof(hr::RoceStats, icrc_errors), offsetof(hr::RoceStats, bad_packets),
                              offsetof(hr::RoceStats, qkey_violations), offsetof(hr::RoceStats, ud_dropped),
                              offsetof(hr::RoceStats, mads_dropped), offsetof(hr::RoceStats, pkey_violations)})
        n += stat(pf, field);
    return n;
}

void post_receive(fw::test::Side& pf, unsigned slot)
{
    pf.rdma.post_recv(GSI, slot, {pf.sge(slot * SLOT, SLOT)});
}

/* A datagram the GSI QPs' setup: RTS with every receive posted, again
 * after anything took a QP out of it. */
void gsi_ready()
{
    for (auto& pf : rig->pfs) {
        if (pf->rdma.state(GSI) == hr::QpState::rts)
            continue;
        fw::test::FakeRdma::QpOptions gsi;
        gsi.type = hr::QpType::gsi;
        gsi.sq_cq = SEND_CQ;
        gsi.rq_cq = RECV_CQ;
        pf->rdma.destroy_qp(GSI);
        pf->rdma.create_qp(GSI, gsi);
        pf->rdma.datagrams_ready(GSI, hr::GSI_QKEY);
        pf->rdma.poll_cq(RECV_CQ);
        for (unsigned slot = 0; slot < RECEIVES; slot++)
            post_receive(*pf, slot);
    }
}

struct Arrival {
    Gid from;
    std::vector<uint8_t> mad;
};

/* What reaches `pf`'s GSI QP of the one frame on its way there: a MAD and
 * the GID its GRH names, or nothing (the firmware counted a drop). A frame
 * neither received nor counted breaks the contract. */
std::optional<Arrival> arrival(fw::test::Side& pf, uint64_t dropped_before)
{
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < give_up) {
        for (const hr::RdmaCqe& c : pf.rdma.poll_cq(RECV_CQ)) {
            const auto slot = static_cast<unsigned>(c.wr_id);
            const uint8_t* grh = pf.buf.va + slot * SLOT;
            std::optional<Arrival> got;
            if (c.status == uint8_t(hr::CqeStatus::success) && c.byte_len >= hr::GRH_LEN)
                got = Arrival{gid_of_ipv4(fw::load_be32(grh + hr::GRH_LEN - 20 + 12)),
                              {grh + hr::GRH_LEN, grh + c.byte_len}};
            post_receive(pf, slot);
            return got;
        }
        if (dropped(pf) != dropped_before)
            return std::nullopt;
    }
    std::abort(); /* a frame to the GSI QP neither received nor counted */
}

/* `bytes` as a datagram from `from`'s GSI QP to `to`'s; what arrives. */
std::optional<Arrival> through_gsi(fw::test::Side& from, fw::test::Side& to, std::span<const uint8_t> bytes)
{
    const uint64_t before = dropped(to);
    std::copy(bytes.begin(), bytes.end(), from.buf.va + SEND_AT);
    const auto len = static_cast<uint32_t>(std::max<std::size_t>(bytes.size(), 1));
    hr::UdAddress address{};
    address.dest_qpn = hr::GSI_QPN;
    address.qkey = hr::GSI_QKEY;
    address.path = from.path_to(to);
    from.rdma.post_datagram(GSI, hr::SqWqe{.wr_id = 1, .opcode = uint8_t(hr::SqOpcode::send), .flags = hr::sq_wqe::SIGNALED,
                                       .length = len},
                            address, {from.sge(SEND_AT, len)});
    if (from.rdma.wait_cq(SEND_CQ, 1).size() != 1)
        std::abort(); /* the GSI QP did not send */
    return arrival(to, before);
}

/* `bytes` as a RoCEv2 datagram to `to`'s QPN 1 from a stranger's address
 * through `from`'s L2, with the P_Key and Q_Key the input gives. */
std::optional<Arrival> from_stranger(FuzzInput& in, fw::test::Side& from, fw::test::Side& to,
                                     std::span<const uint8_t> bytes)
{
    const uint8_t keys = in.take<uint8_t>();
    std::vector<uint8_t> body(fw::roce::BTH_LEN + fw::roce::DETH_LEN);
    body[0] = fw::roce::op::UD_SEND_ONLY;
    fw::store_be16(body.data() + 2, keys & 1 ? in.take<uint16_t>() : fw::roce::DEFAULT_PKEY);
    fw::store_be32(body.data() + 4, hr::GSI_QPN);
    fw::store_be32(body.data() + fw::roce::BTH_LEN, keys & 2 ? in.take<uint32_t>() : hr::GSI_QKEY);
    fw::store_be32(body.data() + fw::roce::BTH_LEN + 4, hr::GSI_QPN);
    body.insert(body.end(), bytes.begin(), bytes.end());
    hr::RocePath path = from.path_to(to);
    path.udp_src_port = 0xc000;
    fw::store_be32(path.src_ip + 12, from.rdma.ipv4() + STRANGER);
    std::vector<uint8_t> frame(fw::roce::encap_len(path) + body.size() + fw::roce::ICRC_LEN);
    const fw::FrameLayout l = fw::roce::write_encap(frame.data(), path,
                                                    static_cast<uint32_t>(body.size() + fw::roce::ICRC_LEN));
    std::copy(body.begin(), body.end(), frame.begin() + l.l4_off + fw::roce::UDP_HLEN);
    fw::roce::icrc_insert(frame.data(), l);
    const uint64_t before = dropped(to);
    from.drv.send(0, frame);
    return arrival(to, before);
}

bool may_make_a_connection(std::span<const uint8_t> mad)
{
    return mad.size() > 17 && mad[16] == 0 && (mad[17] == 0x10 || mad[17] == 0x17); /* REQ, SIDR REQ */
}

struct InFlight {
    Gid from, to;
    Mad mad;
};

struct Fabric {
    std::deque<InFlight> in_flight;
    uint64_t now = 1'000'000;
};

struct Side final : MadSender {
    Side(Fabric& f, fw::test::Side& port, uint8_t n, uint32_t first_id)
        : fabric(f), pf(port), gid(gid_of_ipv4(port.rdma.ipv4())), cm(config(n, first_id), *this) {}
    static Config config(uint8_t n, uint32_t first_id)
    {
        Config c;
        c.ca_guid = 0x1111111111111111ull * n;
        c.first_comm_id = first_id;
        c.response_timeout = 8;
        c.packet_lifetime = 4;
        c.max_retries = 2;
        c.mra_service_timeout = 10;
        return c;
    }
    void send(const Gid& to, const Mad& mad) override { fabric.in_flight.push_back({gid, to, mad}); }

    /* What the adapter delivers to this side's CM. */
    void receive(const std::optional<Arrival>& got)
    {
        if (!got)
            return;
        made += may_make_a_connection(got->mad);
        cm.receive(got->from, got->mad, fabric.now);
    }

    /* Takes what happened, as a consumer does: each ID checked, kept. */
    void take_events()
    {
        while (std::optional<Event> e = cm.next_event()) {
            if (!cm.state_of(e->id))
                std::abort(); /* an event about nothing */
            ids.push_back(e->id);
        }
    }

    Fabric& fabric;
    fw::test::Side& pf;
    Gid gid;
    Manager cm;
    std::vector<uint32_t> ids;
    unsigned made = 0; /* connects, REQs and SIDR REQs: what may make a connection */
};

/* The first MAD in flight, carried by the adapter `copies` times (0: lost). */
void carry(Fabric& fabric, Side& a, Side& b, unsigned copies)
{
    const InFlight m = fabric.in_flight.front();
    fabric.in_flight.pop_front();
    if (m.to != a.gid && m.to != b.gid)
        return; /* an answer to a stranger: nobody is there */
    Side& from = m.from == a.gid ? a : b;
    Side& to = m.to == a.gid ? a : b;
    for (unsigned n = 0; n < copies; n++) {
        const std::optional<Arrival> got = through_gsi(from.pf, to.pf, m.mad);
        if (!got || got->from != from.gid || got->mad.size() != MAD_SIZE)
            std::abort(); /* a CM's MAD lost or changed on a cable */
        to.receive(got);
    }
}

uint32_t pick(FuzzInput& in, const std::vector<uint32_t>& ids)
{
    const uint8_t which = in.take<uint8_t>();
    if (ids.empty() || which == 0xff)
        return in.take<uint32_t>();
    return ids[which % ids.size()];
}

PrivateData data_of(FuzzInput& in) { return in.bytes(in.take<uint8_t>() % 64); }

/* A MAD from the input: a CM header over its bytes, mostly. */
Mad made_up_mad(FuzzInput& in, const Side& to, const Side& other)
{
    Mad mad{};
    const std::vector<uint8_t> body = in.bytes(in.take<uint8_t>());
    std::copy(body.begin(), body.end(), mad.begin());
    const uint8_t shape = in.take<uint8_t>();
    if (shape % 8 != 0) {
        mad[0] = MAD_BASE_VERSION;
        mad[1] = CM_MGMT_CLASS;
        mad[2] = CM_CLASS_VERSION;
        mad[3] = MAD_METHOD_SEND;
        mad[16] = 0;
        mad[17] = static_cast<uint8_t>(0x10 + shape % 9); /* REQ .. SIDR REP */
    }
    if (shape & 0x10) { /* comm IDs of connections that exist */
        const uint32_t mine = pick(in, to.ids), theirs = pick(in, other.ids);
        for (int i = 0; i < 4; i++) {
            mad[24 + i] = static_cast<uint8_t>(theirs >> (24 - 8 * i));
            mad[28 + i] = static_cast<uint8_t>(mine >> (24 - 8 * i));
        }
    }
    return mad;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    fw::set_log_sink([](fw::LogLevel, const std::string&) {});
    rig = new Rig;
    fw::AdapterConfig config;
    config.name = "fuzzcm";
    config.ports = 2;
    config.wire = fw::Wire::cable;
    config.link_up_delay_ms = 0;
    rig->adapter = fw::Adapter::create(config, nullptr);
    for (uint32_t n = 0; n < 2; n++) {
        auto& pf = rig->pfs[n];
        pf = std::make_unique<fw::test::Side>(*rig->adapter, n);
        fw::test::bring_up_l2(pf->drv, fw::test::L2Setup{});
        fw::test::wait_link(pf->drv);
        pf->rdma.init();
        pf->rdma.create_cq(SEND_CQ, 256);
        pf->rdma.create_cq(RECV_CQ, 256);
        pf->buf = pf->drv.alloc(BUF);
        pf->key = pf->rdma.reg_mr(1, pf->buf, 0, BUF, hr::access::ALL);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzInput in(data, size);
    gsi_ready();
    Fabric fabric;
    Side a(fabric, *rig->pfs[0], 1, 0x100), b(fabric, *rig->pfs[1], 2, 0x200);
    Side* sides[] = {&a, &b};
    const uint64_t service = service_id_of(PortSpace::tcp, 7471);
    b.cm.listen(service, 1 + in.take<uint8_t>() % 8);
    a.cm.listen(service_id_of(PortSpace::udp, 7471), 4);

    for (unsigned step = 0; step < 512 && !in.empty(); step++) {
        const uint8_t op = in.take<uint8_t>();
        Side& s = *sides[op & 1];
        Side& other = *sides[!(op & 1)];
        const uint32_t id = pick(in, s.ids);
        switch ((op >> 1) % 16) {
        case 0: {
            ConnectParams p;
            p.service_id = in.take<uint8_t>() & 1 ? service : in.take<uint64_t>();
            p.local_gid = s.gid;
            p.remote_gid = other.gid;
            p.qpn = in.take<uint8_t>();
            p.private_data = data_of(in);
            s.ids.push_back(s.cm.connect(p, fabric.now));
            s.made++;
            break;
        }
        case 1: {
            AcceptParams p;
            p.qpn = in.take<uint8_t>();
            p.private_data = data_of(in);
            s.cm.accept(id, p, fabric.now);
            break;
        }
        case 2: s.cm.reject(id, static_cast<RejReason>(in.take<uint8_t>()), data_of(in), fabric.now); break;
        case 3: s.cm.send_mra(id, fabric.now); break;
        case 4: s.cm.send_rtu(id, data_of(in), fabric.now); break;
        case 5: s.cm.established(id); break;
        case 6: s.cm.disconnect(id, data_of(in), fabric.now); break;
        case 7: s.cm.send_drep(id, data_of(in), fabric.now); break;
        case 8: s.cm.destroy(id, fabric.now); break;
        case 9:
            s.ids.push_back(s.cm.sidr_request({service_id_of(PortSpace::udp, 7471), other.gid, data_of(in)}, fabric.now));
            s.made++;
            break;
        case 10: s.cm.sidr_reply(id, {static_cast<SidrStatus>(in.take<uint8_t>() % 6), in.take<uint8_t>(), 0, {}}); break;
        case 11: /* deliver, drop or double what is first in flight */
            if (!fabric.in_flight.empty()) {
                const uint8_t fate = in.take<uint8_t>() % 4;
                carry(fabric, a, b, fate == 0 ? 0 : fate == 3 ? 2 : 1);
            }
            break;
        case 12: { /* to s, from its peer's GSI QP or from a stranger */
            const Mad mad = made_up_mad(in, s, other);
            const bool stranger = in.take<uint8_t>() & 1;
            const std::size_t length = in.take<uint8_t>() & 1 ? MAD_SIZE : in.take<uint8_t>();
            const auto bytes = std::span(mad).first(std::min(length, MAD_SIZE));
            s.receive(stranger ? from_stranger(in, other.pf, s.pf, bytes) : through_gsi(other.pf, s.pf, bytes));
            break;
        }
        case 13:
            if (std::optional<uint64_t> next = s.cm.next_deadline())
                fabric.now = std::max(fabric.now, *next);
            a.cm.expire(fabric.now);
            b.cm.expire(fabric.now);
            break;
        case 14:
            fabric.now += in.take<uint32_t>();
            a.cm.expire(fabric.now);
            b.cm.expire(fabric.now);
            break;
        default: break;
        }
        for (Side* side : sides) {
            side->take_events();
            if (side->cm.connections() > side->made)
                std::abort();
        }
    }

    /* Every consumer lets go of everything; the fabric drains (strangers'
     * answers go nowhere) and time runs out. */
    for (int round = 0; round < 10000; round++) {
        for (Side* side : sides) {
            side->take_events();
            for (uint32_t id : side->ids)
                side->cm.destroy(id, fabric.now);
            side->ids.clear();
        }
        if (!fabric.in_flight.empty()) {
            carry(fabric, a, b, 1);
            continue;
        }
        std::optional<uint64_t> next = a.cm.next_deadline();
        if (std::optional<uint64_t> nb = b.cm.next_deadline(); !next || (nb && *nb < *next))
            next = nb;
        if (!next)
            break;
        fabric.now = std::max(fabric.now, *next);
        a.cm.expire(fabric.now);
        b.cm.expire(fabric.now);
    }
    for (Side* side : sides) {
        side->take_events();
        for (uint32_t id : side->ids)
            side->cm.destroy(id, fabric.now);
    }
    if (a.cm.connections() != 0 || b.cm.connections() != 0)
        std::abort(); /* something outlived its consumer */
    (void)parse_ip_cm_header(std::span(data, size));
    return 0;
}
