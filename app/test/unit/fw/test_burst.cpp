/* SPDX-License-Identifier: BSD-3-Clause
 * The dataplane's bursts: frames move from the storms' Tx to Rx up to
 * FrameBurst::MAX (32) at a time, statistics, producers, ring translations
 * and SB indices are handled once per burst, and Rx serves most frames on
 * a plain lane with a per-frame fallback to the general path. These tests
 * queue many packets behind a single doorbell, so that the engine takes
 * them in one poll and cuts them into several bursts, and check that order,
 * every counter and the ring indices come out as if frames went one by one.
 * DMA faults within a burst are test_burst_faults.cpp's.
 */
#include "burst_fixture.h"

namespace cna::fw::test {
namespace {

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
    EXPECT_EQ(drv.sb_pi(0, L2_PI_RX), static_cast<uint16_t>(count)) << "Rx SB: one CQE per frame";

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
    ASSERT_NO_FATAL_FAILURE(bring_up(Rings::scatter(2)));
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
    /* The same UDP frames, short (plain lane), long enough for the lane
     * to sum them as it copies, and over one 1 KiB buffer (general path),
     * with good and bad checksums, mixed in one burst: the CQEs differ
     * only in buffer counts and lengths. */
    Rings r;
    r.bd_max_bytes = 1024;
    r.max_bds = 2;
    ASSERT_NO_FATAL_FAILURE(bring_up(r));
    std::vector<std::vector<uint8_t>> sent;
    TxBatch batch(*drv);
    constexpr uint32_t FRAMES = 12;
    const uint32_t payloads[] = {100, 600, 1400};
    for (uint32_t i = 0; i < FRAMES; i++) {
        auto f = udp4_frame(OWN_MAC, PEER_MAC, 0x0a000001, 0x0a000002, 1000 + i, 53, payloads[i % 3]);
        if (i % 4 >= 2)
            f[f.size() - 1] ^= 0x5a; /* payload: the UDP checksum is now wrong */
        sent.push_back(f);
        ASSERT_NO_FATAL_FAILURE(batch.add(f));
    }
    batch.ring(0);
    ASSERT_TRUE(drv->wait_tx_done(0));
    auto frames = drv->rx_wait(0, FRAMES, RX_TIMEOUT);
    ASSERT_EQ(frames.size(), FRAMES);
    for (uint32_t i = 0; i < FRAMES; i++) {
        const RxCqe& cqe = frames[i].cqe;
        bool bad = i % 4 >= 2;
        EXPECT_EQ(frames[i].data, sent[i]) << "CQE " << i;
        EXPECT_EQ(cqe.type, static_cast<uint8_t>(CqeType::regular));
        EXPECT_EQ(cqe.bd_num, sent[i].size() > 1024 ? 2u : 1u) << "CQE " << i;
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
