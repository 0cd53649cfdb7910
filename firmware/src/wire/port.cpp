/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/port.h"

namespace cna::fw {
namespace {

void add(std::atomic<uint64_t>& counter, uint64_t delta)
{
    counter.store(counter.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
}

} // namespace

void Port::transmit(const uint8_t* frame, uint32_t len)
{
    if (!link_up.load(std::memory_order_relaxed) || !nig_tx_enable.load(std::memory_order_relaxed))
        return;
    add(tx_frames_, 1);
    add(tx_bytes_, len);
    Port* partner = mac_loopback.load(std::memory_order_relaxed) ? this : wire_peer_;
    if (partner == nullptr || !partner->link_up.load(std::memory_order_relaxed) ||
        !partner->nig_rx_enable.load(std::memory_order_relaxed))
        return;
    add(partner->rx_frames_, 1);
    add(partner->rx_bytes_, len);
    partner->receiver_.receive(*partner, frame, len);
}

PortCounters Port::counters() const
{
    return PortCounters{tx_frames_.load(), tx_bytes_.load(), rx_frames_.load(), rx_bytes_.load(),
                        link_changes_.load()};
}

} // namespace cna::fw
