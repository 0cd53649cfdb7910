/* SPDX-License-Identifier: BSD-3-Clause
 * DMA faults in the middle of a burst: a buffer that does not translate
 * costs its own frame only, on the Rx plain lane, the scatter path and Tx,
 * and a buffer left unmapped stays posted until the driver mends it.
 */
#include "burst_fixture.h"

namespace cna::fw::test {
namespace {

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
    ASSERT_NO_FATAL_FAILURE(bring_up(Rings::scatter(4)));
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

} // namespace
} // namespace cna::fw::test
