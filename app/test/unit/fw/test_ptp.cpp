/* SPDX-License-Identifier: BSD-3-Clause
 * Precise time in the adapter (hsi_ptp.h): each port's clock as a PF
 * reads, sets, steps and steers it and a VF reads it; event messages
 * latched on Rx and Tx, as the latch model says, across a cable.
 */
#include <gtest/gtest.h>

#include <ctime>
#include <thread>

#include "fake_driver.h"
#include "hsi_ptp.h"
#include "iov_fixture.h"
#include "ptp/ptp_clock.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
namespace ptp = hsi::ptp;

constexpr uint8_t PTP_MCAST[6] = {0x01, 0x1b, 0x19, 0x00, 0x00, 0x00};
constexpr uint8_t VF0_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0xf0, 0x00};

uint64_t host_ns(clockid_t id)
{
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

/* A PTP message of msg_type and sequence_id over Ethernet. */
std::vector<uint8_t> ptp_l2(const uint8_t* src, uint8_t msg_type, uint16_t sequence_id, const uint8_t* dst = PTP_MCAST)
{
    std::vector<uint8_t> f = eth_frame(dst, src, ptp::ETHERTYPE, 44);
    f[14 + ptp::MSG_TYPE_OFFSET] = msg_type;
    f[14 + ptp::VERSION_OFFSET] = 2;
    f[14 + ptp::SEQUENCE_ID_OFFSET] = static_cast<uint8_t>(sequence_id >> 8);
    f[14 + ptp::SEQUENCE_ID_OFFSET + 1] = static_cast<uint8_t>(sequence_id);
    return f;
}

/* ... over UDP/IPv4 to dport, its checksum left out (0: none). */
std::vector<uint8_t> ptp_udp4(const uint8_t* src, uint16_t dport, uint8_t msg_type, uint16_t sequence_id)
{
    std::vector<uint8_t> f = udp4_frame(PTP_MCAST, src, 0x0a000001, 0xe0000181, 319, dport, 44, false);
    constexpr std::size_t PTP = 14 + 20 + 8;
    f[PTP + ptp::MSG_TYPE_OFFSET] = msg_type;
    f[PTP + ptp::VERSION_OFFSET] = 2;
    f[PTP + ptp::SEQUENCE_ID_OFFSET] = static_cast<uint8_t>(sequence_id >> 8);
    f[PTP + ptp::SEQUENCE_ID_OFFSET + 1] = static_cast<uint8_t>(sequence_id);
    return f;
}

/* A reader never sees a change half made: with forward steps only, and the
 * rate changing under it, every reading is at least the one before (a torn
 * anchor, a new raw reading with an old time, would go back). */
TEST(PtpClock, ReadersNeverSeeAChangeHalfMade)
{
    PtpClock clock;
    std::atomic<bool> done{false};
    std::thread writer([&] {
        for (int i = 0; i < 20000; i++) {
            clock.step(1'000'000);
            clock.set_freq(i % 2 == 0 ? 50'000'000 : -50'000'000);
        }
        done = true;
    });
    uint64_t last = clock.now(), readings = 0, back = 0;
    do {
        const uint64_t now = clock.now();
        back += now < last;
        last = now;
        readings++;
    } while (!done);
    writer.join();
    EXPECT_EQ(back, 0u) << "of " << readings << " readings";
    EXPECT_GT(readings, 0u);
}

class Ptp : public PfWithVfs {
protected:
    void SetUp() override { ASSERT_NO_FATAL_FAILURE(bring_up("ptp")); }

    static uint32_t rd(FakeDriver& drv, uint32_t offset) { return drv.rd(reg::PTP_BASE + offset); }
    static void wr(FakeDriver& drv, uint32_t offset, uint32_t value) { drv.wr(reg::PTP_BASE + offset, value); }
    static uint64_t time(FakeDriver& drv)
    {
        const uint32_t lo = rd(drv, ptp::TIME_LO);
        return uint64_t{rd(drv, ptp::TIME_HI)} << 32 | lo;
    }
    static void set(FakeDriver& drv, uint64_t ns)
    {
        wr(drv, ptp::SET_LO, static_cast<uint32_t>(ns));
        wr(drv, ptp::SET_HI, static_cast<uint32_t>(ns >> 32));
    }
    static void step(FakeDriver& drv, int64_t ns)
    {
        wr(drv, ptp::STEP_LO, static_cast<uint32_t>(ns));
        wr(drv, ptp::STEP_HI, static_cast<uint32_t>(static_cast<uint64_t>(ns) >> 32));
    }
    /* Rx latch i's stamp, which the read frees. */
    static uint64_t rx_stamp(FakeDriver& drv, uint32_t i)
    {
        const uint32_t lo = rd(drv, ptp::rx_ts_lo(i));
        return uint64_t{rd(drv, ptp::rx_ts_hi(i))} << 32 | lo;
    }
    static uint64_t tx_stamp(FakeDriver& drv)
    {
        const uint32_t lo = rd(drv, ptp::TX_TS_LO);
        return uint64_t{rd(drv, ptp::TX_TS_HI)} << 32 | lo;
    }
    static uint32_t latch_of(const FakeDriver::RxFrame& f)
    {
        return (f.cqe.pars_flags & eth::pars::PTP_LATCH_MASK) >> eth::pars::PTP_LATCH_SHIFT;
    }
};

TEST_F(Ptp, APortsClockRunsFromTheHostsRealTimeAndAPfSetsStepsAndSteersIt)
{
    const uint64_t before = host_ns(CLOCK_REALTIME);
    const uint64_t t0 = time(*pf);
    EXPECT_GE(t0 + 1'000'000, before) << "set from the host's real time at power-on (within its run since)";
    EXPECT_LT(t0, host_ns(CLOCK_REALTIME) + 1'000'000);
    EXPECT_GE(time(*pf), t0) << "it runs forward";

    set(*pf, 1'000'000'000'000);
    const uint64_t t1 = time(*pf);
    EXPECT_GE(t1, 1'000'000'000'000u);
    EXPECT_LT(t1, 1'000'000'000'000u + 50'000'000);
    step(*pf, -500'000'000'000);
    EXPECT_LT(time(*pf), 500'000'000'000u + 50'000'000) << "a step backwards";
    EXPECT_GE(time(*pf), 500'000'000'000u);

    /* +50,000,000 ppb: 5 % fast against the raw clock it runs from. */
    wr(*pf, ptp::FREQ, 50'000'000);
    EXPECT_EQ(static_cast<int32_t>(rd(*pf, ptp::FREQ)), 50'000'000);
    const uint64_t raw0 = host_ns(CLOCK_MONOTONIC_RAW), c0 = time(*pf);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const uint64_t raw1 = host_ns(CLOCK_MONOTONIC_RAW), c1 = time(*pf);
    const double rate = static_cast<double>(c1 - c0) / static_cast<double>(raw1 - raw0);
    EXPECT_NEAR(rate, 1.05, 0.005);

    wr(*pf, ptp::FREQ, static_cast<uint32_t>(-2'000'000'000));
    EXPECT_EQ(static_cast<int32_t>(rd(*pf, ptp::FREQ)), -ptp::MAX_FREQ_PPB) << "saturated";
    wr(*pf, ptp::FREQ, 0);

    /* One clock per port: the cable's other end has its own. */
    set(*peer, 7'000'000'000);
    EXPECT_GT(time(*pf), 400'000'000'000u);
}

TEST_F(Ptp, AVfReadsItsPortsClockAndStampsButDoesNotSteer)
{
    enable_vfs(1);
    auto vf = bring_up_vf(0, VF0_MAC);
    DeviceFunction& fn = vf->fn();
    auto vf_time = [&] {
        const uint32_t lo = fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::TIME_LO);
        return uint64_t{fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::TIME_HI)} << 32 | lo;
    };
    set(*pf, 3'000'000'000'000);
    const uint64_t t = vf_time();
    EXPECT_GE(t, 3'000'000'000'000u);
    EXPECT_LT(t, 3'000'000'000'000u + 50'000'000);

    fn.bar0_write(iov::vf_bar0::PTP_BASE + ptp::SET_HI, 0);
    fn.bar0_write(iov::vf_bar0::PTP_BASE + ptp::STEP_HI, 0x80000000u);
    fn.bar0_write(iov::vf_bar0::PTP_BASE + ptp::FREQ, 1000);
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::FREQ), 0xffffffffu) << "not a VF's register";
    EXPECT_GE(vf_time(), t) << "its writes to the clock went nowhere";
    EXPECT_EQ(rd(*pf, ptp::FREQ), 0u);

    fn.bar0_write(iov::vf_bar0::PTP_BASE + ptp::CTRL, ptp::ctrl::RX_L2);
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::CTRL), ptp::ctrl::RX_L2);
    peer->send(0, ptp_l2(PEER_MAC, 0, 9, VF0_MAC));
    auto got = vf->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(latch_of(got[0]), 1u);
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::RX_VALID), 1u) << "the VF's latches are its own";
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::PTP_BASE + ptp::rx_seq(0)), 9u);
    EXPECT_EQ(rd(*pf, ptp::RX_VALID), 0u);
}

