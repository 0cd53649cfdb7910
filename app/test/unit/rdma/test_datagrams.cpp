/* SPDX-License-Identifier: BSD-3-Clause
 * Unreliable datagrams through the PMD's API, as ibv_ud_pingpong and UCX's
 * ud_verbs use them: UD QPs on two cabled ports, address handles to each
 * other's GID, datagrams with their GRH and source QP, Q_Keys (the QP's
 * own with the top bit), drops the transport allows and counts, a SEND
 * beyond the MTU stopping only the send queue (SQE) until RTS again; and
 * each port's GSI QP, a connection manager's QP1.
 */
#include <arpa/inet.h>

#include <algorithm>
#include <utility>

#include "verbs_fixture.h"

namespace {

constexpr uint32_t QKEY = 0x11111111;
constexpr uint32_t GRH = 40;

class Datagrams : public Verbs {
protected:
    ibv_qp_type qp_type() const override { return IBV_QPT_UD; }

    void SetUp() override
    {
        Verbs::SetUp();
        if (HasFatalFailure())
            return;
        for (Side* s : {&a, &b})
            ASSERT_NO_FATAL_FAILURE(to_rts(*s));
        ah_to_b = make_ah(a, b);
        ah_to_a = make_ah(b, a);
        ASSERT_NE(ah_to_b, nullptr) << strerror(errno);
        ASSERT_NE(ah_to_a, nullptr) << strerror(errno);
    }

    void TearDown() override
    {
        for (ibv_ah* ah : {ah_to_b, ah_to_a}) {
            if (ah != nullptr) {
                EXPECT_EQ(cna_rdma_destroy_ah(ah), 0);
            }
        }
        Verbs::TearDown();
    }

    void to_rts(Side& s, uint32_t qkey = QKEY)
    {
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.port_num = 1;
        attr.qkey = qkey;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
        attr = {};
        attr.qp_state = IBV_QPS_RTR;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr, IBV_QP_STATE), 0);
        attr.qp_state = IBV_QPS_RTS;
        attr.sq_psn = 0x123;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
    }

    ibv_ah* make_ah(Side& from, const Side& to)
    {
        ibv_ah_attr attr{};
        attr.is_global = 1;
        attr.grh.dgid = to.gid;
        attr.grh.sgid_index = 0;
        attr.grh.hop_limit = 1;
        attr.port_num = 1;
        return cna_rdma_create_ah(from.pd, &attr);
    }

    int send(Side& s, ibv_ah* ah, const Side& to, uint64_t id, uint8_t* local, uint32_t len, uint32_t qkey = QKEY,
             ibv_wr_opcode op = IBV_WR_SEND, unsigned flags = IBV_SEND_SIGNALED)
    {
        ibv_sge sge{reinterpret_cast<uint64_t>(local), len, s.mr->lkey};
        ibv_send_wr wr = one_sge(sge, op, id, flags);
        wr.imm_data = htonl(0xabcd0000u + static_cast<uint32_t>(id));
        wr.wr.ud.ah = ah;
        wr.wr.ud.remote_qpn = to.qp->qp_num;
        wr.wr.ud.remote_qkey = qkey;
        ibv_send_wr* bad;
        return cna_rdma_post_send(s.qp, &wr, &bad);
    }

    uint64_t counter(const Side& s, uint64_t cna_rdma_port_counters::*which)
    {
        cna_rdma_port_counters c{};
        EXPECT_EQ(cna_rdma_query_port_counters(s.dev, &c), 0);
        return c.*which;
    }

    ibv_qp_state state(const Side& s)
    {
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        EXPECT_EQ(cna_rdma_query_qp(s.qp, &attr, IBV_QP_STATE, &init), 0);
        return attr.qp_state;
    }

    ibv_ah* ah_to_b = nullptr;
    ibv_ah* ah_to_a = nullptr;
};

