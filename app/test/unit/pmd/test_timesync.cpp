/* SPDX-License-Identifier: BSD-3-Clause
 * ethdev timesync on a net_cna port whose wire loops back (and a VF of
 * it): PTP messages flagged and stamped on Rx, a send's stamp on Tx,
 * ordered; the clock read, set and stepped, on a stopped port too; what a
 * VF may not do; latches that are full.
 */
#include <cstring>
#include <ctime>
#include <string>
#include <tuple>
#include <vector>

#include <rte_mbuf_dyn.h>
#include <rte_time.h>

#include "port_fixture.h"

namespace {

constexpr uint16_t ETHERTYPE_PTP = 0x88f7;

class Timesync : public PortTest {
protected:
    void SetUp() override
    {
        open_port("vfs=1", 1, rte_eth_conf{});
        ASSERT_EQ(rte_eth_promiscuous_enable(port_), 0) << "PTP's multicast, as ptpclient asks";
    }

    /* A PTP message over Ethernet from the port, to PTP's multicast. */
    rte_mbuf* ptp_frame(uint8_t msg_type, uint16_t sequence_id, bool stamp_tx)
    {
        rte_mbuf* m = rte_pktmbuf_alloc(pool_);
        auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
        eth->dst_addr = rte_ether_addr{{0x01, 0x1b, 0x19, 0x00, 0x00, 0x00}};
        rte_eth_macaddr_get(port_, &eth->src_addr);
        eth->ether_type = rte_cpu_to_be_16(ETHERTYPE_PTP);
        auto* ptp = reinterpret_cast<uint8_t*>(eth + 1);
        std::memset(ptp, 0, 44);
        ptp[0] = msg_type;
        ptp[1] = 2;
        ptp[30] = static_cast<uint8_t>(sequence_id >> 8);
        ptp[31] = static_cast<uint8_t>(sequence_id);
        m->data_len = m->pkt_len = sizeof(rte_ether_hdr) + 44;
        if (stamp_tx)
            m->ol_flags |= RTE_MBUF_F_TX_IEEE1588_TMST;
        return m;
    }

    /* Sends the message and takes it back from the wire. */
    rte_mbuf* round_trip(uint8_t msg_type, uint16_t sequence_id, bool stamp_tx)
    {
        rte_mbuf* m = ptp_frame(msg_type, sequence_id, stamp_tx);
        if (rte_eth_tx_burst(port_, 0, &m, 1) != 1) {
            rte_pktmbuf_free(m);
            return nullptr;
        }
        rte_mbuf* got = nullptr;
        return receive(0, 1, &got) == 1 ? got : nullptr;
    }

    static int64_t ns(const timespec& ts) { return static_cast<int64_t>(rte_timespec_to_ns(&ts)); }

    /* The port's clock reads `from` on, within a second. */
    static void expect_clock_from(uint16_t port, int64_t from)
    {
        timespec now{};
        ASSERT_EQ(rte_eth_timesync_read_time(port, &now), 0);
        EXPECT_GE(ns(now), from);
        EXPECT_LT(ns(now), from + 1'000'000'000);
    }

    /* As ptpclient and testpmd's ieee1588 engine read it: a few tries. */
    int read_tx(timespec* ts)
    {
        int rc = -EINVAL;
        for (int us = 0; us < 1000 && (rc = rte_eth_timesync_read_tx_timestamp(port_, ts)) == -EINVAL; us++)
            rte_delay_us(1);
        return rc;
    }
};

TEST_F(Timesync, ASyncSentForItsTimeComesBackStampedAfterIt)
{
    ASSERT_EQ(rte_eth_timesync_enable(port_), 0);
    timespec before{}, rx{}, tx{}, after{};
    ASSERT_EQ(rte_eth_timesync_read_time(port_, &before), 0);
    rte_mbuf* m = round_trip(0, 42, true);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(rte_eth_timesync_read_time(port_, &after), 0);
    EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_PTP);
    EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_TMST);
    EXPECT_EQ(m->packet_type & RTE_PTYPE_L2_MASK, RTE_PTYPE_L2_ETHER_TIMESYNC);
    ASSERT_EQ(rte_eth_timesync_read_rx_timestamp(port_, &rx, m->timesync), 0);
    ASSERT_EQ(read_tx(&tx), 0);
    EXPECT_LE(ns(before), ns(tx));
    EXPECT_LE(ns(tx), ns(rx)) << "sent before received";
    EXPECT_LE(ns(rx), ns(after));
    EXPECT_EQ(rte_eth_timesync_read_rx_timestamp(port_, &rx, m->timesync), -EINVAL) << "taken: the latch is free";
    EXPECT_EQ(rte_eth_timesync_read_tx_timestamp(port_, &tx), -EINVAL);
    rte_pktmbuf_free(m);

