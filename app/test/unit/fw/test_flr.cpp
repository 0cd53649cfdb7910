/* SPDX-License-Identifier: BSD-3-Clause
 * Function level reset: a PF whose driver went away without unloading (its
 * process died) is refused to a new driver until it is reset, and after
 * the reset loads and carries traffic again; the reset turns bus mastering
 * off, so nothing of the old driver's is touched any more.
 */
#include <gtest/gtest.h>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

const uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
const uint8_t PEER[6] = {0x02, 0x00, 0x00, 0x00, 0x0f, 0x01};

std::string round_trip(FakeDriver& drv)
{
    const auto frame = udp4_frame(BCAST, PEER, 0x0a000001, 0x0a000002, 1, 2, 100);
    drv.send(0, frame);
    auto got = drv.rx_wait(0, 1, std::chrono::seconds(2));
    if (got.size() != 1 || got[0].data != frame)
        return "the frame did not come back over the loopback wire";
    return "";
}

TEST(FunctionLevelReset, APfWhoseDriverVanishedLoadsAgainAfterIt)
{
    AdapterConfig config;
    config.name = "flr";
    config.link_up_delay_ms = 0;
    auto adapter = Adapter::create(config, nullptr);
    ASSERT_NE(adapter, nullptr);
    auto first = std::make_unique<FakeDriver>(*adapter, 0);
    ASSERT_EQ(bring_up_l2(*first, L2Setup{}), "");
    ASSERT_TRUE(wait_link(*first));
    ASSERT_EQ(round_trip(*first), "");
    first.reset(); /* gone without unloading: its memory unmapped, the PF loaded */

    auto second = std::make_unique<FakeDriver>(*adapter, 0);
    EXPECT_NE(bring_up_l2(*second, L2Setup{}), "") << "a PF still loaded must refuse a second driver";
    second.reset();

    const uint64_t faults = adapter->control().dma_faults(0);
    adapter->function_level_reset(0);
    DeviceFunction& fn = adapter->function(0);
    for (uint32_t off = 0; off < hsi::DB_BAR_SIZE; off += 4)
        ASSERT_EQ(fn.doorbell_memory()[off], 0) << "doorbell BAR offset " << off;
    /* Frames arriving now find no queue: nothing is DMA'd for the old driver. */
    adapter->control().set_carrier(0, true);
    EXPECT_EQ(adapter->control().dma_faults(0), faults);

    auto third = std::make_unique<FakeDriver>(*adapter, 0);
    ASSERT_EQ(bring_up_l2(*third, L2Setup{}), "");
    ASSERT_TRUE(wait_link(*third));
    EXPECT_EQ(round_trip(*third), "");
}

TEST(FunctionLevelReset, TheOtherFunctionsCarryOn)
{
    auto adapter = Adapter::create(cabled_ports("flr2"), nullptr);
    ASSERT_NE(adapter, nullptr);
    FakeDriver pf0(*adapter, 0), pf1(*adapter, 1);
    ASSERT_EQ(bring_up_l2(pf0, L2Setup{}), "");
    ASSERT_EQ(bring_up_l2(pf1, L2Setup{}), "");
    ASSERT_TRUE(wait_link(pf0));
    ASSERT_TRUE(wait_link(pf1));
    adapter->function_level_reset(0);
    /* PF 1's queues and vport are untouched: it still sends, and its own
     * counters go on. */
    const auto frame = udp4_frame(BCAST, PEER, 1, 2, 3, 4, 64);
    pf1.send(0, frame);
    EXPECT_TRUE(pf1.wait_tx_done(0));
    EXPECT_EQ(pf1.vport_stats(0).tx_bcast_pkts, 1u);
}

} // namespace
} // namespace cna::fw::test
