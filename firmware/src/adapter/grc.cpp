/* SPDX-License-Identifier: BSD-3-Clause */
#include "adapter/grc.h"

#include "iov/pf_iov.h"
#include "mfw/mfw.h"
#include "pf/pf_firmware.h"
#include "slowpath/storm_ram.h"
#include "slowpath/storms.h"
#include "wire/nig.h"

namespace cna::fw {

using namespace hsi::reg;
namespace ptp = hsi::ptp;
namespace iro = hsi::iro;

namespace {

constexpr uint32_t CHIP_ID = 0x0c7a0001; /* "cna", revision 1 */

} // namespace

Grc::Grc(std::mutex& slowpath, Mfw& mfw, Nig& nig, Storms& storms, StormRam& ram,
         const std::vector<std::unique_ptr<PfFirmware>>& pf_firmware, const std::vector<std::unique_ptr<PfIov>>& iovs)
    : slowpath_(slowpath), mfw_(mfw), nig_(nig), storms_(storms), ram_(ram), pf_firmware_(pf_firmware), iovs_(iovs)
{
}

Grc::Block Grc::block_of(uint32_t addr)
{
    if (addr < PGLUE_BASE)
        return Block::misc;
    if (addr < CAU_BASE)
        return Block::pglue;
    if (addr < IGU_BASE)
        return Block::cau;
    if (addr < ATTN_BASE)
        return Block::igu;
    if (addr < MCP_BASE)
        return Block::attn;
    if (addr < NIG_BASE)
        return Block::mcp;
    if (addr < STORM_CTRL_BASE)
        return Block::nig;
    if (addr < STORM_PF_BASE)
        return Block::storm_ctrl;
    if (addr < IOV_BASE)
        return Block::storm_pf;
    if (addr < DMAE_BASE + 0x8000)
        return Block::iov;
    if (addr >= PTP_BASE && addr < PTP_BASE + ptp::BLOCK_SIZE)
        return Block::ptp;
    if (addr >= STORM_RAM_BASE && addr < STORM_RAM_BASE + STORM_RAM_SIZE)
        return Block::storm_ram;
    return Block::none;
}

/* Another PF's producers and counters are not this one's to touch, in a
 * daemon whose clients trust each other no more than VMs do. */
bool Grc::owns(const FunctionHw& fn, uint32_t addr)
{
    const uint32_t owner = iro::pf_owning(addr - STORM_RAM_BASE);
    return owner == iro::SHARED || owner == fn.pf_id();
}

bool Grc::open_before_ptt_enable(Block block)
{
    return block == Block::misc || block == Block::pglue || block == Block::mcp;
}

uint32_t Grc::grc_read(FunctionHw& fn, uint32_t addr)
{
    std::lock_guard lock(slowpath_);
    uint32_t value = 0;
    if (read(fn, addr, value))
        return value;
    fn.pglue().bad_access(addr, BAD_ACCESS_GRC);
    return REG_ALL_ONES;
}

void Grc::grc_write(FunctionHw& fn, uint32_t addr, uint32_t value)
{
    std::lock_guard lock(slowpath_);
    if (!write(fn, addr, value))
        fn.pglue().bad_access(addr, BAD_ACCESS_GRC | BAD_ACCESS_WRITE);
}

VfFirmware* Grc::vf_firmware(FunctionHw& fn)
{
    return fn.pglue().master_enabled() ? iovs_[fn.pf_id()]->firmware(fn.vf_id()) : nullptr;
}

bool Grc::read(FunctionHw& fn, uint32_t addr, uint32_t& value)
{
    if (fn.is_vf()) {
        VfFirmware* vf = vf_firmware(fn);
        if (vf == nullptr)
            return false;
        const Block block = block_of(addr);
        return block == Block::ptp ? vf->ptp().read(addr - PTP_BASE, value)
                                   : block == Block::storm_pf && vf->read(addr, value);
    }
    Block block = block_of(addr);
    if (!fn.pglue().ptt_access_enabled() && !open_before_ptt_enable(block))
        return false;
    switch (block) {
    case Block::misc: return read_misc(fn, addr, value);
    case Block::pglue: return fn.pglue().read(addr, value);
    case Block::cau: return fn.cau().read(addr, value);
    case Block::igu: return fn.igu().read(addr, value);
    case Block::attn: return fn.attention().read(addr, value);
    case Block::mcp: return mfw_.read(addr, value);
    case Block::nig: return nig_.read(fn.port_id(), addr, value);
    case Block::storm_ctrl: return storms_.read(addr, value);
    case Block::storm_pf: return pf_firmware_[fn.pf_id()]->read(addr, value);
    case Block::iov: return iovs_[fn.pf_id()]->read(addr, value);
    case Block::ptp: return pf_firmware_[fn.pf_id()]->ptp().read(addr - PTP_BASE, value);
    case Block::storm_ram:
        if (!owns(fn, addr))
            return false;
        value = ram_.read32(addr - STORM_RAM_BASE);
        return true;
    case Block::none: break;
    }
    return false;
}

bool Grc::write(FunctionHw& fn, uint32_t addr, uint32_t value)
{
    if (fn.is_vf()) {
        VfFirmware* vf = vf_firmware(fn);
        if (vf == nullptr)
            return false;
        const Block block = block_of(addr);
        return block == Block::ptp ? vf->ptp().write(addr - PTP_BASE, value)
                                   : block == Block::storm_pf && vf->write(addr, value);
    }
    Block block = block_of(addr);
    if (!fn.pglue().ptt_access_enabled() && !open_before_ptt_enable(block))
        return false;
    switch (block) {
    case Block::misc: return write_misc(fn, addr, value);
    case Block::pglue: return fn.pglue().write(addr, value);
    case Block::cau: return fn.cau().write(addr, value);
    case Block::igu: return fn.igu().write(addr, value);
    case Block::attn: return fn.attention().write(addr, value);
    case Block::mcp: return mfw_.write(addr, value);
    case Block::nig: return nig_.write(fn.port_id(), addr, value);
    case Block::storm_ctrl: return storms_.write(addr, value);
    case Block::storm_pf: return pf_firmware_[fn.pf_id()]->write(addr, value);
    case Block::iov: return iovs_[fn.pf_id()]->write(addr, value);
    case Block::ptp: return pf_firmware_[fn.pf_id()]->ptp().write(addr - PTP_BASE, value);
    case Block::storm_ram:
        if (!owns(fn, addr))
            return false;
        ram_.write32(addr - STORM_RAM_BASE, value);
        return true;
    case Block::none: break;
    }
    return false;
}

bool Grc::read_misc(FunctionHw& fn, uint32_t addr, uint32_t& value) const
{
    if (addr >= MISC_SCRATCH && addr < MISC_SCRATCH + MISC_SCRATCH_DWORDS * 4) {
        value = fn.scratch[(addr - MISC_SCRATCH) / 4].load();
        return true;
    }
    switch (addr) {
    case MISC_CHIP_ID: value = CHIP_ID; return true;
    case MISC_PF_ID: value = fn.pf_id(); return true;
    case MISC_PORT_ID: value = fn.port_id(); return true;
    case MISC_NUM_PORTS: value = nig_.port_count(); return true;
    case MISC_FW_VERSION: value = fw_version_; return true;
    case MISC_INIT_MODE: value = init_mode_; return true;
    default: return false;
    }
}

bool Grc::write_misc(FunctionHw& fn, uint32_t addr, uint32_t value)
{
    if (addr >= MISC_SCRATCH && addr < MISC_SCRATCH + MISC_SCRATCH_DWORDS * 4) {
        fn.scratch[(addr - MISC_SCRATCH) / 4].store(value);
        return true;
    }
    switch (addr) {
    case MISC_FW_VERSION: fw_version_ = value; return true;
    case MISC_INIT_MODE: init_mode_ = value; return true;
    case MISC_CHIP_ID:
    case MISC_PF_ID:
    case MISC_PORT_ID:
    case MISC_NUM_PORTS: return true; /* read-only */
    default: return false;
    }
}

} // namespace cna::fw
