/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna through the ethdev API: RSS against a software Toeplitz, the RETA,
 * unicast MAC filters up to the advertised maximum, exact per-queue xstats,
 * descriptor status, tx_prepare and the firmware version.
 */
#include <array>
#include <cstring>
#include <map>
#include <regex>

#include <rte_errno.h>
#include <rte_thash.h>

#include "port_fixture.h"

namespace {

constexpr uint8_t KEY[40] = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
                             0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
                             0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

/* RSS, and the checksum flags checked alongside */
rte_eth_conf rss_conf()
{
    rte_eth_conf conf{};
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
    return conf;
}

/* The Toeplitz hash of our UDP frames' 4-tuple, computed by DPDK's library. */
uint32_t expected_hash(uint16_t src_port)
{
    rte_ipv4_tuple t{};
    t.src_addr = 0x0a000001;
    t.dst_addr = 0x0a000002;
    t.sport = src_port;
    t.dport = 4789;
    return rte_softrss(reinterpret_cast<uint32_t*>(&t), RTE_THASH_V4_L4_LEN, KEY);
}

class EthdevApi : public PortTest {};

TEST_F(EthdevApi, RssHashAndQueueFollowKeyAndReta)
{
    open_port("", 4, rss_conf());
    std::array<rte_eth_rss_reta_entry64, 2> reta{};
    for (auto& g : reta)
        g.mask = ~0ULL;
    ASSERT_EQ(rte_eth_dev_rss_reta_query(port_, reta.data(), 128), 0);

    constexpr uint16_t FLOWS = 64;
    rte_mbuf* tx[FLOWS];
    for (uint16_t i = 0; i < FLOWS; i++)
        tx[i] = udp_frame(static_cast<uint16_t>(1000 + i));
    ASSERT_EQ(rte_eth_tx_burst(port_, 0, tx, FLOWS), FLOWS);

    unsigned total = 0;
    std::map<uint16_t, unsigned> per_queue;
    for (int spin = 0; spin < 1000 && total < FLOWS; spin++) {
        for (uint16_t q = 0; q < 4; q++) {
            rte_mbuf* rx[FLOWS];
            const uint16_t n = rte_eth_rx_burst(port_, q, rx, FLOWS);
            for (uint16_t i = 0; i < n; i++) {
                const auto* udp = rte_pktmbuf_mtod_offset(rx[i], const rte_udp_hdr*,
                                                          sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr));
                const uint32_t hash = expected_hash(rte_be_to_cpu_16(udp->src_port));
                EXPECT_TRUE(rx[i]->ol_flags & RTE_MBUF_F_RX_RSS_HASH);
                EXPECT_EQ(rx[i]->hash.rss, hash);
                EXPECT_EQ(q, reta[(hash % 128) / 64].reta[(hash % 128) % 64]) << "queue must follow the RETA";
                EXPECT_EQ(rx[i]->packet_type & RTE_PTYPE_L4_MASK, RTE_PTYPE_L4_UDP);
                EXPECT_TRUE(rx[i]->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_GOOD);
                rte_pktmbuf_free(rx[i]);
            }
            per_queue[q] += n;
            total += n;
        }
        rte_delay_ms(1);
    }
    EXPECT_EQ(total, FLOWS);
    for (uint16_t q = 0; q < 4; q++)
        EXPECT_GT(per_queue[q], 0u) << "64 flows should reach every one of 4 queues (queue " << q << ")";

    /* Steer everything to queue 2. */
    for (auto& g : reta)
        for (auto& e : g.reta)
            e = 2;
    ASSERT_EQ(rte_eth_dev_rss_reta_update(port_, reta.data(), 128), 0);
    for (uint16_t i = 0; i < FLOWS; i++)
        tx[i] = udp_frame(static_cast<uint16_t>(2000 + i));
    ASSERT_EQ(rte_eth_tx_burst(port_, 0, tx, FLOWS), FLOWS);
    EXPECT_EQ(receive(2, FLOWS), FLOWS);
    EXPECT_EQ(receive(0, 1), 0u);

    /* A RETA naming a queue that does not exist is refused. */
    reta[0].reta[0] = 7;
    EXPECT_EQ(rte_eth_dev_rss_reta_update(port_, reta.data(), 128), -EINVAL);
}

