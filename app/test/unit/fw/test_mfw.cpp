/* SPDX-License-Identifier: BSD-3-Clause
 * MFW: SHMEM at power-on, the mailbox and the load bookkeeping.
 */
#include <gtest/gtest.h>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::mfw;

std::unique_ptr<Adapter> make(uint32_t ports, uint32_t pfs_per_port, uint32_t faults = 0)
{
    AdapterConfig config;
    config.name = "mfw";
    config.ports = ports;
    config.pfs_per_port = pfs_per_port;
    config.faults = faults;
    return Adapter::create(config, nullptr);
}

TEST(Mfw, FillsShmemAtPowerOn)
{
    auto adapter = make(2, 2);
    FakeDriver drv(*adapter, 3);
    EXPECT_EQ(drv.rd(reg::MCP_PUBLIC_ADDR), reg::MCP_SHMEM_BASE);
    EXPECT_EQ(drv.rd(shmem_addr(offsetof(Shmem, magic))), SHMEM_MAGIC);
    EXPECT_EQ(drv.rd(shmem_addr(offsetof(Shmem, num_ports))), 2u);
    EXPECT_EQ(drv.rd(shmem_addr(offsetof(Shmem, num_pfs))), 4u);
    EXPECT_NE(drv.rd(shmem_addr(offsetof(Shmem, mfw_version))), 0u);
    uint32_t port1 = port_addr(1);
    EXPECT_EQ(drv.rd(port1 + offsetof(PublicPort, link_status)), 0u);
    uint32_t caps = drv.rd(port1 + offsetof(PublicPort, speed_capabilities));
    for (LinkSpeed s : {LinkSpeed::s10g, LinkSpeed::s25g, LinkSpeed::s40g, LinkSpeed::s50g, LinkSpeed::s100g})
        EXPECT_TRUE(caps & speed_cap(s));
    uint32_t f3 = func_addr(3);
    /* base 02:00:c0:a0:00:00 + 3 */
    EXPECT_EQ(drv.rd(f3 + offsetof(PublicFunc, mac_upper)), 0x0200u);
    EXPECT_EQ(drv.rd(f3 + offsetof(PublicFunc, mac_lower)), 0xc0a00003u);
    EXPECT_EQ(drv.rd(f3 + offsetof(PublicFunc, port_id)), 1u);
    EXPECT_EQ(drv.rd(f3 + offsetof(PublicFunc, mtu)), 1500u);
    EXPECT_GT(drv.rd(f3 + offsetof(PublicFunc, num_rx_queues)), 0u);
    EXPECT_GT(drv.rd(f3 + offsetof(PublicFunc, num_mac_filters)), 0u);
    EXPECT_EQ(drv.rd(f3 + offsetof(PublicFunc, num_vports)), MAX_VPORTS_PER_PF);
}

