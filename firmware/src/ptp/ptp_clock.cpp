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
    store(Anchor{raw_now(), read_clock(CLOCK_REALTIME), 0});
}

uint64_t PtpClock::raw_now() { return read_clock(CLOCK_MONOTONIC_RAW); }

uint64_t PtpClock::run(const Anchor& anchor, uint64_t raw)
{
    /* A raw reading taken before the anchor (another thread's, racing a
     * change) counts as the anchor's own instant: the clock never runs
     * back but by a step. */
    const uint64_t elapsed = raw > anchor.raw ? raw - anchor.raw : 0;
    const auto correction = static_cast<__int128>(elapsed) * anchor.ppb / 1'000'000'000;
    return anchor.time + elapsed + static_cast<uint64_t>(static_cast<int64_t>(correction));
}

uint64_t PtpClock::at(uint64_t raw) const { return run(load(), raw); }

PtpClock::Anchor PtpClock::load() const
{
    for (;;) {
        const uint32_t before = seq_.load(std::memory_order_acquire);
        const Anchor anchor{raw_.load(std::memory_order_relaxed), time_.load(std::memory_order_relaxed),
                            ppb_.load(std::memory_order_relaxed)};
        std::atomic_thread_fence(std::memory_order_acquire);
        if ((before & 1) == 0 && seq_.load(std::memory_order_relaxed) == before)
            return anchor;
    }
}

void PtpClock::store(const Anchor& anchor)
{
    const uint32_t seq = seq_.load(std::memory_order_relaxed);
    seq_.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    raw_.store(anchor.raw, std::memory_order_relaxed);
    time_.store(anchor.time, std::memory_order_relaxed);
    ppb_.store(anchor.ppb, std::memory_order_relaxed);
    seq_.store(seq + 2, std::memory_order_release);
}

void PtpClock::set(uint64_t time) { store(Anchor{raw_now(), time, ppb_.load(std::memory_order_relaxed)}); }

void PtpClock::step(int64_t delta)
{
    const Anchor old = load();
    const uint64_t raw = raw_now();
    store(Anchor{raw, run(old, raw) + static_cast<uint64_t>(delta), old.ppb});
}

void PtpClock::set_freq(int32_t ppb)
{
    const Anchor old = load();
    const uint64_t raw = raw_now();
    store(Anchor{raw, run(old, raw), std::clamp(ppb, -hsi::ptp::MAX_FREQ_PPB, hsi::ptp::MAX_FREQ_PPB)});
}

} // namespace cna::fw
