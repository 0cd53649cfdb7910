/* SPDX-License-Identifier: BSD-3-Clause
 * The IOMMU translation table.
 */
#include <gtest/gtest.h>

#include <cerrno>

#include "bus/iommu.h"

namespace cna::fw {
namespace {

TEST(Iommu, TranslatesInsideMappingsOnly)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> a(8192), b(4096);
    ASSERT_EQ(iommu.map(0x10000, a.data(), a.size()), 0);
    ASSERT_EQ(iommu.map(0x40000, b.data(), b.size()), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 16), a.data());
    EXPECT_EQ(iommu.translate(cache, 0x11ff0, 16), a.data() + 0x1ff0);
    EXPECT_EQ(iommu.translate(cache, 0x40010, 8), b.data() + 0x10);
    EXPECT_EQ(iommu.translate(cache, 0x11ff8, 16), nullptr) << "crosses the end of a mapping";
    EXPECT_EQ(iommu.translate(cache, 0x0fff0, 4), nullptr);
    EXPECT_EQ(iommu.translate(cache, 0x30000, 4), nullptr);
}

TEST(Iommu, ReachesAcrossRangesThatFollowEachOtherInIovaAndMemory)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> mem(3 * 4096), elsewhere(4096);
    ASSERT_EQ(iommu.map(0x10000, mem.data(), 4096), 0);
    ASSERT_EQ(iommu.map(0x11000, mem.data() + 4096, 2 * 4096), 0);
    ASSERT_EQ(iommu.map(0x13000, elsewhere.data(), 4096), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10ff0, 32), mem.data() + 0xff0) << "across two pieces of one memory";
    EXPECT_EQ(iommu.translate(cache, 0x10000, 3 * 4096), mem.data());
    EXPECT_EQ(iommu.translate(cache, 0x10ff0, 32), mem.data() + 0xff0) << "the run, cached";
    EXPECT_EQ(iommu.translate(cache, 0x12ff0, 32), nullptr) << "the next range is other memory";
    EXPECT_EQ(iommu.translate(cache, 0x13ff0, 32), nullptr) << "past the last range";
    uint8_t out[32];
    mem[0xfff] = 1;
    mem[0x1000] = 2;
    ASSERT_TRUE(iommu.copy_out(0x10ff0, out, sizeof out));
    EXPECT_EQ(out[15], 1);
    EXPECT_EQ(out[16], 2);
    ASSERT_EQ(iommu.unmap(0x11000, 2 * 4096), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10ff0, 32), nullptr) << "a piece gone";
    EXPECT_EQ(iommu.translate(cache, 0x10ff0, 16), mem.data() + 0xff0);
}

TEST(Iommu, TheRangeHitLastChecksBothEnds)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> a(8192);
    ASSERT_EQ(iommu.map(0x10000, a.data(), a.size()), 0);
    ASSERT_EQ(iommu.translate(cache, 0x10000, 16), a.data()); /* the range hit last from here on */
    EXPECT_EQ(iommu.translate(cache, 0x11fff, 1), a.data() + 0x1fff);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 8192), a.data());
    EXPECT_EQ(iommu.translate(cache, 0x12000, 1), nullptr) << "just past the end";
    EXPECT_EQ(iommu.translate(cache, 0x0fff8, 16), nullptr) << "starts below, ends inside";
    EXPECT_EQ(iommu.translate(cache, 0x0ffff, 1), nullptr) << "just below";
    EXPECT_EQ(iommu.translate(cache, 0x10000, 8193), nullptr) << "longer than the range";
    EXPECT_EQ(iommu.translate(cache, ~0ull - 8, 16), nullptr) << "wraps";
    EXPECT_EQ(iommu.translate(cache, 0x10001, ~0ull), nullptr) << "a length that wraps";
}

TEST(Iommu, RejectsOverlapsAndInvalidRanges)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> a(8192);
    ASSERT_EQ(iommu.map(0x10000, a.data(), 0x2000), 0);
    EXPECT_EQ(iommu.map(0x11000, a.data(), 0x2000), -EEXIST);
    EXPECT_EQ(iommu.map(0x0f000, a.data(), 0x2000), -EEXIST);
    EXPECT_EQ(iommu.map(0x20000, a.data(), 0), -EINVAL);
    EXPECT_EQ(iommu.map(0x20000, nullptr, 16), -EINVAL);
    EXPECT_EQ(iommu.map(~0ull - 4, a.data(), 16), -EINVAL);
    EXPECT_EQ(iommu.map(0x12000, a.data(), 0x1000), 0) << "adjacent is fine";
}

TEST(Iommu, UnmapInvalidatesTheCache)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> a(4096), b(4096);
    ASSERT_EQ(iommu.map(0x10000, a.data(), a.size()), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), a.data()); /* now cached */
    EXPECT_EQ(iommu.unmap(0x10000, a.size()), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), nullptr);
    EXPECT_EQ(iommu.unmap(0x10000, a.size()), -ENOENT);
    ASSERT_EQ(iommu.map(0x10000, b.data(), b.size()), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), b.data());
}

TEST(Iommu, BlockedTranslatesNothingAndKeepsTheTable)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<uint8_t> a(4096);
    ASSERT_EQ(iommu.map(0x10000, a.data(), a.size()), 0);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), a.data()); /* now cached */
    const uint64_t generation = iommu.generation();
    iommu.set_blocked(true);
    EXPECT_NE(iommu.generation(), generation) << "a translation kept outside (DmaRing) must be redone";
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), nullptr);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), nullptr) << "nothing cached while blocked";
    iommu.set_blocked(false);
    EXPECT_EQ(iommu.translate(cache, 0x10000, 4), a.data());
}

TEST(Iommu, ManyRangesStayFindable)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    std::vector<std::vector<uint8_t>> bufs(64, std::vector<uint8_t>(256));
    for (size_t i = 0; i < bufs.size(); i++)
        ASSERT_EQ(iommu.map(0x100000 * (bufs.size() - i), bufs[i].data(), 256), 0);
    for (size_t round = 0; round < 2; round++)
        for (size_t i = 0; i < bufs.size(); i++)
            EXPECT_EQ(iommu.translate(cache, 0x100000 * (bufs.size() - i) + 8, 8), bufs[i].data() + 8);
}

} // namespace
} // namespace cna::fw
