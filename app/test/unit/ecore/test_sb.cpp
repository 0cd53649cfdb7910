/* SPDX-License-Identifier: BSD-3-Clause
 * Status blocks and interrupts in MSIX mode: the slowpath DPC runs on the EAL
 * interrupt thread, re-arms the SB, and delivers link changes and
 * attentions. */
#include "fixture.h"

#include "ecore_int.h"
#include "ecore_spq.h"

using namespace cna;
using ecore::Status;

TEST(StatusBlock, SlowpathInterruptOnTheEalThread)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_sb_sp", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    EXPECT_EQ(pf.irq_requests.load(), 1);
    EXPECT_TRUE(pf.sp_irq.requested());

    /* A link change: MFW event -> attention -> SB update -> vector 0. */
    {
        ecore::PttGuard ptt(pf.hwfn());
        ASSERT_EQ(ecore::mcp_set_link(pf.hwfn(), *ptt, true), Status::success);
    }
    EXPECT_TRUE(test::wait_for([&] { return pf.link_updates.load() > 0 && pf.link_up(); }));
    EXPECT_GT(pf.dpc_runs.load(), 0);
    EXPECT_EQ(pf.dpc_off_intr_thread.load(), 0);
    EXPECT_FALSE(pf.link_update_off_intr_thread.load());
    EXPECT_GT(pf.hwfn().sp_sb->attn_stats.mfw_events.load(), 0u);

    /* Re-armed after each DPC: a second change interrupts again. */
    const int updates = pf.link_updates.load();
    {
        ecore::PttGuard ptt(pf.hwfn());
        ASSERT_EQ(ecore::mcp_set_link(pf.hwfn(), *ptt, false), Status::success);
    }
    EXPECT_TRUE(test::wait_for([&] { return pf.link_updates.load() > updates && !pf.link_up(); }));

    /* Ramrods complete while the DPC competes for the EQ. */
    for (int i = 0; i < 50; i++)
        ASSERT_EQ(ecore::spq_post(pf.hwfn(), ecore::SpqRequest{hsi::ProtocolId::common,
                                                               static_cast<uint8_t>(hsi::CommonCmd::empty)}),
                  Status::success);

    EXPECT_EQ(pf.tear_down(), Status::success);
    EXPECT_FALSE(pf.sp_irq.requested());
}

TEST(StatusBlock, FirmwareAssertIsReported)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_sb_assert", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    pf.pci->control()->inject(osal::Fault::fw_assert, true);
    EXPECT_TRUE(test::wait_for([&] { return pf.hwfn().sp_sb->attn_stats.fw_asserts > 0; }));
    EXPECT_NE(pf.hwfn().sp_sb->attn_stats.last_assert_code.load(), 0u);
    pf.pci->control()->inject(osal::Fault::fw_assert, false);
    /* Asserted storms may not complete PF_STOP: do not wait long for it. */
    pf.hwfn().spq->timeout_ms = 300;
    pf.tear_down();
}

TEST(StatusBlock, AccessNoRegisterDecodesIsReported)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_sb_bad_access", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    pf.pci->reg_wr(hsi::BAR0_SIZE + 0x40, 1); /* past the BAR: a driver bug */
    EXPECT_TRUE(test::wait_for([&] { return pf.hwfn().sp_sb->attn_stats.bad_accesses > 0; }));
    EXPECT_EQ(pf.hwfn().sp_sb->attn_stats.last_bad_access.load(), hsi::BAR0_SIZE + 0x40);
    EXPECT_EQ(pf.hwfn().sp_sb->attn_stats.fw_asserts.load(), 0u);
    EXPECT_EQ(pf.tear_down(), Status::success);
}

TEST(StatusBlock, AckSemantics)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_sb_ack", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::poll), Status::success);

    osal::DmaMem mem;
    ASSERT_EQ(mem.alloc(sizeof(hsi::StatusBlock), "test SB"), 0);
    ecore::SbInfo sb;
    {
        ecore::PttGuard ptt(pf.hwfn());
        EXPECT_EQ(ecore::int_sb_init(pf.hwfn(), *ptt, sb, mem.va(), mem.iova(), 100000), Status::inval);
        ASSERT_EQ(ecore::int_sb_init(pf.hwfn(), *ptt, sb, mem.va(), mem.iova(), 0), Status::success);
    }
    EXPECT_FALSE(ecore::sb_update_sb_idx(sb));
    /* Simulate a CAU write, as the device would. */
    const_cast<hsi::StatusBlock*>(sb.sb_virt)->prod_index = 7;
    EXPECT_TRUE(ecore::sb_update_sb_idx(sb));
    EXPECT_EQ(sb.sb_ack, 7u);
    EXPECT_FALSE(ecore::sb_update_sb_idx(sb));
    ecore::sb_ack(sb, hsi::IguIntOp::nop);
    {
        ecore::PttGuard ptt(pf.hwfn());
        ecore::int_sb_release(pf.hwfn(), *ptt, sb);
    }
    EXPECT_EQ(sb.sb_virt, nullptr);
    EXPECT_EQ(pf.tear_down(), Status::success);
}