TEST(Mfw, LoadRequestsFollowEnginePortFunction)
{
    auto adapter = make(2, 2); /* PF0, PF2 on port 0; PF1, PF3 on port 1 */
    FakeDriver pf0(*adapter, 0), pf1(*adapter, 1), pf2(*adapter, 2), pf3(*adapter, 3);
    /* Each load done before the next PF asks (LoadsGoOneAtATime). */
    const auto load = [](FakeDriver& d) {
        const uint32_t code = d.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR);
        EXPECT_EQ(d.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_DRV_LOAD_DONE);
        return code;
    };
    EXPECT_EQ(load(pf0), FW_MSG_CODE_DRV_LOAD_ENGINE);
    EXPECT_EQ(load(pf2), FW_MSG_CODE_DRV_LOAD_FUNCTION);
    EXPECT_EQ(load(pf1), FW_MSG_CODE_DRV_LOAD_PORT);
    EXPECT_EQ(load(pf3), FW_MSG_CODE_DRV_LOAD_FUNCTION);

    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_UNLOAD_REQ), FW_MSG_CODE_DRV_UNLOAD_FUNCTION);
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_UNLOAD_DONE), FW_MSG_CODE_DRV_UNLOAD_DONE);
    EXPECT_EQ(pf2.mcp_cmd(DRV_MSG_CODE_UNLOAD_REQ), FW_MSG_CODE_DRV_UNLOAD_PORT);
    EXPECT_EQ(pf2.mcp_cmd(DRV_MSG_CODE_UNLOAD_DONE), FW_MSG_CODE_DRV_UNLOAD_DONE);
    EXPECT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_UNLOAD_REQ), FW_MSG_CODE_DRV_UNLOAD_FUNCTION);
    EXPECT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_UNLOAD_DONE), FW_MSG_CODE_DRV_UNLOAD_DONE);
    EXPECT_EQ(pf3.mcp_cmd(DRV_MSG_CODE_UNLOAD_REQ), FW_MSG_CODE_DRV_UNLOAD_ENGINE);
    EXPECT_EQ(pf3.mcp_cmd(DRV_MSG_CODE_UNLOAD_DONE), FW_MSG_CODE_DRV_UNLOAD_DONE);

    /* Everything unloaded: the next load owns the engine again. */
    EXPECT_EQ(pf2.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), FW_MSG_CODE_DRV_LOAD_ENGINE);
}

TEST(Mfw, RefusesMismatchedOrRepeatedLoads)
{
    auto adapter = make(1, 2);
    FakeDriver pf0(*adapter, 0), pf1(*adapter, 1);
    uint32_t param = 0;
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR + 1, &param), FW_MSG_CODE_DRV_LOAD_REFUSED);
    EXPECT_EQ(param, static_cast<uint32_t>(LoadRefusal::hsi_mismatch));
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_INVALID_SEQUENCE) << "no granted LOAD_REQ";
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), FW_MSG_CODE_DRV_LOAD_ENGINE);
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_DRV_LOAD_DONE);
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR, &param), FW_MSG_CODE_DRV_LOAD_REFUSED);
    EXPECT_EQ(param, static_cast<uint32_t>(LoadRefusal::already_loaded));
    EXPECT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_INVALID_SEQUENCE);
    EXPECT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), FW_MSG_CODE_DRV_LOAD_FUNCTION);
    EXPECT_EQ(pf1.mcp_cmd(0x7f000000), FW_MSG_CODE_UNSUPPORTED);
    EXPECT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_GET_LINK), FW_MSG_CODE_LINK_DONE);
}

/* The second PF of a port finds its link up (the first brought it up):
 * nothing changes, and the MFW tells it of the link all the same; the
 * link goes down when no PF of the port wants it any more. */
TEST(Mfw, ThePfsOfAPortShareItsLink)
{
    auto adapter = make(1, 2);
    FakeDriver pf0(*adapter, 0), pf1(*adapter, 1);
    const auto link_messages = [](FakeDriver& drv, uint32_t pf) {
        return drv.rd(mfw_mb_addr(pf) + offsetof(MfwMailbox, msg_prod) +
                      4 * static_cast<uint32_t>(MfwMsg::link_change));
    };
    for (FakeDriver* d : {&pf0, &pf1}) {
        ASSERT_EQ(d->mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR) & FW_MSG_CODE_MASK,
                  d == &pf0 ? FW_MSG_CODE_DRV_LOAD_ENGINE : FW_MSG_CODE_DRV_LOAD_FUNCTION);
        ASSERT_EQ(d->mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_DRV_LOAD_DONE);
    }
    ASSERT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_INIT_PHY), FW_MSG_CODE_LINK_DONE);
    ASSERT_TRUE(wait_link(pf0, std::chrono::seconds(5)));
    const uint32_t before = link_messages(pf1, 1);
    ASSERT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_INIT_PHY), FW_MSG_CODE_LINK_DONE);
    EXPECT_EQ(link_messages(pf1, 1), before + 1) << "told at once, the link being up already";

    /* The port's PHY is shared: down only once neither wants it. */
    const auto up = [&] { return (pf0.rd(port_addr(0) + offsetof(PublicPort, link_status)) & LINK_STATUS_LINK_UP) != 0; };
    ASSERT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_LINK_RESET), FW_MSG_CODE_LINK_DONE);
    EXPECT_TRUE(up()) << "PF 0 still wants it";
    ASSERT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_INIT_PHY), FW_MSG_CODE_LINK_DONE);
    ASSERT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LINK_RESET), FW_MSG_CODE_LINK_DONE);
    EXPECT_TRUE(up()) << "PF 1 wants it again";
    ASSERT_EQ(pf1.mcp_cmd(DRV_MSG_CODE_LINK_RESET), FW_MSG_CODE_LINK_DONE);
    EXPECT_FALSE(up()) << "nobody wants it";
}

