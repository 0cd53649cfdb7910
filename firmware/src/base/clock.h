/* SPDX-License-Identifier: BSD-3-Clause
 * The engines' time: a monotonic clock in nanoseconds, read at most once
 * per pass by what keeps timers (RoCE's ACK and RNR timers). A reading
 * costs as much as a small RDMA message's work in a VM (27 ns here).
 */
#pragma once

#include <chrono>
#include <cstdint>

namespace cna::fw {

inline uint64_t monotonic_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

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
