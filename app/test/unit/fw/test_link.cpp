/* SPDX-License-Identifier: BSD-3-Clause
 * The MFW link state machine on loopback and cable wires.
 */
#include <gtest/gtest.h>

#include <thread>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::mfw;

std::unique_ptr<Adapter> make(Wire wire, uint32_t ports, uint32_t delay_ms = 5)
{
    AdapterConfig config;
    config.name = "link";
    config.ports = ports;
    config.wire = wire;
    config.link_up_delay_ms = delay_ms;
    return Adapter::create(config, nullptr);
}

uint32_t link_status(FakeDriver& drv, uint32_t port) { return drv.rd(port_addr(port) + offsetof(PublicPort, link_status)); }
bool link_up(FakeDriver& drv, uint32_t port) { return link_status(drv, port) & LINK_STATUS_LINK_UP; }
uint32_t msg_prod(FakeDriver& drv)
{
    return drv.rd(mfw_mb_addr(drv.pf()) + offsetof(MfwMailbox, msg_prod) +
                  4 * static_cast<uint32_t>(MfwMsg::link_change));
}

uint32_t init_phy(FakeDriver& drv, uint32_t forced = 0, uint32_t adv = 0)
{
    DrvPhyCfg cfg{forced, adv, 0x6, 0};
    drv.write_union(&cfg, sizeof(cfg));
    return drv.mcp_cmd(DRV_MSG_CODE_INIT_PHY);
}

void load(FakeDriver& drv)
{
    drv.open_ptt_access();
    ASSERT_NE(drv.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), 0u);
    ASSERT_EQ(drv.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_DRV_LOAD_DONE);
    drv.wr(reg::ATTN_MASK, attn::ALL);
}

TEST(Link, LoopbackComesUpAfterTheDelayAndRaisesAttentions)
{
    auto adapter = make(Wire::loopback, 1, 30);
    FakeDriver drv(*adapter, 0);
    load(drv);
    EXPECT_FALSE(link_up(drv, 0));
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(init_phy(drv), FW_MSG_CODE_LINK_DONE);
    ASSERT_TRUE(wait_until([&] { return link_up(drv, 0); }));
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25)) << "autonegotiation takes time";
    uint32_t status = link_status(drv, 0);
    EXPECT_EQ((status & LINK_STATUS_SPEED_MASK) >> LINK_STATUS_SPEED_SHIFT, static_cast<uint32_t>(LinkSpeed::s100g));
    EXPECT_TRUE(status & LINK_STATUS_AUTONEG_COMPLETE);
    EXPECT_TRUE(status & LINK_STATUS_RX_PAUSE);
    EXPECT_EQ(drv.rd(port_addr(0) + offsetof(PublicPort, link_change_count)), 1u);
    EXPECT_EQ(msg_prod(drv), 1u);
    EXPECT_TRUE(drv.attn_status() & attn::MFW_EVENT);
    drv.wr(reg::ATTN_ACK, attn::MFW_EVENT);
    EXPECT_FALSE(drv.attn_status() & attn::MFW_EVENT);

    /* Pulling the plug drops the link at once. */
    adapter->control().set_carrier(0, false);
    ASSERT_TRUE(wait_until([&] { return !link_up(drv, 0); }));
    EXPECT_EQ(msg_prod(drv), 2u);
    EXPECT_TRUE(drv.attn_status() & attn::MFW_EVENT);
    adapter->control().set_carrier(0, true);
    ASSERT_TRUE(wait_until([&] { return link_up(drv, 0); }));
    EXPECT_EQ(adapter->control().port_counters(0).link_changes, 3u);

    ASSERT_EQ(drv.mcp_cmd(DRV_MSG_CODE_LINK_RESET), FW_MSG_CODE_LINK_DONE);
    ASSERT_TRUE(wait_until([&] { return !link_up(drv, 0); }));
}

TEST(Link, ForcedSpeedMustBeSupported)
{
    auto adapter = make(Wire::loopback, 1, 0);
    FakeDriver drv(*adapter, 0);
    load(drv);
    ASSERT_EQ(init_phy(drv, static_cast<uint32_t>(LinkSpeed::s1g)), FW_MSG_CODE_LINK_DONE);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_FALSE(link_up(drv, 0)) << "1G is not a capability";
    ASSERT_EQ(init_phy(drv, static_cast<uint32_t>(LinkSpeed::s25g)), FW_MSG_CODE_LINK_DONE);
    ASSERT_TRUE(wait_until([&] { return link_up(drv, 0); }));
    EXPECT_EQ((link_status(drv, 0) & LINK_STATUS_SPEED_MASK) >> LINK_STATUS_SPEED_SHIFT,
              static_cast<uint32_t>(LinkSpeed::s25g));
    EXPECT_FALSE(link_status(drv, 0) & LINK_STATUS_AUTONEG_ENABLED);
}

TEST(Link, CableNeedsBothPhysAndCarriers)
{
    auto adapter = make(Wire::cable, 2, 1);
    FakeDriver a(*adapter, 0), b(*adapter, 1);
    load(a);
    load(b);
    ASSERT_EQ(init_phy(a), FW_MSG_CODE_LINK_DONE);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_FALSE(link_up(a, 0)) << "the partner's PHY is still off";
    EXPECT_EQ(msg_prod(a), 0u);
    /* The partner advertises only 25G and 40G: the highest common speed wins. */
    ASSERT_EQ(init_phy(b, 0, speed_cap(LinkSpeed::s25g) | speed_cap(LinkSpeed::s40g)), FW_MSG_CODE_LINK_DONE);
    ASSERT_TRUE(wait_until([&] { return link_up(a, 0) && link_up(b, 1); }));
    EXPECT_EQ((link_status(a, 0) & LINK_STATUS_SPEED_MASK) >> LINK_STATUS_SPEED_SHIFT,
              static_cast<uint32_t>(LinkSpeed::s40g));
    EXPECT_EQ(msg_prod(a), 1u);
    EXPECT_EQ(msg_prod(b), 1u);

    adapter->control().set_carrier(1, false);
    ASSERT_TRUE(wait_until([&] { return !link_up(a, 0) && !link_up(b, 1); }));
    EXPECT_TRUE(a.attn_status() & attn::MFW_EVENT);
    EXPECT_EQ(msg_prod(a), 2u);
    adapter->control().set_carrier(1, true);
    ASSERT_TRUE(wait_until([&] { return link_up(a, 0) && link_up(b, 1); }));

    /* The last PF of port 1 unloading resets its PHY: the cable goes dark. */
    ASSERT_EQ(b.mcp_cmd(DRV_MSG_CODE_UNLOAD_REQ), FW_MSG_CODE_DRV_UNLOAD_PORT);
    ASSERT_EQ(b.mcp_cmd(DRV_MSG_CODE_UNLOAD_DONE), FW_MSG_CODE_DRV_UNLOAD_DONE);
    ASSERT_TRUE(wait_until([&] { return !link_up(a, 0); }));
}

} // namespace
} // namespace cna::fw::test
