/* SPDX-License-Identifier: BSD-3-Clause
 * The QP state machine: every (from, to) pair against the InfiniBand
 * specification's list of modify transitions, and the attributes each
 * transition requires and accepts, as verbs applications use them.
 */
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "ecore_rdma_qp_state.h"

namespace {

using namespace cna::ecore;
using namespace cna::ecore::rdma_qp_attr;
using enum cna::ecore::RdmaQpState;

TEST(RdmaQpState, ExactlyTheSpecificationsTransitionsAreAllowed)
{
    const std::set<std::pair<RdmaQpState, RdmaQpState>> legal = {
        {reset, init}, {init, init}, {init, rtr}, {rtr, rts}, {rts, rts}, {rts, sqd},
        {sqd, sqd},    {sqd, rts},   {sqe, rts},
    };
    for (uint32_t f = 0; f < cna::hsi::rdma::QP_STATES; f++) {
        for (uint32_t t = 0; t < cna::hsi::rdma::QP_STATES; t++) {
            auto from = static_cast<RdmaQpState>(f), to = static_cast<RdmaQpState>(t);
            bool expected = to == reset || to == err || legal.contains({from, to});
            EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, from, to, 0).allowed, expected)
                << rdma_qp_state_name(from) << " -> " << rdma_qp_state_name(to);
        }
    }
    EXPECT_FALSE(rdma_qp_check_transition(RdmaQpType::rc, static_cast<RdmaQpState>(7), reset, 0).allowed);
    EXPECT_FALSE(rdma_qp_check_transition(RdmaQpType::rc, reset, static_cast<RdmaQpState>(200), 0).allowed);
}

TEST(RdmaQpState, ThePingpongBringUpPasses)
{
    /* What ibv_rc_pingpong asks for at each step. */
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, reset, init, PKEY_INDEX | PORT | ACCESS).ok());
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, init, rtr,
                                         PATH | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER)
                    .ok());
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, rtr, rts, TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_RD_ATOMIC).ok());
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, rts, err, 0).ok());
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, err, reset, 0).ok());
}

TEST(RdmaQpState, MissingAndUnexpectedAttributesAreNamed)
{
    auto c = rdma_qp_check_transition(RdmaQpType::rc, init, rtr, PATH | PATH_MTU | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER);
    EXPECT_TRUE(c.allowed);
    EXPECT_EQ(c.missing, DEST_QPN);
    EXPECT_STREQ(rdma_qp_attr_name(c.missing), "dest_qp_num");

    c = rdma_qp_check_transition(RdmaQpType::rc, reset, init, PKEY_INDEX | PORT | ACCESS | SQ_PSN);
    EXPECT_EQ(c.missing, 0u);
    EXPECT_EQ(c.unexpected, SQ_PSN);
    EXPECT_STREQ(rdma_qp_attr_name(c.unexpected), "sq_psn");

    /* cur_state may come with RTR->RTS, not with RESET->INIT. */
    EXPECT_TRUE(
        rdma_qp_check_transition(RdmaQpType::rc, rtr, rts, CUR_STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_RD_ATOMIC).ok());
    EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, reset, init, CUR_STATE | PKEY_INDEX | PORT | ACCESS).unexpected, CUR_STATE);

    /* RTS->RTS changes nothing required, and never the PSNs. */
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, rts, rts, ACCESS | MIN_RNR_TIMER).ok());
    EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, rts, rts, SQ_PSN).unexpected, SQ_PSN);
    /* A drained SQD may change the path and the timers. */
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, sqd, sqd, PATH | TIMEOUT | RETRY_CNT).ok());
    EXPECT_TRUE(rdma_qp_check_transition(RdmaQpType::rc, rts, sqd, SQD_ASYNC_NOTIFY).ok());
    /* RESET and ERR take the state alone. */
    EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, rts, err, ACCESS).unexpected, ACCESS);
    EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, init, reset, PORT).unexpected, PORT);
}

TEST(RdmaQpState, Names)
{
    EXPECT_STREQ(rdma_qp_state_name(rtr), "RTR");
    EXPECT_STREQ(rdma_qp_state_name(static_cast<RdmaQpState>(9)), "invalid");
    EXPECT_STREQ(rdma_qp_attr_name(0), "none");
    EXPECT_STREQ(rdma_qp_attr_name(MAX_DEST_RD_ATOMIC | SQD_ASYNC_NOTIFY), "max_dest_rd_atomic");
    EXPECT_STREQ(rdma_qp_attr_name(1u << 31), "unknown");
    EXPECT_STREQ(rdma_qp_attr_name(QKEY), "qkey");
}

/* ibv_ud_pingpong's modifies, and what a UD QP has instead of a path. */
TEST(RdmaQpState, UnreliableDatagramsTakeAQKeyAndNoPath)
{
    constexpr auto ud = RdmaQpType::ud;
    EXPECT_TRUE(rdma_qp_check_transition(ud, reset, init, PKEY_INDEX | PORT | QKEY).ok());
    EXPECT_TRUE(rdma_qp_check_transition(ud, init, rtr, 0).ok());
    EXPECT_TRUE(rdma_qp_check_transition(ud, rtr, rts, SQ_PSN).ok());
    EXPECT_EQ(rdma_qp_check_transition(ud, reset, init, PKEY_INDEX | PORT | ACCESS).missing, QKEY);
    EXPECT_EQ(rdma_qp_check_transition(ud, reset, init, PKEY_INDEX | PORT | QKEY | ACCESS).unexpected, ACCESS);
    EXPECT_EQ(rdma_qp_check_transition(ud, init, rtr, PATH | PATH_MTU | DEST_QPN).unexpected,
              PATH | PATH_MTU | DEST_QPN);
    EXPECT_EQ(rdma_qp_check_transition(ud, rtr, rts, SQ_PSN | TIMEOUT | RETRY_CNT).unexpected, TIMEOUT | RETRY_CNT);
    EXPECT_TRUE(rdma_qp_check_transition(ud, sqe, rts, CUR_STATE | QKEY).ok());
    EXPECT_TRUE(rdma_qp_check_transition(ud, rts, sqd, SQD_ASYNC_NOTIFY).ok());
    /* An RC QP has no Q_Key. */
    EXPECT_EQ(rdma_qp_check_transition(RdmaQpType::rc, reset, init, PKEY_INDEX | PORT | ACCESS | QKEY).unexpected,
              QKEY);
}

} // namespace
