/* SPDX-License-Identifier: BSD-3-Clause
 * The memory regions (TIDs) of one PF as the storms hold them: registered
 * by ramrod, looked up by key for every SGE, RETH and AtomicETH, and
 * walked as IOVA extents for DMA.
 *
 * Registration copies the page list (the driver may free its PBL after
 * the completion) and merges pages whose IOVAs follow each other into
 * extents, so a region in IOVA-contiguous memory (hugepages, IOVA as VA)
 * is one extent and costs one translation per access.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "hsi_rdma.h"
#include "hsi_spq.h"

namespace cna::fw {
class Dma;
}

namespace cna::fw::roce {

struct MemoryRegion {
    struct Extent {
        uint64_t offset;   /* from the start of the region's first page */
        uint64_t iova;
        uint64_t len;
    };
    bool valid = false;
    uint8_t key = 0;
    uint8_t access = 0;    /* hsi::rdma::access::* */
    uint16_t pd = 0;
    bool zero_based = false;
    uint64_t va = 0;
    uint64_t length = 0;
    uint32_t first_page_offset = 0;
    uint8_t page_shift = 0;
    uint32_t num_pages = 0;
    std::vector<Extent> extents;
};

/* Why an access to a region was refused. */
enum class MrCheck : uint8_t {
    ok,
    bad_key,     /* no such TID, not registered, or another key byte */
    other_pd,    /* the region belongs to another protection domain */
    out_of_bounds,
    no_access,   /* the region does not grant the access */
};

class MrTable {
public:
    /* func_init: how many TIDs the driver's ILT holds. */
    void configure(uint32_t num_tids);
    void clear();

    /* Slowpath: the ramrod's checks, then the page list read by DMA. */
    hsi::FwReturn register_tid(const hsi::rdma::RegisterTidRamrodData& d, Dma& dma);
    hsi::FwReturn deregister_tid(uint32_t tid);
    const MemoryRegion* region(uint32_t tid) const { return tid < regions_.size() ? &regions_[tid] : nullptr; }

    /* May a QP of protection domain `pd` access [addr, addr + len) through
     * `key` as `need` (access::* bits; 0 for a local read, which every
     * region grants)? addr is in the region's address space: its VA, or
     * an offset when it is zero-based. */
    MrCheck check(uint32_t key, uint16_t pd, uint64_t addr, uint64_t len, uint8_t need,
                  const MemoryRegion** out) const;

    /* Calls fn(iova, len) for the IOVA pieces of [addr, addr + len) of a
     * region check() accepted, in order; stops (false) when fn does. */
    template <typename Fn>
    static bool for_each_piece(const MemoryRegion& mr, uint64_t addr, uint64_t len, Fn&& fn)
    {
        uint64_t off = offset_in_pages(mr, addr);
        auto it = extent_at(mr, off);
        while (len != 0) {
            uint64_t in_extent = off - it->offset;
            uint64_t n = it->len - in_extent < len ? it->len - in_extent : len;
            if (!fn(it->iova + in_extent, n))
                return false;
            off += n;
            len -= n;
            ++it;
        }
        return true;
    }

private:
    static uint64_t offset_in_pages(const MemoryRegion& mr, uint64_t addr)
    {
        return (mr.zero_based ? addr : addr - mr.va) + mr.first_page_offset;
    }
    static std::vector<MemoryRegion::Extent>::const_iterator extent_at(const MemoryRegion& mr, uint64_t off);

    std::vector<MemoryRegion> regions_;
};

} // namespace cna::fw::roce
