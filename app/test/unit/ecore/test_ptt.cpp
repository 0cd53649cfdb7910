/* SPDX-License-Identifier: BSD-3-Clause */
#include "fixture.h"

#include <vector>

#include "hsi_mfw.h"

using namespace cna;
using ecore::Status;

TEST(Ptt, AcquireUntilExhaustedThenRelease)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_ptt_pool", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(ecore::hw_prepare(pf.dev), Status::success);

    std::vector<ecore::Ptt*> taken;
    for (uint32_t i = 0; i + 1 < hsi::PTT_WINDOWS; i++) {
        ecore::Ptt* p = ecore::ptt_acquire(pf.hwfn());
        ASSERT_NE(p, nullptr) << i;
        for (ecore::Ptt* q : taken)
            EXPECT_NE(q->idx, p->idx);
        taken.push_back(p);
    }
    /* One window is the DPC's: the pool is now empty. */
    EXPECT_EQ(ecore::ptt_acquire(pf.hwfn()), nullptr);
    ecore::ptt_release(pf.hwfn(), taken.back());
    taken.pop_back();
    {
        ecore::PttGuard guard(pf.hwfn());
        EXPECT_TRUE(guard);
    }
    for (ecore::Ptt* p : taken)
        ecore::ptt_release(pf.hwfn(), p);
    ecore::hw_remove(pf.dev);
}

TEST(Ptt, WindowFollowsTheAddress)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_ptt_window", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(ecore::hw_prepare(pf.dev), Status::success);
    {
        ecore::PttGuard a(pf.hwfn());
        ecore::PttGuard b(pf.hwfn());
        ASSERT_TRUE(a && b);

        for (uint32_t i = 0; i < hsi::reg::MISC_SCRATCH_DWORDS; i++)
            ecore::wr(pf.hwfn(), *a, hsi::reg::MISC_SCRATCH + 4 * i, 0xc0de0000 + i);
        EXPECT_EQ(a->window, hsi::reg::MISC_BASE);

        /* Away to SHMEM (another window) and back. */
        EXPECT_EQ(ecore::rd(pf.hwfn(), *a, hsi::reg::MCP_SHMEM_BASE), hsi::mfw::SHMEM_MAGIC);
        EXPECT_EQ(a->window, hsi::reg::MCP_SHMEM_BASE);
        EXPECT_EQ(pf.pci->reg_rd(hsi::bar0_ptt_entry(a->idx)), hsi::reg::MCP_SHMEM_BASE);
        for (uint32_t i = 0; i < hsi::reg::MISC_SCRATCH_DWORDS; i++)
            EXPECT_EQ(ecore::rd(pf.hwfn(), *a, hsi::reg::MISC_SCRATCH + 4 * i), 0xc0de0000 + i);
        EXPECT_EQ(a->window, hsi::reg::MISC_BASE);

        /* Another PTT sees the same registers through its own window. */
        EXPECT_EQ(ecore::rd(pf.hwfn(), *b, hsi::reg::MISC_SCRATCH + 4), 0xc0de0001u);

        /* memcpy across a window boundary re-points on the way. */
        hsi::mfw::Shmem head{};
        ecore::memcpy_from(pf.hwfn(), *b, &head, hsi::reg::MCP_SHMEM_BASE, 64);
        EXPECT_EQ(head.magic, hsi::mfw::SHMEM_MAGIC);
        EXPECT_EQ(head.num_ports, 1u);
    }
    ecore::hw_remove(pf.dev);
}

TEST(Ptt, HwPrepareLearnsTheConfiguration)
{
    test::Pf pf;
    osal::EmbeddedConfig config;
    config.ports = 2;
    ATTACH_OR_SKIP(pf, "t_ptt_prepare", 1, config);
    ASSERT_EQ(ecore::hw_prepare(pf.dev), Status::success);
    const ecore::HwInfo& info = pf.hwfn().hw_info;
    EXPECT_EQ(info.pf_id, 1u);
    EXPECT_EQ(info.port_id, 1u);
    EXPECT_EQ(info.num_ports, 2u);
    EXPECT_EQ(info.mtu, 1500);
    EXPECT_EQ(info.mac[0], 0x02) << "locally administered unicast";
    EXPECT_EQ(info.mac[5], 1u) << "PF 1";
    EXPECT_GT(info.resc.num_sbs, 0u);
    EXPECT_GT(info.resc.num_rx_queues, 0u);
    EXPECT_GT(info.resc.num_vports, 0u);
    ecore::hw_remove(pf.dev);
}
