/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/nig.h"

#include "hsi_common.h"

namespace cna::fw {

using namespace hsi::reg;

Nig::Nig(uint32_t ports, WireKind wire, FrameReceiver& receiver)
{
    for (uint32_t p = 0; p < ports; p++)
        ports_.push_back(std::make_unique<Port>(p, receiver));
    for (uint32_t p = 0; p < ports; p++)
        ports_[p]->attach_wire(wire == WireKind::loopback ? ports_[p].get() : ports_[p ^ 1].get());
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

} // namespace cna::fw
