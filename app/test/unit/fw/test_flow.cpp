/* SPDX-License-Identifier: BSD-3-Clause
 * Flow rules (hsi.md section 7) end to end on a loopback port: matching
 * under masks, priority and age, QUEUE/RSS/DROP/MARK/COUNT, the table's
 * size, validation, and the rules' place after the vport's classification.
 */
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <set>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

const uint8_t OWN_MAC[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00};

std::unique_ptr<Adapter> make()
{
    AdapterConfig config;
    config.name = "flow";
    config.ports = 1;
    config.wire = Wire::loopback;
    config.link_up_delay_ms = 0;
    return Adapter::create(config, nullptr);
}

/* A rule matching UDP to dport, with the given actions. */
FlowRuleAddRamrodData udp_port_rule(uint16_t dport, uint8_t actions)
{
    FlowRuleAddRamrodData r{};
    r.actions = actions;
    r.headers = flow_hdr::IPV4 | flow_hdr::UDP;
    r.spec.dst_port = dport;
    r.mask.dst_port = 0xffff;
    return r;
}

struct Added {
    FwReturn rc;
    uint16_t id;
};

Added add(FakeDriver& drv, const FlowRuleAddRamrodData& r)
{
    EventRingElement eqe = drv.ramrod(ProtocolId::eth, static_cast<uint8_t>(EthCmd::flow_rule_add), &r, sizeof(r));
    return {static_cast<FwReturn>(eqe.fw_return_code), static_cast<uint16_t>(eqe.data)};
}

FwReturn del(FakeDriver& drv, uint16_t id, uint8_t vport = 0)
{
    FlowRuleDelRamrodData d{};
    d.vport_id = vport;
    d.rule_id = id;
    return drv.eth(EthCmd::flow_rule_del, &d, sizeof(d));
}

FlowCounters counters(FakeDriver& drv, uint16_t id)
{
    const uint32_t base = iro::flow_counters(drv.pf(), id);
    return {drv.stat64(base), drv.stat64(base + 8)};
}

std::vector<uint8_t> udp(uint16_t dport, uint32_t sip = 0x0a000001, uint16_t sport = 1000)
{
    return udp4_frame(OWN_MAC, PEER_MAC, sip, 0x0a000002, sport, dport, 40);
}

/* Sends the frames and returns how many each of the n queues received. */
std::vector<std::vector<FakeDriver::RxFrame>> exchange(FakeDriver& drv, const std::vector<std::vector<uint8_t>>& frames,
                                                        uint16_t queues, size_t expected)
{
    for (const auto& f : frames)
        drv.send(0, f);
    EXPECT_TRUE(drv.wait_tx_done(0));
    std::vector<std::vector<FakeDriver::RxFrame>> got(queues);
    size_t total = 0;
    wait_until([&] {
        for (uint16_t q = 0; q < queues; q++)
            for (auto& f : drv.rx_poll(q)) {
                got[q].push_back(std::move(f));
                total++;
            }
        return total >= expected;
    });
    return got;
}

class Flow : public ::testing::Test {
protected:
    void SetUp() override
    {
        adapter_ = make();
        drv_ = std::make_unique<FakeDriver>(*adapter_, 0);
        bring_up_l2(*drv_, 4);
        ASSERT_TRUE(wait_link(*drv_));
    }
    FakeDriver& drv() { return *drv_; }

    std::unique_ptr<Adapter> adapter_;
    std::unique_ptr<FakeDriver> drv_;
};

TEST_F(Flow, QueueActionSteersOnlyMatchingFrames)
{
    FlowRuleAddRamrodData r = udp_port_rule(2000, flow_action::QUEUE);
    r.queue = 2;
    ASSERT_EQ(add(drv(), r).rc, FwReturn::ok);
    auto got = exchange(drv(), {udp(2000), udp(3000), udp(2000), tcp4_frame(OWN_MAC, PEER_MAC, 1, 2, 3, 2000, 20)}, 4, 4);
    ASSERT_EQ(got[2].size(), 2u);
    EXPECT_EQ(got[0].size(), 2u); /* UDP 3000 and TCP 2000: the vport's first queue */
    for (auto& f : got[2])
        EXPECT_FALSE(f.cqe.pars_flags & pars::FLOW_MARK);
}

