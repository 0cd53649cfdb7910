/* SPDX-License-Identifier: BSD-3-Clause
 * The dataplane's bursts: frames move from the storms' Tx to Rx up to
 * FrameBurst::MAX (32) at a time, statistics, producers, ring translations
 * and SB indices are handled once per burst, and Rx serves most frames on
 * a plain lane with a per-frame fallback to the general path. These tests
 * queue many packets behind a single doorbell, so that the engine takes
 * them in one poll and cuts them into several bursts, and check that order,
 * every counter and the ring indices come out as if frames went one by one.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

const uint8_t OWN_MAC[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00};
const uint8_t MCAST[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x07};

constexpr auto RX_TIMEOUT = std::chrono::seconds(3);

/* A frame carrying its sequence number in its last four bytes (where VLAN
 * insertion or a tag in front does not move it). */
std::vector<uint8_t> numbered(const uint8_t* dst, uint32_t seq, std::size_t payload = 46)
{
    std::vector<uint8_t> f = eth_frame(dst, PEER_MAC, 0x88b5, payload);
    for (int i = 0; i < 4; i++)
        f[f.size() - 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    return f;
}

uint32_t seq_of(const std::vector<uint8_t>& f)
{
    if (f.size() < 4)
        return UINT32_MAX;
    uint32_t seq = 0;
    for (std::size_t i = f.size() - 4; i < f.size(); i++)
        seq = seq << 8 | f[i];
    return seq;
}

/* Packets written to a Tx ring and rung with one doorbell, so that the
 * engine sees all of them in one poll (FakeDriver::send rings once per
 * packet, and the engine may poll between two rings). Each batch has its
 * own buffer space, left untouched until the test ends. */
using Frames = std::vector<std::vector<uint8_t>>;

/* count frames, frame i made by make(i). */
template <typename Make> Frames make_frames(uint32_t count, Make make)
{
    Frames frames;
    for (uint32_t i = 0; i < count; i++)
        frames.push_back(make(i));
    return frames;
}

class TxBatch {
public:
    explicit TxBatch(FakeDriver& drv, std::size_t bytes = 1u << 20) : drv_(drv), mem_(drv.alloc(bytes)) {}

    /* nbds > 1: the packet split over that many BDs (gathered by the
     * engine rather than sent from its one host buffer). */
    void add(const std::vector<uint8_t>& frame, uint32_t nbds = 1)
    {
        ASSERT_LE(used_ + frame.size(), mem_.len);
        std::memcpy(mem_.va + used_, frame.data(), frame.size());
        std::size_t per_bd = (frame.size() + nbds - 1) / nbds;
        std::size_t first = bds_.size();
        for (std::size_t off = 0; off < frame.size(); off += per_bd) {
            TxBd bd{};
            bd.addr = make_regpair(mem_.iova + used_ + off);
            bd.nbytes = static_cast<uint16_t>(std::min(per_bd, frame.size() - off));
            bds_.push_back(bd);
        }
        bds_[first].flags = txbd::START;
        bds_[first].nbds = static_cast<uint8_t>(bds_.size() - first);
        used_ += (frame.size() + 63) & ~std::size_t{63};
    }
    /* A one-BD packet whose buffer the IOMMU does not know: a DMA fault. */
    void add_unmapped(uint16_t len)
    {
        TxBd bd{};
        bd.addr = make_regpair(mem_.iova + mem_.len + 0x10000);
        bd.nbytes = len;
        bd.flags = txbd::START;
        bd.nbds = 1;
        bds_.push_back(bd);
    }
    void ring(uint16_t queue)
    {
        drv_.send_bds(queue, bds_);
        bds_.clear();
    }

private:
    FakeDriver& drv_;
    HostMem mem_;
    std::size_t used_ = 0;
    std::vector<TxBd> bds_;
};

/* Frames and bytes by destination, as the vport statistics count them. */
struct Tally {
    std::array<uint64_t, 3> pkts{}, bytes{}; /* unicast, multicast, broadcast */

    void add(const std::vector<uint8_t>& f)
    {
        uint32_t d = !(f[0] & 1) ? 0 : std::memcmp(f.data(), BCAST, 6) == 0 ? 2 : 1;
        pkts[d]++;
        bytes[d] += f.size();
    }
    uint64_t total_pkts() const { return pkts[0] + pkts[1] + pkts[2]; }
    uint64_t total_bytes() const { return bytes[0] + bytes[1] + bytes[2]; }
};

void expect_rx(const VportStats& s, const Tally& t)
{
    EXPECT_EQ(s.rx_ucast_pkts, t.pkts[0]);
    EXPECT_EQ(s.rx_mcast_pkts, t.pkts[1]);
    EXPECT_EQ(s.rx_bcast_pkts, t.pkts[2]);
    EXPECT_EQ(s.rx_ucast_bytes, t.bytes[0]);
    EXPECT_EQ(s.rx_mcast_bytes, t.bytes[1]);
    EXPECT_EQ(s.rx_bcast_bytes, t.bytes[2]);
}

void expect_tx(const VportStats& s, const Tally& t)
{
    EXPECT_EQ(s.tx_ucast_pkts, t.pkts[0]);
    EXPECT_EQ(s.tx_mcast_pkts, t.pkts[1]);
    EXPECT_EQ(s.tx_bcast_pkts, t.pkts[2]);
    EXPECT_EQ(s.tx_ucast_bytes, t.bytes[0]);
    EXPECT_EQ(s.tx_mcast_bytes, t.bytes[1]);
    EXPECT_EQ(s.tx_bcast_bytes, t.bytes[2]);
}

uint64_t rx_total(const VportStats& s) { return s.rx_ucast_pkts + s.rx_mcast_pkts + s.rx_bcast_pkts; }

QueueStats tx_queue_stats(FakeDriver& drv, uint32_t queue)
{
    QueueStats s;
    auto* words = reinterpret_cast<uint64_t*>(&s);
    for (uint32_t i = 0; i < sizeof(s) / 8; i++)
        words[i] = drv.stat64(iro::tx_queue_stats(drv.pf(), queue) + i * 8);
    return s;
}

/* Ring sizes and buffers of the PF under test: bring_up_l2's rings (64)
 * hold less than the bursts these tests queue at once. */
struct Rings {
    uint16_t rx = 256;
    uint16_t cqe = 0; /* 0: as rx */
    uint16_t rx_posted = 255;
    uint16_t tx = 256;
    uint16_t bd_max_bytes = 2048;
    uint16_t mtu = 1500;
    uint8_t max_bds = 1;
};

/* A one-port loopback adapter, its PF with vport 0 (Rx queue 0 on SB 0,
 * Tx queue 0 on SB 1) accepting everything. */
class Burst : public ::testing::Test {
protected:
    /* A fresh adapter each call (a test may bring up several in turn). */
    void bring_up(const Rings& r = Rings{})
    {
        drv.reset(); /* the driver of the previous one goes first */
        adapter.reset();
        AdapterConfig config;
        config.name = "burst";
        config.wire = Wire::loopback;
        config.link_up_delay_ms = 0;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
        drv = std::make_unique<FakeDriver>(*adapter, 0);
        ASSERT_NE(drv->load(), 0u);
        ASSERT_EQ(drv->start_pf(), FwReturn::ok);
        mfw::DrvPhyCfg cfg{};
        drv->write_union(&cfg, sizeof(cfg));
        ASSERT_EQ(drv->mcp_cmd(mfw::DRV_MSG_CODE_INIT_PHY), mfw::FW_MSG_CODE_LINK_DONE);
        ASSERT_EQ(drv->vport_start(0, r.mtu, r.max_bds), FwReturn::ok);
        ASSERT_EQ(drv->rx_queue_start(0, 0, 0, r.bd_max_bytes, r.rx, r.cqe), FwReturn::ok);
        drv->rx_post(0, r.rx_posted);
        ASSERT_EQ(drv->tx_queue_start(0, 0, 1, r.tx), FwReturn::ok);
        ASSERT_EQ(drv->vport_activate(0, accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED | accept::BCAST),
                  FwReturn::ok);
        ASSERT_TRUE(wait_link(*drv));
    }

    /* Every counter the engine writes once the last burst is in: the Tx SB
     * index moves after the Rx side has dealt with the frames, but the
     * counters are read through registers, so wait for the total rather
     * than trust one read. */
    ::testing::AssertionResult wait_rx_accounted(uint64_t pkts, uint64_t dropped = 0)
    {
        VportStats s{};
        auto dropped_of = [](const VportStats& v) {
            return v.rx_no_buffer_pkts + v.rx_error_pkts + v.rx_filtered_pkts + v.rx_oversize_pkts;
        };
        if (wait_until([&] {
                s = drv->vport_stats(0);
                return rx_total(s) == pkts && dropped_of(s) == dropped;
            }))
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "vport 0 received " << rx_total(s) << " (expected " << pkts << "), dropped " << dropped_of(s)
               << " (expected " << dropped << ": no buffer " << s.rx_no_buffer_pkts << ", error "
               << s.rx_error_pkts << ", filtered " << s.rx_filtered_pkts << ", oversize " << s.rx_oversize_pkts
               << "; tx error " << s.tx_error_pkts << ", tx oversize " << s.tx_oversize_pkts << ")";
    }

    /* The frames on Tx queue 0 behind one doorbell, all consumed by the
     * adapter on return. */
    void send_in_one_doorbell(const Frames& frames)
    {
        TxBatch batch(*drv);
        for (const auto& f : frames)
            ASSERT_NO_FATAL_FAILURE(batch.add(f));
        batch.ring(0);
        ASSERT_TRUE(drv->wait_tx_done(0));
    }

    /* The next n frames of Rx queue 0 are sent[0..n), in that order. */
    void expect_arrival(const Frames& sent, std::size_t n)
    {
        auto frames = drv->rx_wait(0, n, RX_TIMEOUT);
        ASSERT_EQ(frames.size(), n);
        for (std::size_t i = 0; i < n; i++)
            EXPECT_EQ(frames[i].data, sent[i]) << "frame " << i;
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
};

/* count frames of every destination and many lengths behind one doorbell:
 * more than a BD batch (64) and several bursts with a partial last one. */
void many_frames_in_one_doorbell(FakeDriver& drv, Adapter& adapter, uint32_t count)
{
    const uint8_t* dsts[3] = {OWN_MAC, MCAST, BCAST};
    std::vector<std::vector<uint8_t>> sent;
    Tally tally;
    TxBatch batch(drv, 4u << 20);
    for (uint32_t i = 0; i < count; i++) {
        sent.push_back(numbered(dsts[i % 3], i, 46 + (i * 97) % 1400));
        tally.add(sent.back());
        ASSERT_NO_FATAL_FAILURE(batch.add(sent.back()));
    }
    batch.ring(0);
    ASSERT_TRUE(drv.wait_tx_done(0)) << "the Tx SB consumer reaches the producer";

    auto frames = drv.rx_wait(0, count, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), count);
    for (uint32_t i = 0; i < count; i++) {
        ASSERT_EQ(seq_of(frames[i].data), i) << "CQE " << i << " carries another frame";
        EXPECT_EQ(frames[i].data, sent[i]);
        EXPECT_EQ(frames[i].cqe.pkt_len, sent[i].size());
        EXPECT_EQ(frames[i].cqe.bd_num, 1u);
    }
    EXPECT_EQ(drv.sb(0).pi_array[L2_PI_RX], static_cast<uint16_t>(count)) << "Rx SB: one CQE per frame";

    VportStats s = drv.vport_stats(0);
    expect_rx(s, tally);
    expect_tx(s, tally);
    EXPECT_EQ(s.rx_no_buffer_pkts, 0u);
    EXPECT_EQ(s.rx_error_pkts, 0u);
    EXPECT_EQ(s.tx_error_pkts, 0u);
    QueueStats rxq = drv.rx_queue_stats(0), txq = tx_queue_stats(drv, 0);
    EXPECT_EQ(rxq.pkts, count);
    EXPECT_EQ(rxq.bytes, tally.total_bytes());
    EXPECT_EQ(rxq.drops, 0u);
    EXPECT_EQ(txq.pkts, count);
    EXPECT_EQ(txq.bytes, tally.total_bytes());
    EXPECT_EQ(txq.drops, 0u);
    PortCounters pc = adapter.control().port_counters(0);
    EXPECT_EQ(pc.wire_tx_frames, count);
    EXPECT_EQ(pc.wire_tx_bytes, tally.total_bytes());
    EXPECT_EQ(pc.wire_rx_frames, count);
    EXPECT_EQ(pc.wire_rx_bytes, tally.total_bytes());
}

TEST_F(Burst, HundredFramesInOneDoorbellArriveInOrderAndAreCountedOnce)
{
    ASSERT_NO_FATAL_FAILURE(bring_up());
    many_frames_in_one_doorbell(*drv, *adapter, 100);
}

TEST_F(Burst, MoreThanOnePollsBudgetInOneDoorbell)
{
    /* 600 BDs: beyond what a Tx queue sends per poll (512), so the rest
     * goes in a later poll, and the ring index wraps inside a BD batch. */
    Rings r;
    r.rx = r.tx = 1024;
    r.rx_posted = 1023;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    many_frames_in_one_doorbell(*drv, *adapter, 600);
}

TEST_F(Burst, MixedBurstKeepsOrderAndCountsEachFrameOnce)
{
    /* vport 0: MTU 9000, 1 KiB buffers, at most 2 per frame, so that a
     * frame over 1 KiB leaves the plain lane for scatter and one over 2 KiB
     * has no room. vport 1: MTU 1000, broadcasts only, its own queue. */
    Rings r;
    r.mtu = 9000;
    r.max_bds = 2;
    r.bd_max_bytes = 1024;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    ASSERT_EQ(drv->vport_start(1, 1000), FwReturn::ok);
    ASSERT_EQ(drv->rx_queue_start(1, 1, 2, 2048, 256), FwReturn::ok);
    drv->rx_post(1, 255);
    ASSERT_EQ(drv->vport_activate(1, accept::BCAST), FwReturn::ok);

    enum Fate { received, filtered, oversize, no_buffer, tx_error, tx_oversize };
    struct Kind {
        const uint8_t* dst;
        std::size_t payload;
        bool vlan;
        uint32_t tx_bds;
        Fate v0, v1;
    };
    const Kind kinds[] = {
        {OWN_MAC, 46, false, 1, received, filtered},   /* plain lane */
        {BCAST, 100, false, 1, received, received},    /* general path: not unicast */
        {OWN_MAC, 1500, false, 1, received, filtered}, /* 1514 B: two buffers, general path */
        {OWN_MAC, 0, false, 1, tx_error, tx_error},    /* a 10-byte runt: never leaves Tx */
        {MCAST, 200, false, 1, received, filtered},
        {BCAST, 1001, false, 1, received, oversize},   /* 1015 B: scatter on 0, over MTU on 1 */
        {OWN_MAC, 300, false, 2, received, filtered},  /* gathered on Tx: its burst leaves at once */
        {BCAST, 2500, false, 1, no_buffer, oversize},  /* three buffers needed, two allowed */
        {OWN_MAC, 100, true, 1, received, filtered},   /* tagged: general path */
        {OWN_MAC, 9001, false, 1, tx_oversize, tx_oversize}, /* over the Tx MTU */
        {BCAST, 1000, false, 1, received, received},   /* 1014 B: scatter on 0, one buffer on 1 */
        {MCAST, 46, false, 1, received, filtered},
    };

    std::vector<std::vector<uint8_t>> expect0, expect1;
    Tally rx0, rx1, tx;
    uint64_t no_buffer0 = 0, filtered1 = 0, oversize1 = 0, tx_errors = 0, tx_oversizes = 0;
    TxBatch batch(*drv, 2u << 20);
    uint32_t seq = 0;
    for (int round = 0; round < 4; round++) { /* 48 packets: several bursts */
        for (const Kind& k : kinds) {
            std::vector<uint8_t> f;
            if (k.v0 == tx_error) {
                f.assign(10, 0xee); /* shorter than a MAC header */
                std::memcpy(f.data(), k.dst, 6);
            } else {
                f = numbered(k.dst, seq, k.payload);
                if (k.vlan)
                    f = with_vlan(f, 0x0123);
            }
            seq++;
            ASSERT_NO_FATAL_FAILURE(batch.add(f, k.tx_bds));
            tx_errors += k.v0 == tx_error;
            tx_oversizes += k.v0 == tx_oversize;
            if (k.v0 == tx_error || k.v0 == tx_oversize)
                continue;
            tx.add(f);
            if (k.v0 == received) {
                expect0.push_back(f);
                rx0.add(f);
            }
            no_buffer0 += k.v0 == no_buffer;
            if (k.v1 == received) {
                expect1.push_back(f);
                rx1.add(f);
            }
            filtered1 += k.v1 == filtered;
            oversize1 += k.v1 == oversize;
        }
    }
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));

    auto frames0 = drv->rx_wait(0, expect0.size(), RX_TIMEOUT);
    auto frames1 = drv->rx_wait(1, expect1.size(), RX_TIMEOUT);
    ASSERT_EQ(frames0.size(), expect0.size());
    ASSERT_EQ(frames1.size(), expect1.size());
    for (std::size_t i = 0; i < expect0.size(); i++) {
        ASSERT_EQ(seq_of(frames0[i].data), seq_of(expect0[i])) << "vport 0, CQE " << i;
        EXPECT_EQ(frames0[i].data, expect0[i]);
        EXPECT_EQ(frames0[i].cqe.bd_num, (expect0[i].size() + 1023) / 1024);
        EXPECT_EQ(frames0[i].cqe.len_on_first_bd, std::min<std::size_t>(expect0[i].size(), 1024));
        EXPECT_EQ(static_cast<bool>(frames0[i].cqe.pars_flags & pars::VLAN_PRESENT), expect0[i][12] == 0x81);
    }
    for (std::size_t i = 0; i < expect1.size(); i++) {
        ASSERT_EQ(seq_of(frames1[i].data), seq_of(expect1[i])) << "vport 1, CQE " << i;
        EXPECT_EQ(frames1[i].data, expect1[i]);
    }

    ASSERT_TRUE(wait_rx_accounted(expect0.size(), no_buffer0));
    VportStats s0 = drv->vport_stats(0), s1 = drv->vport_stats(1);
    expect_rx(s0, rx0);
    expect_tx(s0, tx);
    EXPECT_EQ(s0.rx_no_buffer_pkts, no_buffer0);
    EXPECT_EQ(s0.rx_filtered_pkts, 0u);
    EXPECT_EQ(s0.rx_oversize_pkts, 0u);
    EXPECT_EQ(s0.rx_error_pkts, 0u);
    EXPECT_EQ(s0.tx_error_pkts, tx_errors);
    EXPECT_EQ(s0.tx_oversize_pkts, tx_oversizes);
    expect_rx(s1, rx1);
    EXPECT_EQ(s1.rx_filtered_pkts, filtered1);
    EXPECT_EQ(s1.rx_oversize_pkts, oversize1);
    EXPECT_EQ(s1.rx_no_buffer_pkts, 0u);
    EXPECT_EQ(s1.rx_error_pkts, 0u);

    QueueStats q0 = drv->rx_queue_stats(0), q1 = drv->rx_queue_stats(1), txq = tx_queue_stats(*drv, 0);
    EXPECT_EQ(q0.pkts, rx0.total_pkts());
    EXPECT_EQ(q0.bytes, rx0.total_bytes());
    EXPECT_EQ(q0.drops, no_buffer0);
    EXPECT_EQ(q1.pkts, rx1.total_pkts());
    EXPECT_EQ(q1.bytes, rx1.total_bytes());
    EXPECT_EQ(q1.drops, 0u);
    EXPECT_EQ(txq.pkts, tx.total_pkts());
    EXPECT_EQ(txq.bytes, tx.total_bytes());
    EXPECT_EQ(txq.drops, tx_errors + tx_oversizes);
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, tx.total_pkts());
    EXPECT_EQ(adapter->control().dma_faults(0), 0u);
}

