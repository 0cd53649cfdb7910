/* SPDX-License-Identifier: BSD-3-Clause
 * DMA of one function: every host access is translated by the IOMMU. A miss
 * abandons the access and is reported to PGLUE, which latches the IOVA and
 * raises the DMA-fault attention; nothing is ever dereferenced untranslated.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::fw {

class Iommu;
class Pglue;

class Dma {
public:
    Dma(Iommu& iommu, Pglue& pglue) : iommu_(iommu), pglue_(pglue) {}

    /* Host memory backing [iova, iova + len), or nullptr (fault reported, or
     * the function is not master-enabled). Engine thread only. */
    uint8_t* map(uint64_t iova, std::size_t len);
    bool read(uint64_t iova, void* dst, std::size_t len);
    bool write(uint64_t iova, const void* src, std::size_t len);

private:
    Iommu& iommu_;
    Pglue& pglue_;
};

} // namespace cna::fw