TEST_F(Ptp, EventMessagesAreLatchedOnRxUntilReadAndAFloodIsCounted)
{
    wr(*pf, ptp::CTRL, ptp::ctrl::RX_L2);
    const uint64_t before = time(*peer);
    peer->send(0, ptp_l2(PEER_MAC, 0, 0x1234)); /* Sync */
    auto got = pf->rx_wait(0, 1);
    const uint64_t after = time(*peer);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].cqe.pars_flags & eth::pars::PTP);
    ASSERT_EQ(latch_of(got[0]), 1u) << "latch 0";
    EXPECT_EQ(rd(*pf, ptp::RX_VALID), 1u);
    EXPECT_EQ(rd(*pf, ptp::rx_seq(0)), 0x1234u);
    const uint64_t stamp = rx_stamp(*pf, 0);
    EXPECT_GE(stamp + 1'000'000, before) << "the two ports' clocks started together, within a millisecond";
    EXPECT_LE(stamp, after + 1'000'000);
    EXPECT_EQ(rd(*pf, ptp::RX_VALID), 0u) << "TS_HI's read freed it";

    peer->send(0, ptp_l2(PEER_MAC, 8, 1)); /* Follow_Up: a general message */
    got = pf->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].cqe.pars_flags & eth::pars::PTP);
    EXPECT_EQ(latch_of(got[0]), 0u) << "not stamped";
    EXPECT_EQ(rd(*pf, ptp::RX_VALID), 0u);
    peer->send(0, ptp_udp4(PEER_MAC, ptp::UDP_EVENT_PORT, 1, 2)); /* Delay_Req over UDP: not asked for */
    got = pf->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].cqe.pars_flags & eth::pars::PTP);

    /* Five Syncs: three latches, two missed. */
    for (uint16_t seq = 0; seq < 5; seq++)
        peer->send(0, ptp_l2(PEER_MAC, 0, seq));
    got = pf->rx_wait(0, 5);
    ASSERT_EQ(got.size(), 5u);
    for (uint32_t i = 0; i < 5; i++) {
        EXPECT_TRUE(got[i].cqe.pars_flags & eth::pars::PTP);
        EXPECT_EQ(latch_of(got[i]), i < ptp::RX_LATCHES ? i + 1 : 0u) << "frame " << i;
    }
    EXPECT_EQ(rd(*pf, ptp::RX_VALID), 0x7u);
    EXPECT_EQ(rd(*pf, ptp::RX_MISSED), 2u);
    EXPECT_EQ(rd(*pf, ptp::rx_seq(2)), 2u);
    rx_stamp(*pf, 1);
    peer->send(0, ptp_l2(PEER_MAC, 0, 77));
    got = pf->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(latch_of(got[0]), 2u) << "the latch freed is the next taken";
    EXPECT_EQ(rd(*pf, ptp::rx_seq(1)), 77u);

    wr(*pf, ptp::CTRL, ptp::ctrl::RX_UDP4);
    rx_stamp(*pf, 0);
    peer->send(0, ptp_udp4(PEER_MAC, ptp::UDP_EVENT_PORT, 1, 3));
    peer->send(0, ptp_udp4(PEER_MAC, ptp::UDP_GENERAL_PORT, 9, 4));
    peer->send(0, ptp_udp4(PEER_MAC, 4000, 1, 5));
    got = pf->rx_wait(0, 3);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_TRUE(got[0].cqe.pars_flags & eth::pars::PTP) << "UDP/IPv4 to 319";
    EXPECT_EQ(latch_of(got[0]), 1u);
    EXPECT_TRUE(got[1].cqe.pars_flags & eth::pars::PTP) << "320, the general port";
    EXPECT_EQ(latch_of(got[1]), 0u);
    EXPECT_FALSE(got[2].cqe.pars_flags & eth::pars::PTP) << "no PTP port";
}

