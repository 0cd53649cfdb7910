/* SPDX-License-Identifier: BSD-3-Clause
 * The IOMMU of one PCI function: the table of IOVA ranges the host gave the
 * device, the only way the adapter reaches host memory.
 *
 * Host threads map and unmap under a mutex; the engine translates through a
 * small cache of recently hit ranges validated by a generation counter, so
 * the fastpath costs one atomic load and a compare when the cache hits.
 * The cache is the translating engine's (TranslationCache): passes that run
 * at once on one function's queues each have their own.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cna_fw/adapter.h"

namespace cna::fw {

class Iommu {
public:
    /* 0, -EINVAL (empty, wrapping or null) or -EEXIST (overlaps a range). */
    int map(uint64_t iova, void* va, std::size_t len);
    /* A range the adapter copies through `memory` from host address va,
     * never addresses: translate() misses it, copy_remote() reaches it.
     * -ENOSPC past MAX_REMOTE_RANGES of them: a bound on what one host may
     * make the device keep. */
    static constexpr std::size_t MAX_REMOTE_RANGES = 65536;
    int map_remote(uint64_t iova, std::shared_ptr<RemoteMemory> memory, uint64_t va, std::size_t len);
    /* Removes every range of either kind inside [iova, iova + len); -ENOENT
     * if none. */
    int unmap(uint64_t iova, std::size_t len);
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
    /* An engine's recently hit ranges: valid while generation is the
     * IOMMU's. One thread uses a cache at a time. */
    struct TranslationCache {
        static constexpr unsigned WAYS = 4;
        uint64_t generation = 0;
        Range ways[WAYS]{};
        unsigned next = 0;
        Range last{}; /* a copy of the entry hit last; empty (len 0) covers nothing */
    };

    /* Host address of [iova, iova + len) if one range covers all of it, or
     * ranges that follow each other in IOVA and host memory alike, else
     * nullptr. Engine threads, each through its own cache. Inline up to
     * the cache: every DMA access of the fastpath translates. */
    uint8_t* translate(TranslationCache& cache, uint64_t iova, std::size_t len)
    {
        if (cache.generation == generation_.load(std::memory_order_acquire)) {
            /* The range hit last first: a burst's buffers share one. */
            if (cache.last.covers(iova, len))
                return cache.last.va + (iova - cache.last.iova);
            for (const Range& r : cache.ways) {
                if (r.va != nullptr && r.covers(iova, len)) {
                    cache.last = r;
                    return r.va + (iova - r.iova);
                }
            }
        }
        return lookup_slow(cache, iova, len);
    }
    /* Where iova was in the range the cache hit last, for a prefetch only:
     * no generation check, so possibly stale, which a prefetch (it never
     * faults) may be. nullptr outside that range. */
    static const uint8_t* prefetch_hint(const TranslationCache& cache, uint64_t iova)
    {
        return cache.last.covers(iova, 1) ? cache.last.va + (iova - cache.last.iova) : nullptr;
    }
    /* A host thread's access (DMAE, under the slowpath lock): a copy out of
     * or into [iova, iova + len) under the table's lock, so that no unmap
     * completes while it runs; false if no range covers it. The engine's
     * cache is not touched. */
    bool copy_out(uint64_t iova, void* dst, std::size_t len);
    bool copy_in(uint64_t iova, const void* src, std::size_t len);
    /* An engine's access to a remote range covering [iova, iova + len):
     * false if none does, or the copy failed. */
    bool copy_remote(uint64_t iova, void* buf, std::size_t len, bool to_host);
    /* Whether a copy found its remote memory gone (RemoteMemory::gone):
     * the host behind the function has ended. Until every remote range
     * is unmapped (the function's reset). */
    bool remote_gone() const { return remote_gone_.load(std::memory_order_relaxed); }
    /* Changes with every map and unmap: a translation kept outside the
     * cache (DmaRing) is valid while this stays what it was. */
    uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
    /* Fault injection (Fault::dma_fault): while blocked, nothing translates
     * (the table is kept). */
    void set_blocked(bool on);

private:
    struct RemoteRange {
        uint64_t iova;
        uint64_t len;
        std::shared_ptr<RemoteMemory> memory;
        uint64_t va;
    };

    uint8_t* lookup_slow(TranslationCache& cache, uint64_t iova, std::size_t len);
    /* Whether [iova, iova + len) overlaps a range of either kind, mutex_ held. */
    bool taken(uint64_t iova, std::size_t len) const;
    /* The range, or run of ranges, covering [iova, iova + len), mutex_
     * held. */
    std::optional<Range> find(uint64_t iova, std::size_t len) const;

    std::mutex mutex_;
    std::vector<Range> ranges_; /* sorted by iova, disjoint */
    std::vector<RemoteRange> remote_; /* sorted by iova, disjoint from each other and from ranges_ */
    std::atomic<bool> remote_gone_{false};
    std::atomic<uint64_t> generation_{1};
    std::atomic<bool> blocked_{false}; /* set before the generation changes: a cache is stale first */
};

} // namespace cna::fw