TEST_F(EthdevApi, RssKeyRoundTripsAndChangesTheHash)
{
    open_port("", 2, rss_conf());
    uint8_t key[40];
    rte_eth_rss_conf conf{};
    conf.rss_key = key;
    conf.rss_key_len = sizeof(key);
    ASSERT_EQ(rte_eth_dev_rss_hash_conf_get(port_, &conf), 0);
    EXPECT_EQ(std::memcmp(key, KEY, sizeof(KEY)), 0);
    EXPECT_EQ(conf.rss_hf, uint64_t{RTE_ETH_RSS_NONFRAG_IPV4_UDP});

    uint8_t other[40];
    for (unsigned i = 0; i < sizeof(other); i++)
        other[i] = static_cast<uint8_t>(i * 7 + 1);
    conf.rss_key = other;
    ASSERT_EQ(rte_eth_dev_rss_hash_update(port_, &conf), 0);
    rte_mbuf* m = udp_frame(1234);
    ASSERT_EQ(rte_eth_tx_burst(port_, 0, &m, 1), 1);
    rte_ipv4_tuple t{};
    t.src_addr = 0x0a000001;
    t.dst_addr = 0x0a000002;
    t.sport = 1234;
    t.dport = 4789;
    const uint32_t want = rte_softrss(reinterpret_cast<uint32_t*>(&t), RTE_THASH_V4_L4_LEN, other);
    rte_mbuf* rx = nullptr;
    const uint16_t q = static_cast<uint16_t>((want % 128) % 2);
    ASSERT_EQ(receive(q, 1, &rx), 1u);
    EXPECT_EQ(rx->hash.rss, want);
    rte_pktmbuf_free(rx);
}

TEST_F(EthdevApi, UnicastMacFiltersUpToTheAdvertisedMaximum)
{
    open_port("", 1, rte_eth_conf{});
    ASSERT_EQ(rte_eth_promiscuous_disable(port_), 0);
    rte_eth_dev_info info;
    ASSERT_EQ(rte_eth_dev_info_get(port_, &info), 0);
    ASSERT_GE(info.max_mac_addrs, 8u);
    rte_ether_addr mac = {{0x02, 0x44, 0, 0, 0, 0}};
    for (uint32_t i = 1; i < info.max_mac_addrs; i++) {
        mac.addr_bytes[5] = static_cast<uint8_t>(i);
        ASSERT_EQ(rte_eth_dev_mac_addr_add(port_, &mac, 0), 0) << "MAC " << i;
    }
    mac.addr_bytes[5] = 0xee;
    EXPECT_NE(rte_eth_dev_mac_addr_add(port_, &mac, 0), 0) << "beyond max_mac_addrs";

    /* A frame to the last added MAC is accepted; after removal it is filtered. */
    mac.addr_bytes[5] = static_cast<uint8_t>(info.max_mac_addrs - 1);
    auto send_to = [&](const rte_ether_addr& dst) {
        rte_mbuf* m = udp_frame(9);
        rte_pktmbuf_mtod(m, rte_ether_hdr*)->dst_addr = dst;
        ASSERT_EQ(rte_eth_tx_burst(port_, 0, &m, 1), 1);
    };
    send_to(mac);
    EXPECT_EQ(receive(0, 1), 1u);
    ASSERT_EQ(rte_eth_dev_mac_addr_remove(port_, &mac), 0);
    send_to(mac);
    EXPECT_EQ(receive(0, 1), 0u);
}

TEST_F(EthdevApi, XstatsAreExactStableAndReset)
{
    open_port("", 2, rte_eth_conf{});
    ASSERT_TRUE(send_udp(1, 10, 5));
    ASSERT_EQ(receive(0, 10), 10u);

    auto value_of = [&](const char* name) {
        uint64_t id, value;
        EXPECT_EQ(rte_eth_xstats_get_id_by_name(port_, name, &id), 0) << name;
        EXPECT_EQ(rte_eth_xstats_get_by_id(port_, &id, &value, 1), 1);
        return value;
    };
    EXPECT_EQ(value_of("rx_q0_packets"), 10u);
    EXPECT_EQ(value_of("rx_q0_bytes"), 10u * UDP_FRAME_LEN);
    EXPECT_EQ(value_of("tx_q1_packets"), 10u);
    EXPECT_EQ(value_of("tx_q0_packets"), 0u);
    EXPECT_EQ(value_of("rx_unicast_packets"), 10u);
    EXPECT_EQ(value_of("rx_q0_mbuf_alloc_failures"), 0u);
    rte_eth_stats st;
    ASSERT_EQ(rte_eth_stats_get(port_, &st), 0);
    EXPECT_EQ(st.q_ipackets[0], 10u);
    EXPECT_EQ(st.q_opackets[1], 10u);
    ASSERT_EQ(rte_eth_xstats_reset(port_), 0);
    EXPECT_EQ(value_of("rx_q0_packets"), 0u);
    EXPECT_EQ(value_of("tx_unicast_packets"), 0u);
}