TEST_F(Burst, RxRingRunsDryMidBurst)
{
    /* 10 buffers for 40 frames (a full burst and 8): the ring runs dry in
     * the middle of the first burst, and the second finds it still dry. */
    Rings r;
    r.rx = 64;
    r.rx_posted = 10;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    Frames sent = make_frames(40, [](uint32_t i) { return numbered(BCAST, i, 46 + i); });
    ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
    ASSERT_TRUE(wait_rx_accounted(10, 30));
    auto frames = drv->rx_wait(0, 10, RX_TIMEOUT); /* re-posts the 10 buffers */
    ASSERT_EQ(frames.size(), 10u);
    Tally tally;
    for (uint32_t i = 0; i < 10; i++) {
        EXPECT_EQ(seq_of(frames[i].data), i) << "the first frames take the posted buffers";
        EXPECT_EQ(frames[i].data, sent[i]);
        tally.add(sent[i]);
    }
    EXPECT_TRUE(drv->rx_poll(0).empty()) << "no CQE beyond the posted buffers";
    VportStats s = drv->vport_stats(0);
    expect_rx(s, tally);
    EXPECT_EQ(s.rx_no_buffer_pkts, 30u);
    EXPECT_EQ(s.tx_bcast_pkts, 40u);
    QueueStats q = drv->rx_queue_stats(0);
    EXPECT_EQ(q.pkts, 10u);
    EXPECT_EQ(q.bytes, tally.total_bytes());
    EXPECT_EQ(q.drops, 30u);

    /* 20 more buffers (30 posted): the next bursts read the new producer. */
    drv->rx_post(0, 20);
    sent = make_frames(30, [](uint32_t i) { return numbered(BCAST, 100 + i, 46 + i); });
    for (const auto& f : sent)
        tally.add(f);
    ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
    frames = drv->rx_wait(0, 30, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 30u);
    for (uint32_t i = 0; i < 30; i++) {
        EXPECT_EQ(seq_of(frames[i].data), 100 + i);
        EXPECT_EQ(frames[i].data, sent[i]);
    }
    ASSERT_TRUE(wait_rx_accounted(40, 30));
    s = drv->vport_stats(0);
    expect_rx(s, tally);
    EXPECT_EQ(s.rx_no_buffer_pkts, 30u) << "no new drops";
    q = drv->rx_queue_stats(0);
    EXPECT_EQ(q.pkts, 40u);
    EXPECT_EQ(q.drops, 30u);
}

