/* SPDX-License-Identifier: BSD-3-Clause
 * ecore's PTP calls on an embedded adapter's PF: the port's clock read,
 * set, stepped and steered, what is refused, and latches that hold no
 * stamp. (A VF's: test_vf_e2e; the latching itself: the adapter's tests.)
 */
#include "fixture.h"

#include <ctime>

#include "ecore_ptp_api.h"
#include "ecore_ptt.h"

using namespace cna;
using ecore::Status;

namespace {

uint64_t realtime_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

TEST(Ptp, APfReadsSetsStepsAndSteersItsPortsClock)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_ptp", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    ecore::Hwfn& hwfn = pf.hwfn();

    uint64_t now = 0;
    ASSERT_EQ(ecore::ptp_read_cc(hwfn, &now), Status::success);
    EXPECT_NEAR(static_cast<double>(now), static_cast<double>(realtime_ns()), 1e9) << "the host's real time at power-on";

    ASSERT_EQ(ecore::ptp_settime(hwfn, 5'000'000'000), Status::success);
    ASSERT_EQ(ecore::ptp_adjtime(hwfn, -2'000'000'000), Status::success);
    ASSERT_EQ(ecore::ptp_read_cc(hwfn, &now), Status::success);
    EXPECT_GE(now, 3'000'000'000u);
    EXPECT_LT(now, 3'100'000'000u);
    EXPECT_EQ(ecore::ptp_adjtime(hwfn, -4'000'000'000), Status::inval) << "before the epoch";
    EXPECT_EQ(ecore::ptp_adjtime(hwfn, INT64_MIN), Status::inval);
    ASSERT_EQ(ecore::ptp_read_cc(hwfn, &now), Status::success);
    EXPECT_GE(now, 3'000'000'000u) << "refused: not stepped";

    EXPECT_EQ(ecore::ptp_adjfreq(hwfn, hsi::ptp::MAX_FREQ_PPB), Status::success);
    EXPECT_EQ(ecore::ptp_adjfreq(hwfn, -hsi::ptp::MAX_FREQ_PPB - 1), Status::inval);
    EXPECT_EQ(ecore::ptp_adjfreq(hwfn, 0), Status::success);

    ASSERT_EQ(ecore::ptp_enable(hwfn), Status::success);
    ecore::PtpStamp stamp;
    EXPECT_EQ(ecore::ptp_read_rx_ts(hwfn, 0, &stamp), Status::again) << "nothing latched";
    EXPECT_EQ(ecore::ptp_read_rx_ts(hwfn, hsi::ptp::RX_LATCHES, &stamp), Status::inval);
    EXPECT_EQ(ecore::ptp_read_tx_ts(hwfn, &stamp), Status::again);
    EXPECT_EQ(ecore::ptp_cfg_rx_filters(hwfn, hsi::ptp::ctrl::TX), Status::inval) << "not an Rx transport";
    EXPECT_EQ(ecore::ptp_cfg_rx_filters(hwfn, hsi::ptp::ctrl::RX_L2), Status::success);
    {
        ecore::FunctionPtt ptt(hwfn); /* the caller's, as for the other statistics */
        ASSERT_TRUE(ptt);
        ecore::PtpStats stats;
        ASSERT_EQ(ecore::ptp_get_stats(hwfn, *ptt, &stats), Status::success);
        EXPECT_EQ(stats.rx_unstamped + stats.tx_unstamped, 0u);
    }
    EXPECT_EQ(ecore::ptp_disable(hwfn), Status::success);
    EXPECT_EQ(pf.tear_down(), Status::success);
}

} // namespace
