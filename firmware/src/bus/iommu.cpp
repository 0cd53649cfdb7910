/* SPDX-License-Identifier: BSD-3-Clause */
#include "bus/iommu.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace cna::fw {

namespace {

/* The first of a table's ranges (sorted by iova, disjoint) at or past iova. */
template <typename Table>
auto at_or_after(Table& table, uint64_t iova)
{
    return std::lower_bound(table.begin(), table.end(), iova, [](const auto& r, uint64_t a) { return r.iova < a; });
}

/* Whether [iova, iova + len) overlaps a range of the table: only the ones
 * either side of where it would go can. */
template <typename Table>
bool overlaps(const Table& table, uint64_t iova, std::size_t len)
{
    const auto next = at_or_after(table, iova);
    return (next != table.end() && next->iova < iova + len) ||
           (next != table.begin() && std::prev(next)->iova + std::prev(next)->len > iova);
}

} // namespace

bool Iommu::taken(uint64_t iova, std::size_t len) const
{
    return overlaps(ranges_, iova, len) || overlaps(remote_, iova, len);
}

int Iommu::map(uint64_t iova, void* va, std::size_t len)
{
    if (len == 0 || va == nullptr || iova + len < iova)
        return -EINVAL;
    std::lock_guard lock(mutex_);
    if (taken(iova, len))
        return -EEXIST;
    ranges_.insert(at_or_after(ranges_, iova), Range{iova, len, static_cast<uint8_t*>(va)});
    generation_.fetch_add(1, std::memory_order_release);
    return 0;
}

int Iommu::map_remote(uint64_t iova, std::shared_ptr<RemoteMemory> memory, uint64_t va, std::size_t len)
{
    if (len == 0 || memory == nullptr || iova + len < iova || va + len < va)
        return -EINVAL;
    std::lock_guard lock(mutex_);
    if (remote_.size() >= MAX_REMOTE_RANGES)
        return -ENOSPC;
    if (taken(iova, len))
        return -EEXIST;
    remote_.insert(at_or_after(remote_, iova), RemoteRange{iova, len, std::move(memory), va});
    generation_.fetch_add(1, std::memory_order_release);
    return 0;
}

int Iommu::unmap(uint64_t iova, std::size_t len)
{
    std::lock_guard lock(mutex_);
    const auto inside = [&](uint64_t start, uint64_t n) {
        return start >= iova && start - iova <= len && n <= len - (start - iova);
    };
    auto removed = std::erase_if(ranges_, [&](const Range& r) { return inside(r.iova, r.len); }) +
                   std::erase_if(remote_, [&](const RemoteRange& r) { return inside(r.iova, r.len); });
    if (removed == 0)
        return -ENOENT;
    if (remote_.empty())
        remote_gone_.store(false, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    return 0;
}

void Iommu::set_blocked(bool on)
{
    blocked_.store(on, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
}

uint8_t* Iommu::lookup_slow(TranslationCache& cache, uint64_t iova, std::size_t len)
{
    /* The generation is read before the table: a change racing with this
     * lookup leaves the cache tagged stale, so it is flushed next time. */
    uint64_t generation = generation_.load(std::memory_order_acquire);
    if (cache.generation != generation)
        cache = TranslationCache{.generation = generation};
    if (blocked_.load(std::memory_order_relaxed))
        return nullptr;
    std::lock_guard lock(mutex_);
    const std::optional<Range> found = find(iova, len);
    if (!found)
        return nullptr;
    const Range& r = *found;
    cache.ways[cache.next] = r;
    cache.last = r;
    cache.next = (cache.next + 1) % TranslationCache::WAYS;
    return r.va + (iova - r.iova);
}

std::optional<Iommu::Range> Iommu::find(uint64_t iova, std::size_t len) const
{
    auto after = std::upper_bound(ranges_.begin(), ranges_.end(), iova,
                                  [](uint64_t a, const Range& r) { return a < r.iova; });
    if (after == ranges_.begin())
        return std::nullopt;
    auto next = std::prev(after);
    Range run = *next;
    if (iova - run.iova >= run.len)
        return std::nullopt;
    /* Memory mapped in pieces (regions registered at different times over
     * neighbouring pages) is reached across them where the pieces follow
     * each other in IOVA and in host memory alike. */
    while (!run.covers(iova, len)) {
        if (++next == ranges_.end() || next->iova != run.iova + run.len || next->va != run.va + run.len)
            return std::nullopt;
        run.len += next->len;
    }
    return run;
}

bool Iommu::copy_remote(uint64_t iova, void* buf, std::size_t len, bool to_host)
{
    std::shared_ptr<RemoteMemory> memory;
    uint64_t va = 0;
    {
        std::lock_guard lock(mutex_);
        if (blocked_.load(std::memory_order_relaxed))
            return false;
        const auto after = std::upper_bound(remote_.begin(), remote_.end(), iova,
                                            [](uint64_t a, const RemoteRange& r) { return a < r.iova; });
        if (after != remote_.begin()) {
            const RemoteRange& r = *std::prev(after);
            if (iova - r.iova < r.len && len <= r.len - (iova - r.iova)) {
                memory = r.memory;
                va = r.va + (iova - r.iova);
            }
        }
    }
    /* Outside the lock: the copy is a system call. An unmap meanwhile waits
     * for the engines' passes (dma_unmap), so the range outlives it. */
    if (memory == nullptr)
        return false;
    if (to_host ? memory->write(va, buf, len) : memory->read(va, buf, len))
        return true;
    if (memory->gone())
        remote_gone_.store(true, std::memory_order_relaxed);
    return false;
}

bool Iommu::copy_out(uint64_t iova, void* dst, std::size_t len)
{
    std::lock_guard lock(mutex_);
    const std::optional<Range> r = blocked_.load(std::memory_order_relaxed) ? std::nullopt : find(iova, len);
    if (r)
        std::memcpy(dst, r->va + (iova - r->iova), len);
    return r.has_value();
}

bool Iommu::copy_in(uint64_t iova, const void* src, std::size_t len)
{
    std::lock_guard lock(mutex_);
    const std::optional<Range> r = blocked_.load(std::memory_order_relaxed) ? std::nullopt : find(iova, len);
    if (!r)
        return false;
    uint8_t* dst = r->va + (iova - r->iova);
    const auto* from = static_cast<const uint8_t*>(src);
    /* The host polls what a DMAE writes (a reply's status byte, a bulletin
     * board being rewritten): aligned words, and a lone byte, are stored
     * whole and release what was written before them. */
    if (((reinterpret_cast<uintptr_t>(dst) | len) & 3) == 0) {
        for (std::size_t i = 0; i < len; i += 4) {
            uint32_t word;
            std::memcpy(&word, from + i, sizeof word);
            std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(dst + i)).store(word, std::memory_order_release);
        }
    } else if (len == 1) {
        std::atomic_ref<uint8_t>(*dst).store(*from, std::memory_order_release);
    } else {
        std::memcpy(dst, from, len);
    }
    return true;
}

} // namespace cna::fw