TEST_F(Burst, ScatterFrameWithoutRoomLeavesTheLastBufferToTheNextFrame)
{
    /* 4 buffers of 1 KiB: a 1-buffer frame, a 2-buffer frame, then a
     * 2-buffer frame that finds one buffer left (dropped, on the general
     * path), a 1-buffer frame that takes it (back on the plain lane), and
     * one that finds none. */
    Rings r;
    r.rx = 64;
    r.rx_posted = 4;
    r.bd_max_bytes = 1024;
    r.max_bds = 2;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    std::vector<std::vector<uint8_t>> sent = {numbered(BCAST, 0, 100), numbered(BCAST, 1, 1500),
                                              numbered(BCAST, 2, 1500), numbered(BCAST, 3, 100),
                                              numbered(BCAST, 4, 100)};
    TxBatch batch(*drv);
    for (auto& f : sent)
        ASSERT_NO_FATAL_FAILURE(batch.add(f));
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));
    ASSERT_TRUE(wait_rx_accounted(3, 2));
    auto frames = drv->rx_wait(0, 3, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 3u);
    EXPECT_EQ(frames[0].data, sent[0]);
    EXPECT_EQ(frames[1].data, sent[1]);
    EXPECT_EQ(frames[1].cqe.bd_num, 2u);
    EXPECT_EQ(frames[2].data, sent[3]);
    VportStats s = drv->vport_stats(0);
    EXPECT_EQ(s.rx_no_buffer_pkts, 2u);
    EXPECT_EQ(s.rx_bcast_bytes, sent[0].size() + sent[1].size() + sent[3].size());
    EXPECT_EQ(drv->rx_queue_stats(0).drops, 2u);
}

