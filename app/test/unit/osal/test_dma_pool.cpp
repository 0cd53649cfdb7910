/* SPDX-License-Identifier: BSD-3-Clause
 * DmaMem's small allocations share arenas (osal_dma_pool.h): whole 4 KiB
 * pages of one memzone each, zeroed, IOVA-contiguous, never overlapping,
 * and the arena back to DPDK once its last page is.
 */
#include <algorithm>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>
#include <rte_memzone.h>

#include "osal_mem.h"

namespace {

using namespace cna::osal;

int memzones()
{
    int n = 0;
    rte_memzone_walk([](const rte_memzone*, void* count) { ++*static_cast<int*>(count); }, &n);
    return n;
}

TEST(DmaPool, SmallAllocationsShareAMemzoneInWholeZeroedPages)
{
    const int before = memzones();
    std::vector<DmaMem> mems(40);
    for (std::size_t i = 0; i < mems.size(); i++) {
        const std::size_t size = i % 4 == 0 ? 8 : 500 * i + 1; /* an MR's page list, rings up to 19 KiB */
        ASSERT_EQ(mems[i].alloc(size, "test"), 0);
        ASSERT_EQ(mems[i].size(), size);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(mems[i].va()) % dma_pool::PAGE, 0u);
        EXPECT_EQ(mems[i].iova() % dma_pool::PAGE, 0u);
        EXPECT_TRUE(std::all_of(mems[i].as<uint8_t>(), mems[i].as<uint8_t>() + size, [](uint8_t b) { return b == 0; }));
        memset(mems[i].va(), 0xa5, size);
    }
    EXPECT_EQ(memzones(), before + 1) << "40 allocations of 1 to 5 pages: one arena";
    EXPECT_EQ(dma_pool::arenas(), 1u);
    /* No two overlap, in VA or in IOVA, and VA and IOVA move together. */
    for (std::size_t i = 0; i < mems.size(); i++) {
        const auto pages_i = (mems[i].size() + dma_pool::PAGE - 1) / dma_pool::PAGE * dma_pool::PAGE;
        for (std::size_t j = i + 1; j < mems.size(); j++) {
            const auto gap = static_cast<int64_t>(mems[j].iova() - mems[i].iova());
            EXPECT_EQ(static_cast<uint8_t*>(mems[j].va()) - static_cast<uint8_t*>(mems[i].va()), gap);
            if (gap > 0) {
                EXPECT_GE(static_cast<std::size_t>(gap), pages_i) << i << " and " << j;
            }
        }
    }
    mems.clear();
    EXPECT_EQ(memzones(), before) << "the arena back once its last page is";
    EXPECT_EQ(dma_pool::arenas(), 0u);
}

TEST(DmaPool, PagesGivenBackAreTakenAgainAndFullArenasMakeNewOnes)
{
    const int before = memzones();
    std::vector<DmaMem> mems(dma_pool::ARENA_PAGES);
    for (auto& m : mems)
        ASSERT_EQ(m.alloc(dma_pool::PAGE, "test"), 0);
    EXPECT_EQ(dma_pool::arenas(), 1u) << "an arena's every page";
    const uint64_t freed = mems[10].iova();
    mems[10].release();
    DmaMem again;
    ASSERT_EQ(again.alloc(64, "test"), 0);
    EXPECT_EQ(again.iova(), freed) << "the page given back";
    EXPECT_EQ(*again.as<uint8_t>(), 0) << "zeroed again";
    DmaMem two_pages;
    ASSERT_EQ(two_pages.alloc(dma_pool::PAGE + 1, "test"), 0);
    EXPECT_EQ(dma_pool::arenas(), 2u) << "no run of two pages left in the first";
    mems.clear();
    again.release();
    EXPECT_EQ(dma_pool::arenas(), 1u);
    two_pages.release();
    EXPECT_EQ(memzones(), before);
}

TEST(DmaPool, LargeOrStrictlyAlignedAllocationsGetMemzonesOfTheirOwn)
{
    const int before = memzones();
    DmaMem large, aligned;
    ASSERT_EQ(large.alloc(dma_pool::MAX_PAGES * dma_pool::PAGE + 1, "test"), 0);
    ASSERT_EQ(aligned.alloc(64, "test", 1 << 16), 0);
    EXPECT_EQ(aligned.iova() % (1 << 16), 0u);
    EXPECT_EQ(memzones(), before + 2);
    EXPECT_EQ(dma_pool::arenas(), 0u);
}

TEST(DmaPool, MovedMemoryIsReleasedOnceByItsNewOwner)
{
    const int before = memzones();
    {
        DmaMem first;
        ASSERT_EQ(first.alloc(100, "test"), 0);
        const uint64_t iova = first.iova();
        DmaMem second(std::move(first));
        EXPECT_FALSE(first);
        EXPECT_EQ(second.iova(), iova);
        DmaMem third;
        third = std::move(second);
        EXPECT_EQ(third.iova(), iova);
        EXPECT_EQ(dma_pool::arenas(), 1u);
    }
    EXPECT_EQ(memzones(), before);
}

} // namespace
