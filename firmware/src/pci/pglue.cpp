/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci/pglue.h"

#include "hsi_common.h"
#include "igu/attention.h"

namespace cna::fw {

using namespace hsi::reg;

bool Pglue::read(uint32_t addr, uint32_t& value) const
{
    switch (addr) {
    case PGLUE_PF_MASTER_ENABLE: value = master_enable_.load(); return true;
    case PGLUE_PTT_ACCESS_ENABLE: value = ptt_access_enable_.load(); return true;
    case PGLUE_DMA_FAULT_ADDR_LO: value = static_cast<uint32_t>(fault_addr_.load()); return true;
    case PGLUE_DMA_FAULT_ADDR_HI: value = static_cast<uint32_t>(fault_addr_.load() >> 32); return true;
    /* The count register is 32 bits wide and wraps. */
    case PGLUE_DMA_FAULT_COUNT: value = static_cast<uint32_t>(fault_count_.load()); return true;
    default: return false;
    }
}

bool Pglue::write(uint32_t addr, uint32_t value)
{
    switch (addr) {
    case PGLUE_PF_MASTER_ENABLE: master_enable_.store(value & 1, std::memory_order_release); return true;
    case PGLUE_PTT_ACCESS_ENABLE: ptt_access_enable_.store(value & 1); return true;
    case PGLUE_DMA_FAULT_ADDR_LO:
    case PGLUE_DMA_FAULT_ADDR_HI:
    case PGLUE_DMA_FAULT_COUNT: return true; /* read-only: dropped */
    default: return false;
    }
}

void Pglue::dma_fault(uint64_t iova)
{
    fault_addr_.store(iova, std::memory_order_relaxed);
    fault_count_.fetch_add(1, std::memory_order_relaxed);
    attention_.raise(hsi::attn::DMA_FAULT);
}

void Pglue::reset()
{
    master_enable_.store(0, std::memory_order_release);
}

} // namespace cna::fw
