/* SPDX-License-Identifier: BSD-3-Clause
 * L2 end to end: Tx -> wire -> Rx on loopback and cable, classification,
 * MTU, RSS, scatter, VLAN strip, counters.
 */
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "base/bytes.h"
#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

std::unique_ptr<Adapter> make(Wire wire = Wire::loopback, uint32_t ports = 1)
{
    AdapterConfig config;
    config.name = "l2";
    config.ports = ports;
    config.wire = wire;
    config.link_up_delay_ms = 0;
    return Adapter::create(config, nullptr);
}

const uint8_t OWN_MAC[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00};

TEST(L2, LoopbackDeliversWhatWasSent)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv);
    ASSERT_TRUE(wait_link(drv));
    std::vector<std::vector<uint8_t>> sent;
    for (int i = 0; i < 20; i++) {
        sent.push_back(udp4_frame(OWN_MAC, PEER_MAC, 0x0a000001, 0x0a000002, 1000 + i, 2000, 50 + i * 10));
        drv.send(0, sent.back());
    }
    ASSERT_TRUE(drv.wait_tx_done(0));
    auto frames = drv.rx_wait(0, sent.size());
    ASSERT_EQ(frames.size(), sent.size());
    for (size_t i = 0; i < sent.size(); i++) {
        EXPECT_EQ(frames[i].data, sent[i]);
        EXPECT_EQ(frames[i].cqe.type, static_cast<uint8_t>(CqeType::regular));
        EXPECT_EQ(frames[i].cqe.pkt_len, sent[i].size());
        uint16_t flags = frames[i].cqe.pars_flags;
        EXPECT_EQ(flags & pars::L3_MASK, pars::L3_IPV4);
        EXPECT_EQ(flags & pars::L4_MASK, pars::L4_UDP);
        EXPECT_TRUE(flags & pars::IP_CSUM_CHECKED);
        EXPECT_TRUE(flags & pars::L4_CSUM_CHECKED);
        EXPECT_FALSE(flags & (pars::IP_CSUM_BAD | pars::L4_CSUM_BAD));
    }
    VportStats s = drv.vport_stats(0);
    EXPECT_EQ(s.tx_ucast_pkts, sent.size());
    EXPECT_EQ(s.rx_ucast_pkts, sent.size());
    uint64_t bytes = 0;
    for (auto& f : sent)
        bytes += f.size();
    EXPECT_EQ(s.rx_ucast_bytes, bytes);
    EXPECT_EQ(s.tx_ucast_bytes, bytes);
    EXPECT_EQ(drv.rx_queue_stats(0).pkts, sent.size());
    PortCounters pc = adapter->control().port_counters(0);
    EXPECT_EQ(pc.wire_tx_frames, sent.size());
    EXPECT_EQ(pc.wire_rx_frames, sent.size());
    EXPECT_EQ(pc.wire_rx_bytes, bytes);
}

TEST(L2, BadChecksumsAreReportedNotDropped)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv);
    ASSERT_TRUE(wait_link(drv));
    auto f = tcp4_frame(OWN_MAC, PEER_MAC, 1, 2, 3, 4, 40);
    f[60] ^= 0xff; /* payload: TCP checksum now wrong */
    drv.send(0, f);
    auto g = udp4_frame(OWN_MAC, PEER_MAC, 1, 2, 3, 4, 40);
    g[24] ^= 0x01; /* IP header checksum */
    drv.send(0, g);
    auto frames = drv.rx_wait(0, 2);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(frames[0].cqe.pars_flags & pars::L4_CSUM_BAD);
    EXPECT_FALSE(frames[0].cqe.pars_flags & pars::IP_CSUM_BAD);
    EXPECT_EQ(frames[0].cqe.pars_flags & pars::L4_MASK, pars::L4_TCP);
    EXPECT_TRUE(frames[1].cqe.pars_flags & pars::IP_CSUM_BAD);
}

