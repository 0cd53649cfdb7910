/* SPDX-License-Identifier: BSD-3-Clause
 * A Linux TAP interface as a port's wire: the kernel is the link partner,
 * so ping, tcpdump or iperf on the interface exchange real frames with the
 * port. One write per transmitted frame; received frames are read from the
 * non-blocking fd in bounded batches on the engine thread. A TAP the
 * adapter created is not persistent: it disappears when the fd is closed.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "hsi_eth.h"
#include "frame/frame.h"
#include "frame/frame_burst.h"

namespace cna::fw {

class Port;
class RxEngine;

class TapWire {
public:
    /* The longest frame any vport accepts: the largest MTU, double tagged. */
    static constexpr uint32_t MAX_FRAME = hsi::eth::MAX_MTU + ETH_HLEN + 2 * VLAN_HLEN;
    /* Frames read per engine pass, so a flooding kernel cannot starve Tx. */
    static constexpr uint32_t RX_BATCH = 32;

    /* Attaches to the TAP interface ifname, creating it if absent. nullptr
     * with a message in *error when that fails (no /dev/net/tun, no
     * CAP_NET_ADMIN to create it, a non-TAP interface of that name). */
    static std::unique_ptr<TapWire> open(const std::string& ifname, std::string* error);
    ~TapWire();
    TapWire(const TapWire&) = delete;
    TapWire& operator=(const TapWire&) = delete;

    const std::string& name() const { return name_; }
    int fd() const { return fd_; }

    /* Shows the port's link to the kernel as the interface's carrier, so the
     * partner sees the link go down as it would on a real cable (not once
     * the interface is gone). */
    void set_carrier(bool up);
    /* Engine thread: receive() found the interface deleted. */
    void mark_gone() { gone_.store(true, std::memory_order_relaxed); }
    /* Engine thread: hands one frame to the kernel; false when it was
     * dropped (the interface's queue is full, or it is gone). */
    bool send(const uint8_t* frame, uint32_t len);
    /* Engine thread: up to RX_BATCH frames the kernel sent, each delivered
     * to the port (on the pass's Rx engine) or counted there as an Rx
     * error. The number of frames read, or -errno when the interface is
     * gone. */
    int receive(Port& port, RxEngine& rx);

private:
    TapWire(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
    void deliver_one(Port& port, uint32_t len, RxEngine& rx);

    const std::string name_;
    const int fd_;
    std::atomic<bool> gone_{false};
    /* One byte more than MAX_FRAME: a frame filling it was truncated. */
    alignas(64) uint8_t frame_[MAX_FRAME + 1];
    FrameBurst burst_;
};

} // namespace cna::fw