TEST_F(Datagrams, EveryDatagramArrivesWithItsGrhAndSourceQp)
{
    uint64_t id = 1;
    for (uint32_t len : {0u, 1u, 1000u, 1024u}) {
        for (bool imm : {false, true}) {
            SCOPED_TRACE(testing::Message() << "len " << len << (imm ? " with immediate" : ""));
            auto data = pattern(len, static_cast<uint8_t>(id));
            std::copy(data.begin(), data.end(), a.buf); /* len 0: no data() to copy from */
            std::memset(b.buf, 0xee, GRH + len + 1);
            ASSERT_EQ(recv(b, 100 + id, b.buf, GRH + 1024), 0);
            ASSERT_EQ(send(a, ah_to_b, b, id, a.buf, len, QKEY, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND), 0);
            auto tx = wait_wc(a, 1);
            auto rx = wait_wc(b, 1);
            ASSERT_EQ(tx.size(), 1u);
            ASSERT_EQ(rx.size(), 1u);
            EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
            EXPECT_EQ(tx[0].opcode, IBV_WC_SEND);
            EXPECT_EQ(tx[0].wr_id, id);
            EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS) << "status " << int(rx[0].status);
            EXPECT_EQ(rx[0].opcode, IBV_WC_RECV);
            EXPECT_EQ(rx[0].wr_id, 100 + id);
            EXPECT_EQ(rx[0].byte_len, GRH + len);
            EXPECT_EQ(rx[0].qp_num, b.qp->qp_num);
            EXPECT_EQ(rx[0].src_qp, a.qp->qp_num);
            EXPECT_TRUE(rx[0].wc_flags & IBV_WC_GRH);
            EXPECT_EQ(rx[0].sl, 0x9) << "RoCEv2 over IPv6, as mlx5 devices say it";
            EXPECT_EQ((rx[0].wc_flags & IBV_WC_WITH_IMM) != 0, imm);
            if (imm) {
                EXPECT_EQ(ntohl(rx[0].imm_data), 0xabcd0000u + id);
            }
            /* The GRH: the IPv6 header of a datagram between the two
             * link-local GIDs, UDP inside. */
            EXPECT_EQ(b.buf[0] >> 4, 6);
            EXPECT_EQ(b.buf[6], 17) << "next header: UDP";
            EXPECT_EQ(std::memcmp(b.buf + 8, a.gid.raw, 16), 0) << "source GID";
            EXPECT_EQ(std::memcmp(b.buf + 24, b.gid.raw, 16), 0) << "destination GID";
            EXPECT_TRUE(std::equal(data.begin(), data.end(), b.buf + GRH));
            EXPECT_EQ(b.buf[GRH + len], 0xee) << "nothing placed past the datagram";
            id++;
        }
    }
    /* The other way, inline. */
    const char hello[] = "datagram";
    std::memcpy(b.buf, hello, sizeof(hello));
    ASSERT_EQ(recv(a, 7, a.buf, GRH + sizeof(hello)), 0);
    ASSERT_EQ(send(b, ah_to_a, a, 8, b.buf, sizeof(hello), QKEY, IBV_WR_SEND, IBV_SEND_SIGNALED | IBV_SEND_INLINE),
              0);
    std::memset(b.buf, 0, sizeof(hello)); /* inline: copied at post time */
    auto rx = wait_wc(a, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rx[0].src_qp, b.qp->qp_num);
    EXPECT_STREQ(reinterpret_cast<const char*>(a.buf + GRH), hello);
    EXPECT_EQ(wait_wc(b, 1).size(), 1u);
}

TEST_F(Datagrams, QKeysDecideAndDropsAreCounted)
{
    std::memcpy(a.buf, "qkey", 4);
    /* The top bit: the sending QP's own Q_Key, which is b's. */
    ASSERT_EQ(recv(b, 1, b.buf, GRH + 64), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 1, a.buf, 4, 0x80000000u), 0);
    auto rx = wait_wc(b, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(wait_wc(a, 1).size(), 1u);

    /* Another Q_Key: dropped by b, sent all the same by a. */
    const uint64_t violations = counter(b, &cna_rdma_port_counters::qkey_violations);
    ASSERT_EQ(recv(b, 2, b.buf, GRH + 64), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 2, a.buf, 4, 0x2222), 0);
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
    for (int i = 0; i < 200 && counter(b, &cna_rdma_port_counters::qkey_violations) == violations; i++)
        rte_delay_ms(5);
    EXPECT_EQ(counter(b, &cna_rdma_port_counters::qkey_violations), violations + 1);
    EXPECT_TRUE(wait_wc(b, 1).empty()) << "the receive still waits";

    /* The receive takes the next good one; with none posted, a datagram
     * is dropped and counted. */
    ASSERT_EQ(send(a, ah_to_b, b, 3, a.buf, 4), 0);
    EXPECT_EQ(wait_wc(b, 1).size(), 1u);
    const uint64_t dropped = counter(b, &cna_rdma_port_counters::ud_dropped);
    ASSERT_EQ(send(a, ah_to_b, b, 4, a.buf, 4), 0);
    for (int i = 0; i < 200 && counter(b, &cna_rdma_port_counters::ud_dropped) == dropped; i++)
        rte_delay_ms(5);
    EXPECT_EQ(counter(b, &cna_rdma_port_counters::ud_dropped), dropped + 1);
    EXPECT_EQ(wait_wc(a, 2).size(), 2u);
    EXPECT_EQ(state(b), IBV_QPS_RTS) << "drops are no error of the QP";
}

