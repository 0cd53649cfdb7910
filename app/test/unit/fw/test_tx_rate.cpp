/* SPDX-License-Identifier: BSD-3-Clause
 * The vport Tx rate limiter's arithmetic, on a clock the test drives: a
 * full bucket to start, debt paid before the next frame, a bucket that
 * never holds more than its depth, and an exact rate over time.
 */
#include <gtest/gtest.h>

#include "l2/tx_rate.h"

namespace cna::fw::test {
namespace {

constexpr uint64_t US = 1000;
constexpr uint64_t MS = 1000 * US;
/* The bucket's bytes at 8 Mbps, a byte per microsecond. */
constexpr uint32_t DEPTH_8MBPS = TxRateLimit::DEPTH_NS / US;

TEST(TxRateLimit, UnlimitedAlwaysSends)
{
    TxRateLimit rate;
    EXPECT_FALSE(rate.limited());
    EXPECT_TRUE(rate.may_send());
    rate.set(8, 0);
    rate.set(0, 5 * MS);
    EXPECT_FALSE(rate.limited());
    EXPECT_TRUE(rate.may_send());
}

TEST(TxRateLimit, StartsFullAndEarnsTheRate)
{
    TxRateLimit rate;
    rate.set(8, 0); /* 8 Mbps: a byte per microsecond */
    EXPECT_TRUE(rate.limited());
    EXPECT_EQ(rate.mbps(), 8u);
    rate.spend(DEPTH_8MBPS - 1);
    EXPECT_TRUE(rate.may_send());
    rate.spend(1);
    EXPECT_FALSE(rate.may_send()) << "the bucket was DEPTH_NS deep";
    EXPECT_FALSE(rate.refill(0)) << "no time, no credit";
    EXPECT_TRUE(rate.refill(1)) << "a nanosecond's 8/1000 of a bit is credit";
    rate.spend(1);
    EXPECT_FALSE(rate.refill(999)) << "a byte's debt takes a microsecond";
    EXPECT_TRUE(rate.refill(1 * US + 1));
}

TEST(TxRateLimit, AFrameTakesTheCreditBelowZeroAndTheDebtIsPaidFirst)
{
    TxRateLimit rate;
    rate.set(8, 0);
    rate.spend(DEPTH_8MBPS + 5000); /* sent whole on less credit */
    EXPECT_FALSE(rate.may_send());
    EXPECT_FALSE(rate.refill(5 * MS)) << "5000 bytes earned, 5000 owed";
    EXPECT_TRUE(rate.refill(5 * MS + 1 * US));
}

TEST(TxRateLimit, AnIdleVportSavesNoMoreThanTheDepth)
{
    TxRateLimit rate;
    rate.set(8, 0);
    rate.spend(DEPTH_8MBPS);
    EXPECT_TRUE(rate.refill(3600 * 1000 * MS));
    rate.spend(DEPTH_8MBPS);
    EXPECT_FALSE(rate.may_send()) << "an hour idle is worth DEPTH_NS";
}

TEST(TxRateLimit, TheRateHoldsOverTime)
{
    /* 1000-byte frames whenever there is credit, polled every 30 us for a
     * simulated second at 80 Mbps: 10 MB, give or take the bucket's depth
     * and one frame. */
    TxRateLimit rate;
    rate.set(80, 0);
    uint64_t sent = 0;
    for (uint64_t now = 0; now <= 1000 * MS; now += 30 * US) {
        rate.refill(now);
        while (rate.may_send()) {
            rate.spend(1000);
            sent += 1000;
        }
    }
    const uint64_t depth = TxRateLimit::DEPTH_NS * 80 / 8000;
    EXPECT_GE(sent, 10'000'000u);
    EXPECT_LE(sent, 10'000'000u + depth + 1000);
}

} // namespace
} // namespace cna::fw::test
