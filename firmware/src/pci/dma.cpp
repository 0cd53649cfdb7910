/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci/dma.h"

#include <cstring>

#include "pci/iommu.h"
#include "pci/pglue.h"

namespace cna::fw {

uint8_t* Dma::map(uint64_t iova, std::size_t len)
{
    if (!pglue_.master_enabled())
        return nullptr;
    uint8_t* va = iommu_.translate(iova, len);
    if (va == nullptr)
        pglue_.dma_fault(iova);
    return va;
}

bool Dma::read(uint64_t iova, void* dst, std::size_t len)
{
    const uint8_t* src = map(iova, len);
    if (src == nullptr)
        return false;
    std::memcpy(dst, src, len);
    return true;
}

bool Dma::write(uint64_t iova, const void* src, std::size_t len)
{
    uint8_t* dst = map(iova, len);
    if (dst == nullptr)
        return false;
    std::memcpy(dst, src, len);
    return true;
}

} // namespace cna::fw