TEST_F(Datagrams, ASendBeyondTheMtuStopsOnlyTheSendQueueUntilRtsAgain)
{
    ASSERT_EQ(send(a, ah_to_b, b, 1, a.buf, 1025), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 2, a.buf, 10), 0);
    auto tx = wait_wc(a, 2);
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].status, IBV_WC_LOC_LEN_ERR);
    EXPECT_EQ(tx[0].wr_id, 1u);
    EXPECT_EQ(tx[1].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(tx[1].wr_id, 2u);
    EXPECT_EQ(state(a), IBV_QPS_SQE);

    /* In SQE, a still receives. */
    ASSERT_EQ(recv(a, 3, a.buf, GRH + 64), 0);
    ASSERT_EQ(send(b, ah_to_a, a, 4, b.buf, 16), 0);
    auto rx = wait_wc(a, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rx[0].byte_len, GRH + 16);
    EXPECT_EQ(wait_wc(b, 1).size(), 1u);

    /* Back to RTS, naming the state the device moved it to, it sends
     * again. */
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.cur_qp_state = IBV_QPS_SQE;
    ASSERT_EQ(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_CUR_STATE), 0);
    ASSERT_EQ(recv(b, 5, b.buf, GRH + 1024), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 6, a.buf, 1024), 0);
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
    rx = wait_wc(b, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS);
}

TEST_F(Datagrams, AReceiveTooSmallFailsAloneAndTheQpGoesOn)
{
    ASSERT_EQ(recv(b, 1, b.buf, GRH + 10), 0);
    ASSERT_EQ(recv(b, 2, b.buf, GRH + 100), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 3, a.buf, 100), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 4, a.buf, 100), 0);
    auto rx = wait_wc(b, 2);
    ASSERT_EQ(rx.size(), 2u);
    EXPECT_EQ(rx[0].status, IBV_WC_LOC_LEN_ERR);
    EXPECT_EQ(rx[0].wr_id, 1u);
    EXPECT_EQ(rx[1].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rx[1].wr_id, 2u);
    EXPECT_EQ(state(b), IBV_QPS_RTS);
    EXPECT_EQ(wait_wc(a, 2).size(), 2u);
}

TEST_F(Datagrams, WhatADatagramQpRefusesIsVerbs)
{
    ibv_send_wr* bad;
    ibv_sge sge{reinterpret_cast<uint64_t>(a.buf), 8, a.mr->lkey};
    ibv_send_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.wr.ud.ah = ah_to_b;
    EXPECT_EQ(cna_rdma_post_send(a.qp, &wr, &bad), EINVAL) << "a UD QP sends SENDs only";
    EXPECT_EQ(bad, &wr);
    wr.opcode = IBV_WR_SEND;
    wr.wr.ud.ah = nullptr;
    EXPECT_EQ(cna_rdma_post_send(a.qp, &wr, &bad), EINVAL) << "no address handle";

    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(cna_rdma_query_qp(a.qp, &attr, IBV_QP_QKEY, &init), 0);
    EXPECT_EQ(attr.qkey, QKEY);
    EXPECT_EQ(init.qp_type, IBV_QPT_UD);
    attr = {};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = 14;
    EXPECT_EQ(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL) << "no ACK timeout on UD";
    attr = {};
    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE), 0);
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    EXPECT_EQ(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL)
        << "INIT needs the Q_Key";

    ibv_ah_attr ah{};
    ah.port_num = 1;
    EXPECT_EQ(cna_rdma_create_ah(a.pd, &ah), nullptr) << "RoCE needs a GRH";
    EXPECT_EQ(errno, EINVAL);
    ah.is_global = 1;
    ah.grh.dgid = b.gid;
    ah.port_num = 2;
    EXPECT_EQ(cna_rdma_create_ah(a.pd, &ah), nullptr);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(cna_rdma_dealloc_pd(a.pd), EBUSY) << "the PD's address handle";
}

