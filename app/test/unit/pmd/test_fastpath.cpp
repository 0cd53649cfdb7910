/* SPDX-License-Identifier: BSD-3-Clause
 * The burst functions: which one a port uses, and that what comes back on a
 * loopback wire is what was sent, with the packet type, checksum flags, RSS
 * hash and stripped tag the frames call for. meson runs this suite twice,
 * on the vector path (where the CPU has AVX2) and with EAL limited to 64-bit
 * vectors (the scalar path), so both are held to the same expectations.
 */
/* DPDK 22.11's rte_vect.h declares its functions without C linkage, and
 * rte_mbuf.h includes it: it comes first, wrapped. */
extern "C" {
#include <rte_vect.h>
}

#include <cstring>
#include <vector>

#include <rte_cpuflags.h>
#include <rte_ip.h>
#include <rte_tcp.h>
#include <rte_thash.h>
#include <rte_udp.h>

#include "port_fixture.h"

namespace {

constexpr uint8_t DEFAULT_KEY[40] = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
                                     0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
                                     0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

bool vector_expected()
{
    return rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0 && rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_256;
}

enum class Kind { udp4, tcp4, udp4_bad_ip, udp4_bad_l4, udp6, arp };

struct Expected {
    std::vector<uint8_t> bytes; /* as received: without the tag a strip removes */
    uint32_t packet_type;
    uint64_t csum_flags;
    bool hash;
    uint32_t rss;
    uint16_t vlan; /* 0: untagged */
};

class Fastpath : public PortTest {
protected:
    /* Builds frame number i of the given kind (payload length varies with
     * i), optionally tagged, and what the receiver must see. */
    rte_mbuf* frame(Kind kind, unsigned i, uint16_t vlan, Expected* want)
    {
        rte_mbuf* m = rte_pktmbuf_alloc(pool_);
        const uint16_t payload = static_cast<uint16_t>(18 + (i * 37) % 1400);
        uint8_t* p = rte_pktmbuf_mtod(m, uint8_t*);
        auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
        rte_eth_macaddr_get(port_, &eth->dst_addr);
        eth->src_addr = eth->dst_addr;
        eth->src_addr.addr_bytes[5] ^= static_cast<uint8_t>(i);
        uint8_t* l3 = p + sizeof(*eth);
        uint16_t ethertype = kind == Kind::udp6 ? RTE_ETHER_TYPE_IPV6
                             : kind == Kind::arp ? RTE_ETHER_TYPE_ARP
                                                 : RTE_ETHER_TYPE_IPV4;
        if (vlan != 0) {
            eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
            auto* tag = reinterpret_cast<rte_vlan_hdr*>(l3);
            tag->vlan_tci = rte_cpu_to_be_16(vlan);
            tag->eth_proto = rte_cpu_to_be_16(ethertype);
            l3 += sizeof(*tag);
        } else {
            eth->ether_type = rte_cpu_to_be_16(ethertype);
        }
        want->packet_type = RTE_PTYPE_L2_ETHER;
        want->csum_flags = 0;
        want->hash = false;
        want->vlan = vlan;
        uint16_t len = 0;
        const uint16_t sport = static_cast<uint16_t>(1000 + i);
        if (kind == Kind::arp) {
            std::memset(l3, 0xa5, payload);
            len = payload;
        } else if (kind == Kind::udp6) {
            auto* ip = reinterpret_cast<rte_ipv6_hdr*>(l3);
            *ip = rte_ipv6_hdr{};
            ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
            ip->payload_len = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_udp_hdr) + payload));
            ip->proto = IPPROTO_UDP;
            ip->hop_limits = 64;
            ip->src_addr[15] = 1;
            ip->dst_addr[15] = 2;
            auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
            udp->src_port = rte_cpu_to_be_16(sport);
            udp->dst_port = rte_cpu_to_be_16(4789);
            udp->dgram_len = ip->payload_len;
            udp->dgram_cksum = 0;
            std::memset(udp + 1, static_cast<int>(i), payload);
            udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
            len = static_cast<uint16_t>(sizeof(*ip) + sizeof(*udp) + payload);
            want->packet_type |= RTE_PTYPE_L3_IPV6_EXT_UNKNOWN | RTE_PTYPE_L4_UDP;
            want->csum_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
        } else {
            const bool tcp = kind == Kind::tcp4;
            const uint16_t l4_len = tcp ? sizeof(rte_tcp_hdr) : sizeof(rte_udp_hdr);
            auto* ip = reinterpret_cast<rte_ipv4_hdr*>(l3);
            *ip = rte_ipv4_hdr{};
            ip->version_ihl = RTE_IPV4_VHL_DEF;
            ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(*ip) + l4_len + payload));
            ip->time_to_live = 64;
            ip->next_proto_id = tcp ? IPPROTO_TCP : IPPROTO_UDP;
            ip->src_addr = rte_cpu_to_be_32(0x0a000001);
            ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
            ip->hdr_checksum = rte_ipv4_cksum(ip);
            uint8_t* l4 = l3 + sizeof(*ip);
            std::memset(l4 + l4_len, static_cast<int>(i), payload);
            if (tcp) {
                auto* th = reinterpret_cast<rte_tcp_hdr*>(l4);
                *th = rte_tcp_hdr{};
                th->src_port = rte_cpu_to_be_16(sport);
                th->dst_port = rte_cpu_to_be_16(80);
                th->data_off = 5 << 4;
                th->tcp_flags = RTE_TCP_ACK_FLAG;
                th->cksum = rte_ipv4_udptcp_cksum(ip, th);
            } else {
                auto* udp = reinterpret_cast<rte_udp_hdr*>(l4);
                udp->src_port = rte_cpu_to_be_16(sport);
                udp->dst_port = rte_cpu_to_be_16(4789);
                udp->dgram_len = rte_cpu_to_be_16(static_cast<uint16_t>(l4_len + payload));
                udp->dgram_cksum = 0;
                udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
                if (kind == Kind::udp4_bad_l4)
                    udp->dgram_cksum = static_cast<uint16_t>(udp->dgram_cksum ^ 0x1111);
            }
            if (kind == Kind::udp4_bad_ip)
                ip->hdr_checksum = static_cast<uint16_t>(ip->hdr_checksum ^ 0x0101);
            len = static_cast<uint16_t>(sizeof(*ip) + l4_len + payload);
            want->packet_type |= RTE_PTYPE_L3_IPV4_EXT_UNKNOWN | (tcp ? RTE_PTYPE_L4_TCP : RTE_PTYPE_L4_UDP);
            want->csum_flags = (kind == Kind::udp4_bad_ip ? RTE_MBUF_F_RX_IP_CKSUM_BAD : RTE_MBUF_F_RX_IP_CKSUM_GOOD) |
                               (kind == Kind::udp4_bad_l4 ? RTE_MBUF_F_RX_L4_CKSUM_BAD : RTE_MBUF_F_RX_L4_CKSUM_GOOD);
            if (kind == Kind::udp4 || kind == Kind::tcp4) {
                rte_ipv4_tuple t{};
                t.src_addr = 0x0a000001;
                t.dst_addr = 0x0a000002;
                t.sport = sport;
                t.dport = tcp ? 80 : 4789;
                want->hash = true;
                want->rss = rte_softrss(reinterpret_cast<uint32_t*>(&t), RTE_THASH_V4_L4_LEN, DEFAULT_KEY);
            }
        }
        const uint16_t total = static_cast<uint16_t>(l3 - p + len);
        m->data_len = m->pkt_len = total;
        want->bytes.assign(p, p + total);
        if (vlan != 0 && strip_) /* the receiver sees the frame without its tag */
            want->bytes.erase(want->bytes.begin() + 12, want->bytes.begin() + 16);
        return m;
    }

    /* Sends every frame in Tx bursts of uneven sizes, receives them all and
     * checks each against its expectation. */
    void round_trip(const std::vector<rte_mbuf*>& tx, const std::vector<Expected>& want)
    {
        const uint16_t sizes[] = {7, 13, 1, 32, 25, 4};
        size_t sent = 0;
        for (unsigned s = 0; sent < tx.size(); s++) {
            const uint16_t n = static_cast<uint16_t>(RTE_MIN(size_t{sizes[s % 6]}, tx.size() - sent));
            auto** burst = const_cast<rte_mbuf**>(&tx[sent]);
            for (uint16_t done = 0; done < n;)
                done = static_cast<uint16_t>(done + rte_eth_tx_burst(port_, 0, burst + done, n - done));
            sent += n;
        }
        std::vector<rte_mbuf*> rx(tx.size());
        ASSERT_EQ(receive(0, static_cast<unsigned>(tx.size()), rx.data()), tx.size());
        for (size_t i = 0; i < rx.size(); i++) {
            rte_mbuf* m = rx[i];
            const Expected& w = want[i];
            SCOPED_TRACE("frame " + std::to_string(i));
            ASSERT_EQ(m->pkt_len, w.bytes.size());
            EXPECT_EQ(m->data_len, w.bytes.size());
            EXPECT_EQ(m->nb_segs, 1);
            EXPECT_EQ(m->port, port_);
            EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(m, const uint8_t*), w.bytes.data(), w.bytes.size()), 0);
            EXPECT_EQ(m->packet_type, w.packet_type);
            EXPECT_EQ(m->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK),
                      csum_ ? w.csum_flags : 0);
            if (w.hash && rss_) {
                EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_RSS_HASH);
                EXPECT_EQ(m->hash.rss, w.rss);
            } else if (!rss_) {
                EXPECT_EQ(m->ol_flags & RTE_MBUF_F_RX_RSS_HASH, 0u);
            }
            const uint64_t vlan_flags = RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
            if (w.vlan != 0 && strip_) {
                EXPECT_EQ(m->ol_flags & vlan_flags, vlan_flags);
                EXPECT_EQ(m->vlan_tci, w.vlan);
            } else {
                EXPECT_EQ(m->ol_flags & vlan_flags, 0u);
            }
            EXPECT_EQ(m->ol_flags & RTE_MBUF_F_RX_FDIR, 0u);
            rte_pktmbuf_free(m);
        }
    }

    void mixed_traffic(unsigned count, unsigned tagged_every)
    {
        std::vector<rte_mbuf*> tx;
        std::vector<Expected> want(count);
        const Kind kinds[] = {Kind::udp4, Kind::udp4, Kind::tcp4, Kind::udp4, Kind::udp4_bad_ip,
                              Kind::udp4, Kind::udp6, Kind::udp4_bad_l4, Kind::udp4, Kind::arp};
        for (unsigned i = 0; i < count; i++) {
            const uint16_t vlan = tagged_every && i % tagged_every == 0 ? static_cast<uint16_t>(100 + i) : 0;
            tx.push_back(frame(kinds[i % 10], i, vlan, &want[i]));
        }
        round_trip(tx, want);
    }

    bool strip_ = false;
    bool csum_ = true; /* checksum flags expected (a checksum offload enabled) */
    bool rss_ = true;  /* RSS hashes expected */
};

