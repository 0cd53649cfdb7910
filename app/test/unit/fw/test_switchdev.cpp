/* SPDX-License-Identifier: BSD-3-Clause
 * The port's switch in switchdev mode (hsi_switch.h), driven by a PF with
 * two VFs and a representor vport for each: the miss paths, transfer rules
 * forwarding, rewriting, dropping and counting in host memory, what the
 * switch refuses, and legacy mode back when the PF lets go.
 */
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <memory>

#include "fake_driver.h"
#include "hsi_switch.h"
#include "iov_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;
using namespace hsi::eswitch;
namespace iov = hsi::iov;

constexpr uint8_t VF0_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0xf0, 0x00};
constexpr uint8_t VF1_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0xf0, 0x01};
constexpr uint16_t ALL_FRAMES =
    accept::UCAST_MATCHED | accept::UCAST_UNMATCHED | accept::MCAST_MATCHED | accept::MCAST_UNMATCHED | accept::BCAST;
constexpr uint32_t MAX_RULES_HERE = 64;

class Switchdev : public PfWithVfs {
protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(bring_up("eswitch"));
        enable_vfs(2);
        vf0 = bring_up_vf(0, VF0_MAC);
        vf1 = bring_up_vf(1, VF1_MAC);
        counters = pf->alloc(MAX_RULES_HERE * sizeof(SwitchCounters));
        ASSERT_EQ(start_representor(1, 0), FwReturn::ok);
        ASSERT_EQ(start_representor(2, 1), FwReturn::ok);
        ASSERT_EQ(set_mode(SwitchMode::switchdev), FwReturn::ok);
    }

    /* The PF's vport `vport` as VF vf's representor, with Rx and Tx queue
     * `vport` (SBs 2 * vport and 2 * vport + 1), taking every frame. */
    FwReturn start_representor(uint8_t vport, uint8_t vf)
    {
        VportStartRamrodData d{};
        d.vport_id = vport;
        d.mtu = 1500;
        d.max_bds_per_packet = 1;
        d.flags = vport_flags::REPRESENTOR;
        d.represented_vf = vf;
        if (FwReturn rc = pf->eth(EthCmd::vport_start, &d, sizeof(d)); rc != FwReturn::ok)
            return rc;
        EXPECT_EQ(pf->rx_queue_start(vport, vport, static_cast<uint16_t>(2 * vport)), FwReturn::ok);
        pf->rx_post(vport, 63);
        EXPECT_EQ(pf->tx_queue_start(vport, vport, static_cast<uint16_t>(2 * vport + 1)), FwReturn::ok);
        return pf->vport_activate(vport, ALL_FRAMES);
    }

    FwReturn set_mode(SwitchMode mode, uint32_t max_rules = MAX_RULES_HERE, uint64_t iova = 0)
    {
        SwitchModeRamrodData d{};
        d.mode = static_cast<uint8_t>(mode);
        d.max_rules = max_rules;
        d.counters = make_regpair(iova != 0 ? iova : counters.iova);
        return pf->eth(EthCmd::switch_mode, &d, sizeof(d));
    }

    struct Added {
        FwReturn rc;
        uint32_t id;
    };
    Added add(const SwitchRuleAddRamrodData& r)
    {
        EventRingElement e = pf->ramrod(ProtocolId::eth, static_cast<uint8_t>(EthCmd::switch_rule_add), &r, sizeof(r));
        return {static_cast<FwReturn>(e.fw_return_code), static_cast<uint32_t>(e.data)};
    }
    FwReturn del(uint32_t id)
    {
        SwitchRuleDelRamrodData d{};
        d.rule_id = id;
        return pf->eth(EthCmd::switch_rule_del, &d, sizeof(d));
    }
    SwitchCounters counted(uint32_t id) const
    {
        SwitchCounters c;
        std::memcpy(&c, counters.va + id * sizeof(c), sizeof(c));
        return c;
    }
    uint64_t switch_stat(std::size_t offset)
    {
        return pf->stat64(iro::switch_stats(pf->pf()) + static_cast<uint32_t>(offset));
    }
    uint64_t wire_tx() { return adapter->control().port_counters(0).wire_tx_frames; }

    std::unique_ptr<FakeDriver> vf0, vf1;
    HostMem counters;
};

SwitchRuleAddRamrodData rule_from(uint16_t source, Fate fate, uint16_t destination = 0)
{
    SwitchRuleAddRamrodData r{};
    r.source = source;
    r.fate = static_cast<uint8_t>(fate);
    r.destination = destination;
    return r;
}

