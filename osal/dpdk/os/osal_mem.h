/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL memory: heap allocations for slowpath structures (rte_malloc) and
 * DMA-coherent memory the device reaches by IOVA (memzones).
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "osal_dma_pool.h"

namespace cna::osal {

/* Zeroed heap memory from the DPDK heap; nullptr on failure. */
void* zalloc(std::size_t size);
void free(void* ptr);

/* DMA-coherent memory: IOVA-contiguous, zeroed, aligned, reachable by the
 * device through the IOMMU mappings the PCI function keeps (every memzone
 * lives in a mapped memory segment). Move-only; released on destruction. */
class DmaMem {
public:
    DmaMem() = default;
    ~DmaMem() { release(); }
    DmaMem(DmaMem&& other) noexcept;
    DmaMem& operator=(DmaMem&& other) noexcept;
    DmaMem(const DmaMem&) = delete;
    DmaMem& operator=(const DmaMem&) = delete;

    /* Returns 0 or -errno. `what` names the memory in logs and the memzone. */
    int alloc(std::size_t size, const char* what, std::size_t align = 4096, int socket = -1);
    void release();

    void* va() const { return va_; }
    template <class T> T* as() const { return static_cast<T*>(va_); }
    uint64_t iova() const { return iova_; }
    std::size_t size() const { return size_; }
    explicit operator bool() const { return va_ != nullptr; }

private:
    const void* mz_ = nullptr; /* const rte_memzone*, kept opaque */
    dma_pool::Slice slice_;    /* or pages of an arena (osal_dma_pool.h) */
    void* va_ = nullptr;
    uint64_t iova_ = 0;
    std::size_t size_ = 0;
};

} // namespace cna::osal
