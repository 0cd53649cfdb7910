/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_dma_pool.h"

#include <atomic>
#include <bitset>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include <unistd.h>

#include <rte_errno.h>
#include <rte_memzone.h>

#include "osal_log.h"

namespace cna::osal::dma_pool {

namespace {

struct Arena {
    const rte_memzone* mz = nullptr;
    std::bitset<ARENA_PAGES> used;

    /* The first page of a free run of `pages`, or ARENA_PAGES. */
    unsigned find_run(unsigned pages) const
    {
        unsigned run = 0;
        for (unsigned p = 0; p < ARENA_PAGES; p++) {
            run = used[p] ? 0 : run + 1;
            if (run == pages)
                return p + 1 - pages;
        }
        return ARENA_PAGES;
    }
};

struct Pool {
    std::mutex lock;
    std::vector<std::unique_ptr<Arena>> arenas;
};

/* Never destroyed: devices closed at exit, after static destructors ran,
 * still give their pages back. */
Pool& pool()
{
    static Pool* p = new Pool;
    return *p;
}

/* A new arena, or nullptr with rte_errno set. */
std::unique_ptr<Arena> reserve_arena()
{
    static std::atomic<uint32_t> serial{0};
    char name[RTE_MEMZONE_NAMESIZE];
    /* Another process of the same DPDK run has arenas of the same numbers. */
    snprintf(name, sizeof(name), "cna_arena_%d_%u", static_cast<int>(getpid()), serial.fetch_add(1));
    auto arena = std::make_unique<Arena>();
    arena->mz = rte_memzone_reserve_aligned(name, ARENA_PAGES * PAGE, SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG, PAGE);
    return arena->mz != nullptr ? std::move(arena) : nullptr;
}

} // namespace

int take(std::size_t size, const char* what, Slice* out)
{
    const auto pages = static_cast<unsigned>((size + PAGE - 1) / PAGE);
    Pool& p = pool();
    std::lock_guard guard(p.lock);
    Arena* arena = nullptr;
    unsigned first = ARENA_PAGES;
    for (auto& a : p.arenas) {
        if ((first = a->find_run(pages)) < ARENA_PAGES) {
            arena = a.get();
            break;
        }
    }
    if (arena == nullptr) {
        auto fresh = reserve_arena();
        if (fresh == nullptr) {
            const int err = rte_errno;
            dp_log(logtype_ecore, DpLevel::err, 0, "osal", __func__,
                   "cannot reserve a DMA arena for %zu bytes of %s: %s", size, what, rte_strerror(err));
            return -(err ? err : ENOMEM);
        }
        arena = fresh.get();
        first = 0;
        p.arenas.push_back(std::move(fresh));
    }
    for (unsigned i = 0; i < pages; i++)
        arena->used.set(first + i);
    auto* va = static_cast<uint8_t*>(arena->mz->addr) + first * PAGE;
    memset(va, 0, pages * PAGE);
    *out = Slice{arena, first, pages, va, arena->mz->iova + first * PAGE};
    return 0;
}

void give_back(const Slice& slice)
{
    Pool& p = pool();
    std::lock_guard guard(p.lock);
    auto* arena = static_cast<Arena*>(slice.arena);
    for (unsigned i = 0; i < slice.pages; i++)
        arena->used.reset(slice.first + i);
    /* An empty arena goes back to DPDK: a device closed leaves no memzone. */
    if (arena->used.none()) {
        rte_memzone_free(arena->mz);
        std::erase_if(p.arenas, [arena](const auto& a) { return a.get() == arena; });
    }
}

unsigned arenas()
{
    Pool& p = pool();
    std::lock_guard guard(p.lock);
    return static_cast<unsigned>(p.arenas.size());
}

} // namespace cna::osal::dma_pool