/* A LOAD_REQ waits while another PF's load is under way: the answer
 * (ENGINE, PORT or FUNCTION) depends on it, and two PFs initialising the
 * engine at once would reset each other's storms. */
TEST(Mfw, LoadsGoOneAtATime)
{
    auto adapter = make(1, 2);
    FakeDriver pf0(*adapter, 0), pf1(*adapter, 1);
    ASSERT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), FW_MSG_CODE_DRV_LOAD_ENGINE);
    const uint32_t mb = drv_mb_addr(1);
    pf1.wr(mb + offsetof(DrvMailbox, drv_mb_param), HSI_VERSION_MAJOR);
    pf1.wr(mb + offsetof(DrvMailbox, drv_mb_header), DRV_MSG_CODE_LOAD_REQ | 0x0042);
    EXPECT_FALSE(wait_until([&] { return pf1.rd(mb + offsetof(DrvMailbox, fw_mb_header)) != 0; },
                            std::chrono::milliseconds(200)))
        << "not answered while PF 0 is loading";
    ASSERT_EQ(pf0.mcp_cmd(DRV_MSG_CODE_LOAD_DONE), FW_MSG_CODE_DRV_LOAD_DONE);
    ASSERT_TRUE(wait_until([&] { return pf1.rd(mb + offsetof(DrvMailbox, fw_mb_header)) != 0; }));
    EXPECT_EQ(pf1.rd(mb + offsetof(DrvMailbox, fw_mb_header)), FW_MSG_CODE_DRV_LOAD_FUNCTION | 0x0042);
}

TEST(Mfw, AnswersAsynchronouslyWithTheDriversSequence)
{
    auto adapter = make(1, 1);
    FakeDriver drv(*adapter, 0);
    uint32_t mb = drv_mb_addr(0);
    drv.wr(mb + offsetof(DrvMailbox, drv_mb_header), DRV_MSG_CODE_GET_LINK | 0x1234);
    ASSERT_TRUE(wait_until([&] { return drv.rd(mb + offsetof(DrvMailbox, fw_mb_header)) != 0; }));
    EXPECT_EQ(drv.rd(mb + offsetof(DrvMailbox, fw_mb_header)), FW_MSG_CODE_LINK_DONE | 0x1234);
}

TEST(Mfw, SilentMfwNeverAnswers)
{
    auto adapter = make(1, 1, static_cast<uint32_t>(Fault::mfw_silent));
    FakeDriver drv(*adapter, 0);
    EXPECT_EQ(drv.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR, nullptr, std::chrono::milliseconds(50)), 0u);
    adapter->control().inject(Fault::mfw_silent, false);
    EXPECT_EQ(drv.mcp_cmd(DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR), FW_MSG_CODE_DRV_LOAD_ENGINE)
        << "the dropped command left no state behind";
    adapter->control().inject(Fault::mfw_silent, true);
    EXPECT_EQ(drv.mcp_cmd(DRV_MSG_CODE_LOAD_DONE, 0, nullptr, std::chrono::milliseconds(50)), 0u);
}

} // namespace
} // namespace cna::fw::test