TEST_F(Burst, CqeRingFullMidBurst)
{
    /* 255 buffers but 64 CQEs (63 usable: a full ring would look empty to
     * the driver): 100 frames fill the CQE ring in the middle of the second
     * burst, with buffers to spare. */
    Rings r;
    r.cqe = 64;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    Frames sent = make_frames(100, [](uint32_t i) { return numbered(i % 2 ? BCAST : OWN_MAC, i, 46 + i); });
    ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
    ASSERT_TRUE(wait_rx_accounted(63, 37));
    auto frames = drv->rx_wait(0, 63, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 63u);
    Tally tally;
    for (uint32_t i = 0; i < 63; i++) {
        EXPECT_EQ(seq_of(frames[i].data), i);
        EXPECT_EQ(frames[i].data, sent[i]);
        tally.add(sent[i]);
    }
    EXPECT_TRUE(drv->rx_poll(0).empty());
    VportStats s = drv->vport_stats(0);
    expect_rx(s, tally);
    EXPECT_EQ(s.rx_no_buffer_pkts, 37u);
    EXPECT_EQ(drv->rx_queue_stats(0).drops, 37u);
    EXPECT_EQ(drv->rx_queue_stats(0).pkts, 63u);

    /* The CQEs are consumed (and the buffers re-posted): the next burst has
     * room for 63 again, and the CQE ring wraps. */
    sent = make_frames(40, [](uint32_t i) { return numbered(BCAST, 100 + i); });
    ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
    ASSERT_NO_FATAL_FAILURE(expect_arrival(sent, 40));
    ASSERT_TRUE(wait_rx_accounted(103, 37));
    EXPECT_EQ(drv->vport_stats(0).rx_no_buffer_pkts, 37u);
}

