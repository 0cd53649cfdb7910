/* SPDX-License-Identifier: BSD-3-Clause
 * The engines' time: a monotonic clock in nanoseconds, read once per pass
 * (or burst) by what keeps timers (RoCE's ACK and RNR timers).
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

} // namespace cna::fw
