/* SPDX-License-Identifier: BSD-3-Clause
 * Register access through PTT windows.
 */
#include "ecore_hw.h"

#include <cinttypes>
#include <cstring>

#include "ecore_log.h"

namespace cna::ecore {

namespace {

/* Points the PTT's window at the 4 KiB containing addr (if it is not there
 * already) and returns the BAR0 offset that reaches addr. */
uint32_t ptt_bar0_offset(Hwfn& hwfn, Ptt& ptt, uint32_t addr)
{
    const uint32_t window = addr & ~(hsi::WINDOW_SIZE - 1);
    if (!ptt.pointed || ptt.window != window) {
        hwfn.dev->pci->reg_wr(hsi::bar0_ptt_entry(ptt.idx), window);
        ptt.window = window;
        ptt.pointed = true;
    }
    return hsi::bar0_ptt_window(ptt.idx) + (addr - window);
}

} // namespace

uint32_t rd(Hwfn& hwfn, Ptt& ptt, uint32_t addr)
{
    return hwfn.dev->pci->reg_rd(ptt_bar0_offset(hwfn, ptt, addr));
}

void wr(Hwfn& hwfn, Ptt& ptt, uint32_t addr, uint32_t value)
{
    hwfn.dev->pci->reg_wr(ptt_bar0_offset(hwfn, ptt, addr), value);
}

void memcpy_from(Hwfn& hwfn, Ptt& ptt, void* dst, uint32_t addr, std::size_t len)
{
    auto* out = static_cast<uint8_t*>(dst);
    for (std::size_t off = 0; off + 4 <= len; off += 4) {
        uint32_t v = rd(hwfn, ptt, addr + static_cast<uint32_t>(off));
        memcpy(out + off, &v, 4);
    }
}

void memcpy_to(Hwfn& hwfn, Ptt& ptt, uint32_t addr, const void* src, std::size_t len)
{
    const auto* in = static_cast<const uint8_t*>(src);
    for (std::size_t off = 0; off + 4 <= len; off += 4) {
        uint32_t v;
        memcpy(&v, in + off, 4);
        wr(hwfn, ptt, addr + static_cast<uint32_t>(off), v);
    }
}

void hw_report_dma_faults(Hwfn& hwfn, const char* after)
{
    PttGuard ptt(hwfn);
    if (!ptt)
        return;
    const uint32_t count = rd(hwfn, *ptt, hsi::reg::PGLUE_DMA_FAULT_COUNT);
    if (count == 0 || count == 0xffffffff) /* none, or an unanswered read */
        return;
    const uint64_t iova = (uint64_t{rd(hwfn, *ptt, hsi::reg::PGLUE_DMA_FAULT_ADDR_HI)} << 32) |
                          rd(hwfn, *ptt, hsi::reg::PGLUE_DMA_FAULT_ADDR_LO);
    DP_ERR(hwfn, "%s: the device reports %u DMA fault(s), the last at IOVA 0x%" PRIx64
                 " (host memory given to the device but not mapped in its IOMMU?)", after, count, iova);
}

} // namespace cna::ecore
