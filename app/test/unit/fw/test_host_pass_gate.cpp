/* SPDX-License-Identifier: BSD-3-Clause
 * The gate of host passes on its own: one runner, a request left while it
 * runs makes it pass again (an idle caller's leaves none), a hold waits out
 * the running pass and keeps the requests made meanwhile for the call after
 * it, and says whether it is set (what a queue's pass beside the runner's
 * looks at); and, on two threads ringing doorbells without pause, no
 * request is ever left unserved.
 */
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include "base/host_pass_gate.h"

namespace {

using cna::fw::HostPassGate;

TEST(HostPassGate, OneRunsAndARequestMadeMeanwhileIsPassedAgain)
{
    HostPassGate gate;
    ASSERT_TRUE(gate.enter());
    EXPECT_TRUE(gate.done()) << "no request came: the runner goes";
    ASSERT_TRUE(gate.enter());
    EXPECT_FALSE(gate.enter()) << "running: the request is left to the runner";
    EXPECT_FALSE(gate.enter());
    EXPECT_FALSE(gate.done()) << "the runner passes again for it";
    EXPECT_TRUE(gate.done()) << "two requests, one pass served both";
    EXPECT_TRUE(gate.enter()) << "idle again";
    EXPECT_TRUE(gate.done());
}

TEST(HostPassGate, AnIdleCallRunsOnlyWhenFreeAndLeavesNoRequest)
{
    HostPassGate gate;
    ASSERT_TRUE(gate.enter_if_free()) << "free: the idle caller runs";
    EXPECT_FALSE(gate.enter_if_free()) << "running: nothing for an idle caller to do";
    EXPECT_TRUE(gate.done()) << "and nothing left to the runner";
    ASSERT_TRUE(gate.enter());
    EXPECT_FALSE(gate.enter_if_free());
    EXPECT_FALSE(gate.enter()) << "a doorbell's request";
    EXPECT_FALSE(gate.done()) << "is kept";
    EXPECT_TRUE(gate.done());

    gate.hold();
    EXPECT_FALSE(gate.enter_if_free()) << "held: no pass";
    EXPECT_FALSE(gate.enter()) << "a doorbell during the hold";
    gate.release();
    EXPECT_TRUE(gate.enter_if_free()) << "the next call, idle or not, runs and serves it";
    EXPECT_TRUE(gate.done());
}

TEST(HostPassGate, HeldSaysWhetherAHoldIsSetWhateverRuns)
{
    HostPassGate gate;
    EXPECT_FALSE(gate.held());
    ASSERT_TRUE(gate.enter());
    EXPECT_FALSE(gate.held()) << "a running pass is no hold";
    EXPECT_TRUE(gate.done());
    gate.hold();
    EXPECT_TRUE(gate.held());
    EXPECT_FALSE(gate.enter()) << "a doorbell during the hold";
    EXPECT_TRUE(gate.held()) << "a request left meanwhile does not end it";
    gate.release();
    EXPECT_FALSE(gate.held());
    EXPECT_TRUE(gate.enter());
    EXPECT_TRUE(gate.done());
}

TEST(HostPassGate, AHoldKeepsTheRequestsForTheCallAfterIt)
{
    HostPassGate gate;
    gate.hold();
    EXPECT_FALSE(gate.enter()) << "held: no pass";
    gate.release();
    EXPECT_TRUE(gate.enter()) << "the next call runs, and serves the request";
    EXPECT_TRUE(gate.done());

    ASSERT_TRUE(gate.enter());
    EXPECT_FALSE(gate.enter());
    std::atomic<bool> held{false};
    std::thread holder([&] {
        gate.hold();
        held = true;
    });
    /* Until the hold is set (the thread may be slow to start on a busy
     * machine: a pass ended before it would be passed again). */
    while (!gate.held())
        std::this_thread::yield();
    for (int i = 0; i < 1000 && !held; i++)
        std::this_thread::yield();
    EXPECT_FALSE(held) << "a hold waits out the running pass";
    /* The request still stands, but the hold comes first: the runner goes. */
    EXPECT_TRUE(gate.done());
    holder.join();
    EXPECT_TRUE(held);
    EXPECT_FALSE(gate.enter());
    gate.release();
    EXPECT_TRUE(gate.enter());
    EXPECT_TRUE(gate.done());
}

/* Two threads ringing their doorbells (sequence numbers) and asking for a
 * pass without pause: passes never overlap, and after both have gone the
 * last pass served each one's last doorbell (its own pass, or the runner's
 * it left the request to). Run under ThreadSanitizer too: what a pass
 * writes, the next runner reads, with no lock but the gate. */
TEST(HostPassGate, PassesOnTwoThreadsNeverOverlapAndServeEveryDoorbell)
{
    constexpr uint32_t RINGS = 100000;
    HostPassGate gate;
    std::array<std::atomic<uint32_t>, 2> doorbell{};
    std::array<uint32_t, 2> served{}; /* the runner's alone */
    std::array<uint32_t, 2> scratch{}; /* a pass long enough to be found running */
    std::atomic<uint32_t> in_pass{0}, overlaps{0};
    auto pass = [&] {
        if (in_pass.fetch_add(1) != 0)
            overlaps++;
        for (std::size_t t = 0; t < doorbell.size(); t++)
            served[t] = doorbell[t].load(std::memory_order_relaxed);
        for (uint32_t i = 0; i < 64; i++)
            scratch[i % 2] += served[i % 2];
        in_pass.fetch_sub(1);
    };
    auto ring = [&](std::size_t t) {
        for (uint32_t seq = 1; seq <= RINGS; seq++) {
            doorbell[t].store(seq, std::memory_order_relaxed);
            if (gate.enter()) {
                do
                    pass();
                while (!gate.done());
            }
        }
    };
    std::thread other(ring, 1);
    ring(0);
    other.join();
    EXPECT_EQ(overlaps, 0u);
    EXPECT_EQ(served[0], RINGS);
    EXPECT_EQ(served[1], RINGS);
    EXPECT_TRUE(gate.enter()) << "nobody runs any more";
    EXPECT_TRUE(gate.done());
}

} // namespace
