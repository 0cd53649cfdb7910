/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's state machine between two sides on a fabric the test controls:
 * connections made, refused, lost and ended, what each side sends again
 * and when it gives up.
 */
#include <cerrno>

#include "cm_fabric.h"

namespace cna::cm::test {
namespace {

constexpr uint64_t SERVICE = 0x0000000001060000 | 7471;

TEST_F(CmPair, ReqRepRtuConnectsWithEachSidesOffer)
{
    const uint32_t listener = b.listen(SERVICE, 8);
    ASSERT_NE(listener, 0u);
    EXPECT_EQ(b.listen(SERVICE, 8), 0u) << "a service has one listener";
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    EXPECT_EQ(a.state_of(active), State::req_sent);
    deliver();

    const Event req_event = only_event(b);
    ASSERT_EQ(req_event.type, EventType::req_received);
    EXPECT_EQ(req_event.listener, listener);
    EXPECT_EQ(req_event.peer, port_a.gid());
    const Req req = parse_req(*req_event.mad);
    EXPECT_EQ(req.service_id, SERVICE);
    EXPECT_EQ(req.local_qpn, 0x11u);
    EXPECT_EQ(req.starting_psn, 0x123456u);
    EXPECT_EQ(req.local_ca_guid, 0xa0a0a0a0a0a0a0a0u);
    EXPECT_EQ(req.primary.local_gid, port_a.gid());
    EXPECT_EQ(req.primary.remote_gid, port_b.gid());
    EXPECT_EQ(req.primary.local_lid, 0xffff) << "RoCE: the permissive LID";
    EXPECT_EQ(req.primary.remote_lid, 0xffff);
    EXPECT_EQ(req.max_cm_retries, 3);
    EXPECT_EQ(req.private_data[2], 3);
    EXPECT_EQ(b.state_of(req_event.id), State::req_received);

    ASSERT_EQ(b.accept(req_event.id, accept_params(), fabric.now), 0);
    EXPECT_EQ(b.accept(req_event.id, accept_params(), fabric.now), -EPROTO);
    deliver();
    const Event rep_event = only_event(a);
    ASSERT_EQ(rep_event.type, EventType::rep_received);
    EXPECT_EQ(rep_event.id, active);
    const Rep rep = parse_rep(*rep_event.mad);
    EXPECT_EQ(rep.local_qpn, 0x22u);
    EXPECT_EQ(rep.starting_psn, 0x654321u);
    EXPECT_EQ(rep.remote_comm_id, active);
    EXPECT_EQ(rep.local_comm_id, req_event.id);
    EXPECT_EQ(rep.private_data[0], 9);

    ASSERT_EQ(a.send_rtu(active, {}, fabric.now), 0);
    EXPECT_EQ(a.state_of(active), State::established);
    deliver();
    EXPECT_EQ(only_event(b).type, EventType::established);
    EXPECT_EQ(b.state_of(req_event.id), State::established);
    EXPECT_FALSE(a.next_deadline()) << "nothing waits once established";
    EXPECT_FALSE(b.next_deadline());
}

TEST_F(CmPair, AReqToNoListenerIsRejectedAsAnInvalidServiceId)
{
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    const Event e = only_event(a);
    ASSERT_EQ(e.type, EventType::rejected);
    EXPECT_EQ(e.id, active);
    EXPECT_EQ(parse_rej(*e.mad).reason, RejReason::invalid_service_id);
    EXPECT_EQ(b.connections(), 0u);
    EXPECT_EQ(b.counters().rejected_reqs, 1u);
    a.destroy(active, fabric.now);
    EXPECT_EQ(a.connections(), 0u);
}

TEST_F(CmPair, TheConsumersRejectCarriesItsPrivateData)
{
    b.listen(SERVICE, 8);
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    const Event req = only_event(b);
    ASSERT_EQ(b.reject(req.id, RejReason::consumer_reject, {0x42, 0x43}, fabric.now), 0);
    deliver();
    const Event e = only_event(a);
    ASSERT_EQ(e.type, EventType::rejected);
    const Rej rej = parse_rej(*e.mad);
    EXPECT_EQ(rej.reason, RejReason::consumer_reject);
    EXPECT_EQ(rej.message, MessageKind::req);
    EXPECT_EQ(rej.private_data[1], 0x43);
    EXPECT_EQ(a.state_of(active), State::idle);
    b.destroy(req.id, fabric.now);
    EXPECT_EQ(b.connections(), 0u);
}

TEST_F(CmPair, ARejThatLeavesItsSendersIdZeroIsTakenAfterAnMra)
{
    b.listen(SERVICE, 8);
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    b.send_mra(only_event(b).id, fabric.now);
    deliver();
    only_event(a);
    /* Linux's REJ from REQ_RCVD or MRA_REQ_SENT. */
    Rej rej;
    rej.remote_comm_id = active;
    rej.reason = RejReason::consumer_reject;
    a.receive(port_b.gid(), format(rej, 1), fabric.now);
    const Event e = only_event(a);
    EXPECT_EQ(e.type, EventType::rejected);
    EXPECT_EQ(a.state_of(active), State::idle);
}

TEST_F(CmPair, RequestsTheProtocolCannotServeAreRejectedWithTheirReason)
{
    b.listen(SERVICE, 8);
    struct Case {
        const char* what;
        void (*spoil)(Req&);
        RejReason reason;
    } cases[] = {
        {"reliable datagram", [](Req& r) { r.transport = Transport::rd; }, RejReason::invalid_transport_type},
        {"reserved transport", [](Req& r) { r.transport = static_cast<Transport>(3); },
         RejReason::invalid_transport_type},
        {"MTU 0", [](Req& r) { r.path_mtu = 0; }, RejReason::invalid_mtu},
        {"MTU 6", [](Req& r) { r.path_mtu = 6; }, RejReason::invalid_mtu},
    };
    uint32_t comm_id = 0x7000;
    for (const Case& c : cases) {
        Req req = parse_req(format(Req{}, 0));
        req.local_comm_id = comm_id++;
        req.service_id = SERVICE;
        req.path_mtu = 3;
        c.spoil(req);
        b.receive(port_a.gid(), format(req, 77), fabric.now);
        ASSERT_EQ(fabric.in_flight.size(), 1u) << c.what;
        const Rej rej = parse_rej(fabric.in_flight.front().mad);
        EXPECT_EQ(rej.reason, c.reason) << c.what;
        EXPECT_EQ(rej.remote_comm_id, req.local_comm_id) << c.what;
        EXPECT_EQ(parse_cm_header(fabric.in_flight.front().mad)->transaction_id, 77u) << c.what;
        fabric.in_flight.clear();
    }
    EXPECT_TRUE(events(b).empty());
    EXPECT_EQ(b.connections(), 0u);
}

TEST_F(CmPair, AnUnansweredReqIsSentAgainThenTheRequesterGivesUp)
{
    const uint64_t start = fabric.now;
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    auto to_nowhere = [](const InFlight&) { return true; };
    deliver(to_nowhere);
    unsigned fired = 0;
    while (events(a).empty() && fire_next_deadline()) {
        deliver(to_nowhere);
        fired++;
    }
    EXPECT_EQ(fired, 4u) << "three retries, then the end";
    EXPECT_EQ(sent_of(Attribute::req, port_a.gid()), 4u);
    EXPECT_EQ(a.counters().resent, 3u);
    /* Four waits of the response time plus two packet lifetimes. */
    EXPECT_EQ(fabric.now - start, 4 * (iba_time_ns(16) + 2 * iba_time_ns(10)));
    EXPECT_EQ(a.state_of(active), State::idle);
    EXPECT_EQ(sent_of(Attribute::rej, port_a.gid()), 1u) << "a REJ (timeout) tells a slow peer";
    const Rej rej = parse_rej(fabric.sent_log.back().mad);
    EXPECT_EQ(rej.reason, RejReason::timeout);
    EXPECT_EQ(rej.additional_info.size(), 8u);
}

TEST_F(CmPair, UnreachableIsTheEventOfAnUnansweredReq)
{
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    const std::vector<Event> seen = events_in_time(a, [](const InFlight&) { return true; });
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].type, EventType::unreachable);
    EXPECT_EQ(seen[0].id, active);
}