TEST(L2, ChecksumsAreValidatedOnlyForAVportThatAsks)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    L2Setup setup;
    setup.rx_csum = false;
    ASSERT_EQ(bring_up_l2(drv, setup), "");
    ASSERT_TRUE(wait_link(drv));
    auto bad_ip = udp4_frame(OWN_MAC, PEER_MAC, 1, 2, 3, 4, 40);
    bad_ip[24] ^= 0x01;
    auto bad_tcp = tcp4_frame(OWN_MAC, PEER_MAC, 1, 2, 3, 4, 40);
    bad_tcp[60] ^= 0xff;
    drv.send(0, bad_ip);
    drv.send(0, bad_tcp);
    auto frames = drv.rx_wait(0, 2);
    ASSERT_EQ(frames.size(), 2u);
    /* The protocols are still parsed; no checksum is claimed either way. */
    EXPECT_EQ(frames[0].cqe.pars_flags, pars::L3_IPV4 | pars::L4_UDP);
    EXPECT_EQ(frames[1].cqe.pars_flags, pars::L3_IPV4 | pars::L4_TCP);
    EXPECT_EQ(frames[0].data, bad_ip) << "validation off changes nothing in the frame";
}

TEST(L2, CableCarriesFramesBetweenPorts)
{
    auto adapter = make(Wire::cable, 2);
    FakeDriver a(*adapter, 0), b(*adapter, 1);
    bring_up_l2(a);
    bring_up_l2(b);
    ASSERT_TRUE(wait_link(a));
    ASSERT_TRUE(wait_link(b));
    auto f = udp4_frame(BCAST, PEER_MAC, 1, 2, 3, 4, 200);
    a.send(0, f);
    auto at_b = b.rx_wait(0, 1);
    ASSERT_EQ(at_b.size(), 1u);
    EXPECT_EQ(at_b[0].data, f);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(a.rx_poll(0).empty()) << "a cable does not loop back";
    EXPECT_EQ(b.vport_stats(0).rx_bcast_pkts, 1u);
    EXPECT_EQ(a.vport_stats(0).tx_bcast_pkts, 1u);

    /* Pull the cable: frames no longer flow. */
    adapter->control().set_carrier(1, false);
    ASSERT_TRUE(wait_until([&] { return !(a.rd(mfw::port_addr(0)) & mfw::LINK_STATUS_LINK_UP); }));
    a.send(0, f);
    ASSERT_TRUE(a.wait_tx_done(0));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(b.rx_poll(0).empty());
    EXPECT_EQ(adapter->control().port_counters(1).wire_rx_frames, 1u);
}

TEST(L2, NigDisabledPortPassesNothing)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv);
    ASSERT_TRUE(wait_link(drv));
    drv.wr(reg::NIG_PORT_RX_ENABLE, 0);
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 60));
    ASSERT_TRUE(drv.wait_tx_done(0));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(drv.rx_poll(0).empty());
    drv.wr(reg::NIG_PORT_RX_ENABLE, 1);
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 60));
    EXPECT_EQ(drv.rx_wait(0, 1).size(), 1u);
}

TEST(L2, ClassificationFollowsAcceptModeAndFilters)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv, 1, accept::UCAST_MATCHED | accept::MCAST_MATCHED);
    ASSERT_TRUE(wait_link(drv));
    const uint8_t other[6] = {0x02, 0x99, 0x99, 0x99, 0x99, 0x99};
    const uint8_t mcast[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    drv.send(0, eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 60)); /* no filter yet */
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 60));   /* BCAST not accepted */
    drv.send(0, eth_frame(mcast, PEER_MAC, 0x88b5, 60));   /* no mcast filter */
    ASSERT_TRUE(drv.wait_tx_done(0));
    ASSERT_TRUE(wait_until([&] { return drv.vport_stats(0).rx_filtered_pkts == 3; }));

    ASSERT_EQ(drv.filter(FilterOpcode::add, FilterType::mac, 0, OWN_MAC), FwReturn::ok);
    ASSERT_EQ(drv.filter(FilterOpcode::add, FilterType::mac, 0, mcast), FwReturn::ok);
    drv.send(0, eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 60));
    drv.send(0, eth_frame(other, PEER_MAC, 0x88b5, 60));
    drv.send(0, eth_frame(mcast, PEER_MAC, 0x88b5, 60));
    auto frames = drv.rx_wait(0, 2);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(std::memcmp(frames[0].data.data(), OWN_MAC, 6), 0);
    EXPECT_EQ(std::memcmp(frames[1].data.data(), mcast, 6), 0);
    VportStats s = drv.vport_stats(0);
    EXPECT_EQ(s.rx_filtered_pkts, 4u);
    EXPECT_EQ(s.rx_ucast_pkts, 1u);
    EXPECT_EQ(s.rx_mcast_pkts, 1u);

    /* VLAN filters: tagged frames must match one, untagged pass. */
    ASSERT_EQ(drv.filter(FilterOpcode::add, FilterType::vlan, 0, nullptr, 100), FwReturn::ok);
    drv.send(0, with_vlan(eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 60), 100));
    drv.send(0, with_vlan(eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 60), 200));
    drv.send(0, eth_frame(OWN_MAC, PEER_MAC, 0x88b5, 60));
    frames = drv.rx_wait(0, 2);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_TRUE(frames[0].cqe.pars_flags & pars::VLAN_PRESENT);
    EXPECT_FALSE(frames[1].cqe.pars_flags & pars::VLAN_PRESENT);
    EXPECT_TRUE(wait_until([&] { return drv.vport_stats(0).rx_filtered_pkts == 5; }));
}

