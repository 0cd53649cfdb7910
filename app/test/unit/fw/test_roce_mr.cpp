/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' memory regions: what registration refuses, the bounds, key,
 * PD and access checks every SGE, RETH and AtomicETH goes through, and the
 * IOVA pieces a checked range becomes.
 */
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "hsi_common.h"
#include "irq/attention.h"
#include "irq/cau.h"
#include "bus/dma.h"
#include "bus/iommu.h"
#include "function/pglue.h"
#include "roce/mr_table.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::roce;
using namespace cna::hsi::rdma;
using cna::hsi::FwReturn;

constexpr uint64_t PAGE = 4096;
constexpr uint64_t PBL_IOVA = 0x100000;

/* A function's DMA path, as far as the MR table needs it. */
struct Rig {
    Iommu iommu;
    Dma dma{iommu, pglue};
    Cau cau;
    Attention attention{cau};
    Pglue pglue{"pf0", attention};
    std::vector<uint64_t> pbl = std::vector<uint64_t>(64);
    MrTable mrs;

    Rig()
    {
        pglue.write(cna::hsi::reg::PGLUE_PF_MASTER_ENABLE, 1);
        iommu.map(PBL_IOVA, pbl.data(), pbl.size() * 8);
        mrs.configure(16);
    }

    FwReturn reg(uint32_t tid, std::vector<uint64_t> pages, uint64_t va, uint64_t len, uint8_t access,
                 uint32_t fbo = 0, uint16_t pd = 1, bool zero_based = false)
    {
        std::copy(pages.begin(), pages.end(), pbl.begin());
        RegisterTidRamrodData d{};
        d.tid = tid;
        d.key = 0x5a;
        d.access = access;
        d.pd = pd;
        d.page_shift = 12;
        d.zero_based = zero_based;
        d.first_page_offset = fbo;
        d.va = va;
        d.length = len;
        d.pbl_base = cna::hsi::make_regpair(PBL_IOVA);
        d.num_pages = static_cast<uint32_t>(pages.size());
        return mrs.register_tid(d, dma);
    }

    std::vector<std::pair<uint64_t, uint64_t>> pieces(uint32_t tid, uint64_t addr, uint64_t len)
    {
        std::vector<std::pair<uint64_t, uint64_t>> out;
        const MemoryRegion* mr = nullptr;
        EXPECT_EQ(mrs.check(mr_key(tid, 0x5a), 1, addr, len, 0, &mr), MrCheck::ok);
        if (mr != nullptr)
            MrTable::for_each_piece(*mr, addr, len, [&](uint64_t iova, uint64_t n) {
                out.emplace_back(iova, n);
                return true;
            });
        return out;
    }
};

using Pieces = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(RoceMr, ContiguousPagesAreOneExtent)
{
    Rig r;
    ASSERT_EQ(r.reg(1, {0x200000, 0x201000, 0x202000}, 0x7f0000000100, 3 * PAGE - 0x100, access::LOCAL_WRITE, 0x100),
              FwReturn::ok);
    EXPECT_EQ(r.mrs.region(1)->extents.size(), 1u);
    EXPECT_EQ(r.pieces(1, 0x7f0000000100, 10), (Pieces{{0x200100, 10}}));
    EXPECT_EQ(r.pieces(1, 0x7f0000000f00, 0x200), (Pieces{{0x200f00, 0x200}}));
}

TEST(RoceMr, ScatteredPagesSplitAtPageBoundaries)
{
    Rig r;
    ASSERT_EQ(r.reg(2, {0x500000, 0x300000, 0x301000, 0x900000}, 0x1000, 4 * PAGE, 0), FwReturn::ok);
    EXPECT_EQ(r.mrs.region(2)->extents.size(), 3u);
    EXPECT_EQ(r.pieces(2, 0x1ff0, 0x20), (Pieces{{0x500ff0, 0x10}, {0x300000, 0x10}}));
    EXPECT_EQ(r.pieces(2, 0x1000, 4 * PAGE),
              (Pieces{{0x500000, PAGE}, {0x300000, 2 * PAGE}, {0x900000, PAGE}}));
    EXPECT_EQ(r.pieces(2, 0x4800, 0x800), (Pieces{{0x900800, 0x800}}));
}