TEST_F(CmPair, AnMraMakesTheRequesterWaitAsLongAsItAsks)
{
    b.listen(SERVICE, 8);
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    const Event req = only_event(b);
    ASSERT_EQ(b.send_mra(req.id, fabric.now), 0);
    deliver();
    EXPECT_EQ(only_event(a).type, EventType::mra_received);
    EXPECT_EQ(a.state_of(active), State::mra_req_received);
    /* The MRA asked for 4.096 us << 20 (4.3 s): past the REQ's own wait. */
    const uint64_t asked = iba_time_ns(20) + 2 * iba_time_ns(10);
    EXPECT_EQ(*a.next_deadline(), fabric.now + asked);
    fabric.now += iba_time_ns(16) * 3;
    a.expire(fabric.now);
    EXPECT_TRUE(fabric.in_flight.empty());
    EXPECT_TRUE(events(a).empty());
    ASSERT_EQ(b.accept(req.id, accept_params(), fabric.now), 0);
    deliver();
    EXPECT_EQ(only_event(a).type, EventType::rep_received);
}

TEST_F(CmPair, ADuplicateReqMakesNoSecondConnectionAndGetsAnMra)
{
    b.listen(SERVICE, 8);
    a.connect(connect_params(SERVICE), fabric.now);
    const Mad req_mad = fabric.in_flight.front().mad;
    deliver();
    const Event req = only_event(b);
    for (int copy = 1; copy <= 2; copy++) {
        b.receive(port_a.gid(), req_mad, fabric.now);
        ASSERT_EQ(fabric.in_flight.size(), 1u) << "copy " << copy;
        EXPECT_EQ(fabric.in_flight.front().attribute(), Attribute::mra) << "copy " << copy;
        fabric.in_flight.clear();
    }
    EXPECT_TRUE(events(b).empty());
    EXPECT_EQ(b.state_of(req.id), State::mra_req_sent);
    EXPECT_EQ(b.connections(), 1u);
    EXPECT_EQ(b.counters().duplicates, 2u);
}

