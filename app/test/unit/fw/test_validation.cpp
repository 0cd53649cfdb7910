/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter is as suspicious of its driver as hardware must be: each class
 * of bad request a host can write (Tx BDs, doorbell and GTT producers, BAR0
 * and GRC accesses) gets its drop, counter and attention with the details
 * latched, and the port goes on serving the requests that follow. Ramrods
 * with bad parameters are test_storm.cpp's (an error completion each).
 */
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "fake_driver.h"
#include "irq/cau.h"
#include "frame/frame.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;
using namespace std::chrono_literals;

class Validation : public L2PortTest {
public:
    TxBd bd(uint16_t nbytes, uint8_t flags = txbd::START, uint8_t nbds = 1, uint64_t offset = 0) const
    {
        TxBd b{};
        b.addr = make_regpair(buffer.iova + offset);
        b.nbytes = nbytes;
        b.nbds = nbds;
        b.flags = flags;
        return b;
    }

protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(bring_up("validation"));
        buffer = drv->alloc(64 * 1024);
        good = eth_frame(BCAST, PEER_MAC, 0x88b5, 60);
        std::memcpy(buffer.va, good.data(), good.size());
    }

    /* The latched queue error, once its attention is there; acknowledged. */
    uint32_t take_queue_error()
    {
        EXPECT_TRUE(wait_until([&] { return drv->attn_status() & attn::QUEUE_ERROR; }))
            << "no QUEUE_ERROR attention";
        uint32_t error = drv->rd(reg::STORM_PF_QUEUE_ERROR);
        drv->wr(reg::ATTN_ACK, attn::QUEUE_ERROR);
        return error;
    }

    uint32_t take_bad_access(uint32_t& info)
    {
        EXPECT_TRUE(drv->attn_status() & attn::BAD_ACCESS) << "latched on the access itself";
        info = drv->rd(reg::PGLUE_BAD_ACCESS_INFO);
        uint32_t addr = drv->rd(reg::PGLUE_BAD_ACCESS_ADDR);
        drv->wr(reg::ATTN_ACK, attn::BAD_ACCESS);
        return addr;
    }

    /* What follows a refused request is served. */
    void expect_port_works()
    {
        drv->send(0, good);
        auto frames = drv->rx_wait(0, 1);
        ASSERT_EQ(frames.size(), 1u) << "the port no longer loops frames back";
        EXPECT_EQ(frames[0].data, good);
    }

    HostMem buffer;
    std::vector<uint8_t> good;
};

struct BadTx {
    const char* name;
    std::vector<TxBd> (*bds)(const Validation&);
    QueueError why;
    bool oversize; /* counted in tx_oversize_pkts, else tx_error_pkts */
};

class TxValidation : public Validation, public ::testing::WithParamInterface<BadTx> {};

