/* SPDX-License-Identifier: BSD-3-Clause
 * BAR0: PTT windows, access gating, each PF's GTT page of storm RAM.
 */
#include <sys/stat.h>

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

TEST_F(Bar0, TheGttWindowIsThePfsOwnPageOfStormRam)
{
    FakeDriver drv(*adapter, 0);
    drv.open_ptt_access();
    volatile uint8_t* gtt = drv.fn().gtt_memory();
    *reinterpret_cast<volatile uint32_t*>(gtt + iro::gtt::rx_prod(3)) = 0x00050040;
    EXPECT_EQ(drv.rd(reg::STORM_RAM_BASE + iro::rx_prod(0, 3)), 0x00050040u);
    drv.wr(reg::STORM_RAM_BASE + iro::eq_cons(0), 77);
    EXPECT_EQ(*reinterpret_cast<volatile uint32_t*>(gtt + iro::gtt::EQ_CONS), 77u);
    /* BAR0 accesses at the GTT offsets reach the same bytes. */
    EXPECT_EQ(drv.fn().bar0_read(BAR0_GTT_BASE + iro::gtt::rx_prod(3)), 0x00050040u);
    drv.fn().bar0_write(BAR0_GTT_BASE + GTT_SIZE - 4, 0xdeadbeef);
    EXPECT_EQ(drv.rd(reg::STORM_RAM_BASE + iro::gtt_page(0) + GTT_SIZE - 4), 0xdeadbeefu);
    EXPECT_EQ(drv.fn().bar0_read(BAR0_GTT_BASE + GTT_SIZE), 0xffffffffu) << "the window is one page";

    /* The other PF's window is its own page, a file of its own. */
    FakeDriver other(*adapter, 1);
    other.open_ptt_access();
    EXPECT_EQ(*reinterpret_cast<volatile uint32_t*>(other.fn().gtt_memory() + iro::gtt::rx_prod(3)), 0u);
    const auto mine = drv.fn().shared_bars(), theirs = other.fn().shared_bars();
    EXPECT_NE(mine.gtt_fd, theirs.gtt_fd);
    for (int fd : {mine.gtt_fd, theirs.gtt_fd}) {
        struct stat st {};
        ASSERT_EQ(fstat(fd, &st), 0);
        EXPECT_EQ(st.st_size, GTT_SIZE) << "a host maps its page and nothing more";
    }
}

TEST_F(Bar0, APfsPttReachesItsOwnAreasOfStormRamOnly)
{
    FakeDriver owner(*adapter, 0), other(*adapter, 1);
    owner.open_ptt_access();
    other.open_ptt_access();
    const uint32_t areas[] = {iro::rx_prod(0, 3), iro::eq_cons(0), iro::vport_stats(0, 1), iro::tx_queue_stats(0, 2),
                              iro::flow_counters(0, 5), iro::roce_stats(0)};
    for (uint32_t area : areas) {
        SCOPED_TRACE(area);
        owner.wr(reg::STORM_RAM_BASE + area, 0x1234);
        const uint32_t bad_before = owner.rd(reg::PGLUE_BAD_ACCESS_COUNT);
        other.wr(reg::STORM_RAM_BASE + area, 0xdead);
        EXPECT_EQ(other.rd(reg::STORM_RAM_BASE + area), 0xffffffffu);
        EXPECT_EQ(owner.rd(reg::STORM_RAM_BASE + area), 0x1234u) << "another PF's write is dropped";
        EXPECT_EQ(owner.rd(reg::PGLUE_BAD_ACCESS_COUNT), bad_before) << "and charged to the PF that made it";
        EXPECT_EQ(other.rd(reg::PGLUE_BAD_ACCESS_ADDR), reg::STORM_RAM_BASE + area);
    }
    /* The microcode is the engine's, every PF's to load. */
    other.wr(reg::STORM_MICROCODE, 0x55aa55aa);
    EXPECT_EQ(owner.rd(reg::STORM_MICROCODE), 0x55aa55aau);
}

} // namespace
} // namespace cna::fw::test