TEST_F(EthdevApi, DescriptorStatusAndQueueCount)
{
    open_port("", 1, rte_eth_conf{});
    ASSERT_TRUE(send_udp(0, 5, 5));
    for (int i = 0; i < 1000 && rte_eth_rx_queue_count(port_, 0) < 5; i++)
        rte_delay_ms(1);
    EXPECT_EQ(rte_eth_rx_queue_count(port_, 0), 5);
    EXPECT_EQ(rte_eth_rx_descriptor_status(port_, 0, 4), RTE_ETH_RX_DESC_DONE);
    EXPECT_EQ(rte_eth_rx_descriptor_status(port_, 0, 5), RTE_ETH_RX_DESC_AVAIL);
    EXPECT_EQ(rte_eth_tx_descriptor_status(port_, 0, 0), RTE_ETH_TX_DESC_DONE);
    EXPECT_EQ(receive(0, 5), 5u);
    EXPECT_EQ(rte_eth_rx_queue_count(port_, 0), 0);
}

/* Reconfiguring a stopped port (testpmd's "port config" does it) keeps its
 * queues and must leave it receiving, with and without RSS. */
TEST_F(EthdevApi, ReconfiguredPortReceivesAgain)
{
    for (const rte_eth_conf& conf : {rte_eth_conf{}, rss_conf()}) {
        SCOPED_TRACE(conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS ? "RSS" : "no RSS");
        open_port("", 1, conf);
        ASSERT_EQ(rte_eth_dev_stop(port_), 0);
        ASSERT_EQ(rte_eth_dev_configure(port_, 1, 1, &conf), 0);
        ASSERT_EQ(rte_eth_dev_start(port_), 0);
        rte_eth_link link{};
        ASSERT_EQ(rte_eth_link_get(port_, &link), 0); /* waits for the link, as a frame sent before it is lost */
        ASSERT_EQ(link.link_status, RTE_ETH_LINK_UP);
        rte_mbuf* m = udp_frame(7);
        ASSERT_EQ(rte_eth_tx_burst(port_, 0, &m, 1), 1);
        EXPECT_EQ(receive(0, 1), 1u);
        TearDown();
        pool_ = nullptr;
    }
}

TEST_F(EthdevApi, TxPrepareRefusesWhatTheAdapterCannotSend)
{
    open_port("", 1, rte_eth_conf{});
    rte_mbuf* head = udp_frame(1);
    for (int i = 0; i < 16; i++) {
        rte_mbuf* seg = rte_pktmbuf_alloc(pool_);
        seg->data_len = 4;
        ASSERT_EQ(rte_pktmbuf_chain(head, seg), 0);
    }
    rte_mbuf* tso = udp_frame(2);
    tso->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
    rte_mbuf* ok = udp_frame(3);
    ok->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
    rte_mbuf* pkts[] = {ok, head, tso};
    EXPECT_EQ(rte_eth_tx_prepare(port_, 0, pkts, 3), 1);
    EXPECT_EQ(rte_errno, ENOTSUP) << "17 segments";
    EXPECT_EQ(rte_eth_tx_prepare(port_, 0, &pkts[2], 1), 0);
    EXPECT_EQ(rte_errno, EINVAL) << "TSO without segment size or header lengths";
    for (rte_mbuf* m : pkts)
        rte_pktmbuf_free(m);
}

TEST_F(EthdevApi, FirmwareVersion)
{
    open_port("", 1, rte_eth_conf{});
    char version[64];
    ASSERT_EQ(rte_eth_dev_fw_version_get(port_, version, sizeof(version)), 0);
    EXPECT_TRUE(std::regex_match(version, std::regex(R"(fw \d+\.\d+\.\d+\.\d+ mfw \d+\.\d+\.\d+\.\d+)"))) << version;
    char tiny[4];
    EXPECT_EQ(rte_eth_dev_fw_version_get(port_, tiny, sizeof(tiny)), static_cast<int>(std::strlen(version) + 1));
}

} // namespace