/* A cable of no delay: the frame comes off the wire at the instant it went
 * on, which each end stamps on its own clock. */
TEST_F(Ptp, ASendAskingForItsWireTimeIsStampedAtTheInstantItsReceiverStampsIt)
{
    wr(*pf, ptp::CTRL, ptp::ctrl::TX);
    wr(*peer, ptp::CTRL, ptp::ctrl::RX_L2);
    set(*peer, time(*pf)); /* one time on both ends of the cable, within microseconds */
    FakeDriver::TxOptions stamped;
    stamped.flags = eth::txbd::PTP_TIMESTAMP;
    pf->send(0, ptp_l2(pf->mac().data(), 1, 0x4242), stamped); /* Delay_Req */
    ASSERT_EQ(peer->rx_wait(0, 1).size(), 1u);
    ASSERT_TRUE(wait_until([&] { return rd(*pf, ptp::TX_VALID) == 1; }));
    EXPECT_EQ(rd(*pf, ptp::TX_SEQ) & ptp::latch::SEQUENCE_ID_MASK, 0x4242u);
    EXPECT_EQ(rd(*pf, ptp::TX_SEQ) >> ptp::latch::MSG_TYPE_SHIFT, 1u);
    const uint64_t tx = tx_stamp(*pf);
    const uint64_t rx = rx_stamp(*peer, 0);
    EXPECT_EQ(static_cast<int64_t>(rx - tx), adapter->control().ptp_offset(0, 1))
        << "the stamps differ by the clocks' offset alone";
    EXPECT_EQ(rd(*pf, ptp::TX_VALID), 0u);

    pf->send(0, ptp_l2(pf->mac().data(), 1, 1), stamped);
    pf->send(0, ptp_l2(pf->mac().data(), 1, 2), stamped);
    ASSERT_EQ(peer->rx_wait(0, 2).size(), 2u);
    EXPECT_TRUE(wait_until([&] { return rd(*pf, ptp::TX_MISSED) == 1; })) << "the latch was full";
    EXPECT_EQ(rd(*pf, ptp::TX_SEQ) & ptp::latch::SEQUENCE_ID_MASK, 1u);

    wr(*pf, ptp::CTRL, 0);
    tx_stamp(*pf);
    pf->send(0, ptp_l2(pf->mac().data(), 1, 3), stamped);
    ASSERT_EQ(peer->rx_wait(0, 1).size(), 1u);
    EXPECT_EQ(rd(*pf, ptp::TX_VALID), 0u) << "without ctrl::TX the flag is not honoured";
}

