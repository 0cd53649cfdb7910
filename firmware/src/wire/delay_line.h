/* SPDX-License-Identifier: BSD-3-Clause
 * A cable's length in time (hsi.md section 14): what one end sends comes
 * out at the other a fixed delay later. A frame waits in a slot with the
 * raw instant it is due (PtpClock::raw_now) and leaves on the first pass
 * after; its burst carries that instant (FrameBurst::wire_time), so the
 * receiver stamps it for when it came off the wire, not for when the pass
 * took it: the delay two ports measure is the cable's to the nanosecond,
 * however late the pass.
 *
 * Like a cable, the line holds what fits in it: a frame that finds every
 * slot taken is lost (the sender's wire_tx_drops). Frames never overtake
 * each other. Any pass may send into the line (a lock, held for the
 * copy); only the pass of the port's group takes out of it, and a slot is
 * free again only once its frame was delivered.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "frame/frame_burst.h"
#include "wire/tap.h"

namespace cna::fw {

class DelayLine {
public:
    static constexpr uint32_t SLOTS = 1024;
    static constexpr uint32_t MAX_FRAME = TapWire::MAX_FRAME;

    /* Any pass: the burst's frames, sent at the raw instant `sent`, come
     * out at sent + delay_ns. Returns how many were lost. */
    uint32_t push(const FrameBurst& burst, uint64_t sent, uint64_t delay_ns);
    /* The group's pass: the frames due by the raw instant `now`, handed to
     * deliver(const FrameBurst&) in bursts of one instant. */
    template <typename Deliver> void drain(uint64_t now, Deliver deliver);
    bool empty() const { return queued_.load(std::memory_order_acquire) == 0; }

private:
    struct Slot {
        uint64_t due;
        uint32_t len;
        bool parsed;
        FrameLayout layout;
        std::array<uint8_t, MAX_FRAME> data;
    };
    /* The frames due by now from the head on, one instant's, up to a
     * burst (out_); how many. */
    uint32_t take_due(uint64_t now);
    void release(uint32_t frames);

    std::mutex lock_;
    std::vector<Slot> slots_; /* allocated by the first push: most cables have no delay */
    uint32_t head_ = 0;       /* the oldest frame's slot */
    std::atomic<uint32_t> queued_{0};
    FrameBurst out_;
};

template <typename Deliver> void DelayLine::drain(uint64_t now, Deliver deliver)
{
    while (uint32_t frames = take_due(now)) {
        deliver(out_);
        release(frames);
    }
}

} // namespace cna::fw
