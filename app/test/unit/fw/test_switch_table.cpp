/* SPDX-License-Identifier: BSD-3-Clause
 * The switch's rule table on its own: first match by (priority, age)
 * across masks, chains of equal values, deletions that keep every other
 * rule findable, a full table, and what SWITCH_RULE_ADD refuses.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fake_driver.h"
#include "frame/flow_key.h"
#include "switch/switch_table.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eswitch;
namespace flow_hdr = hsi::eth::flow_hdr;

constexpr uint8_t DST[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr uint8_t SRC[6] = {0x02, 0, 0, 0, 0, 0x02};

SwitchWords key_of(const std::vector<uint8_t>& frame, uint16_t source)
{
    FrameLayout layout;
    EXPECT_TRUE(parse_any_frame(frame.data(), static_cast<uint32_t>(frame.size()), layout));
    return switch_key(flow_key(frame.data(), layout), source);
}

SwitchRuleAddRamrodData forward_rule(uint16_t priority, uint16_t destination)
{
    SwitchRuleAddRamrodData r{};
    r.priority = priority;
    r.any_source = 1;
    r.fate = static_cast<uint8_t>(Fate::forward);
    r.destination = destination;
    return r;
}

void match_dst_ip(SwitchRuleAddRamrodData& r, uint32_t ip)
{
    r.headers |= flow_hdr::IPV4;
    const uint8_t bytes[4] = {static_cast<uint8_t>(ip >> 24), static_cast<uint8_t>(ip >> 16),
                              static_cast<uint8_t>(ip >> 8), static_cast<uint8_t>(ip)};
    std::memcpy(r.spec.dst_ip, bytes, 4);
    std::memset(r.mask.dst_ip, 0xff, 4);
}

void match_dst_port(SwitchRuleAddRamrodData& r, uint16_t port)
{
    r.headers |= flow_hdr::UDP;
    r.spec.dst_port = port;
    r.mask.dst_port = 0xffff;
}

uint32_t add(SwitchTable& t, const SwitchRuleAddRamrodData& r)
{
    uint32_t id = UINT32_MAX;
    EXPECT_EQ(t.add(r, &id), FwReturn::ok);
    return id;
}

/* The destination of the rule the frame matches, 0xffff for none. */
uint16_t where(const SwitchTable& t, const std::vector<uint8_t>& frame, uint16_t source = endpoint::vf(0))
{
    const SwitchRule* r = t.lookup(key_of(frame, source));
    return r != nullptr ? r->destination : 0xffff;
}

TEST(SwitchTable, TheFirstMatchIsByPriorityThenAgeAcrossMasks)
{
    SwitchTable t;
    t.resize(16);
    const auto frame = udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 4789, 20);
    EXPECT_EQ(where(t, frame), 0xffff) << "an empty table matches nothing";

    SwitchRuleAddRamrodData by_port = forward_rule(5, endpoint::vf(1));
    match_dst_port(by_port, 4789);
    by_port.headers |= flow_hdr::IPV4;
    add(t, by_port);
    EXPECT_EQ(where(t, frame), endpoint::vf(1));

    SwitchRuleAddRamrodData by_ip = forward_rule(7, endpoint::vf(2));
    match_dst_ip(by_ip, 0x0a000002);
    const uint32_t ip_rule = add(t, by_ip);
    EXPECT_EQ(where(t, frame), endpoint::vf(1)) << "priority 5 comes before 7, whatever the masks";

    by_ip.priority = 5;
    by_ip.destination = endpoint::vf(3);
    const uint32_t equal = add(t, by_ip);
    EXPECT_EQ(where(t, frame), endpoint::vf(1)) << "equal priorities: the older rule";

    by_ip.priority = 1;
    by_ip.destination = endpoint::WIRE;
    const uint32_t best = add(t, by_ip);
    EXPECT_EQ(where(t, frame), endpoint::WIRE) << "a better rule of the same value heads its chain";
    EXPECT_EQ(where(t, udp4_frame(DST, SRC, 0x0a000001, 0x0a000009, 1000, 4789, 20)), endpoint::vf(1))
        << "another address: only the port rule";

    EXPECT_EQ(t.remove(best), FwReturn::ok);
    EXPECT_EQ(where(t, frame), endpoint::vf(1));
    EXPECT_EQ(t.remove(ip_rule), FwReturn::ok);
    EXPECT_EQ(t.remove(equal), FwReturn::ok);
    EXPECT_EQ(t.remove(equal), FwReturn::not_found);
    EXPECT_EQ(t.size(), 1u);
    EXPECT_EQ(where(t, udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 53, 20)), 0xffff);
}

TEST(SwitchTable, ARuleMatchesItsSourceUnlessItTakesAny)
{
    SwitchTable t;
    t.resize(4);
    SwitchRuleAddRamrodData from_vf1 = forward_rule(0, endpoint::WIRE);
    from_vf1.any_source = 0;
    from_vf1.source = endpoint::vf(1);
    add(t, from_vf1);
    const auto frame = eth_frame(DST, SRC, 0x88b5, 40);
    EXPECT_EQ(where(t, frame, endpoint::vf(1)), endpoint::WIRE);
    EXPECT_EQ(where(t, frame, endpoint::vf(0)), 0xffff);
    EXPECT_EQ(where(t, frame, endpoint::vport(0)), 0xffff);
}