/* A cable's delay and asymmetry are what the stamps of its two ends
 * measure, to the nanosecond: the receiver stamps a frame for when it came
 * out of the cable, however late the engine took it. */
TEST_F(Ptp, ACablesDelayAndAsymmetryShowInTheStampsOfItsEnds)
{
    AdapterControl& control = adapter->control();
    EXPECT_FALSE(control.set_cable_delay(0, 1'000, 1'001)) << "a negative delay back";
    EXPECT_FALSE(control.set_cable_delay(0, AdapterControl::MAX_CABLE_DELAY_NS + 1, 0));
    ASSERT_TRUE(control.set_cable_delay(0, 400'000, 100'000));
    for (FakeDriver* end : {pf.get(), peer.get()})
        wr(*end, ptp::CTRL, ptp::ctrl::TX | ptp::ctrl::RX_L2);
    FakeDriver::TxOptions stamped;
    stamped.flags = eth::txbd::PTP_TIMESTAMP;
    const int64_t offset = control.ptp_offset(0, 1);
    struct Way {
        FakeDriver& from;
        FakeDriver& to;
        uint64_t delay;
        int64_t clocks; /* the receiver's clock minus the sender's */
    };
    for (const Way& way : {Way{*pf, *peer, 500'000, offset}, Way{*peer, *pf, 300'000, -offset}}) {
        const uint64_t sent = host_ns(CLOCK_MONOTONIC);
        way.from.send(0, ptp_l2(way.from.mac().data(), 0, 7), stamped); /* Sync */
        const auto frames = way.to.rx_wait(0, 1);
        ASSERT_EQ(frames.size(), 1u);
        EXPECT_GE(host_ns(CLOCK_MONOTONIC) - sent, way.delay) << "nothing comes out of a cable early";
        ASSERT_TRUE(wait_until([&] { return rd(way.from, ptp::TX_VALID) == 1; }));
        const uint64_t tx = tx_stamp(way.from);
        const uint64_t rx = rx_stamp(way.to, latch_of(frames[0]) - 1);
        EXPECT_EQ(static_cast<int64_t>(rx - tx), static_cast<int64_t>(way.delay) + way.clocks);
    }
}

