/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: the InfiniBand CM (pmd/rdma/cm) between two sides, under MADs
 * from anyone. The input is a script: consumer calls on either side, the
 * fabric delivering, dropping or doubling what is in flight, time moving,
 * and MADs made up from the input's bytes (most with a CM header and comm
 * IDs of live connections, so that they reach the state machine rather
 * than the header check) from a known peer or a stranger.
 *
 * What must hold: nothing crashes or trips a sanitizer; each side has at
 * most one connection per connect, REQ and SIDR REQ it saw; every event
 * names a connection that exists; and once every consumer destroys what
 * it has and the fabric drains and time runs out, no side keeps anything.
 */
#include <cstdlib>
#include <deque>
#include <vector>

#include "cm_ip_service.h"
#include "cm_manager.h"
#include "fuzz_input.h"

namespace {

using namespace cna::cm;
using cna::fw::test::FuzzInput;

Gid gid_of(uint8_t n)
{
    Gid g{};
    g[10] = g[11] = 0xff;
    g[12] = 10;
    g[15] = n;
    return g;
}

struct InFlight {
    Gid from, to;
    Mad mad;
};

struct Side;

struct Fabric {
    std::deque<InFlight> in_flight;
    uint64_t now = 1'000'000;
};

struct Side final : MadSender {
    Side(Fabric& f, uint8_t n, uint32_t first_id)
        : fabric(f), gid(gid_of(n)), cm(config(n, first_id), *this) {}
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
    Gid gid;
    Manager cm;
    std::vector<uint32_t> ids;
    unsigned made = 0; /* connects, REQs and SIDR REQs: what may make a connection */
};

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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    FuzzInput in(data, size);
    Fabric fabric;
    Side a(fabric, 1, 0x100), b(fabric, 2, 0x200);
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
                const InFlight m = fabric.in_flight.front();
                fabric.in_flight.pop_front();
                const uint8_t fate = in.take<uint8_t>() % 4;
                Side& to = m.to == a.gid ? a : b;
                if (fate != 0) {
                    to.made += m.mad[17] == 0x10 || m.mad[17] == 0x17;
                    to.cm.receive(m.from, m.mad, fabric.now);
                }
                if (fate == 3) {
                    to.made += m.mad[17] == 0x10 || m.mad[17] == 0x17;
                    to.cm.receive(m.from, m.mad, fabric.now);
                }
            }
            break;
        case 12: {
            const Mad mad = made_up_mad(in, s, other);
            const bool stranger = in.take<uint8_t>() & 1;
            s.made += mad[17] == 0x10 || mad[17] == 0x17;
            const std::size_t length = in.take<uint8_t>() & 1 ? MAD_SIZE : in.take<uint8_t>();
            s.cm.receive(stranger ? gid_of(9) : other.gid, std::span(mad).first(std::min(length, MAD_SIZE)), fabric.now);
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
            const InFlight m = fabric.in_flight.front();
            fabric.in_flight.pop_front();
            if (m.to == a.gid || m.to == b.gid)
                (m.to == a.gid ? a : b).cm.receive(m.from, m.mad, fabric.now);
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
