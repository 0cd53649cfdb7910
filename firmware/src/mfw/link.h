/* SPDX-License-Identifier: BSD-3-Clause
 * The MFW's link state machine, one PHY per port.
 *
 * A port's link is up when its PHY is enabled, its cable is plugged (own
 * carrier) and the wire has a partner: the port itself on a loopback wire or
 * in MAC loopback, the kernel on a TAP wire, otherwise the cable's other end
 * with its PHY enabled and its carrier present. It comes up link_up_delay after the conditions hold
 * (autonegotiation) and drops at once when they fail. The speed is the
 * highest both ends offer: the forced speed if the port supports it, else
 * the advertised speeds (all capabilities when none are advertised).
 */
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "hsi_mfw.h"

namespace cna::fw {

class Nig;
class Port;

class Link {
public:
    using Clock = std::chrono::steady_clock;
    /* Called (engine thread, slowpath lock held) after each transition. */
    using ChangeHandler = std::function<void(uint32_t port)>;

    Link(Nig& nig, hsi::mfw::Shmem& shmem, std::chrono::milliseconds up_delay, ChangeHandler on_change);

    void init_phy(uint32_t port, const hsi::mfw::DrvPhyCfg& cfg);
    void reset_phy(uint32_t port);
    /* Carrier changes come from other threads: only flag a re-evaluation. */
    void carrier_changed() { need_eval_.store(true, std::memory_order_release); }

    bool has_work() const { return need_eval_.load(std::memory_order_acquire); }
    bool up(uint32_t port) const;
    void poll(Clock::time_point now);

private:
    struct Phy {
        bool enabled = false;
        hsi::mfw::DrvPhyCfg cfg{};
        bool negotiating = false;
        Clock::time_point up_at{};
        hsi::mfw::LinkSpeed speed = hsi::mfw::LinkSpeed::none;
    };
    uint32_t offered_speeds(uint32_t port) const;
    hsi::mfw::LinkSpeed resolve(uint32_t port) const;
    void set_link(uint32_t port, hsi::mfw::LinkSpeed speed);

    Nig& nig_;
    hsi::mfw::Shmem& shmem_;
    const std::chrono::milliseconds up_delay_;
    ChangeHandler on_change_;
    std::vector<Phy> phys_;
    std::atomic<bool> need_eval_{false};
};

} // namespace cna::fw
