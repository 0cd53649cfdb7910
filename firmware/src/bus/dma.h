/* SPDX-License-Identifier: BSD-3-Clause
 * DMA of one function: every host access is translated by the IOMMU. A miss
 * abandons the access and is reported to PGLUE, which latches the IOVA and
 * raises the DMA-fault attention; nothing is ever dereferenced untranslated.
 * Inline: the fastpath makes several accesses per frame, and a call per
 * access cost more than the translation that hits the IOMMU's cache.
 *
 * A Dma is one engine's view of the function's DMA, with its own
 * translation cache: engines that run at once each use their own.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <atomic>

#include "bus/dma_ring.h"
#include "bus/iommu.h"

namespace cna::fw {

/* A function's bus-master gate and DMA-fault latch, as DMA sees them; the
 * function's host interface (PGLUE) is one. The gate is read inline, on
 * every access; only a fault takes the call. */
class BusMaster {
public:
    bool master_enabled() const { return master_enable_.load(std::memory_order_acquire) != 0; }
    /* Engine thread: latch a translation miss of [iova, iova + len). */
    virtual void dma_fault(uint64_t iova, std::size_t len) = 0;

protected:
    ~BusMaster() = default;
    std::atomic<uint32_t> master_enable_{0};
};

class Dma {
public:
    Dma(Iommu& iommu, BusMaster& master) : iommu_(iommu), pglue_(master) {}

    /* Host memory backing [iova, iova + len), or nullptr (fault reported, or
     * the function is not master-enabled). The view's engine only. */
    uint8_t* map(uint64_t iova, std::size_t len)
    {
        uint8_t* va = translate(iova, len);
        if (va == nullptr)
            fault(iova, len);
        return va;
    }

    /* Whether the host behind the function is gone (Iommu::remote_gone). */
    bool host_gone() const { return iommu_.remote_gone(); }

    /* Asks for the cache line of an access to come (its translation will
     * tell whether it may be made): a hint, as cheap as the last range's
     * bounds. */
    void prefetch(uint64_t iova, bool for_write) const
    {
        if (const uint8_t* va = Iommu::prefetch_hint(cache_, iova))
            for_write ? __builtin_prefetch(va, 1) : __builtin_prefetch(va, 0);
    }

    /* A copy out of (or into) [iova, iova + len): through its host address,
     * or, for a range the IOMMU reaches only by copying (map_remote), through
     * that. */
    bool read(uint64_t iova, void* dst, std::size_t len)
    {
        if (const uint8_t* src = translate(iova, len)) [[likely]] {
            std::memcpy(dst, src, len);
            return true;
        }
        return copy_remote(iova, dst, len, false);
    }

    bool write(uint64_t iova, const void* src, std::size_t len)
    {
        if (uint8_t* dst = translate(iova, len)) [[likely]] {
            std::memcpy(dst, src, len);
            return true;
        }
        return copy_remote(iova, const_cast<void*>(src), len, true);
    }

    /* [offset, offset + len) of a ring (inside it): as map(ring.iova +
     * offset, len), through the ring's own translation while it holds. */
    uint8_t* map(DmaRing& ring, uint64_t offset, std::size_t len)
    {
        uint8_t* va = map_ring(ring);
        return va != nullptr ? va + offset : map(ring.iova + offset, len); /* per access, with its own fault */
    }

    /* The whole ring's host address, for a burst of accesses to it; nullptr
     * when its accesses must be translated one by one (map(ring, ...)). */
    uint8_t* map_ring(DmaRing& ring)
    {
        if (ring.generation != iommu_.generation())
            refresh(ring);
        return pglue_.master_enabled() ? ring.va : nullptr;
    }
    bool read(DmaRing& ring, uint64_t offset, void* dst, std::size_t len)
    {
        const uint8_t* src = map(ring, offset, len);
        if (src == nullptr)
            return false;
        std::memcpy(dst, src, len);
        return true;
    }

    bool write(DmaRing& ring, uint64_t offset, const void* src, std::size_t len)
    {
        uint8_t* dst = map(ring, offset, len);
        if (dst == nullptr)
            return false;
        std::memcpy(dst, src, len);
        return true;
    }

private:
    uint8_t* translate(uint64_t iova, std::size_t len)
    {
        return pglue_.master_enabled() ? iommu_.translate(cache_, iova, len) : nullptr;
    }
    /* Reported only while master-enabled: a function that is not makes no
     * access at all. */
    void fault(uint64_t iova, std::size_t len)
    {
        if (pglue_.master_enabled())
            pglue_.dma_fault(iova, len);
    }
    bool copy_remote(uint64_t iova, void* buf, std::size_t len, bool to_host)
    {
        if (pglue_.master_enabled() && iommu_.copy_remote(iova, buf, len, to_host))
            return true;
        fault(iova, len);
        return false;
    }

    /* The generation is read before the table, so a change racing with the
     * translation leaves the entry stale rather than wrong. A ring no range
     * covers whole is no fault (yet): its accesses decide. */
    void refresh(DmaRing& ring)
    {
        ring.generation = iommu_.generation();
        ring.va = iommu_.translate(cache_, ring.iova, ring.bytes);
    }

    Iommu& iommu_;
    BusMaster& pglue_;
    Iommu::TranslationCache cache_;
};

} // namespace cna::fw