TEST_F(Flow, MarkIsDeliveredInTheCqe)
{
    FlowRuleAddRamrodData r = udp_port_rule(2000, flow_action::MARK);
    r.mark = 0xdeadbeef;
    ASSERT_EQ(add(drv(), r).rc, FwReturn::ok);
    auto got = exchange(drv(), {udp(2000), udp(2001)}, 1, 2);
    ASSERT_EQ(got[0].size(), 2u);
    EXPECT_TRUE(got[0][0].cqe.pars_flags & pars::FLOW_MARK);
    EXPECT_EQ(got[0][0].cqe.flow_mark, 0xdeadbeefu);
    EXPECT_FALSE(got[0][1].cqe.pars_flags & pars::FLOW_MARK);
}

TEST_F(Flow, DropAndCount)
{
    Added a = add(drv(), udp_port_rule(53, flow_action::DROP | flow_action::COUNT));
    ASSERT_EQ(a.rc, FwReturn::ok);
    auto dropped = udp(53);
    auto got = exchange(drv(), {dropped, udp(54), dropped, dropped}, 1, 1);
    ASSERT_EQ(got[0].size(), 1u);
    ASSERT_TRUE(wait_until([&] { return drv().vport_stats(0).rx_flow_drop_pkts == 3; }));
    FlowCounters c = counters(drv(), a.id);
    EXPECT_EQ(c.hits, 3u);
    EXPECT_EQ(c.bytes, 3 * dropped.size());
    EXPECT_EQ(drv().vport_stats(0).rx_ucast_pkts, 1u);
}

TEST_F(Flow, CountWithoutFateKeepsTheVportSteering)
{
    Added a = add(drv(), udp_port_rule(7, flow_action::COUNT));
    ASSERT_EQ(a.rc, FwReturn::ok);
    auto got = exchange(drv(), {udp(7), udp(7), udp(8)}, 1, 3);
    EXPECT_EQ(got[0].size(), 3u);
    EXPECT_EQ(counters(drv(), a.id).hits, 2u);
}

TEST_F(Flow, LowerPriorityValueWinsThenTheOlderRule)
{
    FlowRuleAddRamrodData any_udp{};
    any_udp.headers = flow_hdr::IPV4 | flow_hdr::UDP;
    any_udp.actions = flow_action::QUEUE;
    any_udp.queue = 1;
    any_udp.priority = 5;
    FlowRuleAddRamrodData port_rule = udp_port_rule(2000, flow_action::QUEUE);
    port_rule.queue = 2;
    port_rule.priority = 1;                   /* added later, evaluated first */
    FlowRuleAddRamrodData same_prio_later = udp_port_rule(3000, flow_action::QUEUE);
    same_prio_later.queue = 3;
    same_prio_later.priority = 5;             /* ties with any_udp, which is older */
    ASSERT_EQ(add(drv(), any_udp).rc, FwReturn::ok);
    ASSERT_EQ(add(drv(), port_rule).rc, FwReturn::ok);
    ASSERT_EQ(add(drv(), same_prio_later).rc, FwReturn::ok);
    auto got = exchange(drv(), {udp(2000), udp(3000), udp(4000)}, 4, 3);
    EXPECT_EQ(got[2].size(), 1u);
    EXPECT_EQ(got[1].size(), 2u);
    EXPECT_EQ(got[3].size(), 0u);
}

TEST_F(Flow, MasksSelectBits)
{
    /* IPv4 source 10.1.2.0/24 to queue 1; VLAN id 100 (any PCP) to queue 2;
     * ethertype 0x88b5 to queue 3. */
    FlowRuleAddRamrodData subnet{};
    subnet.headers = flow_hdr::IPV4;
    subnet.actions = flow_action::QUEUE;
    subnet.queue = 1;
    const uint8_t net[4] = {10, 1, 2, 0}, mask24[4] = {0xff, 0xff, 0xff, 0};
    std::memcpy(subnet.spec.src_ip, net, 4);
    std::memcpy(subnet.mask.src_ip, mask24, 4);
    FlowRuleAddRamrodData vlan{};
    vlan.headers = flow_hdr::VLAN;
    vlan.actions = flow_action::QUEUE;
    vlan.queue = 2;
    vlan.spec.vlan_tci = 100;
    vlan.mask.vlan_tci = 0x0fff;
    FlowRuleAddRamrodData type{};
    type.actions = flow_action::QUEUE;
    type.queue = 3;
    type.spec.ethertype = 0x88b5;
    type.mask.ethertype = 0xffff;
    ASSERT_EQ(add(drv(), subnet).rc, FwReturn::ok);
    ASSERT_EQ(add(drv(), vlan).rc, FwReturn::ok);
    ASSERT_EQ(add(drv(), type).rc, FwReturn::ok);
    auto got = exchange(drv(),
                        {udp(1, 0x0a0102fe), udp(1, 0x0a0103fe), with_vlan(udp(1, 0x0b000001), (5 << 13) | 100),
                         with_vlan(udp(1, 0x0b000001), 101), eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 50)},
                        4, 5);
    EXPECT_EQ(got[1].size(), 1u);
    EXPECT_EQ(got[2].size(), 1u);
    EXPECT_EQ(got[3].size(), 1u);
    EXPECT_EQ(got[0].size(), 2u);
}