TEST_F(Switchdev, WhatNoRuleTakesGoesToTheRepresentorsAndTheirTxToTheirVfs)
{
    const uint64_t wire_before = wire_tx();
    /* VF 0 to VF 1's address: no longer switched by MAC, but to VF 0's representor. */
    const auto frame = udp4_frame(VF1_MAC, VF0_MAC, 0x0a000001, 0x0a000002, 1000, 2000, 60);
    vf0->send(0, frame);
    auto got = pf->rx_wait(1, 1);
    ASSERT_EQ(got.size(), 1u) << "VF 0's representor";
    EXPECT_EQ(got[0].data, frame);
    EXPECT_TRUE(vf1->rx_poll(0).empty());
    EXPECT_TRUE(pf->rx_poll(2).empty()) << "not VF 1's representor";

    /* The representor's Tx reaches its VF, whatever the destination. */
    pf->send(2, eth_frame(VF1_MAC, PEER_MAC, 0x88b5, 60));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u);
    EXPECT_EQ(wire_tx(), wire_before) << "none of it left the adapter";

    /* The wire's frames go to the uplink's representor, the PF, even those
     * addressed to a VF; the PF's vport 0 sends to the wire alone. */
    peer->send(0, eth_frame(VF0_MAC, PEER_MAC, 0x88b5, 60));
    EXPECT_EQ(pf->rx_wait(0, 1).size(), 1u);
    EXPECT_TRUE(vf0->rx_poll(0).empty());
    pf->send(0, eth_frame(VF0_MAC, PEER_MAC, 0x88b5, 60));
    EXPECT_EQ(peer->rx_wait(0, 1).size(), 1u);
    EXPECT_TRUE(vf0->rx_poll(0).empty());
    EXPECT_EQ(switch_stat(offsetof(SwitchStats, misses)), 4u);
    EXPECT_EQ(switch_stat(offsetof(SwitchStats, rule_hits)), 0u);
}

TEST_F(Switchdev, RulesForwardBetweenVfsAndTheWireAndCountInHostMemory)
{
    SwitchRuleAddRamrodData to_vf1 = rule_from(endpoint::vf(0), Fate::forward, endpoint::vf(1));
    to_vf1.actions = action::COUNT;
    to_vf1.headers = flow_hdr::IPV4 | flow_hdr::UDP;
    to_vf1.spec.dst_port = 2000;
    to_vf1.mask.dst_port = 0xffff;
    for (uint32_t id = 0; id < MAX_RULES_HERE; id++)
        counters.at<SwitchCounters>()[id] = SwitchCounters{77, 77};
    const Added a = add(to_vf1);
    ASSERT_EQ(a.rc, FwReturn::ok);
    const Added b = add(rule_from(endpoint::WIRE, Fate::forward, endpoint::vf(0)));
    ASSERT_EQ(b.rc, FwReturn::ok);
    EXPECT_NE(a.id, b.id);

    const auto hit = udp4_frame(VF1_MAC, VF0_MAC, 0x0a000001, 0x0a000002, 1000, 2000, 60);
    vf0->send_burst(0, {hit, hit, udp4_frame(VF1_MAC, VF0_MAC, 1, 2, 1000, 53, 60)});
    auto got = vf1->rx_wait(0, 2);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_EQ(pf->rx_wait(1, 1).size(), 1u) << "the other port's datagram: a miss";
    EXPECT_EQ(counted(a.id).hits, 2u) << "zeroed when the rule took the id, then counted";
    EXPECT_EQ(counted(a.id).bytes, 2 * hit.size());

    peer->send_burst(0, {eth_frame(PEER_MAC, PEER_MAC, 0x88b5, 60), eth_frame(VF0_MAC, PEER_MAC, 0x88b5, 60)});
    got = vf0->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u) << "from the wire, by the rule";
    EXPECT_EQ(std::memcmp(got[0].data.data(), VF0_MAC, 6), 0) << "VF 0's own filters still apply";
    EXPECT_TRUE(vf0->rx_poll(0).empty());
    EXPECT_TRUE(pf->rx_poll(0).empty());
    EXPECT_EQ(counted(b.id).hits, 0u) << "no COUNT, nothing counted";

    EXPECT_EQ(del(a.id), FwReturn::ok);
    EXPECT_EQ(del(a.id), FwReturn::not_found);
    vf0->send(0, hit);
    EXPECT_EQ(pf->rx_wait(1, 1).size(), 1u) << "the rule gone: a miss again";
}

