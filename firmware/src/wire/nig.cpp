/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/nig.h"

#include <bit>
#include <cinttypes>
#include <cstring>

#include "hsi_common.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi::reg;

Nig::Nig(uint32_t ports, Wire wire)
{
    for (uint32_t p = 0; p < ports; p++)
        ports_.push_back(std::make_unique<Port>(p));
    for (uint32_t p = 0; p < ports; p++)
        ports_[p]->attach_wire(wire == Wire::loopback ? ports_[p].get() : ports_[p ^ 1].get());
}

bool Nig::read(uint32_t port, uint32_t addr, uint32_t& value) const
{
    const Port& p = *ports_[port];
    switch (addr) {
    case NIG_PORT_MODE: value = port_mode_.load(); return true;
    case NIG_PORT_RX_ENABLE: value = p.nig_rx_enable.load(); return true;
    case NIG_PORT_TX_ENABLE: value = p.nig_tx_enable.load(); return true;
    case NIG_PORT_MAX_FRAME: value = p.nig_max_frame.load(); return true;
    default: return false;
    }
}

bool Nig::write(uint32_t port, uint32_t addr, uint32_t value)
{
    Port& p = *ports_[port];
    switch (addr) {
    case NIG_PORT_MODE: port_mode_.store(value); return true;
    case NIG_PORT_RX_ENABLE: p.nig_rx_enable.store(value & 1); return true;
    case NIG_PORT_TX_ENABLE: p.nig_tx_enable.store(value & 1); return true;
    case NIG_PORT_MAX_FRAME: p.nig_max_frame.store(value); return true;
    default: return false;
    }
}

bool Nig::set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns)
{
    Port& near = *ports_[port];
    Port* far = near.wire_peer(); /* none for a TAP wire */
    if (far == nullptr || (far == &near && asymmetry_ns != 0))
        return false;
    near.set_cable_delay(delay_ns + static_cast<uint64_t>(asymmetry_ns));
    far->set_cable_delay(delay_ns - static_cast<uint64_t>(asymmetry_ns));
    delayed_ports_.fetch_or(1u << port | 1u << far->id(), std::memory_order_release);
    log(LogLevel::info, "port %u: its cable delays frames %" PRIu64 " ns out, %" PRIu64 " ns in", port,
        near.cable_delay(), far->cable_delay());
    return true;
}

bool Nig::drain_delayed(uint32_t port_mask, RxEngine& rx)
{
    bool held = false;
    for (uint32_t ports = delayed_ports_.load(std::memory_order_relaxed) & port_mask; ports != 0; ports &= ports - 1)
        held |= ports_[static_cast<uint32_t>(std::countr_zero(ports))]->drain_cable(rx);
    return held;
}

bool Nig::attach_tap(uint32_t port, const std::string& ifname, std::string* error)
{
    auto tap = TapWire::open(ifname, error);
    if (!tap)
        return false;
    uint32_t i = tap_count_.load(std::memory_order_relaxed);
    tap_pollfds_[i] = pollfd{tap->fd(), POLLIN, 0};
    tap_ports_[i] = ports_[port].get();
    ports_[port]->attach_tap(*tap);
    taps_[i] = std::move(tap);
    tap_count_.store(i + 1, std::memory_order_release);
    return true;
}

bool Nig::receive_taps(uint32_t port_mask, RxEngine& rx)
{
    bool work = false;
    uint32_t count = tap_count_.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count; i++) {
        if (!(port_mask & (1u << tap_ports_[i]->id())) || tap_pollfds_[i].fd < 0)
            continue;
        int frames = taps_[i]->receive(*tap_ports_[i], rx);
        if (frames < 0) {
            /* Deleted under us (its namespace went away, say): ppoll would
             * report it forever, and nothing will come from it again. To
             * the port it is a cable pulled out for good. */
            log(LogLevel::warning, "port %u: TAP interface %s is gone (%s): the port has lost its carrier",
                tap_ports_[i]->id(), taps_[i]->name().c_str(), std::strerror(-frames));
            tap_pollfds_[i].fd = -1;
            taps_[i]->mark_gone();
            tap_ports_[i]->carrier.store(false);
            carrier_lost_.store(true);
        }
        work = work || frames > 0;
    }
    return work;
}

std::span<pollfd> Nig::tap_pollfds(uint32_t port_mask, std::array<pollfd, hsi::MAX_PORTS>& fds) const
{
    uint32_t count = tap_count_.load(std::memory_order_acquire), n = 0;
    for (uint32_t i = 0; i < count; i++)
        if (port_mask & (1u << tap_ports_[i]->id()))
            fds[n++] = tap_pollfds_[i];
    return {fds.data(), n};
}

} // namespace cna::fw