TEST_F(CmPair, AConsumerSlowToAcceptKeepsItsConnectionThroughAnMra)
{
    /* The listener's application answers only after the requester's
     * response time and all its retries would have run out. */
    b.listen(SERVICE, 8);
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    const Event req = only_event(b);
    ASSERT_TRUE(fire_next_deadline()) << "the REQ again";
    deliver();
    EXPECT_EQ(only_event(a).type, EventType::mra_received);
    EXPECT_EQ(a.state_of(active), State::mra_req_received);
    fabric.now += iba_time_ns(16) * 5; /* past the REQ's four waits, within the MRA's 4.3 s */
    a.expire(fabric.now);
    EXPECT_TRUE(events(a).empty()) << "the MRA's wait is not over";
    ASSERT_EQ(b.accept(req.id, accept_params(), fabric.now), 0);
    deliver();
    EXPECT_EQ(only_event(a).type, EventType::rep_received);
}

TEST_F(CmPair, ALostRtuIsMadeUpByTheRepSentAgain)
{
    const auto [active, passive] = replied();
    a.send_rtu(active, {}, fabric.now);
    deliver([](const InFlight& m) { return m.attribute() == Attribute::rtu; });
    EXPECT_EQ(b.state_of(passive), State::rep_sent);
    ASSERT_TRUE(fire_next_deadline());
    deliver();
    EXPECT_EQ(sent_of(Attribute::rep, port_b.gid()), 2u);
    EXPECT_EQ(sent_of(Attribute::rtu, port_a.gid()), 2u) << "the REP again: the RTU again";
    EXPECT_EQ(only_event(b).type, EventType::established);
    EXPECT_EQ(b.state_of(passive), State::established);
}