/* Frames never overtake each other on a cable: those sent once its delay is
 * gone come out behind the ones still in it. */
TEST_F(Ptp, FramesLeaveACableInTheOrderTheyEnteredIt)
{
    AdapterControl& control = adapter->control();
    ASSERT_TRUE(control.set_cable_delay(0, 2'000'000, 0));
    pf->send(0, ptp_l2(pf->mac().data(), 0, 1));
    ASSERT_TRUE(control.set_cable_delay(0, 0, 0));
    pf->send(0, ptp_l2(pf->mac().data(), 0, 2));
    const auto frames = peer->rx_wait(0, 2);
    ASSERT_EQ(frames.size(), 2u);
    for (uint16_t i = 0; i < 2; i++)
        EXPECT_EQ(frames[i].data[14 + ptp::SEQUENCE_ID_OFFSET + 1], i + 1) << "frame " << i;
}

/* A queue started with rxq_flags::TIMESTAMP: every frame, whatever way the
 * engine takes it (the lane for unicast, the general way for broadcast,
 * several buffers), has the port's time beside its CQE. */
class RxTimestamps : public PfWithVfs {
protected:
    void SetUp() override
    {
        L2Setup stamped;
        stamped.max_bds = 4;
        stamped.bd_max_bytes = 512;
        stamped.rxq_flags = eth::rxq_flags::TIMESTAMP;
        ASSERT_NO_FATAL_FAILURE(bring_up("rxts", L2Setup{}, stamped));
    }
};

TEST_F(RxTimestamps, EveryFrameHasItsStampBesideItsCqe)
{
    const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    std::vector<std::vector<uint8_t>> sent;
    for (uint32_t i = 0; i < 24; i++)
        sent.push_back(eth_frame(i % 3 == 0 ? broadcast : peer->mac().data(), pf->mac().data(), 0x0800,
                                 46 + i * 60)); /* up to 1440 bytes: three buffers */
    const uint64_t before = adapter->control().ptp_time(1);
    for (const auto& frame : sent)
        pf->send(0, frame);
    const auto frames = peer->rx_wait(0, sent.size());
    const uint64_t after = adapter->control().ptp_time(1);
    ASSERT_EQ(frames.size(), sent.size());
    uint64_t last = before;
    for (std::size_t i = 0; i < frames.size(); i++) {
        const auto& f = frames[i];
        EXPECT_EQ(f.data, sent[i]) << "frame " << i << ": the buffers hold the frame alone";
        EXPECT_EQ(f.cqe.placement_offset, 0u);
        EXPECT_GE(f.stamp, last) << "frame " << i << ": stamps never go back";
        EXPECT_LE(f.stamp, after) << "frame " << i;
        last = f.stamp;
    }
}

TEST_F(RxTimestamps, FlagsTheAdapterDoesNotKnowAreRefused)
{
    EXPECT_EQ(peer->rx_queue_start(1, 0, 2, 2048, 64, 0, 0x80), FwReturn::invalid_param);
}

} // namespace
} // namespace cna::fw::test
