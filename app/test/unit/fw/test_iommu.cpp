/* SPDX-License-Identifier: BSD-3-Clause
 * The IOMMU translation table.
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

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

/* Memory reached by copying: a buffer standing for another process's,
 * addressed from `base`; gone() once told so. */
class FakeRemote final : public RemoteMemory {
public:
    explicit FakeRemote(uint64_t base, std::size_t size) : base_(base), bytes_(size) {}
    bool read(uint64_t va, void* dst, std::size_t len) override
    {
        if (gone_ || va < base_ || va + len > base_ + bytes_.size())
            return false;
        std::memcpy(dst, bytes_.data() + (va - base_), len);
        return true;
    }
    bool write(uint64_t va, const void* src, std::size_t len) override
    {
        if (gone_ || va < base_ || va + len > base_ + bytes_.size())
            return false;
        std::memcpy(bytes_.data() + (va - base_), src, len);
        return true;
    }
    bool gone() const override { return gone_; }
    void end() { gone_ = true; }
    const uint8_t* at(uint64_t va) const { return bytes_.data() + (va - base_); }

private:
    uint64_t base_;
    std::vector<uint8_t> bytes_;
    bool gone_ = false;
};

TEST(Iommu, RemoteRangesAreCopiedThroughNeverAddressed)
{
    Iommu iommu;
    Iommu::TranslationCache cache;
    auto remote = std::make_shared<FakeRemote>(0x7f0000000000, 0x2000);
    std::vector<uint8_t> plain(0x1000);
    ASSERT_EQ(iommu.map(0x10000, plain.data(), plain.size()), 0);
    ASSERT_EQ(iommu.map_remote(0x20000, remote, 0x7f0000000000, 0x2000), 0);
    EXPECT_EQ(iommu.translate(cache, 0x20010, 8), nullptr) << "no address for the engines' pointers";
    const uint64_t word = 0x0123456789abcdef;
    ASSERT_TRUE(iommu.copy_remote(0x21ff8, const_cast<uint64_t*>(&word), 8, true));
    uint64_t back = 0;
    ASSERT_TRUE(iommu.copy_remote(0x21ff8, &back, 8, false));
    EXPECT_EQ(back, word);
    EXPECT_EQ(std::memcmp(remote->at(0x7f0000001ff8), &word, 8), 0) << "at the host address the range names";
    EXPECT_FALSE(iommu.copy_remote(0x21ffc, &back, 8, false)) << "crosses the end of the range";
    EXPECT_FALSE(iommu.copy_remote(0x10000, &back, 8, false)) << "a plain range is no remote one";
    /* The two kinds share one IOVA space. */
    EXPECT_EQ(iommu.map_remote(0x10800, remote, 0x7f0000000000, 0x1000), -EEXIST);
    EXPECT_EQ(iommu.map(0x21000, plain.data(), 0x1000), -EEXIST);
    EXPECT_EQ(iommu.map_remote(0x30000, remote, 0x7f0000000000, 0), -EINVAL);
    EXPECT_EQ(iommu.map_remote(0x30000, nullptr, 0x7f0000000000, 16), -EINVAL);
    /* An unmap covering both takes both. */
    ASSERT_EQ(iommu.unmap(0x10000, 0x20000), 0);
    EXPECT_FALSE(iommu.copy_remote(0x20000, &back, 8, false));
    EXPECT_EQ(iommu.translate(cache, 0x10000, 8), nullptr);
}

TEST(Iommu, AGoneRemoteMarksTheHostGoneUntilItsRangesAreUnmapped)
{
    Iommu iommu;
    auto remote = std::make_shared<FakeRemote>(0x1000, 0x1000);
    ASSERT_EQ(iommu.map_remote(0x20000, remote, 0x1000, 0x1000), 0);
    uint64_t v = 0;
    EXPECT_FALSE(iommu.copy_remote(0x30000, &v, 8, false));
    EXPECT_FALSE(iommu.remote_gone()) << "a miss is a fault, not a host gone";
    remote->end();
    EXPECT_FALSE(iommu.copy_remote(0x20000, &v, 8, false));
    EXPECT_TRUE(iommu.remote_gone());
    ASSERT_EQ(iommu.unmap(0, UINT64_MAX), 0);
    EXPECT_FALSE(iommu.remote_gone()) << "the function's reset took every range";
}

TEST(Iommu, RemoteRangesAreBounded)
{
    Iommu iommu;
    auto remote = std::make_shared<FakeRemote>(0, 1);
    for (std::size_t i = 0; i < Iommu::MAX_REMOTE_RANGES; i++)
        ASSERT_EQ(iommu.map_remote(0x1000 * i, remote, 0, 1), 0) << i;
    EXPECT_EQ(iommu.map_remote(0x1000 * Iommu::MAX_REMOTE_RANGES, remote, 0, 1), -ENOSPC);
    ASSERT_EQ(iommu.unmap(0, 0x1000), 0);
    EXPECT_EQ(iommu.map_remote(0x1000 * Iommu::MAX_REMOTE_RANGES, remote, 0, 1), 0) << "room again";
}

} // namespace
} // namespace cna::fw