TEST_F(Burst, PlainLaneAndGeneralPathWriteTheSameCqe)
{
    /* The same UDP frames, short (plain lane) and over one 1 KiB buffer
     * (general path), with good and bad checksums, alternating in one
     * burst: the CQEs differ only in buffer counts and lengths. */
    Rings r;
    r.bd_max_bytes = 1024;
    r.max_bds = 2;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    std::vector<std::vector<uint8_t>> sent;
    TxBatch batch(*drv);
    for (uint32_t i = 0; i < 8; i++) {
        auto f = udp4_frame(OWN_MAC, PEER_MAC, 0x0a000001, 0x0a000002, 1000 + i, 53, i % 2 ? 1400 : 100);
        if (i % 4 >= 2)
            f[f.size() - 1] ^= 0x5a; /* payload: the UDP checksum is now wrong */
        sent.push_back(f);
        ASSERT_NO_FATAL_FAILURE(batch.add(f));
    }
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));
    auto frames = drv->rx_wait(0, 8, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 8u);
    for (uint32_t i = 0; i < 8; i++) {
        const RxCqe& cqe = frames[i].cqe;
        bool bad = i % 4 >= 2;
        EXPECT_EQ(frames[i].data, sent[i]) << "CQE " << i;
        EXPECT_EQ(cqe.type, static_cast<uint8_t>(CqeType::regular));
        EXPECT_EQ(cqe.bd_num, i % 2 ? 2u : 1u) << "CQE " << i;
        EXPECT_EQ(cqe.pkt_len, sent[i].size());
        EXPECT_EQ(cqe.len_on_first_bd, std::min<std::size_t>(sent[i].size(), 1024));
        EXPECT_EQ(cqe.pars_flags, pars::L3_IPV4 | pars::IP_CSUM_CHECKED | pars::L4_UDP | pars::L4_CSUM_CHECKED |
                                      (bad ? pars::L4_CSUM_BAD : 0))
            << "CQE " << i;
        EXPECT_EQ(cqe.vlan_tag, 0u);
        EXPECT_EQ(cqe.rss_hash, 0u);
        EXPECT_EQ(cqe.rss_hash_type, 0u);
        EXPECT_EQ(cqe.placement_offset, 0u);
    }
}