TEST(RoceMr, BoundsKeyPdAndAccess)
{
    Rig r;
    const uint64_t va = 0x10000;
    ASSERT_EQ(r.reg(3, {0x200000, 0x201000}, va, 2 * PAGE, access::LOCAL_WRITE | access::REMOTE_READ), FwReturn::ok);
    const MemoryRegion* mr = nullptr;
    const uint32_t key = mr_key(3, 0x5a);
    EXPECT_EQ(r.mrs.check(key, 1, va, 2 * PAGE, access::REMOTE_READ, &mr), MrCheck::ok);
    EXPECT_EQ(r.mrs.check(key, 1, va + 2 * PAGE, 0, 0, &mr), MrCheck::ok) << "empty, at the end";
    EXPECT_EQ(r.mrs.check(key, 1, va - 1, 1, 0, &mr), MrCheck::out_of_bounds);
    EXPECT_EQ(r.mrs.check(key, 1, va + 1, 2 * PAGE, 0, &mr), MrCheck::out_of_bounds);
    EXPECT_EQ(r.mrs.check(key, 1, va + 2 * PAGE + 1, 0, 0, &mr), MrCheck::out_of_bounds);
    EXPECT_EQ(r.mrs.check(key, 1, va + 8, ~0ull - 4, 0, &mr), MrCheck::out_of_bounds) << "a length that wraps";
    EXPECT_EQ(r.mrs.check(key, 1, va, 8, access::REMOTE_WRITE, &mr), MrCheck::no_access);
    EXPECT_EQ(r.mrs.check(key, 1, va, 8, access::REMOTE_ATOMIC, &mr), MrCheck::no_access);
    EXPECT_EQ(r.mrs.check(key, 2, va, 8, 0, &mr), MrCheck::other_pd);
    EXPECT_EQ(r.mrs.check(mr_key(3, 0x5b), 1, va, 8, 0, &mr), MrCheck::bad_key);
    EXPECT_EQ(r.mrs.check(mr_key(4, 0x5a), 1, va, 8, 0, &mr), MrCheck::bad_key) << "not registered";
    EXPECT_EQ(r.mrs.check(mr_key(99, 0x5a), 1, va, 8, 0, &mr), MrCheck::bad_key) << "beyond the table";
}

TEST(RoceMr, ZeroBasedRegionsCountFromZero)
{
    Rig r;
    ASSERT_EQ(r.reg(5, {0x200000, 0x201000}, 0xdead0000, PAGE + 0x10, access::LOCAL_WRITE | access::REMOTE_WRITE, 0x80,
                    1, true),
              FwReturn::ok);
    EXPECT_EQ(r.pieces(5, 0, 16), (Pieces{{0x200080, 16}}));
    EXPECT_EQ(r.pieces(5, PAGE - 0x80, 0x90), (Pieces{{0x201000, 0x90}}));
    const MemoryRegion* mr = nullptr;
    EXPECT_EQ(r.mrs.check(mr_key(5, 0x5a), 1, 0xdead0000, 1, 0, &mr), MrCheck::out_of_bounds) << "the VA means nothing";
}

TEST(RoceMr, RegistrationRefusesWhatCannotBeRight)
{
    Rig r;
    EXPECT_EQ(r.reg(0, {0x200000}, 0, PAGE, access::REMOTE_WRITE), FwReturn::invalid_param)
        << "remote write without local write";
    EXPECT_EQ(r.reg(0, {0x200000}, 0, PAGE, access::REMOTE_ATOMIC), FwReturn::invalid_param);
    EXPECT_EQ(r.reg(0, {0x200000}, 0, PAGE, 0x80), FwReturn::invalid_param) << "unknown access bit";
    EXPECT_EQ(r.reg(0, {0x200000}, 0, PAGE + 1, 0), FwReturn::invalid_param) << "pages do not cover the length";
    EXPECT_EQ(r.reg(0, {0x200000}, 0, 16, 0, PAGE), FwReturn::invalid_param) << "offset past the first page";
    EXPECT_EQ(r.reg(0, {0x200800}, 0, 16, 0), FwReturn::invalid_param) << "a page not page-aligned";
    EXPECT_EQ(r.reg(0, {}, 0, 0, 0), FwReturn::invalid_param) << "no pages";
    EXPECT_EQ(r.reg(0, {0x200000}, ~0ull - 8, 16, 0), FwReturn::invalid_param) << "a VA range that wraps";
    EXPECT_EQ(r.reg(16, {0x200000}, 0, 16, 0), FwReturn::no_resource) << "beyond the ILT's TIDs";
    ASSERT_EQ(r.reg(0, {0x200000}, 0, 16, 0), FwReturn::ok);
    EXPECT_EQ(r.reg(0, {0x200000}, 0, 16, 0), FwReturn::bad_state) << "registered twice";
    EXPECT_EQ(r.mrs.deregister_tid(0), FwReturn::ok);
    EXPECT_EQ(r.mrs.deregister_tid(0), FwReturn::not_found);
    EXPECT_EQ(r.mrs.deregister_tid(99), FwReturn::no_resource);
    const MemoryRegion* mr = nullptr;
    EXPECT_EQ(r.mrs.check(mr_key(0, 0x5a), 1, 0, 1, 0, &mr), MrCheck::bad_key) << "deregistered";
}

TEST(RoceMr, APageListOutsideTheIommuIsADmaError)
{
    Rig r;
    RegisterTidRamrodData d{};
    d.tid = 1;
    d.page_shift = 12;
    d.length = 16;
    d.num_pages = 1;
    d.pbl_base = cna::hsi::make_regpair(0xbad000);
    EXPECT_EQ(r.mrs.register_tid(d, r.dma), FwReturn::dma_error);
    EXPECT_EQ(r.pglue.dma_fault_count(), 1u);
    EXPECT_FALSE(r.mrs.region(1)->valid);
}

} // namespace
