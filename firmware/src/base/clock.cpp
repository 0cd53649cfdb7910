/* SPDX-License-Identifier: BSD-3-Clause
 * monotonic_ns() from the CPU's time-stamp counter where the counter is
 * invariant: x86's CPUID leaf 0x80000007 says so (EDX bit 8: a constant
 * rate in every C- and P-state, what the kernel's own TSC clocksource
 * asks). Its rate is measured once against CLOCK_MONOTONIC over a
 * millisecond, the first time the clock is read; a reading is then the
 * counter, less its value at that time, scaled by a 32.32 fixed-point
 * factor (13 ns here, where steady_clock takes 35: the vDSO's sequence
 * lock and conversion). Elsewhere, or if the counter does not advance,
 * steady_clock. DPDK's rte_get_tsc_cycles() is the host's: the adapter
 * links no DPDK.
 */
#include "base/clock.h"

#include <chrono>

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

namespace cna::fw {
namespace {

uint64_t steady_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

struct CounterScale {
    bool usable = false;
    uint64_t counter_at_start = 0;
    uint64_t ns_at_start = 0;
    uint64_t ns_per_tick_32_32 = 0; /* nanoseconds per tick, times 2^32 */
};

#if defined(__x86_64__)
bool counter_invariant()
{
    unsigned eax, ebx, ecx, edx;
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u)
        return false;
    __cpuid(0x80000007u, eax, ebx, ecx, edx);
    return (edx & (1u << 8)) != 0;
}

/* A counter reading and the clock's at one instant. */
struct Both {
    uint64_t counter, ns;
};

/* The clock read between two counter readings: the counter's value at
 * that instant is their midpoint, within half the read's time. Of a few
 * tries the tightest, so that a thread preempted mid-read does not skew
 * the rate. */
Both read_both()
{
    Both both{};
    uint64_t tightest = UINT64_MAX;
    for (int attempt = 0; attempt < 5; attempt++) {
        const uint64_t before = __rdtsc();
        const uint64_t ns = steady_ns();
        const uint64_t ticks = __rdtsc() - before;
        if (ticks < tightest) {
            tightest = ticks;
            both = {before + ticks / 2, ns};
        }
    }
    return both;
}

CounterScale calibrate()
{
    CounterScale scale;
    if (!counter_invariant())
        return scale;
    constexpr uint64_t SPAN_NS = 1'000'000;
    const Both start = read_both();
    Both end;
    do
        end = read_both();
    while (end.ns - start.ns < SPAN_NS);
    if (end.counter <= start.counter)
        return scale;
    scale.usable = true;
    scale.counter_at_start = end.counter;
    scale.ns_at_start = end.ns;
    scale.ns_per_tick_32_32 = static_cast<uint64_t>((static_cast<unsigned __int128>(end.ns - start.ns) << 32) /
                                                    (end.counter - start.counter));
    return scale;
}
#else
CounterScale calibrate() { return {}; }
#endif

} // namespace

uint64_t monotonic_ns()
{
    static const CounterScale scale = calibrate();
#if defined(__x86_64__)
    if (scale.usable) [[likely]] {
        const uint64_t ticks = __rdtsc() - scale.counter_at_start;
        return scale.ns_at_start + static_cast<uint64_t>((static_cast<unsigned __int128>(ticks) *
                                                          scale.ns_per_tick_32_32) >> 32);
    }
#endif
    return steady_ns();
}

} // namespace cna::fw
