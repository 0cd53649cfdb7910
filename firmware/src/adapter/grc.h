/* SPDX-License-Identifier: BSD-3-Clause
 * The internal (GRC) register space: dispatches a function's PTT window
 * accesses to the block that owns the address. Until hw_prepare opens
 * PGLUE_PTT_ACCESS_ENABLE only MISC, PGLUE and MCP answer; unanswered reads
 * return all ones and unanswered writes are dropped, each latched in PGLUE
 * with an attention (attn::BAD_ACCESS), as hardware reports a GRC timeout.
 *
 * Every access runs under the adapter's slowpath lock, which serialises it
 * with the engine's slowpath (MFW mailboxes, ramrods).
 */
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "function/function.h"

namespace cna::fw {

class Mfw;
class Nig;
class PfIov;
class PfFirmware;
class StormRam;
class VfFirmware;
class Storms;

class Grc final : public RegisterSpace {
public:
    Grc(std::mutex& slowpath, Mfw& mfw, Nig& nig, Storms& storms, StormRam& ram,
        const std::vector<std::unique_ptr<PfFirmware>>& pf_firmware, const std::vector<std::unique_ptr<PfIov>>& iovs);

    uint32_t grc_read(FunctionHw& fn, uint32_t addr) override;
    void grc_write(FunctionHw& fn, uint32_t addr, uint32_t value) override;

private:
    enum class Block { misc, pglue, cau, igu, attn, mcp, nig, storm_ctrl, storm_pf, iov, ptp, storm_ram, none };
    static Block block_of(uint32_t addr);
    static bool open_before_ptt_enable(Block block);
    static bool owns(const FunctionHw& fn, uint32_t addr);
    /* What a VF's registers lead to (its storms' STORM_PF block, its PTP
     * block), while its PF has it enabled. */
    VfFirmware* vf_firmware(FunctionHw& fn);

    bool read(FunctionHw& fn, uint32_t addr, uint32_t& value);
    bool write(FunctionHw& fn, uint32_t addr, uint32_t value);
    bool read_misc(FunctionHw& fn, uint32_t addr, uint32_t& value) const;
    bool write_misc(FunctionHw& fn, uint32_t addr, uint32_t value);

    std::mutex& slowpath_;
    Mfw& mfw_;
    Nig& nig_;
    Storms& storms_;
    StormRam& ram_;
    const std::vector<std::unique_ptr<PfFirmware>>& pf_firmware_;
    const std::vector<std::unique_ptr<PfIov>>& iovs_;
    /* Chip-wide MISC registers. */
    uint32_t fw_version_ = 0;
    uint32_t init_mode_ = 0;
};

} // namespace cna::fw