rte_eth_conf rss_conf(uint64_t rx_offloads = 0)
{
    rte_eth_conf conf{};
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rxmode.offloads = rx_offloads;
    conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV4_TCP;
    return conf;
}

std::string burst_mode(uint16_t port, bool rx)
{
    rte_eth_burst_mode mode{};
    const int rc = rx ? rte_eth_rx_burst_mode_get(port, 0, &mode) : rte_eth_tx_burst_mode_get(port, 0, &mode);
    return rc == 0 ? mode.info : "error";
}

TEST_F(Fastpath, BurstModeIsVectorWhereTheCpuAndConfigurationAllow)
{
    open_port("", 1, rte_eth_conf{});
    const char* plain = vector_expected() ? "Vector AVX2" : "Scalar";
    EXPECT_EQ(burst_mode(port_, true), plain);
    EXPECT_EQ(burst_mode(port_, false), plain);

    /* scattered Rx and Tx offloads take the scalar functions, chosen again
     * at the next start */
    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    rte_eth_conf conf{};
    conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_SCATTER;
    conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
    ASSERT_EQ(rte_eth_dev_configure(port_, 1, 1, &conf), 0);
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
    EXPECT_EQ(burst_mode(port_, true), "Scalar");
    EXPECT_EQ(burst_mode(port_, false), "Scalar");

    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    conf = rte_eth_conf{};
    conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    ASSERT_EQ(rte_eth_dev_configure(port_, 1, 1, &conf), 0);
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
    EXPECT_EQ(burst_mode(port_, true), plain);
    EXPECT_EQ(burst_mode(port_, false), plain) << "fast free keeps the vector Tx";
}

