/* SPDX-License-Identifier: BSD-3-Clause */
#include "ptp/ptp_clock.h"

#include <algorithm>
#include <ctime>

#include "hsi_ptp.h"

namespace cna::fw {
namespace {

uint64_t read_clock(clockid_t id)
{
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

} // namespace

PtpClock::PtpClock()
{
    change([](const Anchor&, uint64_t raw) { return Anchor{raw, read_clock(CLOCK_REALTIME), 0}; });
}

uint64_t PtpClock::raw_now() { return read_clock(CLOCK_MONOTONIC_RAW); }

uint64_t PtpClock::run(const Anchor& anchor, uint64_t raw)
{
    /* An instant before the anchor's (a stamp for a frame that came off
     * the wire before a change) runs back from it at the anchor's rate. */
    const auto elapsed = static_cast<int64_t>(raw - anchor.raw);
    const auto correction = static_cast<__int128>(elapsed) * anchor.ppb / 1'000'000'000;
    return anchor.time + static_cast<uint64_t>(elapsed) + static_cast<uint64_t>(static_cast<int64_t>(correction));
}

/* A sequence lock of atomics alone, no fence (which ThreadSanitizer cannot
 * follow): a field the writer stored after making the count odd is
 * released, so a reader that acquires it sees the count odd, or moved, at
 * its second look; its acquire loads keep that look after them. */
template <typename Read> uint64_t PtpClock::read(Read read_anchor) const
{
    for (;;) {
        const uint32_t before = seq_.load(std::memory_order_acquire);
        const Anchor anchor{raw_.load(std::memory_order_acquire), time_.load(std::memory_order_acquire),
                            ppb_.load(std::memory_order_acquire)};
        const uint64_t time = read_anchor(anchor);
        if ((before & 1) == 0 && seq_.load(std::memory_order_acquire) == before)
            return time;
    }
}

/* The raw clock read inside the lock: a reader never runs an anchor past
 * the raw instant of a change it did not see, which a rate change would
 * contradict. */
uint64_t PtpClock::now() const
{
    return read([](const Anchor& anchor) { return run(anchor, raw_now()); });
}

uint64_t PtpClock::at(uint64_t raw) const
{
    return read([raw](const Anchor& anchor) { return run(anchor, raw); });
}

template <typename Next> void PtpClock::change(Next next)
{
    seq_.fetch_add(1, std::memory_order_acq_rel);
    const Anchor old{raw_.load(std::memory_order_relaxed), time_.load(std::memory_order_relaxed),
                     ppb_.load(std::memory_order_relaxed)};
    const Anchor anchor = next(old, raw_now());
    raw_.store(anchor.raw, std::memory_order_release);
    time_.store(anchor.time, std::memory_order_release);
    ppb_.store(anchor.ppb, std::memory_order_release);
    seq_.fetch_add(1, std::memory_order_release);
}

void PtpClock::set(uint64_t time)
{
    change([time](const Anchor& old, uint64_t raw) { return Anchor{raw, time, old.ppb}; });
}

void PtpClock::step(int64_t delta)
{
    change([delta](const Anchor& old, uint64_t raw) {
        return Anchor{raw, run(old, raw) + static_cast<uint64_t>(delta), old.ppb};
    });
}

void PtpClock::set_freq(int32_t ppb)
{
    change([ppb](const Anchor& old, uint64_t raw) {
        return Anchor{raw, run(old, raw), std::clamp(ppb, -hsi::ptp::MAX_FREQ_PPB, hsi::ptp::MAX_FREQ_PPB)};
    });
}

} // namespace cna::fw
