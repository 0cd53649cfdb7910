/* SPDX-License-Identifier: BSD-3-Clause */
#include "irq/cau.h"

#include <bit>
#include <cstddef>

#include "irq/igu.h"
#include "bus/dma.h"

namespace cna::fw {

using namespace hsi::reg;

bool Cau::read(uint32_t addr, uint32_t& value) const
{
    uint32_t sb = (addr - CAU_BASE) / CAU_SB_STRIDE;
    if (addr < CAU_BASE || sb >= SB_COUNT)
        return false;
    switch (addr - cau_sb_addr_lo(sb)) {
    case 0x0: value = sbs_[sb].addr_lo.load(); return true;
    case 0x4: value = sbs_[sb].addr_hi.load(); return true;
    case 0x8: value = sbs_[sb].conf.load(); return true;
    default: return false;
    }
}

bool Cau::write(uint32_t addr, uint32_t value)
{
    uint32_t sb = (addr - CAU_BASE) / CAU_SB_STRIDE;
    if (addr < CAU_BASE || sb >= SB_COUNT)
        return false;
    switch (addr - cau_sb_addr_lo(sb)) {
    case 0x0: sbs_[sb].addr_lo.store(value, std::memory_order_release); return true;
    case 0x4: sbs_[sb].addr_hi.store(value, std::memory_order_release); return true;
    case 0x8: sbs_[sb].conf.store(value, std::memory_order_release); return true;
    default: return false;
    }
}

int Cau::vector(uint32_t sb) const
{
    uint32_t conf = sbs_[sb].conf.load(std::memory_order_acquire);
    if (!(conf & CAU_SB_CONF_VALID))
        return -1;
    return static_cast<int>((conf >> CAU_SB_CONF_VECTOR_SHIFT) & 0xff);
}

void Cau::reset()
{
    for (Sb& sb : sbs_) {
        sb.lock();
        sb.addr_lo.store(0);
        sb.addr_hi.store(0);
        sb.conf.store(0);
        sb.shadow = hsi::StatusBlock{};
        sb.unlock();
    }
    for (auto& word : dirty_)
        word.store(0, std::memory_order_relaxed);
}

void Cau::flush(Dma& dma, Igu& igu)
{
    for (uint32_t w = 0; w < dirty_.size(); w++) {
        if (dirty_[w].load(std::memory_order_relaxed) == 0)
            continue;
        for (uint64_t bits = dirty_[w].exchange(0, std::memory_order_acquire); bits != 0; bits &= bits - 1) {
            const uint32_t id = w * WORD_BITS + static_cast<uint32_t>(std::countr_zero(bits));
            Sb& sb = sbs_[id];
            sb.lock();
            write_back(dma, igu, id);
            sb.unlock();
        }
    }
}

void Cau::write_back(Dma& dma, Igu& igu, uint32_t id)
{
    /* A write-back that faults raises an attention: the slowpath delivers
     * it, which dirties the slowpath SB again. */
    Sb& sb = sbs_[id];
    if (vector(id) < 0)
        return; /* not configured: nothing to write, nobody to tell */
    sb.shadow.prod_index++;
    uint64_t addr = uint64_t{sb.addr_hi.load(std::memory_order_acquire)} << 32 |
                    sb.addr_lo.load(std::memory_order_acquire);
    uint8_t* host = dma.map(addr, sizeof(hsi::StatusBlock));
    if (host == nullptr)
        return;
    /* Indices first, the running index last: a driver that sees the new
     * prod_index also sees every index it covers. Each index releases
     * the completions it covers to a driver that polls it alone. */
    auto* pis = reinterpret_cast<uint16_t*>(host + offsetof(hsi::StatusBlock, pi_array));
    for (uint32_t pi = 0; pi < hsi::PIS_PER_SB; pi++)
        std::atomic_ref<uint16_t>(pis[pi]).store(sb.shadow.pi_array[pi], std::memory_order_release);
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(host + offsetof(hsi::StatusBlock, prod_index)))
        .store(sb.shadow.prod_index, std::memory_order_release);
    igu.producer_updated(id, sb.shadow.prod_index);
}

} // namespace cna::fw
