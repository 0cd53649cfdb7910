/* SPDX-License-Identifier: BSD-3-Clause
 * The engines' time: a monotonic clock in nanoseconds, read at most once
 * per pass by what keeps timers (RoCE's ACK and RNR timers) and by Tx
 * rate limits. A reading through the C library costs as much as a small
 * RDMA message's work in a VM (35 ns here), the time-stamp counter a third
 * of it (see clock.cpp).
 */
#pragma once

#include <cstdint>

namespace cna::fw {

/* Nanoseconds since an arbitrary start, never going back; near
 * CLOCK_MONOTONIC's reading (within its drift from the counter). */
uint64_t monotonic_ns();

/* The time of one pass of the dataplane, read when something first asks:
 * every timer of the pass sees the same instant, and a pass that keeps no
 * timer reads no clock. Outside a pass (begin() to end()) every asking
 * reads the clock. */
class PassClock {
public:
    void begin() { now_ = 0; }
    void end() { now_ = OUTSIDE; }
    uint64_t now()
    {
        if (now_ == OUTSIDE)
            return monotonic_ns();
        return now_ != 0 ? now_ : (now_ = monotonic_ns());
    }

private:
    static constexpr uint64_t OUTSIDE = UINT64_MAX;
    uint64_t now_ = OUTSIDE;
};

} // namespace cna::fw
