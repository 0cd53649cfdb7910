/* SPDX-License-Identifier: BSD-3-Clause
 * The IOMMU of one PCI function: the table of IOVA ranges the host gave the
 * device, the only way the adapter reaches host memory.
 *
 * Host threads map and unmap under a mutex; the engine translates through a
 * small cache of recently hit ranges validated by a generation counter, so
 * the fastpath costs one atomic load and a compare when the cache hits.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace cna::fw {

class Iommu {
public:
    /* 0, -EINVAL (empty, wrapping or null) or -EEXIST (overlaps a range). */
    int map(uint64_t iova, void* va, std::size_t len);
    /* Removes every range inside [iova, iova + len); -ENOENT if none. */
    int unmap(uint64_t iova, std::size_t len);
    /* Host address of [iova, iova + len) if one range covers all of it, or
     * ranges that follow each other in IOVA and host memory alike, else
     * nullptr. Engine threads only, one at a time: the PF's own, or thread 0
     * while the slowpath holds it (the cache is not shared). Inline up to
     * the cache: every DMA access of the fastpath translates. */
    uint8_t* translate(uint64_t iova, std::size_t len)
    {
        if (cache_generation_ == generation_.load(std::memory_order_acquire)) {
            /* The range hit last first: a burst's buffers share one. */
            if (last_.covers(iova, len))
                return last_.va + (iova - last_.iova);
            for (const Range& r : cache_) {
                if (r.va != nullptr && r.covers(iova, len)) {
                    last_ = r;
                    return r.va + (iova - r.iova);
                }
            }
        }
        return lookup_slow(iova, len);
    }
    /* Where iova was in the range the last translation hit, for a prefetch
     * only: no generation check, so possibly stale, which a prefetch (it
     * never faults) may be. nullptr outside that range. */
    const uint8_t* prefetch_hint(uint64_t iova) const
    {
        return last_.covers(iova, 1) ? last_.va + (iova - last_.iova) : nullptr;
    }
    /* A host thread's access (DMAE, under the slowpath lock): a copy out of
     * or into [iova, iova + len) under the table's lock, so that no unmap
     * completes while it runs; false if no range covers it. The engine's
     * cache is not touched. */
    bool copy_out(uint64_t iova, void* dst, std::size_t len);
    bool copy_in(uint64_t iova, const void* src, std::size_t len);
    /* Changes with every map and unmap: a translation kept outside the
     * cache (DmaRing) is valid while this stays what it was. */
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
    /* Fault injection (Fault::dma_fault): while blocked, nothing translates
     * (the table is kept). */
    void set_blocked(bool on);

private:
    struct Range {
        uint64_t iova;
        uint64_t len;
        uint8_t* va;
        /* No range wraps (map() refuses), so an address below iova is
         * at least len past it modulo 2^64: one compare for both ends. */
        bool covers(uint64_t a, std::size_t n) const
        {
            uint64_t off = a - iova;
            return off < len && n <= len - off;
        }
    };
    static constexpr unsigned CACHE_WAYS = 4;

    uint8_t* lookup_slow(uint64_t iova, std::size_t len);
    /* The range, or run of ranges, covering [iova, iova + len), mutex_
     * held. */
    std::optional<Range> find(uint64_t iova, std::size_t len) const;

    std::mutex mutex_;
    std::vector<Range> ranges_; /* sorted by iova, disjoint */
    std::atomic<uint64_t> generation_{1};
    std::atomic<bool> blocked_{false}; /* set before the generation changes: a cache is stale first */

    /* Engine-side cache: valid while cache_generation_ == generation_. */
    uint64_t cache_generation_ = 0;
    Range cache_[CACHE_WAYS]{};
    unsigned cache_next_ = 0;
    Range last_{}; /* a copy of the entry hit last; empty (len 0) covers nothing */
};

} // namespace cna::fw