/* A 4 KiB page mapped for DMA, followed by a hole: a buffer whose IOVA is
 * `room` bytes before the page's end takes frames up to `room` bytes, and a
 * longer one is a DMA fault (the write would cross into the hole). */
struct EdgeBuffer {
    EdgeBuffer(FakeDriver& drv, uint32_t room) : page(drv.alloc(4096)), room(room) {}
    uint64_t iova() const { return page.iova + page.len - room; }
    std::vector<uint8_t> contents(std::size_t len) const
    {
        const uint8_t* at = page.va + page.len - room;
        return std::vector<uint8_t>(at, at + len);
    }
    HostMem page;
    uint32_t room;
};

TEST_F(Burst, DmaFaultMidBurstOnThePlainLane)
{
    ASSERT_NO_FATAL_FAILURE(bring_up());
    /* The sixth posted buffer has room for 128 bytes only. */
    EdgeBuffer edge(*drv, 128);
    drv->rx_set_bd(0, 5, edge.iova());
    std::vector<std::vector<uint8_t>> sent;
    TxBatch batch(*drv);
    for (uint32_t i = 0; i < 12; i++) {
        /* Frame 5 (214 B) faults on that buffer; frame 6 (60 B) then fits
         * in it: the buffer stayed posted. */
        sent.push_back(numbered(OWN_MAC, i, i == 5 ? 200 : 46));
        ASSERT_NO_FATAL_FAILURE(batch.add(sent.back()));
    }
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));
    ASSERT_TRUE(wait_rx_accounted(11, 1));

    auto frames = drv->rx_wait(0, 11, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 11u);
    Tally tally;
    for (uint32_t i = 0, seq = 0; i < 11; i++, seq++) {
        if (seq == 5)
            seq++; /* the faulting frame has no CQE */
        tally.add(sent[seq]);
        EXPECT_EQ(frames[i].cqe.pkt_len, sent[seq].size()) << "CQE " << i;
        if (i == 5) /* in the edge buffer, not its slot's own */
            EXPECT_EQ(edge.contents(sent[seq].size()), sent[seq]) << "frame 6 takes the buffer frame 5 did not fit";
        else
            EXPECT_EQ(frames[i].data, sent[seq]) << "CQE " << i;
    }
    VportStats s = drv->vport_stats(0);
    EXPECT_EQ(s.rx_error_pkts, 1u);
    EXPECT_EQ(s.rx_no_buffer_pkts, 0u);
    expect_rx(s, tally);
    QueueStats q = drv->rx_queue_stats(0);
    EXPECT_EQ(q.pkts, 11u);
    EXPECT_EQ(q.bytes, tally.total_bytes());
    EXPECT_EQ(q.drops, 0u) << "a DMA fault is an error, not a lack of buffers";
    EXPECT_EQ(adapter->control().dma_faults(0), 1u);
    EXPECT_EQ(drv->attn_status() & attn::DMA_FAULT, attn::DMA_FAULT);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_LO), static_cast<uint32_t>(edge.iova()));
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_HI), static_cast<uint32_t>(edge.iova() >> 32));
}

