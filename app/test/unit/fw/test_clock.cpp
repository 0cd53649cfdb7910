/* SPDX-License-Identifier: BSD-3-Clause
 * The engines' clock: it keeps time with CLOCK_MONOTONIC, whichever way it
 * reads it (the time-stamp counter scaled, or steady_clock), and never goes
 * back on one thread.
 */
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "base/clock.h"

namespace cna::fw::test {
namespace {

uint64_t steady_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

/* Our reading between two of steady_clock's: a thread preempted between
 * them widens the bracket, it does not fail the test. */
struct Bracketed {
    uint64_t steady_before, ours, steady_after;
};
Bracketed read_bracketed()
{
    Bracketed b;
    b.steady_before = steady_ns();
    b.ours = monotonic_ns();
    b.steady_after = steady_ns();
    return b;
}

TEST(Clock, KeepsTimeWithTheSystemsMonotonicClock)
{
    for (auto span : {std::chrono::milliseconds(5), std::chrono::milliseconds(60)}) {
        const Bracketed start = read_bracketed();
        std::this_thread::sleep_for(span);
        const Bracketed end = read_bracketed();
        const double ours = static_cast<double>(end.ours - start.ours);
        const double shortest = static_cast<double>(end.steady_before - start.steady_after);
        const double longest = static_cast<double>(end.steady_after - start.steady_before);
        /* A rate off by 0.1 % would be 60 us over the longer span. */
        const double slack = 0.001 * longest + 1'000;
        EXPECT_GE(ours, shortest - slack) << "over " << span.count() << " ms";
        EXPECT_LE(ours, longest + slack) << "over " << span.count() << " ms";
    }
    /* Near CLOCK_MONOTONIC's reading, not only its rate. */
    const Bracketed now = read_bracketed();
    EXPECT_GE(now.ours + 1'000'000, now.steady_before);
    EXPECT_LE(now.ours, now.steady_after + 1'000'000);
}

TEST(Clock, NeverGoesBackOnOneThread)
{
    uint64_t last = monotonic_ns();
    for (int i = 0; i < 1'000'000; i++) {
        const uint64_t now = monotonic_ns();
        ASSERT_GE(now, last) << "reading " << i;
        last = now;
    }
}

} // namespace
} // namespace cna::fw::test
