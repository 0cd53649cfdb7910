/* SPDX-License-Identifier: BSD-3-Clause
 * Keeps a device IOMMU in step with DPDK memory, as VFIO does for real
 * devices: every memory segment present at attach time is mapped IOVA -> VA,
 * and a mem-event callback maps segments allocated later and unmaps those
 * about to be freed. mbufs and memzones are thus always reachable by DMA.
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

    IommuSync(std::string name, MapFn map, UnmapFn unmap);
    ~IommuSync() { stop(); }
    IommuSync(const IommuSync&) = delete;
    IommuSync& operator=(const IommuSync&) = delete;

    /* Maps the current segments and registers for hotplug; 0 or -errno. */
    int start();
    /* Unregisters and removes every mapping. */
    void stop();

    std::size_t mappings() const { return maps_.size(); }

private:
    struct Mapping {
        uint64_t iova;
        std::size_t len;
    };
    static int map_contig(const rte_memseg_list* msl, const rte_memseg* ms, std::size_t len, void* arg);
    static void on_mem_event(rte_mem_event event, const void* addr, std::size_t len, void* arg);
    int map(uintptr_t va, uint64_t iova, std::size_t len);
    void map_range(uintptr_t va, std::size_t len);
    void unmap_range(uintptr_t va, std::size_t len);

    std::string name_;
    MapFn map_fn_;
    UnmapFn unmap_fn_;
    Mutex lock_;                         /* maps_: control thread vs hotplug */
    std::map<uintptr_t, Mapping> maps_;  /* by VA */
    bool registered_ = false;
};

} // namespace cna::osal