TEST(L2, OversizeFramesAreDropped)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv); /* vport 0: MTU 1500, Rx queue 0, Tx queue 0 */
    ASSERT_TRUE(wait_link(drv));
    /* vport 1 receives the same frames with an MTU of 1000. */
    ASSERT_EQ(drv.vport_start(1, 1000), FwReturn::ok);
    ASSERT_EQ(drv.rx_queue_start(1, 1, 2), FwReturn::ok);
    drv.rx_post(1, 63);
    ASSERT_EQ(drv.vport_activate(1, accept::BCAST), FwReturn::ok);
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 1000));                /* 1014: fits */
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 1001));                /* 1015: too long */
    drv.send(0, with_vlan(eth_frame(BCAST, PEER_MAC, 0x88b5, 1000), 5)); /* tag allowance */
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 1600));                /* beyond the Tx MTU */
    auto frames = drv.rx_wait(1, 2);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].data.size(), 1014u);
    EXPECT_EQ(frames[1].data.size(), 1018u);
    EXPECT_EQ(drv.rx_wait(0, 3).size(), 3u) << "vport 0 takes all three";
    EXPECT_EQ(drv.vport_stats(1).rx_oversize_pkts, 1u);
    EXPECT_EQ(drv.vport_stats(0).rx_oversize_pkts, 0u);
    EXPECT_EQ(drv.vport_stats(0).tx_oversize_pkts, 1u);
}

TEST(L2, ScatterAcrossBuffersAndNoBufferDrops)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv, 1, 0, 9000, 8, false, 1024);
    ASSERT_TRUE(wait_link(drv));
    auto big = eth_frame(BCAST, PEER_MAC, 0x88b5, 5000);
    drv.send(0, big, FakeDriver::TxOptions{0, 0, 0, 3, 0});
    auto frames = drv.rx_wait(0, 1);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].cqe.bd_num, 5u);
    EXPECT_EQ(frames[0].cqe.len_on_first_bd, 1024u);
    EXPECT_EQ(frames[0].data, big);

    /* More than max_bds_per_packet buffers would be needed. */
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 8500));
    ASSERT_TRUE(wait_until([&] { return drv.vport_stats(0).rx_no_buffer_pkts == 1; }));
}

TEST(L2, RunsOutOfPostedBuffers)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    ASSERT_NE(drv.load(), 0u);
    ASSERT_EQ(drv.start_pf(), FwReturn::ok);
    mfw::DrvPhyCfg cfg{};
    drv.write_union(&cfg, sizeof(cfg));
    ASSERT_EQ(drv.mcp_cmd(mfw::DRV_MSG_CODE_INIT_PHY), mfw::FW_MSG_CODE_LINK_DONE);
    ASSERT_EQ(drv.vport_start(0), FwReturn::ok);
    ASSERT_EQ(drv.rx_queue_start(0, 0, 0), FwReturn::ok);
    drv.rx_post(0, 3);
    ASSERT_EQ(drv.tx_queue_start(0, 0, 1), FwReturn::ok);
    ASSERT_EQ(drv.vport_activate(0, accept::BCAST), FwReturn::ok);
    ASSERT_TRUE(wait_link(drv));
    for (int i = 0; i < 5; i++)
        drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 60));
    ASSERT_TRUE(drv.wait_tx_done(0));
    ASSERT_TRUE(wait_until([&] { return drv.vport_stats(0).rx_no_buffer_pkts == 2; }));
    EXPECT_EQ(drv.vport_stats(0).rx_bcast_pkts, 3u);
    EXPECT_EQ(drv.rx_queue_stats(0).drops, 2u);
}