TEST_F(Switchdev, ARuleRewritesOnTheWayToTheWire)
{
    SwitchRuleAddRamrodData r = rule_from(endpoint::vf(1), Fate::forward, endpoint::WIRE);
    r.actions = action::PUSH_VLAN | action::SET_VLAN_VID | action::SET_MAC_SRC | action::SET_IPV4_SRC | action::COUNT;
    r.headers = flow_hdr::IPV4;
    r.vlan_tpid = 0x8100;
    r.vlan_tci = 42;
    const uint8_t new_src[6] = {0x02, 0xee, 0, 0, 0, 7};
    std::memcpy(r.mac_src, new_src, 6);
    const uint8_t nat[4] = {198, 51, 100, 7};
    std::memcpy(r.ipv4_src, nat, 4);
    const Added a = add(r);
    ASSERT_EQ(a.rc, FwReturn::ok);

    const auto frame = udp4_frame(PEER_MAC, VF1_MAC, 0x0a000001, 0x0a000002, 1000, 2000, 60);
    vf1->send(0, frame);
    auto got = peer->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    const auto& out = got[0].data;
    ASSERT_EQ(out.size(), frame.size() + 4);
    EXPECT_EQ(std::memcmp(out.data() + 6, new_src, 6), 0);
    EXPECT_EQ(out[12] << 8 | out[13], 0x8100);
    EXPECT_EQ((out[14] << 8 | out[15]) & 0x0fff, 42);
    EXPECT_EQ(std::memcmp(out.data() + 18 + 12, nat, 4), 0);
    EXPECT_TRUE(ipv4_header_valid(out, 18));
    EXPECT_TRUE(l4_valid(out, 18));
    EXPECT_EQ(counted(a.id).bytes, frame.size()) << "the frame as it matched";
}

TEST_F(Switchdev, DropsAndFramesWithNowhereToGoAreCounted)
{
    SwitchRuleAddRamrodData drop = rule_from(endpoint::vf(0), Fate::drop);
    drop.actions = action::COUNT;
    drop.headers = flow_hdr::IPV4 | flow_hdr::ICMP;
    const Added a = add(drop);
    ASSERT_EQ(a.rc, FwReturn::ok);
    auto ping = udp4_frame(PEER_MAC, VF0_MAC, 0x0a000001, 0x0a000002, 1000, 2000, 60);
    ping[14 + 9] = 1;
    vf0->send_burst(0, {ping, ping, ping});
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_TRUE(wait_until([&] { return counted(a.id).hits == 3; }));
    EXPECT_EQ(switch_stat(offsetof(SwitchStats, drop_pkts)), 3u);
    EXPECT_TRUE(pf->rx_poll(1).empty());

    /* VF 1's representor stopped: its misses have nowhere to go. */
    QueueStopRamrodData stop{};
    stop.vport_id = 2;
    stop.queue_id = 2;
    ASSERT_EQ(pf->eth(EthCmd::rx_queue_stop, &stop, sizeof(stop)), FwReturn::ok);
    ASSERT_EQ(pf->eth(EthCmd::tx_queue_stop, &stop, sizeof(stop)), FwReturn::ok);
    VportStopRamrodData vstop{};
    vstop.vport_id = 2;
    ASSERT_EQ(pf->eth(EthCmd::vport_stop, &vstop, sizeof(vstop)), FwReturn::ok);
    vf1->send(0, eth_frame(PEER_MAC, VF1_MAC, 0x88b5, 60));
    EXPECT_TRUE(wait_until([&] { return switch_stat(offsetof(SwitchStats, no_representor_pkts)) == 1; }));

    /* A rule to VF 1 while VF 1 takes nothing: unreachable. */
    ASSERT_EQ(add(rule_from(endpoint::vf(0), Fate::forward, endpoint::vf(1))).rc, FwReturn::ok);
    VportUpdateRamrodData off{};
    off.vport_id = iov::vf_vport(1);
    off.update_flags = vport_update::UPDATE_ACTIVE_RX;
    ASSERT_EQ(pf->eth(EthCmd::vport_update, &off, sizeof(off)), FwReturn::ok);
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_TRUE(wait_until([&] { return switch_stat(offsetof(SwitchStats, unreachable_pkts)) == 1; }));
}