/* Each side's GSI QP in the place of its UD QP, which stays beside it. */
class Gsi : public Datagrams {
protected:
    static constexpr uint32_t GSI_QKEY = 0x80010000;
    static constexpr uint32_t MAD = 256;

    void SetUp() override
    {
        Datagrams::SetUp();
        if (HasFatalFailure())
            return;
        for (Side* s : {&a, &b}) {
            ibv_qp* gsi = cna_rdma_create_gsi_qp(s->pd, &init(*s));
            ASSERT_NE(gsi, nullptr) << strerror(errno);
            ud[s == &b] = std::exchange(s->qp, gsi);
            ASSERT_NO_FATAL_FAILURE(to_rts(*s, GSI_QKEY));
        }
    }

    void TearDown() override
    {
        for (Side* s : {&a, &b}) {
            if (ibv_qp* own = ud[s == &b]; own != nullptr) {
                EXPECT_EQ(cna_rdma_destroy_qp(s->qp), 0);
                s->qp = own;
            }
        }
        Datagrams::TearDown();
    }

    ibv_qp_init_attr& init(Side& s)
    {
        attr = {};
        attr.send_cq = attr.recv_cq = s.cq;
        attr.qp_type = IBV_QPT_UD;
        attr.cap.max_send_wr = attr.cap.max_recv_wr = 16;
        attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
        return attr;
    }

    ibv_qp* ud[2] = {};
    ibv_qp_init_attr attr{};
};

TEST_F(Gsi, OnePerPortAtQpn1)
{
    EXPECT_EQ(a.qp->qp_num, 1u);
    EXPECT_EQ(b.qp->qp_num, 1u);
    errno = 0;
    EXPECT_EQ(cna_rdma_create_gsi_qp(a.pd, &init(a)), nullptr);
    EXPECT_EQ(errno, EBUSY);
    ibv_qp_init_attr rc = init(a);
    rc.qp_type = IBV_QPT_RC;
    EXPECT_EQ(cna_rdma_create_gsi_qp(a.pd, &rc), nullptr);
    EXPECT_EQ(errno, EINVAL);
}

TEST_F(Gsi, AMadArrivesFromQpn1AndWhatIsNotAMadIsCounted)
{
    auto mad = pattern(MAD, 9);
    mad[0] = 1; /* base version */
    std::copy(mad.begin(), mad.end(), a.buf);
    const uint64_t dropped = counter(b, &cna_rdma_port_counters::mads_dropped);
    ASSERT_EQ(recv(b, 50, b.buf, GRH + 1024), 0);
    /* The WR's Q_Key is not the GSI's: the adapter sends the GSI's. */
    ASSERT_EQ(send(a, ah_to_b, b, 1, a.buf, MAD), 0);
    auto rx = wait_wc(b, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(rx[0].src_qp, 1u);
    EXPECT_EQ(rx[0].qp_num, 1u) << "completions name the GSI QP as its qp_num does";
    EXPECT_EQ(rx[0].byte_len, GRH + MAD);
    EXPECT_TRUE(std::equal(mad.begin(), mad.end(), b.buf + GRH));
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].qp_num, 1u);

    ASSERT_EQ(recv(b, 51, b.buf, GRH + 1024), 0);
    ASSERT_EQ(send(a, ah_to_b, b, 2, a.buf, MAD / 2), 0);
    ASSERT_EQ(wait_wc(a, 1).size(), 1u);
    for (int i = 0; i < 200 && counter(b, &cna_rdma_port_counters::mads_dropped) == dropped; i++)
        rte_delay_us_sleep(1000);
    EXPECT_EQ(counter(b, &cna_rdma_port_counters::mads_dropped), dropped + 1);
    EXPECT_TRUE(wait_wc(b, 1).empty()) << "the receive stays posted";
}

} // namespace
