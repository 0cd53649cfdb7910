/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/mr_table.h"

#include <algorithm>

#include "bus/dma.h"

namespace cna::fw::roce {

using namespace hsi::rdma;
using hsi::FwReturn;

namespace {

/* REGISTER_TID's fields: a page size the storms know, access bits that
 * make sense together (remote writes and atomics need local write), and a
 * region that fits its pages and does not wrap. */
bool register_params_ok(const RegisterTidRamrodData& d)
{
    const uint64_t page = d.page_shift < 64 ? 1ull << d.page_shift : 0;
    const bool remote_changes = (d.access & (access::REMOTE_WRITE | access::REMOTE_ATOMIC)) != 0;
    return d.page_shift >= MIN_PAGE_SHIFT && d.page_shift <= MAX_PAGE_SHIFT && (d.access & ~access::ALL) == 0 &&
           (!remote_changes || (d.access & access::LOCAL_WRITE)) && d.length <= MAX_MR_SIZE &&
           d.first_page_offset < page && d.num_pages != 0 &&
           (uint64_t{d.num_pages} << d.page_shift) >= d.first_page_offset + d.length &&
           (d.zero_based || d.va + d.length >= d.va);
}

/* The page list as extents, pages whose IOVAs follow each other merged;
 * false when a page is not aligned to its size or wraps. */
bool extents_of(const std::vector<uint64_t>& pages, uint8_t page_shift, std::vector<MemoryRegion::Extent>& ext)
{
    const uint64_t page = 1ull << page_shift;
    for (uint32_t i = 0; i < pages.size(); i++) {
        if ((pages[i] & (page - 1)) != 0 || pages[i] + page < pages[i])
            return false;
        if (!ext.empty() && ext.back().iova + ext.back().len == pages[i])
            ext.back().len += page;
        else
            ext.push_back({uint64_t{i} << page_shift, pages[i], page});
    }
    return true;
}

} // namespace

void MrTable::configure(uint32_t num_tids)
{
    regions_.clear();
    regions_.resize(num_tids);
}

void MrTable::clear() { regions_.clear(); }

FwReturn MrTable::register_tid(const RegisterTidRamrodData& d, Dma& dma)
{
    if (d.tid >= regions_.size())
        return FwReturn::no_resource;
    if (regions_[d.tid].valid)
        return FwReturn::bad_state;
    if (!register_params_ok(d))
        return FwReturn::invalid_param;
    std::vector<uint64_t> pages(d.num_pages);
    if (!dma.read(hsi::from_regpair(d.pbl_base), pages.data(), pages.size() * sizeof(uint64_t)))
        return FwReturn::dma_error;
    MemoryRegion mr;
    if (!extents_of(pages, d.page_shift, mr.extents))
        return FwReturn::invalid_param;
    mr.valid = true;
    mr.key = d.key;
    mr.access = d.access;
    mr.pd = d.pd;
    mr.zero_based = d.zero_based != 0;
    mr.va = d.zero_based ? 0 : d.va;
    mr.length = d.length;
    mr.first_page_offset = d.first_page_offset;
    mr.page_shift = d.page_shift;
    mr.num_pages = d.num_pages;
    regions_[d.tid] = std::move(mr);
    return FwReturn::ok;
}

FwReturn MrTable::deregister_tid(uint32_t tid)
{
    if (tid >= regions_.size())
        return FwReturn::no_resource;
    if (!regions_[tid].valid)
        return FwReturn::not_found;
    regions_[tid] = MemoryRegion{};
    return FwReturn::ok;
}

MrCheck MrTable::check(uint32_t key, uint16_t pd, uint64_t addr, uint64_t len, uint8_t need,
                       const MemoryRegion** out) const
{
    const uint32_t tid = tid_of_key(key);
    if (tid >= regions_.size() || !regions_[tid].valid || regions_[tid].key != static_cast<uint8_t>(key))
        return MrCheck::bad_key;
    const MemoryRegion& mr = regions_[tid];
    if (mr.pd != pd)
        return MrCheck::other_pd;
    /* Written so that nothing wraps: addr - va only once addr >= va. */
    if (addr < mr.va || addr - mr.va > mr.length || len > mr.length - (addr - mr.va))
        return MrCheck::out_of_bounds;
    if ((mr.access & need) != need)
        return MrCheck::no_access;
    *out = &mr;
    return MrCheck::ok;
}

std::vector<MemoryRegion::Extent>::const_iterator MrTable::extent_at(const MemoryRegion& mr, uint64_t off)
{
    /* The last extent starting at or before off. */
    auto it = std::upper_bound(mr.extents.begin(), mr.extents.end(), off,
                               [](uint64_t o, const MemoryRegion::Extent& e) { return o < e.offset; });
    return it - 1;
}

} // namespace cna::fw::roce