TEST_F(Fastpath, VectorPathNeedsAvx2)
{
    if (!vector_expected())
        GTEST_SKIP() << "no AVX2, or EAL limited to narrower vectors: the scalar path is expected";
    open_port("", 1, rte_eth_conf{});
    EXPECT_EQ(burst_mode(port_, true), "Vector AVX2");
    EXPECT_EQ(burst_mode(port_, false), "Vector AVX2");
}

TEST_F(Fastpath, FramesComeBackWithTheirTypesChecksumsAndHash)
{
    open_port("", 1, rss_conf(RTE_ETH_RX_OFFLOAD_CHECKSUM));
    /* enough to wrap the 512-entry rings twice, not a multiple of 4 */
    for (int round = 0; round < 3; round++)
        mixed_traffic(437, 0);
}

TEST_F(Fastpath, WithoutRxOffloadsPacketTypesOnly)
{
    /* no checksum flags, no hash; a pool with an lcore cache, which Rx
     * refill and fast-free Tx completion then use directly */
    csum_ = rss_ = false;
    pool_cache_ = 256;
    rte_eth_conf conf{};
    conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    open_port("", 1, conf);
    for (int round = 0; round < 3; round++)
        mixed_traffic(437, 0);
}

TEST_F(Fastpath, TheChecksumOffloadAloneBringsTheFlags)
{
    rss_ = false;
    rte_eth_conf conf{};
    conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM;
    open_port("", 1, conf);
    mixed_traffic(437, 0);
}