TEST_F(Burst, DmaFaultMidBurstOnTheScatterPath)
{
    /* 1 KiB buffers, up to 4 per frame; the fifth posted buffer has room
     * for 512 bytes. Frame 3 (1814 B) takes buffers 3 and 4 and faults on
     * its second part; frame 4 then takes buffer 3, frame 5 buffer 4 (it
     * fits), frame 6 buffer 5, frame 7 (1814 B) buffers 6 and 7. */
    Rings r;
    r.mtu = 9000;
    r.bd_max_bytes = 1024;
    r.max_bds = 4;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    EdgeBuffer edge(*drv, 512);
    drv->rx_set_bd(0, 4, edge.iova());
    Frames sent = make_frames(8, [](uint32_t i) { return numbered(OWN_MAC, i, i == 3 || i == 7 ? 1800 : 46); });
    ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
    ASSERT_TRUE(wait_rx_accounted(7, 1));

    auto frames = drv->rx_wait(0, 7, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 7u);
    const uint32_t seqs[7] = {0, 1, 2, 4, 5, 6, 7};
    Tally tally;
    for (uint32_t i = 0; i < 7; i++) {
        const auto& expected = sent[seqs[i]];
        tally.add(expected);
        EXPECT_EQ(frames[i].cqe.pkt_len, expected.size()) << "CQE " << i;
        EXPECT_EQ(frames[i].cqe.bd_num, (expected.size() + 1023) / 1024) << "CQE " << i;
        if (seqs[i] == 5)
            EXPECT_EQ(edge.contents(expected.size()), expected);
        else
            EXPECT_EQ(frames[i].data, expected) << "CQE " << i;
    }
    VportStats s = drv->vport_stats(0);
    EXPECT_EQ(s.rx_error_pkts, 1u);
    expect_rx(s, tally);
    EXPECT_EQ(drv->rx_queue_stats(0).pkts, 7u);
    EXPECT_EQ(drv->rx_queue_stats(0).drops, 0u);
    EXPECT_EQ(adapter->control().dma_faults(0), 1u);
    EXPECT_EQ(drv->attn_status() & attn::DMA_FAULT, attn::DMA_FAULT);
}

TEST_F(Burst, UnmappedBufferStaysPostedUntilTheDriverMendsIt)
{
    /* Unicast frames take the short-frame lane, broadcasts the general
     * path: both must leave the buffer posted. */
    for (const uint8_t* dst : {OWN_MAC, BCAST}) {
        SCOPED_TRACE(dst == BCAST ? "broadcast" : "unicast");
        ASSERT_NO_FATAL_FAILURE(bring_up());
        /* The fifth posted buffer points into the hole after a mapped
         * page: every frame that reaches it faults, and none skips it (the
         * driver's view of the ring would no longer match). */
        EdgeBuffer edge(*drv, 128);
        uint64_t hole = edge.page.iova + edge.page.len + 64;
        drv->rx_set_bd(0, 4, hole);
        Frames sent = make_frames(10, [&](uint32_t i) { return numbered(dst, i); });
        ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
        ASSERT_TRUE(wait_rx_accounted(4, 6));
        ASSERT_NO_FATAL_FAILURE(expect_arrival(sent, 4));
        EXPECT_TRUE(drv->rx_poll(0).empty());
        EXPECT_EQ(drv->vport_stats(0).rx_error_pkts, 6u);
        EXPECT_EQ(drv->vport_stats(0).rx_no_buffer_pkts, 0u);
        EXPECT_EQ(adapter->control().dma_faults(0), 6u);
        EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_LO), static_cast<uint32_t>(hole));

        /* Mended (the driver's consumer is now at that buffer): frames flow. */
        drv->rx_set_bd(0, 0);
        drv->wr(reg::ATTN_ACK, attn::DMA_FAULT);
        sent = make_frames(3, [&](uint32_t i) { return numbered(dst, 10 + i); });
        ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
        ASSERT_NO_FATAL_FAILURE(expect_arrival(sent, 3));
        EXPECT_EQ(adapter->control().dma_faults(0), 6u);
        EXPECT_EQ(drv->attn_status() & attn::DMA_FAULT, 0u);
    }
}

