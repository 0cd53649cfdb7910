/* SPDX-License-Identifier: BSD-3-Clause */
#include "irq/igu.h"

#include "bus/msix.h"

namespace cna::fw {

using namespace hsi::reg;

bool Igu::read(uint32_t addr, uint32_t& value) const
{
    if (addr == IGU_INT_MODE) {
        value = int_mode_.load();
        return true;
    }
    if (addr >= IGU_SB_PROD(0) && addr < IGU_SB_PROD(SB_COUNT)) {
        value = sbs_[(addr - IGU_SB_PROD(0)) / 4].prod.load();
        return true;
    }
    return false;
}

bool Igu::write(uint32_t addr, uint32_t value)
{
    if (addr == IGU_INT_MODE) {
        int_mode_.store(value);
        return true;
    }
    return addr >= IGU_SB_PROD(0) && addr < IGU_SB_PROD(SB_COUNT); /* read-only */
}

void Igu::reset()
{
    int_mode_.store(static_cast<uint32_t>(hsi::IntMode::msix));
    for (SbState& sb : sbs_) {
        sb.prod.store(0);
        sb.ack.store(0);
        sb.armed.store(false);
    }
}

void Igu::command(uint32_t sb, uint32_t cmd)
{
    if (sb >= SB_COUNT)
        return;
    SbState& s = sbs_[sb];
    s.ack.store(cmd & hsi::IGU_CMD_INDEX_MASK);
    switch (static_cast<hsi::IguIntOp>(cmd >> hsi::IGU_CMD_INT_SHIFT)) {
    case hsi::IguIntOp::enable:
        s.armed.store(true);
        fire_if_pending(sb);
        break;
    case hsi::IguIntOp::disable: s.armed.store(false); break;
    case hsi::IguIntOp::nop: break;
    }
}

void Igu::producer_updated(uint32_t sb, uint32_t prod)
{
    sbs_[sb].prod.store(prod);
    fire_if_pending(sb);
}

void Igu::fire_if_pending(uint32_t sb)
{
    SbState& s = sbs_[sb];
    if (!s.armed.load())
        return;
    if ((s.prod.load() & hsi::IGU_CMD_INDEX_MASK) == s.ack.load())
        return;
    if (int_mode_.load() == static_cast<uint32_t>(hsi::IntMode::poll))
        return;
    int vector = cau_.vector(sb);
    if (vector < 0 || !s.armed.exchange(false))
        return;
    msix_.fire(static_cast<uint32_t>(vector));
}

} // namespace cna::fw