    /* A general message: PTP, not stamped; a send not asking: no Tx stamp. */
    m = round_trip(8, 43, false);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_PTP);
    EXPECT_FALSE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_TMST);
    rte_pktmbuf_free(m);
    EXPECT_EQ(read_tx(&tx), -EINVAL);

    ASSERT_EQ(rte_eth_timesync_disable(port_), 0);
    m = round_trip(0, 44, true);
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->ol_flags & (RTE_MBUF_F_RX_IEEE1588_PTP | RTE_MBUF_F_RX_IEEE1588_TMST)) << "disabled";
    rte_pktmbuf_free(m);
}

TEST_F(Timesync, LatchesTheApplicationDoesNotReadFillAndTheRestIsCounted)
{
    ASSERT_EQ(rte_eth_timesync_enable(port_), 0);
    unsigned stamped = 0;
    for (uint16_t seq = 0; seq < 5; seq++) {
        rte_mbuf* m = round_trip(0, seq, false);
        ASSERT_NE(m, nullptr);
        EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_PTP);
        stamped += (m->ol_flags & RTE_MBUF_F_RX_IEEE1588_TMST) != 0;
        rte_pktmbuf_free(m);
    }
    EXPECT_EQ(stamped, 3u) << "three Rx latches";
    int n = rte_eth_xstats_get_names(port_, nullptr, 0);
    ASSERT_GT(n, 0);
    std::vector<rte_eth_xstat_name> names(n);
    std::vector<rte_eth_xstat> values(n);
    ASSERT_EQ(rte_eth_xstats_get_names(port_, names.data(), n), n);
    ASSERT_EQ(rte_eth_xstats_get(port_, values.data(), n), n);
    uint64_t missed = UINT64_MAX;
    for (int i = 0; i < n; i++)
        if (std::string(names[i].name) == "rx_ptp_unstamped_packets")
            missed = values[i].value;
    EXPECT_EQ(missed, 2u);

    /* Enabling again frees them. */
    ASSERT_EQ(rte_eth_timesync_enable(port_), 0);
    rte_mbuf* m = round_trip(0, 9, false);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_TMST);
    rte_pktmbuf_free(m);
}

