/* SPDX-License-Identifier: BSD-3-Clause
 * Storm control: the chip-wide state of the firmware processors. STORM_START
 * makes them verify the microcode the init image loaded into storm RAM and
 * run it; a firmware assert (fault injection) halts them until the next
 * STORM_START. Per-PF storm state lives in PfFirmware.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include "hsi_common.h"

namespace cna::fw {

class StormRam;

/* ATTN_FW_ASSERT_CODE values. */
namespace fw_assert {
inline constexpr uint32_t INJECTED = 0x01;               /* Fault::fw_assert */
inline constexpr uint32_t RAMROD_BEFORE_PF_START = 0x02; /* no EQ to complete on */
inline constexpr uint32_t BAD_PF_START = 0x03;           /* PF_START whose EQ cannot be used */
} // namespace fw_assert

class Storms {
public:
    explicit Storms(StormRam& ram) : ram_(ram) {}

    /* GRC STORM_CTRL block (slowpath lock held). */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    bool running() const { return status() == hsi::StormStatus::running; }
    hsi::StormStatus status() const { return static_cast<hsi::StormStatus>(status_.load(std::memory_order_acquire)); }

    /* Faults (AdapterControl). fw_assert holds the storms asserted, now and
     * at every STORM_START, while it is on. */
    void set_assert_fault(bool on);
    void set_lose_ramrod(bool on) { lose_ramrod_.store(on); }
    /* Engine: true once per assert, to raise FW_ASSERT on every function. */
    bool take_assert_event() { return assert_event_.exchange(false); }
    bool assert_event_pending() const { return assert_event_.load(std::memory_order_relaxed); }
    /* Engine: true if this ramrod is to be lost (one-shot). */
    bool take_lost_ramrod() { return lose_ramrod_.exchange(false); }

private:
    void start();
    void assert_now();

    StormRam& ram_;
    uint32_t fw_crc_ = 0;
    uint32_t fw_len_ = 0;
    std::atomic<uint32_t> status_{static_cast<uint32_t>(hsi::StormStatus::halted)};
    std::atomic<bool> assert_fault_{false};
    std::atomic<bool> assert_event_{false};
    std::atomic<bool> lose_ramrod_{false};
};

} // namespace cna::fw