TEST_F(Fastpath, TheRssHashAloneBringsNoChecksumFlags)
{
    /* the adapter validates no checksum for a port that did not ask */
    csum_ = false;
    open_port("", 1, rss_conf());
    mixed_traffic(437, 0);
}

TEST_F(Fastpath, StrippedTagsGoThroughTheScalarHandling)
{
    strip_ = true;
    open_port("", 1, rss_conf(RTE_ETH_RX_OFFLOAD_VLAN_STRIP | RTE_ETH_RX_OFFLOAD_CHECKSUM));
    mixed_traffic(203, 5);
}

TEST_F(Fastpath, FastFreeWithAChainedPacketLosesNoMbuf)
{
    rte_eth_conf conf = rss_conf(RTE_ETH_RX_OFFLOAD_CHECKSUM);
    conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    open_port("", 1, conf);
    mixed_traffic(64, 0);

    /* a two-segment packet among single ones: sent whole, and every mbuf
     * goes back to the pool (TearDown counts them) */
    std::vector<rte_mbuf*> tx;
    for (uint16_t i = 0; i < 8; i++)
        tx.push_back(udp_frame(static_cast<uint16_t>(3000 + i)));
    rte_mbuf* tail = rte_pktmbuf_alloc(pool_);
    rte_mbuf* head = tx[5];
    const uint16_t split = 30;
    std::memcpy(rte_pktmbuf_mtod(tail, uint8_t*), rte_pktmbuf_mtod_offset(head, uint8_t*, split),
                head->data_len - split);
    tail->data_len = static_cast<uint16_t>(head->data_len - split);
    head->data_len = split;
    head->next = tail;
    head->nb_segs = 2;
    ASSERT_EQ(rte_eth_tx_burst(port_, 0, tx.data(), 8), 8);
    rte_mbuf* rx[8];
    ASSERT_EQ(receive(0, 8, rx), 8u);
    for (rte_mbuf* m : rx) {
        EXPECT_EQ(m->pkt_len, UDP_FRAME_LEN);
        rte_pktmbuf_free(m);
    }
    mixed_traffic(64, 0); /* completes the sends above */
}

} // namespace
