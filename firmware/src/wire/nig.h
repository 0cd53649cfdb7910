/* SPDX-License-Identifier: BSD-3-Clause
 * NIG: the MAC glue between the storms and the ports. Owns the ports; its
 * per-port registers act on the port of the function that accesses them.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "cna_fw/adapter.h"
#include "wire/port.h"

namespace cna::fw {

class Nig {
public:
    Nig(uint32_t ports, WireKind wire, FrameReceiver& receiver);

    bool read(uint32_t port, uint32_t addr, uint32_t& value) const;
    bool write(uint32_t port, uint32_t addr, uint32_t value);

    uint32_t port_count() const { return static_cast<uint32_t>(ports_.size()); }
    Port& port(uint32_t id) { return *ports_[id]; }
    const Port& port(uint32_t id) const { return *ports_[id]; }

private:
    std::atomic<uint32_t> port_mode_{0};
    std::vector<std::unique_ptr<Port>> ports_;
};

} // namespace cna::fw