TEST_F(Flow, Ipv6AndTcpPorts)
{
    FlowRuleAddRamrodData r{};
    r.headers = flow_hdr::IPV6 | flow_hdr::TCP;
    r.actions = flow_action::QUEUE | flow_action::MARK;
    r.queue = 3;
    r.mark = 6;
    r.spec.src_port = 1234;
    r.mask.src_port = 0xffff;
    ASSERT_EQ(add(drv(), r).rc, FwReturn::ok);
    auto got = exchange(drv(), {tcp6_frame(OWN_MAC, PEER_MAC, 1234, 80, 10), tcp6_frame(OWN_MAC, PEER_MAC, 1235, 80, 10),
                                tcp4_frame(OWN_MAC, PEER_MAC, 1, 2, 1234, 80, 10)},
                        4, 3);
    ASSERT_EQ(got[3].size(), 1u);
    EXPECT_EQ(got[3][0].cqe.flow_mark, 6u);
    EXPECT_EQ(got[0].size(), 2u);
}

/* Any IPv4/UDP frame spread by RSS over queues 1 and 3, with more actions. */
FlowRuleAddRamrodData udp_rss_rule_over_1_and_3(uint8_t more_actions = 0)
{
    FlowRuleAddRamrodData r{};
    r.headers = flow_hdr::IPV4 | flow_hdr::UDP;
    r.actions = flow_action::RSS | more_actions;
    r.rss_hash_types = rss::UDP_IPV4;
    r.rss_queue_count = 2;
    r.rss_queues[0] = 1;
    r.rss_queues[1] = 3;
    for (uint32_t i = 0; i < rss::KEY_DWORDS; i++)
        r.rss_key[i] = 0x6d5a56da + i * 0x01010101u;
    return r;
}

/* 40 UDP flows (sources and ports apart), for a rule's RSS to spread. */
std::vector<std::vector<uint8_t>> udp_flows()
{
    std::vector<std::vector<uint8_t>> frames;
    for (int i = 0; i < 40; i++)
        frames.push_back(udp(80, 0x0a000001 + i, static_cast<uint16_t>(1000 + 17 * i)));
    return frames;
}

TEST_F(Flow, RssActionSpreadsOverItsQueueSetOnly)
{
    ASSERT_EQ(add(drv(), udp_rss_rule_over_1_and_3()).rc, FwReturn::ok);
    auto frames = udp_flows();
    auto got = exchange(drv(), frames, 4, frames.size());
    EXPECT_EQ(got[0].size(), 0u);
    EXPECT_EQ(got[2].size(), 0u);
    EXPECT_GT(got[1].size(), 5u);
    EXPECT_GT(got[3].size(), 5u);
    EXPECT_EQ(got[1].size() + got[3].size(), frames.size());
    for (uint16_t q : {1, 3})
        for (auto& f : got[q]) {
            EXPECT_TRUE(f.cqe.pars_flags & pars::RSS_HASH_VALID);
            EXPECT_EQ(f.cqe.rss_hash_type, static_cast<uint8_t>(RssHashType::udp_ipv4));
            /* the rule's RETA: its queue set round-robin */
            EXPECT_EQ(q, (f.cqe.rss_hash % rss::RETA_SIZE) % 2 == 0 ? 1 : 3);
        }
}