TEST_F(Switchdev, TheSwitchRefusesWhatItCannotDo)
{
    SwitchRuleAddRamrodData r = rule_from(endpoint::vf(0), Fate::forward, endpoint::vf(5));
    EXPECT_EQ(add(r).rc, FwReturn::invalid_param) << "VF 5 is not enabled";
    r.destination = endpoint::vport(MAX_VPORTS_PER_PF);
    EXPECT_EQ(add(r).rc, FwReturn::invalid_param) << "past the PF's vports";
    r.destination = 0x0700;
    EXPECT_EQ(add(r).rc, FwReturn::invalid_param) << "no such endpoint kind";
    r = rule_from(endpoint::WIRE, Fate::forward, endpoint::WIRE);
    EXPECT_EQ(add(r).rc, FwReturn::invalid_param) << "back out of the wire it came in on";

    EXPECT_EQ(set_mode(SwitchMode::switchdev), FwReturn::bad_state) << "already switchdev";
    for (uint32_t i = 0; i < MAX_RULES_HERE; i++)
        ASSERT_EQ(add(rule_from(endpoint::vf(0), Fate::drop)).rc, FwReturn::ok);
    EXPECT_EQ(add(rule_from(endpoint::vf(0), Fate::drop)).rc, FwReturn::no_resource) << "the table is full";

    ASSERT_EQ(set_mode(SwitchMode::legacy), FwReturn::ok);
    EXPECT_EQ(add(rule_from(endpoint::vf(0), Fate::drop)).rc, FwReturn::bad_state) << "legacy mode has no rules";
    EXPECT_EQ(set_mode(SwitchMode::switchdev, 0), FwReturn::invalid_param);
    EXPECT_EQ(set_mode(SwitchMode::switchdev, MAX_RULES + 1), FwReturn::no_resource);
    EXPECT_EQ(set_mode(SwitchMode::switchdev, 4, counters.iova + 4), FwReturn::invalid_param) << "unaligned";
    const HostMem unmapped = pf->alloc(4096, false);
    EXPECT_EQ(set_mode(SwitchMode::switchdev, 4, unmapped.iova), FwReturn::dma_error)
        << "counters in memory the PF did not give the adapter";
    EXPECT_EQ(start_representor(3, 0), FwReturn::bad_state) << "VF 0 has its representor";

    /* The other port's PF has a switch of its own. */
    SwitchModeRamrodData d{};
    d.mode = static_cast<uint8_t>(SwitchMode::switchdev);
    d.max_rules = 1;
    d.counters = make_regpair(peer->alloc(16).iova);
    EXPECT_EQ(peer->eth(EthCmd::switch_mode, &d, sizeof(d)), FwReturn::ok);
}

TEST_F(Switchdev, LegacyModeSwitchesByMacAgain)
{
    ASSERT_EQ(add(rule_from(endpoint::vf(0), Fate::drop)).rc, FwReturn::ok);
    ASSERT_EQ(set_mode(SwitchMode::legacy), FwReturn::ok);
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u) << "the VEB's MAC switching, the rules gone";

    ASSERT_EQ(set_mode(SwitchMode::switchdev), FwReturn::ok);
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_EQ(pf->rx_wait(1, 1).size(), 1u) << "switchdev again: an empty table, the representor";
}

} // namespace
} // namespace cna::fw::test

namespace cna::fw::test {
namespace {

TEST(SwitchdevPort, WhileAPfManagesItsSwitchNoOtherPfOfThePortStarts)
{
    AdapterConfig config;
    config.name = "eswitch2";
    config.pfs_per_port = 2;
    config.link_up_delay_ms = 0;
    auto adapter = Adapter::create(config, nullptr);
    ASSERT_NE(adapter, nullptr);
    FakeDriver manager(*adapter, 0);
    ASSERT_EQ(bring_up_l2(manager, L2Setup{}), "");
    const HostMem counters = manager.alloc(sizeof(SwitchCounters));
    SwitchModeRamrodData d{};
    d.mode = static_cast<uint8_t>(SwitchMode::switchdev);
    d.max_rules = 1;
    d.counters = make_regpair(counters.iova);
    ASSERT_EQ(manager.eth(EthCmd::switch_mode, &d, sizeof(d)), FwReturn::ok);
    FakeDriver other(*adapter, 1);
    EXPECT_EQ(bring_up_l2(other, L2Setup{}), "PF_START ramrod: fw_return 3")
        << "the port's wire is the switch's: no PF of the port may bypass its rules";
}

} // namespace
} // namespace cna::fw::test
