/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/port.h"

#include "frame/frame_burst.h"
#include "base/bytes.h"
#include "wire/tap.h"

namespace cna::fw {
namespace {

void add(std::atomic<uint64_t>& counter, uint64_t delta)
{
    counter.fetch_add(delta, std::memory_order_relaxed); /* passes on one port may run at once */
}

} // namespace

void Port::attach_tap(TapWire& tap)
{
    wire_peer_ = nullptr;
    tap_.store(&tap, std::memory_order_release);
}

void Port::transmit(const FrameBurst& burst, RxEngine& rx, const void* source, uint32_t source_vport)
{
    if (source == nullptr || !switching.load(std::memory_order_relaxed))
        return to_wire(burst, rx);
    const FrameBurst& wire = switch_->switch_frames(burst, source, source_vport, uplink_, rx);
    if (wire.count != 0)
        to_wire(wire, rx);
}

void Port::to_wire(const FrameBurst& sent, RxEngine& rx)
{
    if (!link_up.load(std::memory_order_relaxed) || !nig_tx_enable.load(std::memory_order_relaxed))
        return;
    add(tx_frames_, sent.count);
    add(tx_bytes_, sent.bytes);
    const uint32_t loss = loss_ppm_.load(std::memory_order_acquire);
    const FrameBurst& burst = loss == 0 ? sent : lose_datagrams(sent, loss);
    if (mac_loopback.load(std::memory_order_relaxed))
        return deliver(burst, rx);
    if (TapWire* t = tap()) {
        for (uint32_t i = 0; i < burst.count; i++)
            if (!t->send(burst.frames[i].data, burst.frames[i].len))
                add(tx_drops_, 1);
        return;
    }
    if (wire_peer_ == nullptr)
        return;
    const uint64_t delay = cable_delay();
    if (delay == 0 && cable_.empty()) [[likely]]
        return wire_peer_->deliver(burst, rx);
    /* Behind what is in the line, even once the delay is gone: frames
     * never overtake each other on a cable. */
    const uint64_t departure = burst.wire_time != 0 ? burst.wire_time : PtpClock::raw_now();
    add(tx_drops_, cable_.push(burst, departure, delay));
}

bool Port::drain_cable(RxEngine& rx)
{
    if (cable_.empty()) [[likely]]
        return false;
    cable_.drain(PtpClock::raw_now(), [&](const FrameBurst& burst) { wire_peer_->deliver(burst, rx); });
    return true; /* frames still in the line keep the pass coming */
}

void Port::deliver(const FrameBurst& burst, RxEngine& rx)
{
    if (!link_up.load(std::memory_order_relaxed) || !nig_rx_enable.load(std::memory_order_relaxed))
        return;
    add(rx_frames_, burst.count);
    add(rx_bytes_, burst.bytes);
    receiver_->receive(burst, rx);
}

void Port::count_rx_error()
{
    if (link_up.load(std::memory_order_relaxed) && nig_rx_enable.load(std::memory_order_relaxed))
        add(rx_errors_, 1);
}

const FrameBurst& Port::lose_datagrams(const FrameBurst& burst, uint32_t per_million)
{
    const uint16_t udp_port = lossy_udp_port_.load(std::memory_order_relaxed);
    if (!survivors_)
        survivors_ = std::make_unique<FrameBurst>();
    survivors_->clear();
    for (uint32_t i = 0; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        loss_random_ ^= loss_random_ << 13;
        loss_random_ ^= loss_random_ >> 7;
        loss_random_ ^= loss_random_ << 17;
        const bool datagram = f.parsed && f.layout.l4 == L4::udp && !f.layout.fragment &&
                              load_be16(f.data + f.layout.l4_off + 2) == udp_port;
        if (datagram && loss_random_ % 1'000'000 < per_million)
            add(lost_, 1);
        else
            survivors_->push(f);
    }
    return *survivors_;
}

PortCounters Port::counters() const
{
    return PortCounters{tx_frames_.load(), tx_bytes_.load(), rx_frames_.load(),   rx_bytes_.load(),
                        link_changes_.load(), tx_drops_.load(), rx_errors_.load(), lost_.load()};
}

} // namespace cna::fw
