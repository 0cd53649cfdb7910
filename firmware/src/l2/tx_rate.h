/* SPDX-License-Identifier: BSD-3-Clause
 * A vport's Tx rate limiter, the QM's per-vport limiter of a real adapter:
 * a token bucket over the bytes of the frames the vport sends, refilled at
 * the set rate from the engine's clock and at most DEPTH_NS of it deep: an
 * engine thread that sleeps when idle, or waits for a CPU the host's
 * threads hold, must not lose the credit of its absence. A vport sends
 * while its credit is positive; the frame that takes it below zero goes
 * whole, and the debt is paid before the next one, so the rate over time is
 * exact. A vport out of credit leaves its BDs on the ring: its driver sees
 * a full ring, as on a slower link, never a drop. Engine thread only.
 */
#pragma once

#include <algorithm>
#include <cstdint>

namespace cna::fw {

class TxRateLimit {
public:
    static constexpr uint64_t DEPTH_NS = 20'000'000;

    /* mbps: 0 lifts the limit. Starts with a full bucket. */
    void set(uint32_t mbps, uint64_t now_ns)
    {
        mbps_ = mbps;
        credit_ = depth();
        stamp_ns_ = now_ns;
    }
    bool limited() const { return mbps_ != 0; }
    uint32_t mbps() const { return mbps_; }
    bool may_send() const { return mbps_ == 0 || credit_ > 0; }
    /* Credit for the time since the last refill; whether the vport may send. */
    bool refill(uint64_t now_ns)
    {
        const uint64_t elapsed = std::min(now_ns - stamp_ns_, MAX_ELAPSED_NS);
        stamp_ns_ = now_ns;
        credit_ = std::min(credit_ + static_cast<int64_t>(elapsed * mbps_), depth());
        return credit_ > 0;
    }
    void spend(uint32_t frame_bytes) { credit_ -= int64_t{frame_bytes} * BIT_UNITS_PER_BYTE; }

private:
    /* Credit is counted in thousandths of a bit: a rate of n Mbps earns
     * exactly n of them per nanosecond, so no refill loses a remainder. */
    static constexpr int64_t BIT_UNITS_PER_BYTE = 8 * 1000;
    /* Longer gaps only fill the bucket (or pay a debt no frame reaches):
     * bounds the product in refill(). */
    static constexpr uint64_t MAX_ELAPSED_NS = 1'000'000'000;

    int64_t depth() const { return static_cast<int64_t>(DEPTH_NS * mbps_); }

    uint32_t mbps_ = 0;
    int64_t credit_ = 0;
    uint64_t stamp_ns_ = 0;
};

} // namespace cna::fw