TEST_F(Flow, MarkTakesTheRssHashPlace)
{
    FlowRuleAddRamrodData r = udp_rss_rule_over_1_and_3(flow_action::MARK);
    r.mark = 0x5eed;
    ASSERT_EQ(add(drv(), r).rc, FwReturn::ok);
    auto frames = udp_flows();
    auto got = exchange(drv(), frames, 4, frames.size());
    /* still spread by the hash, which the 16-byte CQE then gives up */
    EXPECT_GT(got[1].size(), 5u);
    EXPECT_GT(got[3].size(), 5u);
    EXPECT_EQ(got[1].size() + got[3].size(), frames.size());
    for (uint16_t q : {1, 3})
        for (auto& f : got[q]) {
            EXPECT_TRUE(f.cqe.pars_flags & pars::FLOW_MARK);
            EXPECT_FALSE(f.cqe.pars_flags & pars::RSS_HASH_VALID);
            EXPECT_EQ(f.cqe.rss_hash_type, static_cast<uint8_t>(RssHashType::none));
            EXPECT_EQ(f.cqe.flow_mark, 0x5eedu);
        }
}

TEST_F(Flow, TableOf64RulesThenNoResource)
{
    std::set<uint16_t> ids;
    for (uint32_t i = 0; i < FLOW_MAX_RULES; i++) {
        Added a = add(drv(), udp_port_rule(static_cast<uint16_t>(100 + i), flow_action::COUNT));
        ASSERT_EQ(a.rc, FwReturn::ok) << i;
        ids.insert(a.id);
    }
    EXPECT_EQ(ids.size(), FLOW_MAX_RULES);
    EXPECT_EQ(*ids.rbegin(), FLOW_MAX_RULES - 1);
    EXPECT_EQ(add(drv(), udp_port_rule(1, flow_action::COUNT)).rc, FwReturn::no_resource);
    ASSERT_EQ(del(drv(), 17), FwReturn::ok);
    Added again = add(drv(), udp_port_rule(1, flow_action::COUNT));
    EXPECT_EQ(again.rc, FwReturn::ok);
    EXPECT_EQ(again.id, 17u);
}

TEST_F(Flow, InvalidRulesAreRefused)
{
    FlowRuleAddRamrodData r = udp_port_rule(1, flow_action::DROP | flow_action::QUEUE);
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::QUEUE | flow_action::RSS);
    r.rss_queue_count = 1;
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::DROP | flow_action::MARK);
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::QUEUE);
    r.queue = 20; /* beyond the PF's 16 */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::no_resource);
    r.queue = 40; /* beyond the chip's 32 */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::RSS); /* no queues */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::COUNT);
    r.headers = flow_hdr::IPV4; /* ports masked without TCP or UDP */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::COUNT);
    r.mask.src_ip[8] = 0xff; /* beyond an IPv4 address */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::COUNT);
    r.headers |= flow_hdr::IPV6;
    EXPECT_EQ(add(drv(), r).rc, FwReturn::invalid_param);
    r = udp_port_rule(1, flow_action::COUNT);
    r.vport_id = 1; /* not started */
    EXPECT_EQ(add(drv(), r).rc, FwReturn::bad_state);
    EXPECT_EQ(del(drv(), 3), FwReturn::not_found);
    EXPECT_EQ(del(drv(), FLOW_MAX_RULES), FwReturn::invalid_param);
}

TEST_F(Flow, FramesTheVportFiltersNeverReachTheRules)
{
    ASSERT_EQ(drv().vport_activate(0, accept::UCAST_MATCHED | accept::BCAST), FwReturn::ok);
    Added a = add(drv(), udp_port_rule(2000, flow_action::QUEUE | flow_action::COUNT));
    ASSERT_EQ(a.rc, FwReturn::ok);
    drv().send(0, udp(2000)); /* OWN_MAC has no MAC filter: filtered */
    ASSERT_TRUE(drv().wait_tx_done(0));
    ASSERT_TRUE(wait_until([&] { return drv().vport_stats(0).rx_filtered_pkts == 1; }));
    EXPECT_EQ(counters(drv(), a.id).hits, 0u);
}

TEST_F(Flow, DeletedRulesStopMatching)
{
    FlowRuleAddRamrodData r = udp_port_rule(2000, flow_action::QUEUE | flow_action::COUNT);
    r.queue = 2;
    Added a = add(drv(), r);
    ASSERT_EQ(a.rc, FwReturn::ok);
    EXPECT_EQ(exchange(drv(), {udp(2000)}, 4, 1)[2].size(), 1u);
    ASSERT_EQ(del(drv(), a.id), FwReturn::ok);
    EXPECT_EQ(del(drv(), a.id), FwReturn::not_found);
    EXPECT_EQ(exchange(drv(), {udp(2000)}, 4, 1)[0].size(), 1u);
    EXPECT_EQ(counters(drv(), a.id).hits, 1u); /* readable until the id is reused */
}

} // namespace
} // namespace cna::fw::test
