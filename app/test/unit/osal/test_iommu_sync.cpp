/* SPDX-License-Identifier: BSD-3-Clause
 * IommuSync: what the device's IOMMU holds after mapping DPDK memory. Each
 * page must translate at its own IOVA to its own VA, whatever the order of
 * the IOVAs of pages adjacent in VA (IOVA as PA: physical addresses).
 */
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include <rte_eal.h>
#include <rte_memory.h>
#include <rte_memzone.h>

#include "bus/iommu.h"
#include "pci_iommu.h"

namespace cna::osal {
namespace {

using fw::Iommu;

/* A translation through a cache of its own, as an engine's. */
uint8_t* translate(Iommu& iommu, uint64_t iova, std::size_t len)
{
    Iommu::TranslationCache cache;
    return iommu.translate(cache, iova, len);
}

IommuSync::MapFn map_into(Iommu& iommu)
{
    return [&iommu](uint64_t iova, void* va, std::size_t len) { return iommu.map(iova, va, len); };
}

IommuSync::UnmapFn unmap_from(Iommu& iommu)
{
    return [&iommu](uint64_t iova, std::size_t len) { return iommu.unmap(iova, len); };
}

/* A VA-contiguous area of pages whose IOVAs the test chooses. */
class FakeMemory {
public:
    static constexpr std::size_t PAGE = 4096;
    static constexpr uint64_t IOVA_BASE = 0x7700000000;

    /* iova_pages[i]: the IOVA of page i in pages from IOVA_BASE, -1: none. */
    explicit FakeMemory(std::vector<int> iova_pages) : iova_pages_(std::move(iova_pages)), bytes_(size()) {}