TEST(L2, VlanStripMovesTheTagIntoTheCqe)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv, 1, 0, 1500, 1, true);
    ASSERT_TRUE(wait_link(drv));
    auto plain = udp4_frame(BCAST, PEER_MAC, 1, 2, 3, 4, 64);
    drv.send(0, with_vlan(plain, 0x2064));
    auto frames = drv.rx_wait(0, 1);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].data, plain);
    EXPECT_EQ(frames[0].cqe.vlan_tag, 0x2064u);
    EXPECT_TRUE(frames[0].cqe.pars_flags & pars::VLAN_STRIPPED);
    EXPECT_EQ(frames[0].cqe.pars_flags & pars::L3_MASK, pars::L3_IPV4);
    /* The checksums were validated where the headers are in the received
     * frame, before the tag went. */
    EXPECT_EQ(frames[0].cqe.pars_flags & (pars::IP_CSUM_CHECKED | pars::IP_CSUM_BAD | pars::L4_CSUM_CHECKED |
                                          pars::L4_CSUM_BAD),
              pars::IP_CSUM_CHECKED | pars::L4_CSUM_CHECKED);
}

/* Reference Toeplitz, bit by bit. */
uint32_t toeplitz(const uint8_t* key, const uint8_t* input, size_t len)
{
    uint32_t result = 0;
    uint64_t window = 0;
    for (int i = 0; i < 8; i++)
        window = window << 8 | key[i];
    for (size_t byte = 0; byte < len; byte++) {
        for (int bit = 7; bit >= 0; bit--) {
            if (input[byte] & (1u << bit))
                result ^= static_cast<uint32_t>(window >> 32);
            window <<= 1;
        }
        window |= byte + 8 < 40 ? key[byte + 8] : 0;
    }
    return result;
}

/* RSS over RSS_QUEUES queues for IPv4 and TCP/UDP over it, entry i of the
 * indirection table naming queue i % RSS_QUEUES; the key's byte i is
 * first + i * step, written to key. */
constexpr uint32_t RSS_QUEUES = 4;
void enable_rss(FakeDriver& drv, uint8_t (&key)[40], uint8_t first, uint8_t step)
{
    VportUpdateRamrodData up{};
    up.update_flags = vport_update::UPDATE_RSS;
    up.rss_enable = 1;
    up.rss_hash_types = rss::IPV4 | rss::TCP_IPV4 | rss::UDP_IPV4;
    for (int i = 0; i < 40; i++)
        key[i] = static_cast<uint8_t>(first + i * step);
    std::memcpy(up.rss_key, key, sizeof(key));
    for (uint32_t i = 0; i < rss::RETA_SIZE; i++)
        up.rss_reta[i] = static_cast<uint16_t>(i % RSS_QUEUES);
    ASSERT_EQ(drv.eth(EthCmd::vport_update, &up, sizeof(up)), FwReturn::ok);
}

/* The hash and type RSS gives an IPv4 frame as received, the reference
 * way: the addresses, then the ports after the IP header (none for a
 * fragment). */
struct ReferenceRss {
    uint32_t hash;
    RssHashType type;
};
ReferenceRss reference_rss(const uint8_t (&key)[40], const std::vector<uint8_t>& f)
{
    const uint32_t ihl = (f[14] & 0x0f) * 4u;
    const bool fragmented = (load_be16(&f[20]) & 0x3fff) != 0;
    uint8_t input[12];
    std::memcpy(input, &f[26], 8);
    std::memcpy(input + 8, &f[14 + ihl], 4);
    const RssHashType type = fragmented ? RssHashType::ipv4 : f[23] == 6 ? RssHashType::tcp_ipv4 : RssHashType::udp_ipv4;
    return {toeplitz(key, input, type == RssHashType::ipv4 ? 8 : 12), type};
}

/* PF 0 with RSS_QUEUES Rx queues, its link up; each test enables RSS
 * with a key of its own. */
