/* SPDX-License-Identifier: BSD-3-Clause
 * A physical port and its wire. Frames leave through transmit() and reach
 * the partner port's receiver synchronously, on the engine thread: the own
 * port on a loopback wire (or with the PHY in MAC loopback), the other end
 * of the cable, or the kernel through a TAP interface. Frames flow only
 * while both ends have link and the NIG of the sender has Tx and the
 * receiver Rx enabled.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "cna_fw/adapter.h"
#include "frame/frame_burst.h"
#include "ptp/ptp_clock.h"
#include "wire/delay_line.h"

namespace cna::fw {

class Port;
class RxEngine;
class TapWire;

/* Where a port hands the frames its wire delivers: the storms' Rx, on the
 * Rx engine of the pass that delivers them (the wire carries it along, as
 * it does the frames). Every frame of the burst comes parsed: the
 * receiver never parses again. */
class FrameReceiver {
public:
    virtual void receive(const FrameBurst& burst, RxEngine& rx) = 0;

protected:
    ~FrameReceiver() = default;
};

/* The port's switch between its functions: takes what a function's vport
 * sends, delivers to the port's other functions what is theirs and returns
 * what goes on the wire (`sent` itself when all of it does, else `uplink`).
 * Engine thread of the port. */
class LocalSwitch {
public:
    virtual const FrameBurst& switch_frames(const FrameBurst& sent, const void* source, uint32_t source_vport,
                                            FrameBurst& uplink, RxEngine& rx) = 0;

protected:
    ~LocalSwitch() = default;
};

class Port {
public:
    explicit Port(uint32_t id) : id_(id) {}

    uint32_t id() const { return id_; }
    /* Power-on, before any engine thread runs: where deliver() hands frames. */
    void bind_receiver(FrameReceiver& receiver) { receiver_ = &receiver; }
    void bind_switch(LocalSwitch& local_switch) { switch_ = &local_switch; }
    /* Set once a PF of the port has VFs: from then on what a function
     * sends goes through the switch first. */
    std::atomic<bool> switching{false};
    void attach_wire(Port* wire_peer) { wire_peer_ = wire_peer; }
    /* Makes a TAP the wire (slowpath lock held, no PF of the port loaded):
     * the engine may pick it up at any pass from then on. */
    void attach_tap(TapWire& tap);
    /* The port at the other end of the wire, nullptr when there is none. */
    Port* wire_peer() const { return wire_peer_; }
    TapWire* tap() const { return tap_.load(std::memory_order_acquire); }

    /* Engine thread: put frames on the wire, for the receivers to take on
     * the pass's Rx engine rx. `source`, the function that sends them from
     * its vport source_vport, has them switched to the port's other
     * functions as they are addressed (nullptr: all go on the wire). */
    void transmit(const FrameBurst& burst, RxEngine& rx, const void* source = nullptr, uint32_t source_vport = 0);
    /* Engine thread: frames arrive from the wire, or one the MAC rejects. */
    void deliver(const FrameBurst& burst, RxEngine& rx);
    void count_rx_error();

    /* NIG registers of the port (host threads through BAR0). */
    std::atomic<uint32_t> nig_rx_enable{0};
    std::atomic<uint32_t> nig_tx_enable{0};
    std::atomic<uint32_t> nig_max_frame{0};
    /* Physical layer: carrier (AdapterControl), link and MAC loopback (MFW). */
    std::atomic<bool> carrier{true};
    std::atomic<bool> link_up{false};
    std::atomic<bool> mac_loopback{false};
    /* The port's PTP hardware clock (hsi_ptp.h). */
    PtpClock ptp_clock;
    /* AdapterControl: the wire loses per_million of the UDP datagrams to
     * udp_port it carries (the adapter makes RoCEv2's lossy); 0, none. */
    void lose(uint16_t udp_port, uint32_t per_million)
    {
        lossy_udp_port_.store(udp_port, std::memory_order_relaxed);
        loss_ppm_.store(per_million, std::memory_order_release);
    }

    /* Whether the wire loses datagrams (lose()). */
    bool loses() const { return loss_ppm_.load(std::memory_order_relaxed) != 0; }

    /* AdapterControl: what the port sends on its cable reaches the other
     * end delay_ns later (0: at once). */
    void set_cable_delay(uint64_t delay_ns) { cable_delay_ns_.store(delay_ns, std::memory_order_release); }
    uint64_t cable_delay() const { return cable_delay_ns_.load(std::memory_order_acquire); }
    /* The group's pass: the frames due out of the port's cable delivered
     * to the other end. Whether any were. */
    bool drain_cable(RxEngine& rx);

    PortCounters counters() const;
    void count_link_change() { link_changes_.fetch_add(1, std::memory_order_relaxed); }

private:
    void to_wire(const FrameBurst& sent, RxEngine& rx);
    /* The burst without the datagrams the wire loses this time. */
    const FrameBurst& lose_datagrams(const FrameBurst& burst, uint32_t per_million);

    const uint32_t id_;
    FrameReceiver* receiver_ = nullptr;
    LocalSwitch* switch_ = nullptr;
    FrameBurst uplink_; /* what the switch left for the wire */
    Port* wire_peer_ = nullptr;
    std::atomic<TapWire*> tap_{nullptr};
    /* Written by the engines, read by AdapterControl: what the sending
     * passes count and what the receiving ones count each on a cache line
     * of its own, apart from what every pass reads. Two lcores forwarding
     * through a cable send on one port and receive on the other. */
    alignas(64) std::atomic<uint64_t> tx_frames_{0}, tx_bytes_{0}, tx_drops_{0}, lost_{0};
    alignas(64) std::atomic<uint64_t> rx_frames_{0}, rx_bytes_{0}, rx_errors_{0};
    alignas(64) std::atomic<uint64_t> link_changes_{0};
    std::atomic<uint32_t> loss_ppm_{0};
    std::atomic<uint16_t> lossy_udp_port_{0};
    uint64_t loss_random_ = 0x9e3779b97f4a7c15ull; /* xorshift64 state: the engine's alone */
    std::atomic<uint64_t> cable_delay_ns_{0};
    DelayLine cable_;
    std::unique_ptr<FrameBurst> survivors_;        /* allocated with the first loss */
};

} // namespace cna::fw
