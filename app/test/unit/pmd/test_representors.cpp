/* SPDX-License-Identifier: BSD-3-Clause
 * VF representors and transfer rules through the ethdev and rte_flow APIs:
 * a PF with two VFs (net_cna_vf ports of this process) and their
 * representors (representor=[0-1]). What only an application sees: DPDK's
 * devargs matching finding each representor (as Open vSwitch finds them),
 * one switch domain, the miss paths and the representors' counters, rules
 * forwarding, rewriting and
 * counting, precise refusals at validate, a full table, rules changed under
 * traffic losing and doubling nothing, and legacy mode once the
 * representors close.
 */
#include <rte_flow.h>

#include <set>
#include <string>
#include <vector>

#include "port_fixture.h"

namespace {

constexpr uint32_t TABLE = 8; /* switch_rules= */

class Representors : public PortTest {
protected:
    void SetUp() override
    {
        pf_name_ = "net_cna_sw" + std::to_string(serial_++);
        const std::string args = "vfs=2,representor=[0-1],switch_rules=" + std::to_string(TABLE);
        ASSERT_EQ(rte_vdev_init(pf_name_.c_str(), args.c_str()), 0);
        pool_ = rte_pktmbuf_pool_create((pf_name_ + "_pool").c_str(), POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        ASSERT_NE(pool_, nullptr);
        ASSERT_EQ(rte_eth_dev_get_port_by_name(pf_name_.c_str(), &pf_), 0);
        start_port(pf_, pool_, 1, rte_eth_conf{});
        for (uint16_t vf = 0; vf < 2; vf++) {
            ASSERT_EQ(rte_eth_dev_get_port_by_name((pf_name_ + "_representor_vf" + std::to_string(vf)).c_str(),
                                                   &rep_[vf]),
                      0);
            start_port(rep_[vf], pool_, 1, rte_eth_conf{});
            vf_name_[vf] = "net_cna_vf_sw" + std::to_string(serial_++);
            const std::string vf_args = "adapter=" + pf_name_ + ",port=0,vf=" + std::to_string(vf);
            ASSERT_EQ(rte_vdev_init(vf_name_[vf].c_str(), vf_args.c_str()), 0);
            ASSERT_EQ(rte_eth_dev_get_port_by_name(vf_name_[vf].c_str(), &vf_[vf]), 0);
            start_port(vf_[vf], pool_, 1, rte_eth_conf{});
            ASSERT_EQ(rte_eth_macaddr_get(vf_[vf], &vf_mac_[vf]), 0);
        }
    }

    void TearDown() override
    {
        if (pool_ == nullptr)
            return;
        for (uint16_t vf = 0; vf < 2; vf++) {
            if (vf_name_[vf].empty())
                continue;
            EXPECT_EQ(rte_eth_dev_stop(vf_[vf]), 0);
            EXPECT_EQ(rte_eth_dev_close(vf_[vf]), 0);
            EXPECT_EQ(rte_vdev_uninit(vf_name_[vf].c_str()), 0);
        }
        remove_port(pf_name_, pf_, pool_, POOL);
        pool_ = nullptr;
    }

    /* n UDP frames from `port` to dst, their sequence numbers from `seq` on
     * in the UDP source port. */
    unsigned send(uint16_t port, const rte_ether_addr& dst, unsigned n, uint16_t seq = 0)
    {
        std::vector<rte_mbuf*> tx(n);
        rte_ether_addr src;
        rte_eth_macaddr_get(port, &src);
        for (unsigned i = 0; i < n; i++) {
            tx[i] = udp_frame(static_cast<uint16_t>(seq + i));
            auto* eth = rte_pktmbuf_mtod(tx[i], rte_ether_hdr*);
            eth->dst_addr = dst;
            eth->src_addr = src;
        }
        const uint16_t sent = rte_eth_tx_burst(port, 0, tx.data(), static_cast<uint16_t>(n));
        for (unsigned i = sent; i < n; i++)
            rte_pktmbuf_free(tx[i]);
        return sent;
    }

    /* What `port` receives within `ms` (or once it has `n`). */
    std::vector<rte_mbuf*> take(uint16_t port, unsigned n, int ms = 1000)
    {
        std::vector<rte_mbuf*> got;
        for (int spin = 0; spin < ms && got.size() < n; spin++) {
            rte_mbuf* pkts[32];
            const uint16_t k = rte_eth_rx_burst(port, 0, pkts, 32);
            got.insert(got.end(), pkts, pkts + k);
            if (k == 0)
                rte_delay_ms(1);
        }
        return got;
    }

    unsigned count(uint16_t port, unsigned n, int ms = 1000)
    {
        std::vector<rte_mbuf*> got = take(port, n, ms);
        for (rte_mbuf* m : got)
            rte_pktmbuf_free(m);
        return static_cast<unsigned>(got.size());
    }

    uint64_t xstat(uint16_t port, const char* name)
    {
        uint64_t id = 0, value = 0;
        EXPECT_EQ(rte_eth_xstats_get_id_by_name(port, name, &id), 0) << name;
        EXPECT_EQ(rte_eth_xstats_get_by_id(port, &id, &value, 1), 1) << name;
        return value;
    }

    /* A transfer rule on `port`: ETH / IPV4 / UDP => COUNT / actions... */
    rte_flow* create(uint16_t port, std::vector<rte_flow_action> actions, rte_flow_error* error,
                     const rte_flow_attr* attr_override = nullptr)
    {
        rte_flow_attr attr{};
        attr.transfer = 1;
        const rte_flow_item pattern[] = {
            {RTE_FLOW_ITEM_TYPE_ETH, nullptr, nullptr, nullptr},
            {RTE_FLOW_ITEM_TYPE_IPV4, nullptr, nullptr, nullptr},
            {RTE_FLOW_ITEM_TYPE_UDP, nullptr, nullptr, nullptr},
            {RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr, nullptr},
        };
        actions.insert(actions.begin(), {RTE_FLOW_ACTION_TYPE_COUNT, &count_conf_});
        actions.push_back({RTE_FLOW_ACTION_TYPE_END, nullptr});
        return rte_flow_create(port, attr_override != nullptr ? attr_override : &attr, pattern, actions.data(),
                               error);
    }

    rte_flow_query_count query(uint16_t port, rte_flow* flow, bool reset = false)
    {
        rte_flow_query_count q{};
        q.reset = reset;
        const rte_flow_action count{RTE_FLOW_ACTION_TYPE_COUNT, nullptr};
        rte_flow_error error{};
        EXPECT_EQ(rte_flow_query(port, flow, &count, &q, &error), 0) << (error.message ? error.message : "");
        return q;
    }

    std::string pf_name_;
    std::string vf_name_[2];
    uint16_t pf_ = 0, rep_[2] = {}, vf_[2] = {};
    rte_ether_addr vf_mac_[2];
    rte_flow_action_count count_conf_{};
};

TEST_F(Representors, DevargsMatchingFindsThemAndOneSwitchDomainHoldsThemAll)
{
    rte_dev_iterator it{};
    auto match = [&](const std::string& devargs) {
        std::vector<uint16_t> ports;
        uint16_t id;
        RTE_ETH_FOREACH_MATCHING_DEV(id, devargs.c_str(), &it)
            ports.push_back(id);
        return ports;
    };
    EXPECT_EQ(match(pf_name_ + ",representor=vf1"), std::vector<uint16_t>{rep_[1]});
    EXPECT_EQ(match(pf_name_ + ",representor=[0-1]"), (std::vector<uint16_t>{rep_[0], rep_[1]}));
    EXPECT_EQ(match(pf_name_ + ",representor=pf0vf0"), std::vector<uint16_t>{rep_[0]});
    EXPECT_EQ(match(pf_name_ + ",representor=vf5"), std::vector<uint16_t>{});
    EXPECT_EQ(match(pf_name_).front(), pf_) << "the device's first port is its PF (the uplink)";

    /* What lets ethdev map pf0vfN to a representor id. */
    ASSERT_EQ(rte_eth_representor_info_get(pf_, nullptr), 1);
    alignas(rte_eth_representor_info) uint8_t buf[sizeof(rte_eth_representor_info) + sizeof(rte_eth_representor_range)];
    auto* ranges = reinterpret_cast<rte_eth_representor_info*>(buf);
    ranges->nb_ranges_alloc = 1;
    ASSERT_EQ(rte_eth_representor_info_get(pf_, ranges), 1);
    EXPECT_EQ(ranges->ranges[0].type, RTE_ETH_REPRESENTOR_VF);
    EXPECT_EQ(ranges->ranges[0].id_end, 1u);

    rte_eth_dev_info pf_info{}, info{};
    ASSERT_EQ(rte_eth_dev_info_get(pf_, &pf_info), 0);
    ASSERT_NE(pf_info.switch_info.name, nullptr);
    EXPECT_EQ(pf_info.switch_info.port_id, 0);
    for (uint16_t vf = 0; vf < 2; vf++) {
        ASSERT_EQ(rte_eth_dev_info_get(rep_[vf], &info), 0);
        EXPECT_TRUE(*info.dev_flags & RTE_ETH_DEV_REPRESENTOR);
        EXPECT_EQ(info.switch_info.domain_id, pf_info.switch_info.domain_id);
        EXPECT_STREQ(info.switch_info.name, pf_info.switch_info.name);
        EXPECT_EQ(info.switch_info.port_id, vf + 1);
        ASSERT_EQ(rte_eth_dev_info_get(vf_[vf], &info), 0) << "the VF, from its own port";
        EXPECT_EQ(info.switch_info.domain_id, pf_info.switch_info.domain_id);
        EXPECT_STREQ(info.switch_info.name, pf_info.switch_info.name);
        EXPECT_EQ(info.switch_info.port_id, vf + 9) << "the VF's own switch port, apart from its representor's";
    }
}

TEST_F(Representors, WhatNoRuleTakesGoesToTheRepresentorAndItsTxToTheVf)
{
    ASSERT_EQ(send(vf_[0], vf_mac_[1], 64), 64u);
    EXPECT_EQ(count(rep_[0], 64), 64u) << "VF 0's frames, whatever their address, to its representor";
    EXPECT_EQ(count(vf_[1], 1, 50), 0u) << "no MAC switching in switchdev mode";
    EXPECT_EQ(count(rep_[1], 1, 50), 0u);
    ASSERT_EQ(send(rep_[1], vf_mac_[1], 32), 32u);
    EXPECT_EQ(count(vf_[1], 32), 32u) << "the representor's Tx reaches its VF";
    EXPECT_EQ(xstat(pf_, "switch_misses"), 96u);
    rte_eth_stats stats{};
    ASSERT_EQ(rte_eth_stats_get(rep_[0], &stats), 0);
    EXPECT_EQ(stats.ipackets, 64u) << "a representor counts what software saw of the switch";
    ASSERT_EQ(rte_eth_stats_get(rep_[1], &stats), 0);
    EXPECT_EQ(stats.opackets, 32u);
    EXPECT_EQ(stats.ipackets, 0u);
    EXPECT_EQ(xstat(rep_[1], "vf_rx_unicast_packets"), 32u) << "and its VF's counters are its vf_* xstats";
    EXPECT_EQ(xstat(rep_[0], "vf_tx_unicast_packets"), 64u);
    ASSERT_EQ(rte_eth_stats_reset(rep_[0]), 0);
    EXPECT_EQ(xstat(rep_[0], "vf_tx_unicast_packets"), 0u);
    ASSERT_EQ(rte_eth_stats_get(rep_[0], &stats), 0);
    EXPECT_EQ(stats.ipackets, 0u);
}

TEST_F(Representors, ARuleForwardsRewritesAndCountsUntilItIsDestroyed)
{
    rte_flow_action_of_push_vlan push{RTE_BE16(RTE_ETHER_TYPE_VLAN)};
    rte_flow_action_of_set_vlan_vid vid{RTE_BE16(7)};
    rte_flow_action_ethdev to_vf1{rep_[1]};
    rte_flow_error error{};
    rte_flow* flow = create(rep_[0],
                            {{RTE_FLOW_ACTION_TYPE_OF_PUSH_VLAN, &push},
                             {RTE_FLOW_ACTION_TYPE_OF_SET_VLAN_VID, &vid},
                             {RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_vf1}},
                            &error);
    ASSERT_NE(flow, nullptr) << (error.message ? error.message : "");
    ASSERT_EQ(send(vf_[0], vf_mac_[1], 16), 16u);
    std::vector<rte_mbuf*> got = take(vf_[1], 16);
    ASSERT_EQ(got.size(), 16u) << "VF 0 to VF 1 by the rule";
    const auto* eth = rte_pktmbuf_mtod(got[0], const rte_ether_hdr*);
    EXPECT_EQ(rte_be_to_cpu_16(eth->ether_type), RTE_ETHER_TYPE_VLAN);
    EXPECT_EQ(rte_be_to_cpu_16(reinterpret_cast<const rte_vlan_hdr*>(eth + 1)->vlan_tci) & 0xfff, 7);
    EXPECT_EQ(got[0]->pkt_len, UDP_FRAME_LEN + 4);
    for (rte_mbuf* m : got)
        rte_pktmbuf_free(m);
    EXPECT_EQ(count(rep_[0], 1, 50), 0u);
    rte_flow_query_count q = query(rep_[0], flow, true);
    EXPECT_TRUE(q.hits_set && q.bytes_set);
    EXPECT_EQ(q.hits, 16u);
    EXPECT_EQ(q.bytes, 16u * UDP_FRAME_LEN) << "counted as the frames matched";
    EXPECT_EQ(query(rep_[0], flow).hits, 0u) << "reset";
    EXPECT_NE(rte_flow_destroy(rep_[1], flow, &error), 0) << "a rule is destroyed on the port it was made on";
    ASSERT_EQ(rte_flow_destroy(rep_[0], flow, &error), 0);
    ASSERT_EQ(send(vf_[0], vf_mac_[1], 8), 8u);
    EXPECT_EQ(count(rep_[0], 8), 8u) << "the rule gone: VF 0's frames to its representor again";
}

TEST_F(Representors, WhatTheSwitchCannotDoIsRefusedAtValidateWithItsCause)
{
    struct Case {
        const char* what;
        std::vector<rte_flow_action> actions;
        rte_flow_error_type type;
        const char* message;
    };
    rte_flow_action_ethdev to_pf{pf_}, stranger{RTE_MAX_ETHPORTS - 1};
    rte_flow_action_port_id stranger_id{0, 0, RTE_MAX_ETHPORTS - 1};
    rte_flow_action_set_ipv4 nat{RTE_BE32(0x0a000063)};
    rte_flow_action_of_push_vlan push{RTE_BE16(RTE_ETHER_TYPE_VLAN)}, push_ipv4{RTE_BE16(RTE_ETHER_TYPE_IPV4)};
    rte_flow_action_of_set_vlan_vid vid{RTE_BE16(7)};
    const Case cases[] = {
        {"no fate", {}, RTE_FLOW_ERROR_TYPE_ACTION_NUM, "needs a fate"},
        {"two fates",
         {{RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_pf}, {RTE_FLOW_ACTION_TYPE_DROP, nullptr}},
         RTE_FLOW_ERROR_TYPE_ACTION,
         "one fate per rule"},
        {"a port of no domain", {{RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &stranger}}, RTE_FLOW_ERROR_TYPE_ACTION_CONF,
         "not in this switch domain"},
        {"PORT_ID to a port of no domain", {{RTE_FLOW_ACTION_TYPE_PORT_ID, &stranger_id}},
         RTE_FLOW_ERROR_TYPE_ACTION_CONF, "not in this switch domain"},
        {"a tag of no VLAN type", {{RTE_FLOW_ACTION_TYPE_OF_PUSH_VLAN, &push_ipv4}, {RTE_FLOW_ACTION_TYPE_DROP, nullptr}},
         RTE_FLOW_ERROR_TYPE_ACTION_CONF, "0x8100 or 0x88a8"},
        {"pop after push",
         {{RTE_FLOW_ACTION_TYPE_OF_PUSH_VLAN, &push},
          {RTE_FLOW_ACTION_TYPE_OF_POP_VLAN, nullptr},
          {RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_pf}},
         RTE_FLOW_ERROR_TYPE_ACTION, "OF_POP_VLAN after"},
        {"set vid before push",
         {{RTE_FLOW_ACTION_TYPE_OF_SET_VLAN_VID, &vid},
          {RTE_FLOW_ACTION_TYPE_OF_PUSH_VLAN, &push},
          {RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_pf}},
         RTE_FLOW_ERROR_TYPE_ACTION, "OF_PUSH_VLAN after OF_SET_VLAN_VID"},
        {"changes to a dropped frame", {{RTE_FLOW_ACTION_TYPE_SET_IPV4_DST, &nat}, {RTE_FLOW_ACTION_TYPE_DROP, nullptr}},
         RTE_FLOW_ERROR_TYPE_ACTION, "takes no header changes"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        rte_flow_error error{};
        EXPECT_EQ(create(rep_[0], c.actions, &error), nullptr);
        EXPECT_EQ(error.type, c.type);
        ASSERT_NE(error.message, nullptr);
        EXPECT_NE(std::string(error.message).find(c.message), std::string::npos) << error.message;
    }
    /* The wire back to the wire; a representor's ingress rule; group 1. */
    rte_flow_error error{};
    EXPECT_EQ(create(pf_, {{RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_pf}}, &error), nullptr);
    EXPECT_NE(std::string(error.message).find("cannot go back out"), std::string::npos) << error.message;
    rte_flow_attr ingress{};
    ingress.ingress = 1;
    EXPECT_EQ(create(rep_[0], {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error, &ingress), nullptr);
    EXPECT_EQ(error.type, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER);
    rte_flow_attr group{};
    group.transfer = 1;
    group.group = 1;
    EXPECT_EQ(create(rep_[0], {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error, &group), nullptr);
    EXPECT_EQ(error.type, RTE_FLOW_ERROR_TYPE_ATTR_GROUP);
    EXPECT_EQ(xstat(pf_, "switch_rule_hits"), 0u);
}

TEST_F(Representors, AFullTableSaysSoAndADeletionMakesRoom)
{
    std::vector<rte_flow*> flows;
    rte_flow_error error{};
    for (uint32_t i = 0; i < TABLE; i++) {
        flows.push_back(create(rep_[0], {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error));
        ASSERT_NE(flows.back(), nullptr) << i << ": " << (error.message ? error.message : "");
    }
    EXPECT_EQ(create(rep_[0], {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error), nullptr);
    EXPECT_EQ(rte_errno, ENOSPC);
    EXPECT_NE(std::string(error.message).find("rule table is full"), std::string::npos) << error.message;
    ASSERT_EQ(rte_flow_destroy(rep_[0], flows.back(), &error), 0);
    EXPECT_NE(create(rep_[0], {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error), nullptr);
    ASSERT_EQ(rte_flow_flush(rep_[0], &error), 0);
}

TEST_F(Representors, RulesChangedUnderTrafficLoseAndDoubleNoFrame)
{
    rte_flow_action_ethdev to_vf1{rep_[1]};
    rte_flow_error error{};
    std::multiset<uint16_t> seen;
    auto drain = [&](uint16_t port, int ms) {
        for (rte_mbuf* m : take(port, UINT32_MAX, ms)) {
            const auto* udp = rte_pktmbuf_mtod_offset(m, const rte_udp_hdr*,
                                                      sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr));
            seen.insert(rte_be_to_cpu_16(udp->src_port));
            rte_pktmbuf_free(m);
        }
    };
    constexpr unsigned ROUNDS = 100, BURST = 16;
    rte_flow* flow = nullptr;
    uint16_t seq = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        ASSERT_EQ(send(vf_[0], vf_mac_[1], BURST, seq), BURST);
        seq = static_cast<uint16_t>(seq + BURST);
        /* The rule comes and goes while the burst is on its way. */
        if (flow == nullptr) {
            flow = create(rep_[0], {{RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_vf1}}, &error);
            ASSERT_NE(flow, nullptr) << (error.message ? error.message : "");
        } else {
            ASSERT_EQ(rte_flow_destroy(rep_[0], flow, &error), 0);
            flow = nullptr;
        }
        drain(rep_[0], 1);
        drain(vf_[1], 1);
    }
    for (int settle = 0; settle < 20 && seen.size() < seq; settle++) {
        drain(rep_[0], 50);
        drain(vf_[1], 50);
    }
    EXPECT_EQ(seen.size(), seq) << "every frame arrived once, at VF 1 or at VF 0's representor";
    for (uint16_t s = 0; s < seq; s++)
        ASSERT_EQ(seen.count(s), 1u) << "frame " << s;
}

TEST_F(Representors, ClosingTheRepresentorsLeavesTheVfsSwitchingByMac)
{
    rte_flow_error error{};
    rte_flow* kept = create(pf_, {{RTE_FLOW_ACTION_TYPE_DROP, nullptr}}, &error);
    ASSERT_NE(kept, nullptr);
    for (uint16_t vf = 0; vf < 2; vf++) {
        ASSERT_EQ(rte_eth_dev_stop(rep_[vf]), 0);
        ASSERT_EQ(rte_eth_dev_close(rep_[vf]), 0);
        EXPECT_FALSE(rte_eth_dev_is_valid_port(rep_[vf]));
    }
    ASSERT_EQ(send(vf_[0], vf_mac_[1], 32), 32u);
    EXPECT_EQ(count(vf_[1], 32), 32u) << "legacy mode: VF 0 to VF 1 by its MAC, the VFs untouched";
    rte_flow_action_ethdev to_pf{pf_};
    EXPECT_EQ(create(pf_, {{RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &to_pf}}, &error), nullptr);
    EXPECT_NE(std::string(error.message).find("switchdev mode"), std::string::npos) << error.message;
    EXPECT_EQ(rte_flow_destroy(pf_, kept, &error), 0) << "the application's handle of a rule legacy mode took";
    EXPECT_NE(rte_flow_destroy(pf_, kept, &error), 0) << "freed once";
}

} // namespace