TEST_F(Timesync, TheClockIsReadSetAndSteppedOnAStoppedPortToo)
{
    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    EXPECT_EQ(rte_eth_timesync_enable(port_), 0);
    const timespec t1000{1000, 500};
    ASSERT_EQ(rte_eth_timesync_write_time(port_, &t1000), 0);
    expect_clock_from(port_, 1'000'000'000'500);
    ASSERT_EQ(rte_eth_timesync_adjust_time(port_, -400'000'000'000), 0) << "a step backwards";
    expect_clock_from(port_, 600'000'000'500);
    uint64_t clock = 0;
    ASSERT_EQ(rte_eth_read_clock(port_, &clock), 0);
    EXPECT_GE(clock, 600'000'000'500u) << "read_clock is the same clock, in ns";
    EXPECT_LT(clock, 601'000'000'500u);

    EXPECT_EQ(rte_eth_timesync_adjust_time(port_, -700'000'000'000), -EINVAL) << "before the clock's epoch";
    const timespec negative{-1, 0}, bad_ns{5, 1'000'000'000};
    EXPECT_EQ(rte_eth_timesync_write_time(port_, &negative), -EINVAL);
    EXPECT_EQ(rte_eth_timesync_write_time(port_, &bad_ns), -EINVAL);
    timespec ts{};
    EXPECT_EQ(rte_eth_timesync_read_rx_timestamp(port_, &ts, 0), -EINVAL) << "nothing received";
    EXPECT_EQ(rte_eth_timesync_read_rx_timestamp(port_, &ts, 7), -EINVAL) << "no such latch";
    EXPECT_EQ(rte_eth_timesync_read_tx_timestamp(port_, &ts), -EINVAL);
    EXPECT_EQ(rte_eth_timesync_disable(port_), 0);
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
}

TEST_F(Timesync, AVfReadsItsPortsClockButMayNotSteerIt)
{
    const std::string vf_name = "net_cna_vf_ts" + std::to_string(serial_++);
    ASSERT_EQ(rte_vdev_init(vf_name.c_str(), ("adapter=" + name_ + ",port=0,vf=0").c_str()), 0);
    uint16_t vf = 0;
    ASSERT_EQ(rte_eth_dev_get_port_by_name(vf_name.c_str(), &vf), 0);
    const timespec t{2000, 0};
    ASSERT_EQ(rte_eth_timesync_write_time(port_, &t), 0);
    expect_clock_from(vf, 2'000'000'000'000);
    EXPECT_EQ(rte_eth_timesync_enable(vf), 0);
    EXPECT_EQ(rte_eth_timesync_adjust_time(vf, 1000), -ENOTSUP);
    EXPECT_EQ(rte_eth_timesync_write_time(vf, &t), -ENOTSUP);
    timespec ts{};
    EXPECT_EQ(rte_eth_timesync_read_rx_timestamp(vf, &ts, 0), -EINVAL);
    EXPECT_EQ(rte_eth_timesync_disable(vf), 0);
    EXPECT_EQ(rte_eth_dev_close(vf), 0);
    EXPECT_EQ(rte_vdev_uninit(vf_name.c_str()), 0);
}

/* RTE_ETH_RX_OFFLOAD_TIMESTAMP: every frame's mbuf carries the port's time
 * when it came off the wire in the dynamic field registered the DPDK way,
 * in read_clock's units, on the vector and the scalar path alike (the
 * suite runs again with EAL held to scalar), with or without the other
 * offloads' results, on a PF's port and a VF's (whose PF passes the
 * queue's flag on). */
class RxTimestamp : public PortTest, public ::testing::WithParamInterface<std::tuple<bool, uint64_t>> {
protected:
    void SetUp() override
    {
        const auto [vf, results] = GetParam();
        rte_eth_conf conf{};
        conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_TIMESTAMP | results;
        if (vf)
            open_vf_port(conf);
        else
            open_port("", 1, conf);
    }
};

TEST_P(RxTimestamp, EveryFrameCarriesItsTimeInTheMbufsField)
{
    rte_eth_dev_info info{};
    ASSERT_EQ(rte_eth_dev_info_get(port_, &info), 0);
    EXPECT_TRUE(info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP);
    const int offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, nullptr);
    const int flag_bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, nullptr);
    ASSERT_GE(offset, 0) << "registered at queue set-up";
    ASSERT_GE(flag_bit, 0);
    constexpr unsigned N = 67; /* groups of four and the odd ones */
    uint64_t before = 0, after = 0;
    ASSERT_EQ(rte_eth_read_clock(port_, &before), 0);
    ASSERT_TRUE(send_udp(0, N, 1234));
    rte_mbuf* got[N];
    ASSERT_EQ(receive(0, N, got), N);
    ASSERT_EQ(rte_eth_read_clock(port_, &after), 0);
    rte_ether_addr mac{};
    ASSERT_EQ(rte_eth_macaddr_get(port_, &mac), 0);
    uint64_t last = before;
    for (unsigned i = 0; i < N; i++) {
        rte_mbuf* m = got[i];
        EXPECT_TRUE(m->ol_flags & (uint64_t{1} << flag_bit)) << "frame " << i;
        const uint64_t stamp = *RTE_MBUF_DYNFIELD(m, offset, const rte_mbuf_timestamp_t*);
        EXPECT_GE(stamp, last) << "frame " << i << ": stamps never go back";
        EXPECT_LE(stamp, after) << "frame " << i;
        last = stamp;
        EXPECT_EQ(m->pkt_len, UDP_FRAME_LEN) << "frame " << i;
        EXPECT_TRUE(rte_is_same_ether_addr(&rte_pktmbuf_mtod(m, rte_ether_hdr*)->dst_addr, &mac))
            << "frame " << i << " starts behind the stamp";
        rte_pktmbuf_free(m);
    }
}

TEST_P(RxTimestamp, TheStampTakesNoRoomFromTheFrame)
{
    const uint16_t buf_size = RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM;
    const uint16_t fits = static_cast<uint16_t>(buf_size - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN - 4);
    ASSERT_EQ(rte_eth_dev_stop(port_), 0);
    EXPECT_EQ(rte_eth_dev_set_mtu(port_, fits), 0) << "the stamp is beside the CQE, not in the buffer";
    EXPECT_EQ(rte_eth_dev_set_mtu(port_, fits + 1), -EINVAL) << "one byte more needs scattered Rx";
    EXPECT_EQ(rte_eth_dev_set_mtu(port_, RTE_ETHER_MTU), 0);
    ASSERT_EQ(rte_eth_dev_start(port_), 0);
}

INSTANTIATE_TEST_SUITE_P(PfAndVf, RxTimestamp,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Values(uint64_t{0}, uint64_t{RTE_ETH_RX_OFFLOAD_CHECKSUM})),
                         [](const ::testing::TestParamInfo<std::tuple<bool, uint64_t>>& info) {
                             return std::string(std::get<0>(info.param) ? "Vf" : "Pf") +
                                    (std::get<1>(info.param) != 0 ? "Checksums" : "Plain");
                         });

} // namespace
