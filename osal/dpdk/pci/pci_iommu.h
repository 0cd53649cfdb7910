/* SPDX-License-Identifier: BSD-3-Clause
 * Keeps a device IOMMU in step with DPDK memory, as VFIO does for real
 * devices: every memory segment present at attach time is mapped IOVA -> VA,
 * and a mem-event callback maps segments allocated later and unmaps those
 * about to be freed. mbufs and memzones are thus always reachable by DMA.
 *
 * A mapping is one run of pages contiguous in VA *and* in IOVA. With IOVA as
 * VA a whole VA-contiguous area is one run; with IOVA as PA (hugepages,
 * physical addresses) pages that follow each other in VA usually lie
 * anywhere, in any order, in IOVA, and each page is a run of its own unless
 * its physical neighbour also follows it in VA.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <rte_memory.h>

#include "osal_sync.h"

namespace cna::osal {

class IommuSync {
public:
    /* The device side: returns 0 or -errno. */
    using MapFn = std::function<int(uint64_t iova, void* va, std::size_t len)>;
    using UnmapFn = std::function<int(uint64_t iova, std::size_t len)>;

    /* One page of DPDK memory: its start, IOVA (RTE_BAD_IOVA: none) and size. */
    struct Page {
        uintptr_t va;
        uint64_t iova;
        std::size_t len;
    };
    /* The page holding `va`, false if none. By default EAL's memsegs
     * (rte_mem_virt2memseg); tests give a page table of their own. */
    using PageFn = std::function<bool(uintptr_t va, Page& page)>;

    IommuSync(std::string name, MapFn map, UnmapFn unmap, PageFn page = {});
    ~IommuSync() { stop(); }
    IommuSync(const IommuSync&) = delete;
    IommuSync& operator=(const IommuSync&) = delete;

    /* Maps the current segments and registers for hotplug; 0 or -errno. */
    int start();
    /* Unregisters and removes every mapping. */
    void stop();

    /* What start() does for each VA-contiguous area of memory and the
     * hotplug callback for memory allocated / about to be freed; public for
     * tests. map_area: 0, or the first error of a run it could not map
     * (logged; the other runs are mapped). */
    int map_area(uintptr_t va, std::size_t len);
    void unmap_area(uintptr_t va, std::size_t len);

    std::size_t mappings() const;

private:
    struct Mapping {
        uint64_t iova;
        std::size_t len;
    };
    static int map_contig(const rte_memseg_list* msl, const rte_memseg* ms, std::size_t len, void* arg);
    static void on_mem_event(rte_mem_event event, const void* addr, std::size_t len, void* arg);
    int map_area_locked(uintptr_t va, std::size_t len);
    void unmap_area_locked(uintptr_t va, std::size_t len);
    int map(uintptr_t va, uint64_t iova, std::size_t len);
    int device_map(uintptr_t va, uint64_t iova, std::size_t len);
    void device_unmap(uint64_t iova, std::size_t len);

    std::string name_;
    MapFn map_fn_;
    UnmapFn unmap_fn_;
    PageFn page_fn_;
    mutable Mutex lock_;                 /* maps_: control thread vs hotplug */
    std::map<uintptr_t, Mapping> maps_;  /* by VA; disjoint, each contiguous in VA and IOVA */
    bool registered_ = false;
};

} // namespace cna::osal