    std::size_t size() const { return iova_pages_.size() * PAGE; }
    uintptr_t va(std::size_t page, std::size_t offset = 0) const
    {
        return reinterpret_cast<uintptr_t>(bytes_.data()) + page * PAGE + offset;
    }
    uint64_t iova(std::size_t page, std::size_t offset = 0) const
    {
        return IOVA_BASE + static_cast<uint64_t>(iova_pages_[page]) * PAGE + offset;
    }
    IommuSync::PageFn page_fn() const
    {
        return [this](uintptr_t addr, IommuSync::Page& page) {
            if (addr < va(0) || addr >= va(0) + size())
                return false;
            const std::size_t i = (addr - va(0)) / PAGE;
            page = {va(i), iova_pages_[i] < 0 ? RTE_BAD_IOVA : iova(i), PAGE};
            return true;
        };
    }

private:
    std::vector<int> iova_pages_;
    std::vector<uint8_t> bytes_;
};

uint8_t* at(uintptr_t va) { return reinterpret_cast<uint8_t*>(va); }

/* Every page translates at its own IOVA, to its own VA, whole. */
void expect_each_page_mapped(Iommu& iommu, const FakeMemory& mem, std::size_t pages)
{
    for (std::size_t i = 0; i < pages; i++) {
        EXPECT_EQ(translate(iommu, mem.iova(i), FakeMemory::PAGE), at(mem.va(i))) << "page " << i;
        EXPECT_EQ(translate(iommu, mem.iova(i, 100), 8), at(mem.va(i, 100))) << "page " << i;
    }
}

TEST(IommuSync, PagesOfOneAreaMapAtTheirOwnIovasInAnyOrder)
{
    /* In IOVA (pages from IOVA_BASE) 5 3 4 0 1 7 6 2: pages 1-2 and 3-4 are
     * contiguous in IOVA as in VA, the others are not. */
    FakeMemory mem({5, 3, 4, 0, 1, 7, 6, 2});
    Iommu iommu;
    IommuSync sync("test", map_into(iommu), unmap_from(iommu), mem.page_fn());
    ASSERT_EQ(sync.map_area(mem.va(0), mem.size()), 0);
    expect_each_page_mapped(iommu, mem, 8);
    EXPECT_EQ(sync.mappings(), 6u) << "one mapping per IOVA-contiguous run";
    /* a buffer straddling pages adjacent in both VA and IOVA translates */
    EXPECT_EQ(translate(iommu, mem.iova(1, FakeMemory::PAGE - 64), 128), at(mem.va(1, FakeMemory::PAGE - 64)));
    EXPECT_EQ(translate(iommu, mem.iova(3, FakeMemory::PAGE - 64), 128), at(mem.va(3, FakeMemory::PAGE - 64)));
    /* ... one straddling pages adjacent in VA only does not: no page holds
     * its IOVA range whole */
    EXPECT_EQ(translate(iommu, mem.iova(5, FakeMemory::PAGE - 64), 128), nullptr);
    /* IOVAs of no page stay unmapped */
    EXPECT_EQ(translate(iommu, FakeMemory::IOVA_BASE + 8 * FakeMemory::PAGE, 8), nullptr);
    EXPECT_EQ(translate(iommu, FakeMemory::IOVA_BASE - 8, 8), nullptr);

    sync.stop();
    EXPECT_EQ(sync.mappings(), 0u);
    for (std::size_t i = 0; i < 8; i++)
        EXPECT_EQ(translate(iommu, mem.iova(i), 8), nullptr) << "page " << i;
}

TEST(IommuSync, PagesWithoutIovaStayUnmapped)
{
    FakeMemory mem({0, -1, 2, 3});
    Iommu iommu;
    IommuSync sync("test", map_into(iommu), unmap_from(iommu), mem.page_fn());
    ASSERT_EQ(sync.map_area(mem.va(0), mem.size()), 0);
    EXPECT_EQ(sync.mappings(), 2u);
    EXPECT_EQ(translate(iommu, mem.iova(0), 8), at(mem.va(0)));
    EXPECT_EQ(translate(iommu, FakeMemory::IOVA_BASE + FakeMemory::PAGE, 8), nullptr);
    EXPECT_EQ(translate(iommu, mem.iova(2), 2 * FakeMemory::PAGE), at(mem.va(2)));
}

TEST(IommuSync, AMissingSegmentFailsTheArea)
{
    FakeMemory mem({0, 1});
    Iommu iommu;
    IommuSync sync("test", map_into(iommu), unmap_from(iommu), mem.page_fn());
    EXPECT_EQ(sync.map_area(mem.va(0), mem.size() + FakeMemory::PAGE), -EFAULT);
    EXPECT_EQ(translate(iommu, mem.iova(0), 2 * FakeMemory::PAGE), at(mem.va(0))) << "what exists is mapped";
}

TEST(IommuSync, AllocationsMergeWithRunsTheyContinueAndFreesSplitThem)
{
    FakeMemory mem({9, 0, 1, 2, 3, 4});
    Iommu iommu;
    IommuSync sync("test", map_into(iommu), unmap_from(iommu), mem.page_fn());
    /* allocated at different times: pages 1-2, then 4-5, then 3 between */
    ASSERT_EQ(sync.map_area(mem.va(1), 2 * FakeMemory::PAGE), 0);
    ASSERT_EQ(sync.map_area(mem.va(4), 2 * FakeMemory::PAGE), 0);
    EXPECT_EQ(sync.mappings(), 2u);
    ASSERT_EQ(sync.map_area(mem.va(3), FakeMemory::PAGE), 0);
    EXPECT_EQ(sync.mappings(), 1u);
    EXPECT_EQ(translate(iommu, mem.iova(1), 5 * FakeMemory::PAGE), at(mem.va(1))) << "one buffer over all five";
    ASSERT_EQ(sync.map_area(mem.va(0), FakeMemory::PAGE), 0);
    EXPECT_EQ(sync.mappings(), 2u) << "page 0 continues the run in VA, not in IOVA";

    /* page 3 freed: the rest of its run stays mapped */
    sync.unmap_area(mem.va(3), FakeMemory::PAGE);
    EXPECT_EQ(translate(iommu, mem.iova(3), 8), nullptr);
    EXPECT_EQ(translate(iommu, mem.iova(1), 2 * FakeMemory::PAGE), at(mem.va(1)));
    EXPECT_EQ(translate(iommu, mem.iova(4), 2 * FakeMemory::PAGE), at(mem.va(4)));
    EXPECT_EQ(translate(iommu, mem.iova(0), FakeMemory::PAGE), at(mem.va(0)));
    EXPECT_EQ(sync.mappings(), 3u);
}

TEST(IommuSync, ARefusedMappingKeepsTheRunsItWouldHaveJoined)
{
    FakeMemory mem({0, 1, 2});
    Iommu iommu;
    IommuSync sync("test", map_into(iommu), unmap_from(iommu), mem.page_fn());
    ASSERT_EQ(sync.map_area(mem.va(0), FakeMemory::PAGE), 0);
    ASSERT_EQ(sync.map_area(mem.va(2), FakeMemory::PAGE), 0);
    /* someone else holds page 1's IOVA in the device */
    std::vector<uint8_t> other(64);
    ASSERT_EQ(iommu.map(mem.iova(1, 128), other.data(), other.size()), 0);
    EXPECT_EQ(sync.map_area(mem.va(1), FakeMemory::PAGE), -EEXIST);
    EXPECT_EQ(sync.mappings(), 2u);
    EXPECT_EQ(translate(iommu, mem.iova(0), FakeMemory::PAGE), at(mem.va(0)));
    EXPECT_EQ(translate(iommu, mem.iova(2), FakeMemory::PAGE), at(mem.va(2)));
    EXPECT_EQ(translate(iommu, mem.iova(1, 128), 8), other.data());
}

/* ---- EAL memory: hugepages, IOVA as PA (main.cpp) ------------------------ */

struct SegmentCheck {
    Iommu* iommu;
    unsigned segments = 0;
    unsigned wrong = 0;
};

TEST(IommuSyncEal, EveryHugepageTranslatesAtItsPhysicalAddress)
{
    ASSERT_EQ(rte_eal_iova_mode(), RTE_IOVA_PA) << "EAL did not give IOVA as PA";
    /* How often VA-adjacent pages are not IOVA-adjacent: what a mapping of
     * whole VA-contiguous areas gets wrong. */
    unsigned breaks = 0;
    rte_memseg_contig_walk(
        [](const rte_memseg_list*, const rte_memseg* ms, std::size_t len, void* arg) {
            for (std::size_t off = ms->len; off < len; off += ms->len) {
                const rte_memseg* cur = rte_mem_virt2memseg(static_cast<const uint8_t*>(ms->addr) + off, nullptr);
                const rte_memseg* prev = rte_mem_virt2memseg(static_cast<const uint8_t*>(ms->addr) + off - 1, nullptr);
                if (cur->iova != prev->iova + prev->len)
                    ++*static_cast<unsigned*>(arg);
            }
            return 0;
        },
        &breaks);
    RecordProperty("iova_breaks", static_cast<int>(breaks));
    std::printf("[          ] %u VA-adjacent hugepage pairs are not IOVA-adjacent\n", breaks);

    Iommu iommu;
    IommuSync sync("test-eal", map_into(iommu), unmap_from(iommu));
    ASSERT_EQ(sync.start(), 0);
    SegmentCheck check{&iommu};
    rte_memseg_walk(
        [](const rte_memseg_list* msl, const rte_memseg* ms, void* arg) {
            auto* c = static_cast<SegmentCheck*>(arg);
            if (msl->external || ms->iova == RTE_BAD_IOVA)
                return 0;
            c->segments++;
            if (translate(*c->iommu, ms->iova, ms->len) != ms->addr)
                c->wrong++;
            return 0;
        },
        &check);
    EXPECT_GT(check.segments, 0u);
    EXPECT_EQ(check.wrong, 0u) << "of " << check.segments << " hugepages, some do not translate to themselves";

    /* memory allocated from now on (the hotplug callback), beyond -m */
    const rte_memzone* mz =
        rte_memzone_reserve_aligned("iommu-sync-test", 96u << 20, SOCKET_ID_ANY, 0, RTE_PGSIZE_2M);
    ASSERT_NE(mz, nullptr);
    std::size_t pages = 0, wrong = 0;
    for (std::size_t off = 0; off < mz->len; off += RTE_PGSIZE_2M, pages++) {
        const void* va = static_cast<const uint8_t*>(mz->addr) + off;
        if (translate(iommu, rte_mem_virt2iova(va), RTE_PGSIZE_2M) != va)
            wrong++;
    }
    EXPECT_EQ(wrong, 0u) << "of " << pages << " pages allocated after start";
    rte_memzone_free(mz);
    sync.stop();
    EXPECT_EQ(sync.mappings(), 0u);
}

} // namespace
} // namespace cna::osal
