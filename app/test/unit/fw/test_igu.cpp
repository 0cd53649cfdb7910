/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks and the IGU: arm, fire once, disarm; attentions through the
 * slowpath SB, latched ones when enabled; DMA faults on an unmapped IOVA.
 */
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

uint64_t interrupts(DeviceFunction& fn, uint32_t vector)
{
    uint64_t count = 0;
    if (::read(fn.msix_eventfd(vector), &count, sizeof(count)) != sizeof(count))
        return 0;
    return count;
}

class Igu : public L2PortTest {
protected:
    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(bring_up("igu"));
        interrupts(drv->fn(), 1);
        interrupts(drv->fn(), 0);
    }
    void send_and_wait()
    {
        uint16_t before = drv->sb_pi(0, L2_PI_RX);
        drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100));
        ASSERT_TRUE(wait_until([&] { return drv->sb_pi(0, L2_PI_RX) != before; }));
    }
};

TEST_F(Igu, SbStartsDisarmedAndFiresOncePerArm)
{
    send_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(interrupts(drv->fn(), 1), 0u) << "SBs start disarmed";
    uint32_t prod = drv->sb_prod(0);
    EXPECT_EQ(drv->rd(reg::IGU_SB_PROD(0)), prod);

    /* Arming with an old acknowledged index fires at once. */
    drv->fn().bar0_write(bar0_igu_cmd(0), igu_cmd(prod - 1, IguIntOp::enable));
    EXPECT_EQ(interrupts(drv->fn(), 1), 1u);
    /* Now disarmed until re-enabled: more traffic does not interrupt. */
    send_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(interrupts(drv->fn(), 1), 0u);

    /* Acknowledge everything and arm: the next update fires once. */
    drv->fn().bar0_write(bar0_igu_cmd(0), igu_cmd(drv->sb_prod(0), IguIntOp::enable));
    EXPECT_EQ(interrupts(drv->fn(), 1), 0u);
    send_and_wait();
    ASSERT_TRUE(wait_until([&] { return interrupts(drv->fn(), 1) == 1; }));

    /* Disable: acknowledged, disarmed. */
    drv->fn().bar0_write(bar0_igu_cmd(0), igu_cmd(drv->sb_prod(0), IguIntOp::enable));
    drv->fn().bar0_write(bar0_igu_cmd(0), igu_cmd(drv->sb_prod(0), IguIntOp::disable));
    send_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(interrupts(drv->fn(), 1), 0u);
}

TEST_F(Igu, PollModeNeverFires)
{
    drv->wr(reg::IGU_INT_MODE, static_cast<uint32_t>(IntMode::poll));
    drv->fn().bar0_write(bar0_igu_cmd(0), igu_cmd(drv->sb_prod(0), IguIntOp::enable));
    send_and_wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(interrupts(drv->fn(), 1), 0u);
}

TEST_F(Igu, AttentionsGoThroughTheSlowpathSb)
{
    uint16_t attn_pi = drv->sb_pi(SP_SB_ID, SP_PI_ATTN);
    drv->fn().bar0_write(bar0_igu_cmd(SP_SB_ID), igu_cmd(drv->sb_prod(SP_SB_ID), IguIntOp::enable));
    /* A Tx BD pointing to an IOVA the IOMMU does not know. */
    FakeDriver::TxOptions bad;
    bad.addr_override = 0x7777000;
    drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100), bad);
    ASSERT_TRUE(drv->wait_tx_done(0)) << "the faulting BD is consumed";
    ASSERT_TRUE(wait_until([&] { return interrupts(drv->fn(), 0) == 1; }));
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_ATTN), attn_pi + 1);
    EXPECT_EQ(drv->attn_status() & attn::DMA_FAULT, attn::DMA_FAULT);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_LO), 0x7777000u);
    EXPECT_EQ(adapter->control().dma_faults(0), 1u);
    EXPECT_EQ(drv->vport_stats(0).tx_error_pkts, 1u);

    /* A second fault while the cause is latched does not bump the index. */
    drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100), bad);
    ASSERT_TRUE(drv->wait_tx_done(0));
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_COUNT), 2u);
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_ATTN), attn_pi + 1);
    drv->wr(reg::ATTN_ACK, attn::DMA_FAULT);
    EXPECT_EQ(drv->attn_status() & attn::DMA_FAULT, 0u);

    /* Traffic still flows afterwards. */
    drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100));
    EXPECT_EQ(drv->rx_wait(0, 1).size(), 1u);
}

/* The AEU's output is a level: a cause latched while its driver had it
 * masked (the MFW posting a link change to a PF still loading) interrupts
 * when enabled, and only then. */
TEST_F(Igu, ACauseLatchedWhileMaskedInterruptsOnceEnabled)
{
    uint16_t attn_pi = drv->sb_pi(SP_SB_ID, SP_PI_ATTN);
    drv->fn().bar0_write(bar0_igu_cmd(SP_SB_ID), igu_cmd(drv->sb_prod(SP_SB_ID), IguIntOp::enable));
    drv->wr(reg::ATTN_MASK, attn::ALL & ~attn::DMA_FAULT);
    FakeDriver::TxOptions bad;
    bad.addr_override = 0x7777000;
    drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100), bad);
    ASSERT_TRUE(drv->wait_tx_done(0));
    ASSERT_TRUE(wait_until([&] { return drv->attn_status() & attn::DMA_FAULT; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_ATTN), attn_pi) << "masked: latched, not delivered";
    EXPECT_EQ(interrupts(drv->fn(), 0), 0u);

    drv->wr(reg::ATTN_MASK, attn::ALL);
    ASSERT_TRUE(wait_until([&] { return interrupts(drv->fn(), 0) == 1; }));
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_ATTN), attn_pi + 1);
    /* Enabling again what is enabled already is no new edge. */
    drv->fn().bar0_write(bar0_igu_cmd(SP_SB_ID), igu_cmd(drv->sb_prod(SP_SB_ID), IguIntOp::enable));
    drv->wr(reg::ATTN_MASK, attn::ALL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_ATTN), attn_pi + 1);
    EXPECT_EQ(interrupts(drv->fn(), 0), 0u);
}

TEST_F(Igu, UnmappedRxBufferIsCountedNotFatal)
{
    drv->fn().dma_unmap(0, ~0ull); /* every mapping of the function is gone */
    drv->send(0, eth_frame(BCAST, PEER_MAC, 0x88b5, 100));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GE(adapter->control().dma_faults(0), 1u);
}

} // namespace
} // namespace cna::fw::test
