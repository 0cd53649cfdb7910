/* SPDX-License-Identifier: BSD-3-Clause
 * A descriptor ring in host memory (Rx BDs, Rx CQEs, Tx BDs) and its
 * translation, made once for the whole ring and kept while the IOMMU's
 * table does not change: an IOTLB entry per ring, so that reaching a BD or
 * a CQE costs a generation compare and an add instead of a lookup. Only
 * Dma reads and refreshes the translation.
 */
#pragma once

#include <cstdint>

namespace cna::fw {

struct DmaRing {
    DmaRing() = default;
    DmaRing(uint64_t iova_, uint64_t bytes_) : iova(iova_), bytes(bytes_) {}

    uint64_t iova = 0;
    uint64_t bytes = 0;
    /* Host address of the whole ring as of IOMMU generation `generation`;
     * nullptr when no single range covers it, and then every access is
     * translated (and faults) on its own, as if there were no entry. */
    uint8_t* va = nullptr;
    uint64_t generation = 0;
};

} // namespace cna::fw
