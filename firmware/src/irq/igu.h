/* SPDX-License-Identifier: BSD-3-Clause
 * IGU: per status block, the producer the CAU last wrote, the index the
 * driver acknowledged and whether the SB is armed. An armed SB whose
 * producer differs from the acknowledged index fires its vector once and
 * disarms; the driver re-arms with an `enable` command.
 *
 * Host threads (IGU commands) and the engine (producer updates) race on
 * purpose: each side stores its own variable and then reads the other's
 * (sequentially consistent), so at least one of them sees both; disarming
 * with an exchange makes sure only one of them fires.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "irq/cau.h"

namespace cna::fw {

class Msix;

class Igu {
public:
    Igu(const Cau& cau, const Msix& msix) : cau_(cau), msix_(msix) {}

    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    /* Host: a write to bar0_igu_cmd(sb). */
    void command(uint32_t sb, uint32_t cmd);
    /* Engine: the CAU wrote prod_index of sb to host memory. */
    void producer_updated(uint32_t sb, uint32_t prod);
    /* Function level reset: nothing armed or acknowledged, MSI-X mode. */
    void reset();

private:
    struct SbState {
        std::atomic<uint32_t> prod{0};
        std::atomic<uint32_t> ack{0};
        std::atomic<bool> armed{false};
    };
    void fire_if_pending(uint32_t sb);

    const Cau& cau_;
    const Msix& msix_;
    std::atomic<uint32_t> int_mode_{static_cast<uint32_t>(hsi::IntMode::msix)};
    std::array<SbState, SB_COUNT> sbs_;
};

} // namespace cna::fw