TEST_P(TxValidation, DropCounterAttentionAndThePortGoesOn)
{
    const BadTx& c = GetParam();
    VportStats before = drv->vport_stats(0);
    uint32_t errors = drv->rd(reg::STORM_PF_QUEUE_ERROR_COUNT);
    drv->send_bds(0, c.bds(*this));
    ASSERT_TRUE(drv->wait_tx_done(0)) << "the BDs are consumed, not left in the ring";

    EXPECT_EQ(take_queue_error(), queue_error(QueueKind::tx, 0, c.why));
    EXPECT_EQ(drv->rd(reg::STORM_PF_QUEUE_ERROR_COUNT), errors + 1);
    VportStats after = drv->vport_stats(0);
    EXPECT_EQ(after.tx_error_pkts - before.tx_error_pkts, c.oversize ? 0u : 1u);
    EXPECT_EQ(after.tx_oversize_pkts - before.tx_oversize_pkts, c.oversize ? 1u : 0u);
    EXPECT_EQ(drv->stat64(iro::tx_queue_stats(0, 0) + offsetof(QueueStats, drops)), 1u);
    EXPECT_TRUE(drv->rx_poll(0).empty()) << "nothing of the bad packet reached the wire";
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

std::vector<TxBd> no_start(const Validation& v) { return {v.bd(60, 0)}; }
std::vector<TxBd> zero_bds(const Validation& v) { return {v.bd(60, txbd::START, 0)}; }
std::vector<TxBd> too_many_bds(const Validation& v)
{
    return {v.bd(60, txbd::START, MAX_BDS_PER_PACKET + 1)};
}
std::vector<TxBd> chain_past_producer(const Validation& v) { return {v.bd(60, txbd::START, 3), v.bd(60, 0)}; }
std::vector<TxBd> zero_size(const Validation& v) { return {v.bd(0)}; }
std::vector<TxBd> zero_size_in_chain(const Validation& v) { return {v.bd(60, txbd::START, 2), v.bd(0, 0)}; }
std::vector<TxBd> runt(const Validation& v) { return {v.bd(ETH_HLEN - 1)}; }
std::vector<TxBd> past_mtu(const Validation& v) { return {v.bd(1500 + ETH_HLEN + 1)}; }
std::vector<TxBd> past_mtu_gathered(const Validation& v)
{
    return {v.bd(1000, txbd::START | txbd::IP_CSUM, 2), v.bd(1000, 0, 0, 1000)};
}
std::vector<TxBd> past_gather_limit(const Validation& v)
{
    std::vector<TxBd> bds(5, v.bd(UINT16_MAX, 0));
    bds[0] = v.bd(UINT16_MAX, txbd::START, 5);
    return bds;
}
std::vector<TxBd> lso_without_mss(const Validation& v) { return {v.bd(60, txbd::START | txbd::LSO)}; }

INSTANTIATE_TEST_SUITE_P(
    BadBds, TxValidation,
    ::testing::Values(BadTx{"NoStart", no_start, QueueError::first_bd_without_start, false},
                      BadTx{"ZeroBds", zero_bds, QueueError::illegal_nbds, false},
                      BadTx{"TooManyBds", too_many_bds, QueueError::illegal_nbds, false},
                      BadTx{"ChainPastProducer", chain_past_producer, QueueError::insufficient_bds, false},
                      BadTx{"ZeroSize", zero_size, QueueError::zero_size_bd, false},
                      BadTx{"ZeroSizeInChain", zero_size_in_chain, QueueError::zero_size_bd, false},
                      BadTx{"Runt", runt, QueueError::packet_too_small, false},
                      BadTx{"PastMtu", past_mtu, QueueError::mtu_violation, true},
                      BadTx{"PastMtuGathered", past_mtu_gathered, QueueError::mtu_violation, true},
                      BadTx{"PastGatherLimit", past_gather_limit, QueueError::packet_too_long, false},
                      BadTx{"LsoWithoutMss", lso_without_mss, QueueError::illegal_lso, false}),
    [](const ::testing::TestParamInfo<BadTx>& info) { return std::string(info.param.name); });

TEST_F(Validation, TxBufferOutsideTheIommuIsADmaFault)
{
    drv->send_bds(0, {bd(60, txbd::START, 1, 64 * 1024 + 4096)});
    ASSERT_TRUE(drv->wait_tx_done(0));
    EXPECT_EQ(drv->vport_stats(0).tx_error_pkts, 1u);
    EXPECT_TRUE(drv->attn_status() & attn::DMA_FAULT);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_LO), static_cast<uint32_t>(buffer.iova + 64 * 1024 + 4096));
    EXPECT_FALSE(drv->attn_status() & attn::QUEUE_ERROR) << "a fault has its own attention";
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, TxDoorbellPastTheRingIsIgnored)
{
    const uint16_t prod = drv->tx_prod(0);
    const uint16_t cons = drv->sb_pi(1, L2_PI_TX);
    drv->ring_doorbell_at(drv->tx_cid(0), static_cast<uint16_t>(prod + 64 + 1));
    EXPECT_EQ(take_queue_error(), queue_error(QueueKind::tx, 0, QueueError::prod_past_ring));
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(drv->sb_pi(1, L2_PI_TX), cons) << "no BD consumed on a producer the ring cannot hold";
    EXPECT_EQ(drv->rd(reg::STORM_PF_QUEUE_ERROR_COUNT), 1u) << "reported once, not on every engine pass";
    EXPECT_EQ(drv->vport_stats(0).tx_error_pkts, 0u);
    drv->tx_produce(0, 0);
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, RxProducerPastTheRingIsRefused)
{
    const uint16_t bd_prod = drv->rx_bd_prod(0);
    drv->rx_write_producers(0, static_cast<uint16_t>(bd_prod + 64 + 1), drv->rx_cqe_cons(0));
    drv->send(0, good);
    EXPECT_EQ(take_queue_error(), queue_error(QueueKind::rx, 0, QueueError::prod_past_ring));
    ASSERT_TRUE(wait_until([&] { return drv->vport_stats(0).rx_no_buffer_pkts == 1; }))
        << "the frame finds no buffer it may use";
    EXPECT_TRUE(drv->rx_poll(0).empty());
    drv->send(0, good);
    ASSERT_TRUE(wait_until([&] { return drv->vport_stats(0).rx_no_buffer_pkts == 2; }));
    EXPECT_EQ(drv->rd(reg::STORM_PF_QUEUE_ERROR_COUNT), 1u) << "reported once per value written";
    drv->rx_recycle(0, 0);
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, RxCompletionConsumerAheadOfTheProducerIsRefused)
{
    drv->rx_write_producers(0, drv->rx_bd_prod(0), static_cast<uint16_t>(drv->rx_cqe_cons(0) + 5));
    drv->send(0, good);
    EXPECT_EQ(take_queue_error(), queue_error(QueueKind::rx, 0, QueueError::cons_past_prod));
    ASSERT_TRUE(wait_until([&] { return drv->vport_stats(0).rx_no_buffer_pkts == 1; }));
    drv->rx_recycle(0, 0);
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, SpqDoorbellPastTheRingIsIgnored)
{
    drv->ring_doorbell_at(CID_SPQ, static_cast<uint16_t>(drv->spq_prod() + FakeDriver::SPQ_SIZE + 1));
    EXPECT_EQ(take_queue_error(), queue_error(QueueKind::spq, 0, QueueError::prod_past_ring));
    drv->ring_doorbell_at(CID_SPQ, drv->spq_prod());
    EventRingElement e = drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_FALSE(drv->eqe_timed_out()) << "the SPQ takes ramrods again";
    EXPECT_EQ(e.fw_return_code, static_cast<uint8_t>(FwReturn::ok));
    EXPECT_EQ(drv->rd(reg::STORM_PF_QUEUE_ERROR_COUNT), 1u);
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, Bar0AccessesNoRegisterDecodes)
{
    struct Access {
        uint32_t offset;
        bool write;
    };
    const Access accesses[] = {
        {BAR0_SIZE, false},                  /* past the BAR */
        {BAR0_SIZE + 0x100, true},
        {bar0_ptt_window(0) + 2, true},      /* not dword-aligned */
        {bar0_ptt_entry(PTT_WINDOWS), true}, /* a PTT that does not exist */
        {bar0_ptt_entry(PTT_WINDOWS), false},
        {bar0_igu_cmd(SB_COUNT), true},      /* a status block that does not exist */
    };
    uint32_t count = drv->rd(reg::PGLUE_BAD_ACCESS_COUNT);
    for (const Access& a : accesses) {
        SCOPED_TRACE(testing::Message() << (a.write ? "write" : "read") << " at 0x" << std::hex << a.offset);
        if (a.write)
            drv->fn().bar0_write(a.offset, 0x12345678);
        else
            EXPECT_EQ(drv->fn().bar0_read(a.offset), 0xffffffffu) << "an unanswered read is all ones";
        uint32_t info = 0;
        EXPECT_EQ(take_bad_access(info), a.offset);
        EXPECT_EQ(info, a.write ? reg::BAD_ACCESS_WRITE : 0u);
        EXPECT_EQ(drv->rd(reg::PGLUE_BAD_ACCESS_COUNT), ++count);
    }
    EXPECT_EQ(drv->rd(reg::MISC_PF_ID), 0u) << "the PTTs still work";
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, GrcAddressesNoBlockDecodes)
{
    const uint32_t unknown[] = {reg::NIG_BASE + 0x100, reg::STORM_PF_BASE + 0x7ffc, 0x300000};
    for (uint32_t addr : unknown) {
        SCOPED_TRACE(testing::Message() << "GRC 0x" << std::hex << addr);
        EXPECT_EQ(drv->rd(addr), 0xffffffffu);
        uint32_t info = 0;
        EXPECT_EQ(take_bad_access(info), addr);
        EXPECT_EQ(info, reg::BAD_ACCESS_GRC);
        drv->wr(addr, 1);
        EXPECT_EQ(take_bad_access(info), addr);
        EXPECT_EQ(info, reg::BAD_ACCESS_GRC | reg::BAD_ACCESS_WRITE);
    }
    /* Read-only registers take writes silently, as the guide's PTT users expect. */
    drv->wr(reg::MISC_CHIP_ID, 0);
    EXPECT_FALSE(drv->attn_status() & attn::BAD_ACCESS);
    ASSERT_NO_FATAL_FAILURE(expect_port_works());
}

TEST_F(Validation, AttentionsInterruptOnceDelivered)
{
    /* Latched on the host's own thread, delivered by the engine's slowpath:
     * the slowpath SB's attention index moves. */
    drv->wr(reg::ATTN_MASK, attn::ALL);
    const uint16_t idx = drv->sb_pi(SP_SB_ID, SP_PI_ATTN);
    drv->fn().bar0_write(BAR0_SIZE, 0);
    EXPECT_TRUE(wait_until([&] { return drv->sb_pi(SP_SB_ID, SP_PI_ATTN) != idx; }));
}

} // namespace
} // namespace cna::fw::test