TEST(SwitchTable, HeadersAreRequiredAndTaggingAndFragmentsAreMatchable)
{
    SwitchTable t;
    t.resize(4);
    SwitchRuleAddRamrodData untagged_whole = forward_rule(1, endpoint::vf(0));
    untagged_whole.headers = flow_hdr::IPV4 | flow_hdr::UNTAGGED | flow_hdr::WHOLE_IP;
    add(t, untagged_whole);
    const auto frame = udp4_frame(DST, SRC, 1, 2, 3, 4, 20);
    EXPECT_EQ(where(t, frame), endpoint::vf(0));
    EXPECT_EQ(where(t, with_vlan(frame, 5)), 0xffff) << "tagged";
    auto fragment = frame;
    fragment[14 + 6] = 0x20; /* more fragments */
    EXPECT_EQ(where(t, fragment), 0xffff) << "a fragment";
    EXPECT_EQ(where(t, eth_frame(DST, SRC, 0x88b5, 40)), 0xffff) << "not IP";

    SwitchRuleAddRamrodData icmp = forward_rule(0, endpoint::vf(1));
    icmp.headers = flow_hdr::IPV4 | flow_hdr::ICMP;
    icmp.spec.icmp_type = 8;
    icmp.mask.icmp_type = 0xff;
    add(t, icmp);
    auto echo = udp4_frame(DST, SRC, 1, 2, 3, 4, 20);
    echo[14 + 9] = 1; /* ICMP: the "ports" are its type, code and checksum */
    echo[14 + 20] = 8;
    EXPECT_EQ(where(t, echo), endpoint::vf(1)) << "an echo request";
    echo[14 + 20] = 0;
    EXPECT_EQ(where(t, echo), endpoint::vf(0)) << "an echo reply";
}

TEST(SwitchTable, AHundredThousandRulesOfOneMaskAreEachFoundAndSurviveDeletions)
{
    constexpr uint32_t N = 100000;
    SwitchTable t;
    t.resize(N);
    std::vector<uint32_t> ids(N);
    for (uint32_t i = 0; i < N; i++) {
        SwitchRuleAddRamrodData r = forward_rule(0, endpoint::vf(i % 8));
        match_dst_ip(r, 0x0a000000 + i);
        ids[i] = add(t, r);
    }
    SwitchRuleAddRamrodData one_more = forward_rule(0, endpoint::WIRE);
    uint32_t id = 0;
    EXPECT_EQ(t.add(one_more, &id), FwReturn::no_resource) << "the table is full";
    for (uint32_t i = 0; i < N; i += 3)
        ASSERT_EQ(t.remove(ids[i]), FwReturn::ok);
    for (uint32_t i = 0; i < N; i++) {
        const auto frame = udp4_frame(DST, SRC, 1, 0x0a000000 + i, 3, 4, 20);
        ASSERT_EQ(where(t, frame), i % 3 == 0 ? 0xffff : endpoint::vf(i % 8)) << "rule " << i;
    }
    EXPECT_EQ(t.add(one_more, &id), FwReturn::ok) << "a freed id is taken again";
}

TEST(SwitchTable, WhatAFrameCannotCarryOrARuleCannotDoIsRefused)
{
    auto refused = [](auto change) {
        SwitchRuleAddRamrodData r = forward_rule(0, endpoint::vf(0));
        change(r);
        return SwitchTable::check(r) == FwReturn::invalid_param;
    };
    EXPECT_FALSE(refused([](SwitchRuleAddRamrodData&) {}));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.fate = 0; }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.headers = flow_hdr::IPV4 | flow_hdr::IPV6; }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.headers = flow_hdr::TCP | flow_hdr::ICMP; }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.headers = flow_hdr::VLAN | flow_hdr::UNTAGGED; }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.headers = flow_hdr::WHOLE_IP; }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.mask.dst_port = 0xffff; })) << "no UDP or TCP";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.mask.icmp_code = 0xff; })) << "no ICMP";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.ip_ttl_mask = 0xff; })) << "no IP";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.actions = action::SET_IPV4_DST; })) << "no IPv4";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.actions = action::DEC_TTL; })) << "no IP";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.actions = action::SET_TP_SRC; })) << "no ports";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) {
        r.actions = action::PUSH_VLAN;
        r.vlan_tpid = 0x0800;
    }));
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) {
        r.fate = static_cast<uint8_t>(Fate::drop);
        r.actions = action::SET_MAC_DST;
    })) << "nothing to change on a dropped frame";
    EXPECT_TRUE(refused([](SwitchRuleAddRamrodData& r) { r.actions = action::ALL + 1; }));
}

} // namespace
} // namespace cna::fw::test
