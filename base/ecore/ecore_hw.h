/* SPDX-License-Identifier: BSD-3-Clause
 * Register access (guide chapter "Register Access").
 *
 * BAR0 is reduced: registers are reached through PTT windows, each
 * re-pointable at any 4 KiB of the internal (GRC) address space. A flow
 * acquires a PTT from the pool, accesses registers through it and releases
 * it; concurrent flows use different PTTs.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "ecore.h"
#include "ecore_ptt.h"

namespace cna::ecore {

/* 32-bit access to an internal address (4-byte aligned). */
uint32_t rd(Hwfn& hwfn, Ptt& ptt, uint32_t addr);
void wr(Hwfn& hwfn, Ptt& ptt, uint32_t addr, uint32_t value);

/* Copies between host memory and device memory (lengths in bytes, multiple
 * of 4), re-pointing the window as the range crosses 4 KiB boundaries. */
void memcpy_from(Hwfn& hwfn, Ptt& ptt, void* dst, uint32_t addr, std::size_t len);
void memcpy_to(Hwfn& hwfn, Ptt& ptt, uint32_t addr, const void* src, std::size_t len);

/* A 64-bit counter the device updates with single 64-bit stores, read with
 * 32-bit reads (rd32(addr)) as high, low, high until the high half is
 * stable. */
template <typename Rd32> uint64_t read_counter64(Rd32 rd32, uint32_t addr)
{
    uint32_t hi = rd32(addr + 4);
    for (;;) {
        const uint32_t lo = rd32(addr);
        const uint32_t hi_again = rd32(addr + 4);
        if (hi_again == hi)
            return (uint64_t{hi} << 32) | lo;
        hi = hi_again; /* the low half wrapped between the reads */
    }
}

/* A statistics block from addr on: a struct of such counters. */
template <typename Stats, typename Rd32> void read_counters(Rd32 rd32, uint32_t addr, Stats* out)
{
    static_assert(sizeof(Stats) % sizeof(uint64_t) == 0);
    uint64_t counters[sizeof(Stats) / sizeof(uint64_t)];
    for (std::size_t i = 0; i < std::size(counters); i++)
        counters[i] = read_counter64(rd32, addr + static_cast<uint32_t>(i * 8));
    std::memcpy(out, counters, sizeof(*out));
}

/* A counter at an internal address. */
inline uint64_t rd64(Hwfn& hwfn, Ptt& ptt, uint32_t addr)
{
    return read_counter64([&](uint32_t a) { return rd(hwfn, ptt, a); }, addr);
}

/* A statistics block the storms keep in storm RAM at iro_offset. */
template <typename Stats> void read_storm_stats(Hwfn& hwfn, Ptt& ptt, uint32_t iro_offset, Stats* out)
{
    read_counters([&](uint32_t a) { return rd(hwfn, ptt, a); }, hsi::reg::STORM_RAM_BASE + iro_offset, out);
}

/* Whether the device is gone (surprise removal): a wait for its answer
 * ends at once with Status::nodev. */
inline bool device_gone(const Hwfn& hwfn) { return hwfn.dev->pci->removed(); }

/* Doorbells: a connection's hsi::DoorbellData in the doorbell BAR. */
inline volatile uint32_t* doorbell_addr(Hwfn& hwfn, uint32_t cid)
{
    return reinterpret_cast<volatile uint32_t*>(hwfn.dev->pci->doorbells() + hsi::db_offset(cid));
}
/* Publishes an absolute producer, and the entries before it, with one
 * 32-bit store (DoorbellData{prod, 0, 0}). */
inline void doorbell(volatile uint32_t* addr, uint16_t prod)
{
    osal::publish(addr, uint32_t{prod});
}

/* After a timeout: logs the DMA faults the device latched, if any, read from
 * its PGLUE registers. Their attention reaches the driver only through the
 * slowpath status block (itself DMA) and only once attentions are enabled,
 * so a device that cannot reach host memory at all, e.g. during hw_init,
 * is otherwise silent. */
void hw_report_dma_faults(Hwfn& hwfn, const char* after);

} // namespace cna::ecore