TEST_F(CmPair, TheQpsFirstPacketEstablishesAPassiveSideWithoutItsRtu)
{
    const auto [active, passive] = replied();
    a.send_rtu(active, {}, fabric.now);
    fabric.in_flight.clear();
    EXPECT_EQ(b.established(passive), 0);
    EXPECT_EQ(b.state_of(passive), State::established);
    EXPECT_FALSE(b.next_deadline()) << "the REP is not sent again";
    EXPECT_EQ(b.established(0x9999), -EINVAL);
}

TEST_F(CmPair, RepsNeverAnsweredEndInUnreachableAndARejToThePeer)
{
    b.listen(SERVICE, 8);
    const uint32_t active = a.connect(connect_params(SERVICE), fabric.now);
    deliver();
    const Event req = only_event(b);
    /* The MRA keeps the requester waiting past every REP's wait. */
    b.send_mra(req.id, fabric.now);
    deliver();
    EXPECT_EQ(only_event(a).type, EventType::mra_received);
    b.accept(req.id, accept_params(), fabric.now);
    auto no_reps = [](const InFlight& m) { return m.attribute() == Attribute::rep; };
    const std::vector<Event> seen = events_in_time(b, no_reps);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].type, EventType::unreachable);
    EXPECT_EQ(sent_of(Attribute::rep, port_b.gid()), 4u) << "the REQ's max CM retries (3) after the first";
    /* The requester, still waiting, hears why. */
    const Event at_a = only_event(a);
    EXPECT_EQ(at_a.type, EventType::rejected);
    EXPECT_EQ(parse_rej(*at_a.mad).reason, RejReason::timeout);
    EXPECT_EQ(a.state_of(active), State::idle);
}

TEST_F(CmPair, DreqDrepEndTheConnectionThroughTimewait)
{
    const auto [active, passive] = connected();
    ASSERT_EQ(a.disconnect(active, {5}, fabric.now), 0);
    EXPECT_EQ(a.disconnect(active, {}, fabric.now), -EPROTO);
    deliver();
    const Event dreq = only_event(b);
    ASSERT_EQ(dreq.type, EventType::dreq_received);
    EXPECT_EQ(parse_dreq(*dreq.mad).remote_qpn, 0x22u) << "the DREQ names the receiver's QP";
    ASSERT_EQ(b.send_drep(passive, {6}, fabric.now), 0);
    EXPECT_EQ(b.state_of(passive), State::timewait);
    deliver();
    const Event drep = only_event(a);
    ASSERT_EQ(drep.type, EventType::disconnected);
    EXPECT_EQ(parse_drep(*drep.mad).private_data[0], 6);
    EXPECT_EQ(a.state_of(active), State::timewait);
    while (fire_next_deadline()) {
    }
    EXPECT_EQ(only_event(a).type, EventType::timewait_exit);
    EXPECT_EQ(only_event(b).type, EventType::timewait_exit);
    a.destroy(active, fabric.now);
    b.destroy(passive, fabric.now);
    EXPECT_EQ(a.connections() + b.connections(), 0u);
}

TEST_F(CmPair, ALostDrepGetsTheDreqAnsweredAgainFromTimewait)
{
    const auto [active, passive] = connected();
    a.disconnect(active, {}, fabric.now);
    deliver();
    only_event(b);
    b.send_drep(passive, {}, fabric.now);
    deliver([](const InFlight& m) { return m.attribute() == Attribute::drep; });
    const std::vector<Event> at_a = events_in_time(a, {});
    EXPECT_EQ(sent_of(Attribute::dreq, port_a.gid()), 2u);
    EXPECT_EQ(sent_of(Attribute::drep, port_b.gid()), 2u);
    ASSERT_EQ(at_a.size(), 1u);
    EXPECT_EQ(at_a[0].type, EventType::disconnected);
    EXPECT_TRUE(at_a[0].mad) << "the DREP, not the end of the retries";
    for (const Event& e : events(b))
        EXPECT_EQ(e.type, EventType::timewait_exit);
}

