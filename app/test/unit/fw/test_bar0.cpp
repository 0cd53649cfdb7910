/* SPDX-License-Identifier: BSD-3-Clause
 * BAR0: PTT windows, access gating, GTT aliasing of storm RAM.
 */
#include <gtest/gtest.h>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

using namespace hsi;

class Bar0 : public ::testing::Test {
protected:
    void SetUp() override
    {
        AdapterConfig config;
        config.name = "bar0";
        config.ports = 2;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
    }
    std::unique_ptr<Adapter> adapter;
};

TEST_F(Bar0, PttWindowsReachInternalAddresses)
{
    DeviceFunction& fn = adapter->function(1);
    fn.bar0_write(bar0_ptt_entry(3), reg::MISC_BASE);
    fn.bar0_write(bar0_ptt_entry(5), reg::MCP_BASE + 0x123); /* low bits are dropped */
    EXPECT_EQ(fn.bar0_read(bar0_ptt_entry(5)), reg::MCP_BASE);
    EXPECT_EQ(fn.bar0_read(bar0_ptt_window(3) + reg::MISC_PF_ID), 1u);
    EXPECT_EQ(fn.bar0_read(bar0_ptt_window(3) + reg::MISC_PORT_ID), 1u);
    EXPECT_EQ(fn.bar0_read(bar0_ptt_window(3) + reg::MISC_NUM_PORTS), 2u);
    EXPECT_EQ(fn.bar0_read(bar0_ptt_window(5) + (reg::MCP_PUBLIC_ADDR - reg::MCP_BASE)), reg::MCP_SHMEM_BASE);
    /* Re-pointing a window changes what it shows. */
    fn.bar0_write(bar0_ptt_entry(3), reg::MCP_BASE);
    EXPECT_EQ(fn.bar0_read(bar0_ptt_window(3)), reg::MCP_SHMEM_BASE);
    EXPECT_EQ(fn.bar0_read(0x3), 0xffffffffu) << "unaligned";
}

TEST_F(Bar0, GatesBlocksUntilPttAccessIsEnabled)
{
    FakeDriver drv(*adapter, 0);
    EXPECT_EQ(drv.rd(reg::NIG_PORT_RX_ENABLE), 0xffffffffu);
    drv.wr(reg::NIG_PORT_RX_ENABLE, 1);
    EXPECT_EQ(drv.rd(reg::ATTN_MASK), 0xffffffffu);
    EXPECT_EQ(drv.rd(reg::STORM_STATUS), 0xffffffffu);
    /* MISC, PGLUE and MCP answer. */
    EXPECT_EQ(drv.rd(mfw::shmem_addr(offsetof(mfw::Shmem, magic))), mfw::SHMEM_MAGIC);
    drv.wr(reg::MISC_SCRATCH, 0xa5a5a5a5);
    EXPECT_EQ(drv.rd(reg::MISC_SCRATCH), 0xa5a5a5a5u);
    EXPECT_EQ(drv.rd(reg::PGLUE_PF_MASTER_ENABLE), 0u);

    drv.open_ptt_access();
    EXPECT_EQ(drv.rd(reg::NIG_PORT_RX_ENABLE), 0u) << "the write before enable was dropped";
    drv.wr(reg::NIG_PORT_RX_ENABLE, 1);
    EXPECT_EQ(drv.rd(reg::NIG_PORT_RX_ENABLE), 1u);
    EXPECT_EQ(drv.rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::halted));
    /* Unmapped addresses never answer. */
    EXPECT_EQ(drv.rd(0x300000), 0xffffffffu);
    EXPECT_EQ(drv.rd(reg::MISC_BASE + 0x800), 0xffffffffu);
}

TEST_F(Bar0, ScratchIsPerFunction)
{
    FakeDriver a(*adapter, 0), b(*adapter, 1);
    for (uint32_t i = 0; i < reg::MISC_SCRATCH_DWORDS; i++) {
        a.wr(reg::MISC_SCRATCH + 4 * i, 0x1000 + i);
        b.wr(reg::MISC_SCRATCH + 4 * i, 0x2000 + i);
    }
    for (uint32_t i = 0; i < reg::MISC_SCRATCH_DWORDS; i++) {
        EXPECT_EQ(a.rd(reg::MISC_SCRATCH + 4 * i), 0x1000 + i);
        EXPECT_EQ(b.rd(reg::MISC_SCRATCH + 4 * i), 0x2000 + i);
    }
}

TEST_F(Bar0, GttAliasesStormRam)
{
    FakeDriver drv(*adapter, 0);
    drv.open_ptt_access();
    volatile uint8_t* gtt = drv.fn().gtt_memory();
    uint32_t offset = iro::rx_prod(0, 3);
    *reinterpret_cast<volatile uint32_t*>(gtt + offset) = 0x00050040;
    EXPECT_EQ(drv.rd(reg::STORM_RAM_BASE + offset), 0x00050040u);
    drv.wr(reg::STORM_RAM_BASE + iro::eq_cons(2), 77);
    EXPECT_EQ(*reinterpret_cast<volatile uint32_t*>(gtt + iro::eq_cons(2)), 77u);
    /* BAR0 accesses at the GTT offsets reach the same bytes. */
    EXPECT_EQ(drv.fn().bar0_read(BAR0_GTT_BASE + offset), 0x00050040u);
    drv.fn().bar0_write(BAR0_GTT_BASE + GTT_SIZE - 4, 0xdeadbeef);
    EXPECT_EQ(drv.rd(reg::STORM_RAM_BASE + GTT_SIZE - 4), 0xdeadbeefu);
    /* And the other function sees the same storm RAM. */
    FakeDriver other(*adapter, 1);
    other.open_ptt_access();
    EXPECT_EQ(other.rd(reg::STORM_RAM_BASE + offset), 0x00050040u);
}

} // namespace
} // namespace cna::fw::test
