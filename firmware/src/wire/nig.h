/* SPDX-License-Identifier: BSD-3-Clause
 * NIG: the MAC glue between the storms and the ports. Owns the ports and
 * their TAP wires; its per-port registers act on the port of the function
 * that accesses them.
 */
#pragma once

#include <poll.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cna_fw/adapter.h"
#include "wire/port.h"
#include "wire/tap.h"

namespace cna::fw {

class Nig {
public:
    Nig(uint32_t ports, Wire wire);

    bool read(uint32_t port, uint32_t addr, uint32_t& value) const;
    bool write(uint32_t port, uint32_t addr, uint32_t value);

    uint32_t port_count() const { return static_cast<uint32_t>(ports_.size()); }
    Port& port(uint32_t id) { return *ports_[id]; }
    const Port& port(uint32_t id) const { return *ports_[id]; }

    /* Slowpath lock held: opens the TAP ifname and makes it the port's wire.
     * false with a message in *error when it cannot be opened. */
    bool attach_tap(uint32_t port, const std::string& ifname, std::string* error);
    /* Engine thread: frames the kernel sent on the TAPs of the ports in
     * port_mask (the ports that thread animates), delivered on the pass's
     * Rx engine; true if any. Inline up to the count: most adapters have no
     * TAP at all. */
    bool poll_taps(uint32_t port_mask, RxEngine& rx)
    {
        return tap_count_.load(std::memory_order_acquire) != 0 && receive_taps(port_mask, rx);
    }
    /* Slowpath lock held, the delays AdapterControl::cable_delay_valid:
     * frames `port` sends on its cable take delay_ns + asymmetry_ns to the
     * other end, the other end's take delay_ns - asymmetry_ns back (IEEE
     * 1588's delayAsymmetry, `port` the master's end); on a loopback wire,
     * delay_ns back to the port. false when the port's wire is a TAP, or
     * an asymmetry is asked of a loopback wire. */
    bool set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns);
    /* Engine thread: the frames due out of the cables of the ports in
     * port_mask delivered; true while any cable holds frames. Inline up to
     * the mask: most cables have no delay. */
    bool drain_cables(uint32_t port_mask, RxEngine& rx)
    {
        return (delayed_ports_.load(std::memory_order_acquire) & port_mask) != 0 && drain_delayed(port_mask, rx);
    }
    /* Engine thread: the fds of the TAPs of the ports in port_mask, copied
     * into fds, for the idle back-off to wake on. */
    std::span<pollfd> tap_pollfds(uint32_t port_mask, std::array<pollfd, hsi::MAX_PORTS>& fds) const;
    /* Whether a port lost its carrier since the last call because its TAP
     * interface was deleted (the MFW is to re-evaluate the link). */
    bool take_carrier_loss()
    {
        return carrier_lost_.load(std::memory_order_relaxed) && carrier_lost_.exchange(false);
    }

private:
    bool receive_taps(uint32_t port_mask, RxEngine& rx);
    bool drain_delayed(uint32_t port_mask, RxEngine& rx);

    std::atomic<uint32_t> port_mode_{0};
    std::vector<std::unique_ptr<Port>> ports_;
    /* TAPs in the order they were attached: entry i is published to the
     * engine by tap_count_ > i and never changes afterwards (except that the
     * engine stops polling a TAP whose interface is gone: fd -1). */
    std::array<std::unique_ptr<TapWire>, hsi::MAX_PORTS> taps_;
    std::array<Port*, hsi::MAX_PORTS> tap_ports_{};
    std::array<pollfd, hsi::MAX_PORTS> tap_pollfds_{};
    std::atomic<uint32_t> tap_count_{0};
    std::atomic<bool> carrier_lost_{false};
    std::atomic<uint32_t> delayed_ports_{0}; /* ports whose cable was ever given a delay */
};

} // namespace cna::fw