TEST_F(CmPair, ADreqForAConnectionLongGoneIsAnsweredSoThePeerStopsAsking)
{
    b.receive(port_a.gid(), format(Dreq{0x77, 0x4242, 0x22, {}}, 5), fabric.now);
    ASSERT_EQ(fabric.in_flight.size(), 1u);
    const Drep drep = parse_drep(fabric.in_flight.front().mad);
    EXPECT_EQ(drep.local_comm_id, 0x4242u);
    EXPECT_EQ(drep.remote_comm_id, 0x77u);
    EXPECT_EQ(fabric.in_flight.front().to, port_a.gid());
    EXPECT_EQ(b.connections(), 0u);
    EXPECT_TRUE(events(b).empty());
}

TEST_F(CmPair, APeerKilledMidConnectionIsDisconnectedAfterTheDreqRetries)
{
    const auto [active, passive] = connected();
    (void)passive;
    a.disconnect(active, {}, fabric.now);
    auto dead = [](const InFlight&) { return true; };
    const std::vector<Event> seen = events_in_time(a, dead);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].type, EventType::disconnected);
    EXPECT_FALSE(seen[0].mad) << "no DREP came";
    EXPECT_EQ(sent_of(Attribute::dreq, port_a.gid()), 4u);
    EXPECT_EQ(a.state_of(active), State::timewait);
}

TEST_F(CmPair, BothEndsDisconnectingAtOnceBothEndInTimewait)
{
    const auto [active, passive] = connected();
    a.disconnect(active, {}, fabric.now);
    b.disconnect(passive, {}, fabric.now);
    deliver();
    /* Each answers the other's DREQ at once, and ends on the other's DREP. */
    for (Manager* m : {&a, &b}) {
        const Event e = only_event(*m);
        EXPECT_EQ(e.type, EventType::disconnected);
        EXPECT_TRUE(e.mad) << "the DREP";
    }
    EXPECT_EQ(a.state_of(active), State::timewait);
    EXPECT_EQ(b.state_of(passive), State::timewait);
    EXPECT_EQ(sent_of(Attribute::dreq, port_a.gid()) + sent_of(Attribute::dreq, port_b.gid()), 2u);
}

TEST_F(CmPair, AReqFromAQpStillConnectedIsStaleAndEndsTheOldConnection)
{
    const auto [active, passive] = connected(SERVICE, 0x33);
    (void)active;
    /* The requester restarted: a new comm ID, the same QP number. */
    Manager restarted{config_of(0xa0a0a0a0a0a0a0a0, 0x5000), port_a};
    restarted.connect(connect_params(SERVICE, 0x33), fabric.now);
    deliver();
    const Event old = only_event(b);
    EXPECT_EQ(old.type, EventType::disconnected);
    EXPECT_EQ(old.id, passive);
    EXPECT_EQ(b.state_of(passive), State::timewait);
    const InFlight& answer = fabric.sent_log.back();
    ASSERT_EQ(answer.attribute(), Attribute::rej);
    EXPECT_EQ(parse_rej(answer.mad).reason, RejReason::stale_connection);
}