class L2Rss : public ::testing::Test {
protected:
    void SetUp() override
    {
        adapter = make();
        drv = std::make_unique<FakeDriver>(*adapter, 0);
        bring_up_l2(*drv, RSS_QUEUES);
        ASSERT_TRUE(wait_link(*drv));
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
    uint8_t key[40];
};

TEST_F(L2Rss, SpreadsFlowsByTheIndirectionTable)
{
    FakeDriver& drv = *this->drv;
    ASSERT_NO_FATAL_FAILURE(enable_rss(drv, key, 0x6d, 13));

    std::array<int, 4> expected{};
    for (int flow = 0; flow < 32; flow++) {
        uint32_t sip = 0x0a000001 + flow, dip = 0x0a0000fe;
        uint16_t sport = static_cast<uint16_t>(40000 + flow * 7), dport = 80;
        auto f = tcp4_frame(OWN_MAC, PEER_MAC, sip, dip, sport, dport, 32);
        /* the indirection table enable_rss() wrote */
        expected[reference_rss(key, f).hash % rss::RETA_SIZE % RSS_QUEUES]++;
        drv.send(0, f);
    }
    ASSERT_TRUE(drv.wait_tx_done(0));
    std::array<int, 4> got{};
    ASSERT_TRUE(wait_until([&] {
        for (uint16_t q = 0; q < 4; q++)
            for (auto& frame : drv.rx_poll(q)) {
                got[q]++;
                EXPECT_TRUE(frame.cqe.pars_flags & pars::RSS_HASH_VALID);
                EXPECT_EQ(frame.cqe.rss_hash_type, static_cast<uint8_t>(RssHashType::tcp_ipv4));
                EXPECT_EQ(frame.cqe.rss_hash, reference_rss(key, frame.data).hash);
                EXPECT_EQ(frame.cqe.rss_hash % 4, q);
            }
        return got[0] + got[1] + got[2] + got[3] == 32;
    }));
    EXPECT_EQ(got, expected);
    int used = 0;
    for (int n : got)
        used += n > 0;
    EXPECT_GE(used, 3) << "32 flows spread over the queues";
}

/* One burst of flows back to back, repeated and interleaved, TCP and UDP
 * with the same addresses and ports, and frames the RSS of a burst does
 * not remember (an IPv4 header with options, a fragment): every CQE has
 * its own frame's hash and type. */
TEST_F(L2Rss, OfABurstIsEachFramesOwn)
{
    FakeDriver& drv = *this->drv;
    ASSERT_NO_FATAL_FAILURE(enable_rss(drv, key, 0x3b, 29));

    auto tcp = [&](uint32_t flow) { return tcp4_frame(OWN_MAC, PEER_MAC, 0x0a000001 + flow, 0x0a0000fe, 4000, 80, 32); };
    auto udp = [&](uint32_t flow) { return udp4_frame(OWN_MAC, PEER_MAC, 0x0a000001 + flow, 0x0a0000fe, 4000, 80, 32); };
    auto with_options = [](std::vector<uint8_t> f) {
        /* A 4-byte option (NOPs): IHL 6, the addresses no longer next to the ports. */
        f.insert(f.begin() + 34, {1, 1, 1, 1});
        f[14] = 0x46;
        store_be16(&f[16], static_cast<uint16_t>(load_be16(&f[16]) + 4));
        return f;
    };
    auto fragment = [](std::vector<uint8_t> f) {
        f[20] = 0x20; /* more fragments */
        return f;
    };
    std::vector<std::vector<uint8_t>> burst = {tcp(1), tcp(1), tcp(1), tcp(2), tcp(1), udp(1), tcp(1),
                                               with_options(tcp(3)), tcp(3), fragment(tcp(3)), tcp(3), udp(2)};
    drv.send_burst(0, burst);
    ASSERT_TRUE(drv.wait_tx_done(0));

    std::vector<FakeDriver::RxFrame> got;
    ASSERT_TRUE(wait_until([&] {
        for (uint16_t q = 0; q < 4; q++)
            for (auto& frame : drv.rx_poll(q))
                got.push_back(frame);
        return got.size() == burst.size();
    }));
    for (const FakeDriver::RxFrame& r : got) {
        const ReferenceRss want = reference_rss(key, r.data);
        EXPECT_EQ(r.cqe.rss_hash_type, static_cast<uint8_t>(want.type));
        EXPECT_EQ(r.cqe.rss_hash, want.hash);
    }
}

TEST(L2, InactiveVportNeitherSendsNorReceives)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    bring_up_l2(drv);
    ASSERT_TRUE(wait_link(drv));
    VportUpdateRamrodData up{};
    up.update_flags = vport_update::UPDATE_ACTIVE_TX;
    up.active_tx = 0;
    ASSERT_EQ(drv.eth(EthCmd::vport_update, &up, sizeof(up)), FwReturn::ok);
    drv.send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 60));
    ASSERT_TRUE(drv.wait_tx_done(0)) << "BDs are consumed";
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, 0u);
}

} // namespace
} // namespace cna::fw::test
