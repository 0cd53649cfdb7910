/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow through the ethdev API on a loopback port: what testpmd cannot
 * show (it flushes rules on port stop): rules and their counts survive a
 * stop/start of the port, and the mark arrives in the mbuf.
 */
#include <rte_flow.h>

#include "port_fixture.h"

namespace {

class Flow : public PortTest {
protected:
    /* ETH / IPV4 / UDP src is `sport` => MARK mark / QUEUE queue / COUNT */
    rte_flow* create(uint16_t sport, uint32_t mark, uint16_t queue, rte_flow_error* error)
    {
        rte_flow_attr attr{};
        attr.ingress = 1;
        rte_flow_item_udp spec{}, mask{};
        spec.hdr.src_port = rte_cpu_to_be_16(sport);
        mask.hdr.src_port = RTE_BE16(0xffff);
        const rte_flow_item pattern[] = {
            {RTE_FLOW_ITEM_TYPE_ETH, nullptr, nullptr, nullptr},
            {RTE_FLOW_ITEM_TYPE_IPV4, nullptr, nullptr, nullptr},
            {RTE_FLOW_ITEM_TYPE_UDP, &spec, nullptr, &mask},
            {RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr, nullptr},
        };
        rte_flow_action_mark mark_conf{mark};
        rte_flow_action_queue queue_conf{queue};
        rte_flow_action_count count_conf{};
        const rte_flow_action actions[] = {
            {RTE_FLOW_ACTION_TYPE_MARK, &mark_conf},
            {RTE_FLOW_ACTION_TYPE_QUEUE, &queue_conf},
            {RTE_FLOW_ACTION_TYPE_COUNT, &count_conf},
            {RTE_FLOW_ACTION_TYPE_END, nullptr},
        };
        return rte_flow_create(port_, &attr, pattern, actions, error);
    }

    void send(uint16_t sport, unsigned n)
    {
        for (unsigned i = 0; i < n; i++) {
            rte_mbuf* m = udp_frame(sport);
            ASSERT_EQ(rte_eth_tx_burst(port_, 0, &m, 1), 1);
        }
    }

    uint64_t hits(rte_flow* flow)
    {
        const rte_flow_action count[] = {{RTE_FLOW_ACTION_TYPE_COUNT, nullptr}, {RTE_FLOW_ACTION_TYPE_END, nullptr}};
        rte_flow_query_count q{};
        rte_flow_error error{};
        EXPECT_EQ(rte_flow_query(port_, flow, count, &q, &error), 0) << (error.message ? error.message : "");
        EXPECT_TRUE(q.hits_set);
        return q.hits;
    }
};

TEST_F(Flow, MarkQueueAndCountSurvivePortRestart)
{
    open_port("", 4, rte_eth_conf{});
    rte_flow_error error{};
    rte_flow* flow = create(777, 0xabcdef01, 2, &error);
    ASSERT_NE(flow, nullptr) << error.message;

    send(777, 3);
    send(778, 1);
    rte_mbuf* got[3];
    ASSERT_EQ(receive(2, 3, got), 3u);
    for (rte_mbuf* m : got) {
        EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_FDIR_ID);
        EXPECT_EQ(m->hash.fdir.hi, 0xabcdef01u);
        rte_pktmbuf_free(m);
    }
    rte_mbuf* other = nullptr;
    ASSERT_EQ(receive(0, 1, &other), 1u);
    EXPECT_FALSE(other->ol_flags & (RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID));
    rte_pktmbuf_free(other);
    EXPECT_EQ(hits(flow), 3u);

    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    EXPECT_EQ(hits(flow), 3u) << "counts stay readable while stopped";
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
    rte_eth_link link{};
    for (int i = 0; i < 1000 && !link.link_status; i++) {
        rte_eth_link_get_nowait(port_, &link);
        rte_delay_ms(1);
    }
    send(777, 2);
    EXPECT_EQ(receive(2, 2), 2u) << "the rule was replayed into the new vport";
    EXPECT_EQ(hits(flow), 5u) << "counts of the old vport are kept";

    ASSERT_EQ(rte_flow_flush(port_, &error), 0);
    send(777, 1);
    EXPECT_EQ(receive(0, 1), 1u) << "flushed: the vport's own steering";
}

TEST_F(Flow, CreateWhileStoppedTakesEffectAtStart)
{
    open_port("", 2, rte_eth_conf{});
    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    rte_flow_error error{};
    rte_flow* flow = create(900, 1, 1, &error);
    ASSERT_NE(flow, nullptr) << error.message;
    EXPECT_EQ(create(901, 1, 5, &error), nullptr);
    EXPECT_STREQ(error.message, "queue 5 does not exist (2 Rx queues)");
    EXPECT_EQ(error.type, RTE_FLOW_ERROR_TYPE_ACTION_CONF);
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
    rte_eth_link link{};
    for (int i = 0; i < 1000 && !link.link_status; i++) {
        rte_eth_link_get_nowait(port_, &link);
        rte_delay_ms(1);
    }
    send(900, 1);
    EXPECT_EQ(receive(1, 1), 1u);
    EXPECT_EQ(hits(flow), 1u);
}

} // namespace