TEST_F(CmPair, AFloodOfReqsFillsTheBacklogAndTheRestAreRefused)
{
    b.listen(SERVICE, 4);
    std::vector<uint32_t> ids;
    for (uint32_t qpn = 0x100; qpn < 0x10a; qpn++)
        ids.push_back(a.connect(connect_params(SERVICE, qpn), fabric.now));
    deliver();
    const std::vector<Event> at_b = events(b);
    EXPECT_EQ(at_b.size(), 4u);
    unsigned refused = 0;
    for (const Event& e : events(a)) {
        ASSERT_EQ(e.type, EventType::rejected);
        EXPECT_EQ(parse_rej(*e.mad).reason, RejReason::no_resources);
        refused++;
    }
    EXPECT_EQ(refused, 6u);
    /* An answered request makes room for the next. */
    b.accept(at_b[0].id, accept_params(), fabric.now);
    a.connect(connect_params(SERVICE, 0x200), fabric.now);
    deliver();
    EXPECT_EQ(events(b).size(), 1u);
}

TEST_F(CmPair, SidrResolvesAServiceToAQpAndQKey)
{
    b.listen(0x0000000001110000 | 4791, 8);
    const uint32_t request = a.sidr_request({0x0000000001110000 | 4791, port_b.gid(), {0x11}}, fabric.now);
    deliver();
    const Event req = only_event(b);
    ASSERT_EQ(req.type, EventType::sidr_req_received);
    EXPECT_EQ(parse_sidr_req(*req.mad).private_data[0], 0x11);
    ASSERT_EQ(b.sidr_reply(req.id, {SidrStatus::valid, 0x77, 0x12345, {0x22}}), 0);
    deliver();
    const Event rep = only_event(a);
    ASSERT_EQ(rep.type, EventType::sidr_rep_received);
    EXPECT_EQ(rep.id, request);
    const SidrRep r = parse_sidr_rep(*rep.mad);
    EXPECT_EQ(r.status, SidrStatus::valid);
    EXPECT_EQ(r.qpn, 0x77u);
    EXPECT_EQ(r.qkey, 0x12345u);
    EXPECT_EQ(r.service_id, 0x0000000001110000u | 4791);
    a.destroy(request, fabric.now);
    b.destroy(req.id, fabric.now);
    EXPECT_EQ(a.connections() + b.connections(), 0u);
}

TEST_F(CmPair, SidrToNoListenerSaysTheServiceIsNotSupported)
{
    const uint32_t request = a.sidr_request({SERVICE, port_b.gid(), {}}, fabric.now);
    deliver();
    const Event rep = only_event(a);
    ASSERT_EQ(rep.type, EventType::sidr_rep_received);
    EXPECT_EQ(parse_sidr_rep(*rep.mad).status, SidrStatus::service_id_not_supported);
    a.destroy(request, fabric.now);
}

TEST_F(CmPair, AnUnansweredSidrReqIsUnreachable)
{
    b.listen(SERVICE, 8);
    a.sidr_request({SERVICE, port_b.gid(), {}}, fabric.now);
    const std::vector<Event> seen = events_in_time(a, [](const InFlight&) { return true; });
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].type, EventType::unreachable);
    EXPECT_EQ(sent_of(Attribute::sidr_req, port_a.gid()), 4u);
}