TEST_F(Burst, UnicastAcceptModesHoldForEveryFilterSetWithinABurst)
{
    /* Frames to the vport's MAC and to another, with a broadcast between
     * them (which leaves the short-frame lane for the general path and
     * back), in one burst, for every unicast accept mode and no, one or
     * two MAC filters: each frame arrives exactly when classification
     * says so. */
    const uint8_t other[6] = {0x02, 0x99, 0x99, 0x99, 0x99, 0x99};
    const uint8_t second[6] = {0x02, 0x77, 0x77, 0x77, 0x77, 0x77};
    const uint16_t modes[] = {accept::UCAST_MATCHED, accept::UCAST_UNMATCHED,
                              accept::UCAST_MATCHED | accept::UCAST_UNMATCHED};
    for (uint32_t nfilters = 0; nfilters <= 2; nfilters++) {
        for (uint16_t mode : modes) {
            SCOPED_TRACE(::testing::Message() << nfilters << " filter(s), accept 0x" << std::hex << mode);
            ASSERT_NO_FATAL_FAILURE(bring_up());
            const uint8_t* filters[] = {OWN_MAC, second};
            for (uint32_t f = 0; f < nfilters; f++)
                ASSERT_EQ(drv->filter(FilterOpcode::add, FilterType::mac, 0, filters[f]), FwReturn::ok);
            ASSERT_EQ(drv->vport_activate(0, mode | accept::BCAST), FwReturn::ok);
            const uint8_t* dsts[] = {OWN_MAC, other, OWN_MAC, BCAST, other, OWN_MAC, other, second};
            Frames sent, expected;
            for (uint32_t i = 0; i < 24; i++) {
                const uint8_t* dst = dsts[i % 8];
                sent.push_back(numbered(dst, i, 46 + i));
                bool matched = (dst == OWN_MAC && nfilters >= 1) || (dst == second && nfilters >= 2);
                uint16_t needed = dst == BCAST ? accept::BCAST : matched ? accept::UCAST_MATCHED : accept::UCAST_UNMATCHED;
                if ((mode | accept::BCAST) & needed)
                    expected.push_back(sent.back());
            }
            ASSERT_NO_FATAL_FAILURE(send_in_one_doorbell(sent));
            ASSERT_TRUE(wait_rx_accounted(expected.size(), sent.size() - expected.size()));
            ASSERT_NO_FATAL_FAILURE(expect_arrival(expected, expected.size()));
            EXPECT_EQ(drv->vport_stats(0).rx_filtered_pkts, sent.size() - expected.size());
        }
    }
}

TEST_F(Burst, TxDmaFaultMidRunDropsThatPacketOnly)
{
    /* Plain UDP frames behind one doorbell, the fifth BD pointing outside
     * every mapping: that packet is a Tx error and one DMA fault, the
     * others leave in order around it. */
    ASSERT_NO_FATAL_FAILURE(bring_up());
    TxBatch batch(*drv);
    Frames sent;
    for (uint32_t i = 0; i < 10; i++) {
        if (i == 4) {
            batch.add_unmapped(60);
            continue;
        }
        sent.push_back(udp4_frame(OWN_MAC, PEER_MAC, 0x0a000001, 0x0a000002, 1000 + i, 53, 18 + i));
        ASSERT_NO_FATAL_FAILURE(batch.add(sent.back()));
    }
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));
    ASSERT_NO_FATAL_FAILURE(expect_arrival(sent, sent.size()));
    VportStats s = drv->vport_stats(0);
    EXPECT_EQ(s.tx_error_pkts, 1u);
    EXPECT_EQ(s.tx_ucast_pkts, sent.size());
    QueueStats txq = tx_queue_stats(*drv, 0);
    EXPECT_EQ(txq.pkts, sent.size());
    EXPECT_EQ(txq.drops, 1u);
    EXPECT_EQ(adapter->control().dma_faults(0), 1u);
}

TEST_F(Burst, TwoTxQueuesInOnePassKeepTheirOwnCounts)
{
    /* The Tx engine tallies per queue and flushes at the end of each
     * queue's poll: frames of queue 0 must not land in queue 1's counters. */
    ASSERT_NO_FATAL_FAILURE(bring_up());
    ASSERT_EQ(drv->tx_queue_start(1, 0, 2, 256), FwReturn::ok);
    TxBatch b0(*drv), b1(*drv);
    Tally t0, t1, all;
    for (uint32_t i = 0; i < 50; i++) {
        auto f = numbered(i % 2 ? OWN_MAC : MCAST, i, 46 + i);
        t0.add(f);
        all.add(f);
        ASSERT_NO_FATAL_FAILURE(b0.add(f));
    }
    for (uint32_t i = 0; i < 30; i++) {
        auto f = numbered(BCAST, 1000 + i, 500 + i);
        t1.add(f);
        all.add(f);
        ASSERT_NO_FATAL_FAILURE(b1.add(f));
    }
    b0.ring(0);
    b1.ring(1);
    ASSERT_TRUE(drv->wait_tx_done(0));
    ASSERT_TRUE(drv->wait_tx_done(1));
    auto frames = drv->rx_wait(0, 80, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), 80u);
    /* Each queue's frames in their order, however the two interleave. */
    uint32_t next0 = 0, next1 = 1000;
    for (auto& f : frames) {
        uint32_t seq = seq_of(f.data);
        if (seq < 1000)
            EXPECT_EQ(seq, next0++);
        else
            EXPECT_EQ(seq, next1++);
    }
    EXPECT_EQ(next0, 50u);
    EXPECT_EQ(next1, 1030u);
    QueueStats q0 = tx_queue_stats(*drv, 0), q1 = tx_queue_stats(*drv, 1);
    EXPECT_EQ(q0.pkts, 50u);
    EXPECT_EQ(q0.bytes, t0.total_bytes());
    EXPECT_EQ(q1.pkts, 30u);
    EXPECT_EQ(q1.bytes, t1.total_bytes());
    VportStats s = drv->vport_stats(0);
    expect_tx(s, all);
    expect_rx(s, all);
}

} // namespace
} // namespace cna::fw::test
