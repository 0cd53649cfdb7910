/* SPDX-License-Identifier: BSD-3-Clause
 * Small DMA allocations share memzones. DPDK has a fixed number of
 * memzones (RTE_MAX_MEMZONE, 2560 in Debian's build), and an RDMA
 * connection holds five small ones (two CQ rings, SQ, RQ, an MR's page
 * list): a thousand connections would need twice as many memzones as
 * there are. An arena is one memzone of ARENA_PAGES 4 KiB pages; a small
 * allocation takes a run of whole pages of one arena, so it keeps the
 * 4 KiB alignment rings and page lists are given.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::osal::dma_pool {

inline constexpr std::size_t PAGE = 4096;
inline constexpr unsigned ARENA_PAGES = 256;
inline constexpr unsigned MAX_PAGES = 16; /* larger allocations get memzones of their own */

struct Slice {
    void* arena = nullptr;
    unsigned first = 0, pages = 0;
    void* va = nullptr;
    uint64_t iova = 0;
};

/* Whether an allocation of `size` bytes aligned to `align` comes from the arenas. */
constexpr bool fits(std::size_t size, std::size_t align)
{
    return size != 0 && size <= MAX_PAGES * PAGE && align <= PAGE && PAGE % align == 0;
}

/* A zeroed run of pages for `size` bytes: 0, or -errno (logged, naming `what`). */
int take(std::size_t size, const char* what, Slice* out);
void give_back(const Slice& slice);

/* Arenas reserved now, for tests and the log. */
unsigned arenas();

} // namespace cna::osal::dma_pool