TEST_F(CmPair, DestroyInEveryStateLeavesNothingOnEitherSide)
{
    listener_ = b.listen(SERVICE, 64);
    uint32_t qpn = 0x1000;
    /* As consumers do: an ID an event names is destroyed once done with. */
    auto settle = [&] {
        do {
            deliver();
            for (Manager* m : {&a, &b})
                for (const Event& e : events(*m))
                    m->destroy(e.id, fabric.now);
        } while (!fabric.in_flight.empty() || fire_next_deadline());
    };
    auto req_at_b = [&]() {
        a.connect(connect_params(SERVICE, qpn++), fabric.now);
        deliver();
        return only_event(b);
    };
    for (int round = 0; round < 1000; round++) {
        switch (round % 6) {
        case 0: { /* the requester gives up at once */
            const uint32_t id = a.connect(connect_params(SERVICE, qpn++), fabric.now);
            a.destroy(id, fabric.now);
            break;
        }
        case 1: { /* the listener's consumer never answers */
            const Event req = req_at_b();
            b.destroy(req.id, fabric.now);
            break;
        }
        case 2: { /* REP sent, the requester goes */
            const Event req = req_at_b();
            b.accept(req.id, accept_params(), fabric.now);
            deliver();
            a.destroy(only_event(a).id, fabric.now);
            b.destroy(req.id, fabric.now);
            break;
        }
        case 3: { /* connected, both go without disconnecting */
            const auto [active, passive] = connected(SERVICE, qpn++);
            a.destroy(active, fabric.now);
            b.destroy(passive, fabric.now);
            break;
        }
        case 4: { /* connected, one side disconnects and both go */
            const auto [active, passive] = connected(SERVICE, qpn++);
            b.disconnect(passive, {}, fabric.now);
            deliver();
            a.destroy(active, fabric.now);
            b.destroy(passive, fabric.now);
            break;
        }
        case 5: { /* the MRA'd request dropped by its requester */
            const Event req = req_at_b();
            b.send_mra(req.id, fabric.now);
            deliver();
            a.destroy(only_event(a).id, fabric.now);
            deliver();
            const Event rej = only_event(b);
            EXPECT_EQ(rej.type, EventType::rejected);
            b.destroy(req.id, fabric.now);
            break;
        }
        }
        settle();
        ASSERT_EQ(a.connections(), 0u) << "round " << round;
        ASSERT_EQ(b.connections(), 0u) << "round " << round;
    }
}

TEST_F(CmPair, WhatIsNotForAConnectionIsCountedAndChangesNothing)
{
    const auto [active, passive] = connected();
    const std::size_t before = a.connections() + b.connections();
    Mad noise{};
    b.receive(port_a.gid(), noise, fabric.now);
    EXPECT_EQ(b.counters().not_cm, 1u);
    b.receive(port_a.gid(), std::span(noise).first(100), fabric.now);
    EXPECT_EQ(b.counters().not_cm, 2u);
    Mad lap = format(Rtu{active, passive, {}}, 1);
    lap[17] = 0x19;
    b.receive(port_a.gid(), lap, fabric.now);
    EXPECT_EQ(b.counters().unknown_attribute, 1u);
    b.receive(port_a.gid(), format(Rtu{active + 1, passive, {}}, 1), fabric.now);
    b.receive(port_a.gid(), format(Dreq{active, passive, 0x99, {}}, 1), fabric.now); /* not its QP */
    b.receive(gid_of(9), format(Dreq{active, passive, 0x22, {}}, 1), fabric.now);   /* not its peer */
    b.receive(port_a.gid(), format(Drep{active, passive, {}}, 1), fabric.now);
    EXPECT_EQ(b.counters().unmatched, 4u);
    EXPECT_TRUE(events(b).empty());
    EXPECT_TRUE(fabric.in_flight.empty());
    EXPECT_EQ(b.state_of(passive), State::established);
    EXPECT_EQ(a.connections() + b.connections(), before);
}

TEST_F(CmPair, CallsOnTheWrongConnectionOrStateSayWhy)
{
    EXPECT_EQ(a.accept(12345, accept_params(), fabric.now), -EINVAL);
    EXPECT_EQ(a.send_rtu(12345, {}, fabric.now), -EINVAL);
    const auto [active, passive] = connected();
    EXPECT_EQ(a.accept(active, accept_params(), fabric.now), -EPROTO);
    EXPECT_EQ(b.send_rtu(passive, {}, fabric.now), -EPROTO);
    EXPECT_EQ(b.send_mra(passive, fabric.now), -EPROTO);
    EXPECT_EQ(b.reject(passive, RejReason::consumer_reject, {}, fabric.now), -EPROTO);
    EXPECT_EQ(b.send_drep(passive, {}, fabric.now), -EPROTO);
    EXPECT_EQ(b.sidr_reply(passive, {}), -EPROTO);
}

} // namespace
} // namespace cna::cm::test
