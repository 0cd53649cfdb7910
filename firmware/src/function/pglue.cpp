/* SPDX-License-Identifier: BSD-3-Clause */
#include "function/pglue.h"

#include <cinttypes>

#include "hsi_common.h"
#include "irq/attention.h"
#include "base/log.h"

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
    case PGLUE_BAD_ACCESS_ADDR: value = static_cast<uint32_t>(bad_access_.load()); return true;
    case PGLUE_BAD_ACCESS_INFO: value = static_cast<uint32_t>(bad_access_.load() >> 32); return true;
    case PGLUE_BAD_ACCESS_COUNT: value = bad_access_count_.load(); return true;
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
    case PGLUE_DMA_FAULT_COUNT:
    case PGLUE_BAD_ACCESS_ADDR:
    case PGLUE_BAD_ACCESS_INFO:
    case PGLUE_BAD_ACCESS_COUNT: return true; /* read-only: dropped */
    default: return false;
    }
}

void Pglue::dma_fault(uint64_t iova, std::size_t len)
{
    fault_addr_.store(iova, std::memory_order_relaxed);
    const uint64_t count = fault_count_.fetch_add(1, std::memory_order_relaxed) + 1;
    if ((count & (count - 1)) == 0)
        log(LogLevel::err, "pglue: %s DMA fault: no IOMMU mapping covers IOVA 0x%" PRIx64 " (+%zu), access dropped"
            " (%" PRIu64 " fault%s so far)", who_.c_str(), iova, len, count, count == 1 ? "" : "s");
    attention_.raise(hsi::attn::DMA_FAULT);
}

void Pglue::bad_access(uint32_t addr, uint32_t info)
{
    bad_access_.store(uint64_t{info} << 32 | addr, std::memory_order_relaxed);
    const uint32_t count = bad_access_count_.fetch_add(1, std::memory_order_relaxed) + 1;
    if ((count & (count - 1)) == 0)
        log(LogLevel::err, "pglue: %s %s of %s 0x%x: no register there, %s (%u so far)", who_.c_str(),
            info & BAD_ACCESS_WRITE ? "write" : "read", info & BAD_ACCESS_GRC ? "GRC address" : "BAR0 offset", addr,
            info & BAD_ACCESS_WRITE ? "dropped" : "read as all ones", count);
    attention_.raise(hsi::attn::BAD_ACCESS);
}

void Pglue::reset()
{
    master_enable_.store(0, std::memory_order_release);
}

} // namespace cna::fw
