/* SPDX-License-Identifier: BSD-3-Clause
 * Two CMs on a fabric the test controls: every MAD either side sends waits
 * in flight until the test delivers, drops or doubles it, and time moves
 * only when the test says.
 */
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "cm_manager.h"

namespace cna::cm::test {

inline Gid gid_of(uint8_t last)
{
    Gid g{};
    g[10] = g[11] = 0xff; /* IPv4-mapped, 10.0.0.<last> */
    g[12] = 10;
    g[15] = last;
    return g;
}

struct InFlight {
    Gid from;
    Gid to;
    Mad mad;
    Attribute attribute() const { return parse_cm_header(mad)->attribute; }
};

class Fabric {
public:
    class Port : public MadSender {
    public:
        Port(Fabric& fabric, Gid gid) : fabric_(fabric), gid_(gid) {}
        void send(const Gid& to, const Mad& mad) override { fabric_.in_flight.push_back({gid_, to, mad}); }
        const Gid& gid() const { return gid_; }

    private:
        Fabric& fabric_;
        Gid gid_;
    };

    std::deque<InFlight> in_flight;
    /* Every MAD ever sent, in order, for what a test looks back on. */
    std::vector<InFlight> sent_log;
    uint64_t now = 1'000'000;
};

/* Side A (10.0.0.1) and side B (10.0.0.2). */
class CmPair : public ::testing::Test {
protected:
    static Config config_of(uint64_t guid, uint32_t first_id)
    {
        Config c;
        c.ca_guid = guid;
        c.first_comm_id = first_id;
        c.response_timeout = 16; /* 268 ms */
        c.packet_lifetime = 10;  /* 4 ms */
        c.max_retries = 3;
        c.mra_service_timeout = 20;
        return c;
    }

    Fabric fabric;
    Fabric::Port port_a{fabric, gid_of(1)};
    Fabric::Port port_b{fabric, gid_of(2)};
    Manager a{config_of(0xa0a0a0a0a0a0a0a0, 0x1000), port_a};
    Manager b{config_of(0xb0b0b0b0b0b0b0b0, 0x2000), port_b};

    Manager& at(const Gid& g) { return g == port_a.gid() ? a : b; }

    /* Delivers what is in flight (and what that makes), dropping those
     * `drop` says to, until nothing is. Returns how many were delivered. */
    unsigned deliver(const std::function<bool(const InFlight&)>& drop = {})
    {
        unsigned delivered = 0;
        while (!fabric.in_flight.empty()) {
            InFlight m = fabric.in_flight.front();
            fabric.in_flight.pop_front();
            fabric.sent_log.push_back(m);
            if (drop && drop(m))
                continue;
            at(m.to).receive(m.from, m.mad, fabric.now);
            delivered++;
        }
        return delivered;
    }

    /* Moves time to the first deadline of either side and fires it. */
    bool fire_next_deadline()
    {
        std::optional<uint64_t> next = a.next_deadline();
        std::optional<uint64_t> nb = b.next_deadline();
        if (!next || (nb && *nb < *next))
            next = nb;
        if (!next)
            return false;
        fabric.now = std::max(fabric.now, *next);
        a.expire(fabric.now);
        b.expire(fabric.now);
        return true;
    }

    /* Fires deadlines, delivering what they send (but what `drop` says),
     * until `m` has events: those. */
    std::vector<Event> events_in_time(Manager& m, const std::function<bool(const InFlight&)>& drop)
    {
        std::vector<Event> seen;
        deliver(drop);
        while (seen.empty() && fire_next_deadline()) {
            deliver(drop);
            seen = events(m);
        }
        return seen;
    }

    std::vector<Event> events(Manager& m)
    {
        std::vector<Event> all;
        while (std::optional<Event> e = m.next_event())
            all.push_back(*e);
        return all;
    }

    Event only_event(Manager& m)
    {
        std::vector<Event> all = events(m);
        EXPECT_EQ(all.size(), 1u);
        if (all.empty())
            return Event{EventType::timewait_exit, 0, 0, {}, std::nullopt};
        return all.front();
    }

    unsigned sent_of(Attribute attribute, const Gid& from) const
    {
        unsigned n = 0;
        for (const InFlight& m : fabric.sent_log)
            n += m.attribute() == attribute && m.from == from;
        return n;
    }

    ConnectParams connect_params(uint64_t service_id, uint32_t qpn = 0x11)
    {
        ConnectParams p;
        p.service_id = service_id;
        p.local_gid = port_a.gid();
        p.remote_gid = port_b.gid();
        p.qpn = qpn;
        p.starting_psn = 0x123456;
        p.responder_resources = 4;
        p.initiator_depth = 2;
        p.private_data = {1, 2, 3};
        return p;
    }

    AcceptParams accept_params(uint32_t qpn = 0x22)
    {
        AcceptParams p;
        p.qpn = qpn;
        p.starting_psn = 0x654321;
        p.responder_resources = 2;
        p.initiator_depth = 4;
        p.private_data = {9, 8, 7};
        return p;
    }

    /* A REQ answered with a REP that A took (its RTU not sent): the IDs of
     * A's and B's ends. */
    std::pair<uint32_t, uint32_t> replied(uint64_t service_id = 0x1060000 | 7471)
    {
        if (listener_ == 0)
            listener_ = b.listen(service_id, 8);
        const uint32_t active = a.connect(connect_params(service_id), fabric.now);
        deliver();
        const Event req = only_event(b);
        EXPECT_EQ(b.accept(req.id, accept_params(), fabric.now), 0);
        deliver();
        EXPECT_EQ(only_event(a).type, EventType::rep_received);
        return {active, req.id};
    }

    /* A connected pair through REQ, REP and RTU: the IDs of A's and B's ends. */
    std::pair<uint32_t, uint32_t> connected(uint64_t service_id = 0x1060000 | 7471, uint32_t qpn = 0x11)
    {
        if (listener_ == 0)
            listener_ = b.listen(service_id, 8);
        const uint32_t active = a.connect(connect_params(service_id, qpn), fabric.now);
        deliver();
        const Event req = only_event(b);
        EXPECT_EQ(req.type, EventType::req_received);
        EXPECT_EQ(b.accept(req.id, accept_params(), fabric.now), 0);
        deliver();
        EXPECT_EQ(only_event(a).type, EventType::rep_received);
        EXPECT_EQ(a.send_rtu(active, {}, fabric.now), 0);
        deliver();
        EXPECT_EQ(only_event(b).type, EventType::established);
        return {active, req.id};
    }

    uint32_t listener_ = 0;
};

} // namespace cna::cm::test
