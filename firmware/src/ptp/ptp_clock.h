/* SPDX-License-Identifier: BSD-3-Clause
 * A port's PTP hardware clock (hsi_ptp.h): 64-bit nanoseconds that run
 * from the host's monotonic raw clock (CLOCK_MONOTONIC_RAW, which no NTP
 * slews) at the nominal rate corrected by a frequency offset in parts per
 * billion, set at power-on from the host's real-time clock.
 *
 * Its state is an anchor: a raw reading, the clock's time at it, the rate
 * since. Every change anchors anew at the instant it takes effect, so that
 * a rate change never moves the time already run. The slowpath (the
 * adapter's slowpath lock: one writer) replaces the anchor under a
 * sequence count; the engines and the host's register reads take it whole
 * without a lock, trying again while a change is under way. The clock
 * never runs back but by a step.
 */
#pragma once

#include <atomic>
#include <cstdint>

namespace cna::fw {

class PtpClock {
public:
    PtpClock();

    /* Any thread. */
    uint64_t now() const;
    /* The time at the raw instant `raw` (raw_now()'s units) as the clock
     * runs now: a frame's stamp for when it came off a wire, which may be
     * before the frame is taken (a cable's delay line, hsi.md section 14). */
    uint64_t at(uint64_t raw) const;
    int32_t freq_ppb() const { return ppb_.load(std::memory_order_relaxed); }

    /* Slowpath lock held. */
    void set(uint64_t time);
    /* Modulo 2^64, as the counter runs. */
    void step(int64_t delta);
    /* Saturated at +-hsi::ptp::MAX_FREQ_PPB. */
    void set_freq(int32_t ppb);

    static uint64_t raw_now();

private:
    struct Anchor {
        uint64_t raw;
        uint64_t time;
        int32_t ppb;
    };
    /* The anchor replaced by next(old anchor, the raw clock now). */
    template <typename Next> void change(Next next);
    /* read_anchor(the anchor) with the anchor whole. */
    template <typename Read> uint64_t read(Read read_anchor) const;
    static uint64_t run(const Anchor& anchor, uint64_t raw);

    std::atomic<uint32_t> seq_{0}; /* odd while the anchor changes */
    std::atomic<uint64_t> raw_{0};
    std::atomic<uint64_t> time_{0};
    std::atomic<int32_t> ppb_{0};
};

} // namespace cna::fw
