/* SPDX-License-Identifier: BSD-3-Clause */
#include "fixture.h"

#include "ecore_mcp.h"
#include "hsi_mfw.h"

using namespace cna;
using ecore::Status;
using namespace hsi::mfw;

namespace {

/* LOAD_REQ, then LOAD_DONE: the MFW answers the next PF's LOAD_REQ once
 * this one's load is done. The load code granted. */
uint32_t load(test::Pf& pf)
{
    ecore::PttGuard ptt(pf.hwfn());
    uint32_t code = 0;
    EXPECT_EQ(ecore::mcp_load_req(pf.hwfn(), *ptt, &code), Status::success);
    EXPECT_EQ(ecore::mcp_load_done(pf.hwfn(), *ptt), Status::success);
    return code;
}

void unload(test::Pf& pf)
{
    ecore::PttGuard ptt(pf.hwfn());
    EXPECT_EQ(ecore::mcp_unload(pf.hwfn(), *ptt), Status::success);
}

} // namespace

TEST(Mcp, LoadReqTwoPfsOnTwoPorts)
{
    osal::EmbeddedConfig config;
    config.ports = 2;
    test::Pf pf0, pf1;
    ATTACH_OR_SKIP(pf0, "t_mcp_2p", 0, config);
    ATTACH_OR_SKIP(pf1, "t_mcp_2p", 1, config);
    ASSERT_EQ(ecore::hw_prepare(pf0.dev), Status::success);
    ASSERT_EQ(ecore::hw_prepare(pf1.dev), Status::success);

    EXPECT_EQ(load(pf0), FW_MSG_CODE_DRV_LOAD_ENGINE);
    EXPECT_EQ(load(pf1), FW_MSG_CODE_DRV_LOAD_PORT);
    {
        /* A PF already loaded is refused. */
        ecore::PttGuard ptt(pf1.hwfn());
        uint32_t code = 0;
        EXPECT_EQ(ecore::mcp_load_req(pf1.hwfn(), *ptt, &code), Status::busy);
    }
    unload(pf1);
    unload(pf0);
    /* Everything unloaded: the next load is the engine's again. */
    EXPECT_EQ(load(pf1), FW_MSG_CODE_DRV_LOAD_ENGINE);
    unload(pf1);
    ecore::hw_remove(pf1.dev);
    ecore::hw_remove(pf0.dev);
}

TEST(Mcp, LoadReqTwoPfsOnOnePort)
{
    osal::EmbeddedConfig config;
    config.pfs_per_port = 2;
    test::Pf pf0, pf1;
    ATTACH_OR_SKIP(pf0, "t_mcp_2pf", 0, config);
    ATTACH_OR_SKIP(pf1, "t_mcp_2pf", 1, config);
    ASSERT_EQ(ecore::hw_prepare(pf0.dev), Status::success);
    ASSERT_EQ(ecore::hw_prepare(pf1.dev), Status::success);
    EXPECT_EQ(load(pf0), FW_MSG_CODE_DRV_LOAD_ENGINE);
    EXPECT_EQ(load(pf1), FW_MSG_CODE_DRV_LOAD_FUNCTION);
    unload(pf0);
    unload(pf1);
    ecore::hw_remove(pf1.dev);
    ecore::hw_remove(pf0.dev);
}

TEST(Mcp, SilentMfwTimesOutAndLeavesNothingBehind)
{
    osal::EmbeddedConfig config;
    config.faults = static_cast<uint32_t>(osal::Fault::mfw_silent);
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_mcp_silent", 0, config);
    const int zones = test::memzone_count();

    ASSERT_EQ(pf.prepare(), Status::success);
    EXPECT_GT(test::memzone_count(), zones);
    const uint64_t t0 = osal::time_ms();
    ecore::HwInitParams params;
    EXPECT_EQ(ecore::hw_init(pf.dev, params), Status::timeout);
    const uint64_t elapsed = osal::time_ms() - t0;
    EXPECT_GE(elapsed, 1900u);
    EXPECT_LT(elapsed, 4000u);
    EXPECT_FALSE(pf.hwfn().hw_init_done);
    EXPECT_EQ(pf.irq_requests.load(), 0);
    EXPECT_FALSE(pf.sp_irq.requested());
    pf.unprepare();
    EXPECT_EQ(test::memzone_count(), zones);
}

TEST(Mcp, MissingShmemMagicFailsHwPrepare)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_mcp_shmem", 0, osal::EmbeddedConfig{});
    /* Wipe the magic through a raw window, as if the MFW had not come up. */
    const uint32_t window = 3;
    pf.pci->reg_wr(hsi::bar0_ptt_entry(window), hsi::reg::MCP_SHMEM_BASE);
    pf.pci->reg_wr(hsi::bar0_ptt_window(window), 0);
    EXPECT_EQ(ecore::hw_prepare(pf.dev), Status::nodev);
    EXPECT_FALSE(pf.hwfn().hw_prepared);
    EXPECT_FALSE(pf.hwfn().ptt_pool);

    pf.pci->reg_wr(hsi::bar0_ptt_entry(window), hsi::reg::MCP_SHMEM_BASE);
    pf.pci->reg_wr(hsi::bar0_ptt_window(window), SHMEM_MAGIC);
    EXPECT_EQ(ecore::hw_prepare(pf.dev), Status::success);
    ecore::hw_remove(pf.dev);
}

TEST(Mcp, LinkUpNeedsTheLinkSetByTheDriver)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_mcp_link", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(ecore::hw_prepare(pf.dev), Status::success);
    EXPECT_FALSE(pf.link_up());
    ecore::PttGuard ptt(pf.hwfn());
    EXPECT_EQ(ecore::mcp_set_link(pf.hwfn(), *ptt, true), Status::success);
    EXPECT_TRUE(test::wait_for([&] {
        return ecore::mcp_update_link_state(pf.hwfn(), *ptt) == Status::success && pf.link_up();
    }));
    ecore::McpLinkState state = ecore::mcp_get_link_state(pf.hwfn());
    EXPECT_GT(state.speed_mbps, 0u);
    EXPECT_EQ(ecore::mcp_set_link(pf.hwfn(), *ptt, false), Status::success);
    EXPECT_TRUE(test::wait_for([&] {
        return ecore::mcp_update_link_state(pf.hwfn(), *ptt) == Status::success && !pf.link_up();
    }));
    EXPECT_EQ(pf.link_updates.load(), 0) << "no DPC runs before hw_init";
}
