/* SPDX-License-Identifier: BSD-3-Clause
 * The GSI QP (InfiniBand's QP1), a connection manager's: on two cabled
 * ports, a MAD sent from one port's GSI QP arrives at the other's as sent
 * to QPN 1, from QPN 1, with the GSI Q_Key whatever the WQE said; what is
 * not a MAD is dropped and counted, as is a MAD of another partition
 * (P_Key); one GSI QP per port, its Q_Key fixed.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "roce_fixture.h"
#include "roce/encap.h"
#include "roce/transport.h"
#include "roce/icrc.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::rdma;

constexpr uint16_t GSI = 5;
constexpr std::size_t RECV_AT = BUF / 2;

class GsiQp : public RoceEngine {
protected:
    void SetUp() override
    {
        RoceEngine::SetUp();
        for (Side* s : {a.get(), b.get()}) {
            ASSERT_EQ(s->rdma.create_qp(GSI, FakeRdma::QpOptions{.type = QpType::gsi}), FwReturn::ok);
            ASSERT_EQ(s->rdma.datagrams_ready(GSI, GSI_QKEY), FwReturn::ok);
        }
    }

    /* `mad` as a datagram from a's GSI QP to b's QPN 1, with a Q_Key in
     * the WQE that is not the GSI's: the adapter sends the GSI's. */
    void send_from_a(const std::vector<uint8_t>& mad)
    {
        std::copy(mad.begin(), mad.end(), a->buf.va);
        UdAddress to{.dest_qpn = GSI_QPN, .qkey = 0x1234, .path = a->path_to(*b)};
        const auto len = static_cast<uint32_t>(mad.size());
        a->rdma.post_datagram(GSI, SqWqe{.wr_id = 7, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                         .length = len},
                              to, {a->sge(0, len)});
        auto sent = a->rdma.wait_cq(CQ, 1);
        ASSERT_EQ(sent.size(), 1u);
        EXPECT_EQ(sent[0].status, uint8_t(CqeStatus::success));
    }

    static std::vector<uint8_t> mad(uint8_t base_version = MAD_BASE_VERSION, std::size_t len = MAD_SIZE)
    {
        std::vector<uint8_t> m = pattern(len, 3);
        m[0] = base_version;
        return m;
    }
};

TEST_F(GsiQp, AMadGoesToQpn1AndComesFromIt)
{
    EXPECT_EQ(b->rdma.responder_context(GSI).qkey, GSI_QKEY);
    b->rdma.post_recv(GSI, 40, {b->sge(RECV_AT, 4096)});
    const std::vector<uint8_t> sent = mad();
    send_from_a(sent);
    auto got = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, uint8_t(CqeStatus::success));
    EXPECT_EQ(got[0].qp_id, GSI);
    EXPECT_EQ(got[0].src_qp, GSI_QPN) << "a GSI QP sends as QPN 1";
    EXPECT_EQ(got[0].byte_len, GRH_LEN + MAD_SIZE);
    EXPECT_TRUE(std::equal(sent.begin(), sent.end(), b->buf.va + RECV_AT + GRH_LEN));
    EXPECT_EQ(roce_stat(*b, offsetof(RoceStats, mads_dropped)), 0u);
}

TEST_F(GsiQp, WhatIsNotAMadIsDroppedAndCounted)
{
    b->rdma.post_recv(GSI, 40, {b->sge(RECV_AT, 4096)});
    const std::size_t DROPPED = offsetof(RoceStats, mads_dropped);
    const std::vector<std::vector<uint8_t>> not_mads = {mad(MAD_BASE_VERSION, MAD_SIZE - 1),
                                                        mad(MAD_BASE_VERSION, MAD_SIZE + 4), mad(2), {}};
    for (std::size_t i = 0; i < not_mads.size(); i++) {
        send_from_a(not_mads[i]);
        ASSERT_TRUE(wait_until([&] { return roce_stat(*b, DROPPED) == i + 1; })) << "datagram " << i;
    }
    EXPECT_TRUE(b->rdma.poll_cq(CQ).empty()) << "no receive taken";
    send_from_a(mad());
    auto got = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].byte_len, GRH_LEN + MAD_SIZE);
}

TEST_F(GsiQp, AMadOfAnotherPartitionIsDroppedAndCounted)
{
    /* Built by hand and sent through a's L2 Tx queue, as a peer's would
     * come: BTH with the P_Key, DETH, the MAD, the ICRC. */
    auto frame_with_pkey = [&](uint16_t pkey, const std::vector<uint8_t>& m) {
        const RocePath path = a->path_to(*b);
        const uint32_t roce_len = roce::BTH_LEN + roce::DETH_LEN + static_cast<uint32_t>(m.size()) + roce::ICRC_LEN;
        std::vector<uint8_t> f(roce::encap_len(path) + roce_len);
        FrameLayout l = roce::write_encap(f.data(), path, roce_len);
        uint8_t* bth = f.data() + l.l4_off + roce::UDP_HLEN;
        roce::write_bth(bth, roce::Bth{.opcode = roce::op::UD_SEND_ONLY, .pkey = pkey, .dest_qp = GSI_QPN});
        roce::write_deth(bth + roce::BTH_LEN, roce::Deth{.qkey = GSI_QKEY, .src_qp = GSI_QPN});
        std::copy(m.begin(), m.end(), bth + roce::BTH_LEN + roce::DETH_LEN);
        roce::icrc_insert(f.data(), l);
        return f;
    };
    const std::size_t VIOLATIONS = offsetof(RoceStats, pkey_violations), RECEIVED = offsetof(RoceStats, rx_packets);
    b->rdma.post_recv(GSI, 40, {b->sge(RECV_AT, 4096)});
    for (uint16_t pkey : {uint16_t{0x8001}, uint16_t{0x0000}, uint16_t{0x8000}, uint16_t{0x1234}}) {
        const uint64_t received = roce_stat(*b, RECEIVED), violations = roce_stat(*b, VIOLATIONS);
        a->drv.send(0, frame_with_pkey(pkey, mad()));
        ASSERT_TRUE(wait_until([&] { return roce_stat(*b, RECEIVED) == received + 1; })) << std::hex << pkey;
        EXPECT_EQ(roce_stat(*b, VIOLATIONS), violations + 1) << std::hex << pkey;
    }
    EXPECT_TRUE(b->rdma.poll_cq(CQ).empty()) << "no MAD of another partition delivered";
    /* The default partition's limited members are ours to hear (ours is full). */
    const std::vector<uint8_t> m = mad();
    a->drv.send(0, frame_with_pkey(0x7fff, m));
    auto got = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, uint8_t(CqeStatus::success));
    EXPECT_TRUE(std::equal(m.begin(), m.end(), b->buf.va + RECV_AT + GRH_LEN));
    EXPECT_EQ(roce_stat(*b, VIOLATIONS), 4u);
}

TEST_F(GsiQp, OnePerPortItsQkeyFixedAndQpn1NothingWithoutIt)
{
    EXPECT_EQ(a->rdma.create_qp(GSI + 1, FakeRdma::QpOptions{.type = QpType::gsi}), FwReturn::bad_state);
    ModifyQpRamrodData d{};
    d.qp_id = GSI;
    d.cur_state = d.new_state = uint8_t(QpState::rts);
    d.modify = qp_modify::QKEY;
    d.qkey = 0x1234;
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::invalid_param);
    d.qkey = GSI_QKEY;
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::ok) << "the GSI Q_Key again";

    /* Without a GSI QP, a datagram to QPN 1 is for no QP of the port. */
    ASSERT_EQ(b->rdma.destroy_qp(GSI), FwReturn::ok);
    const uint64_t bad = roce_stat(*b, offsetof(RoceStats, bad_packets));
    send_from_a(mad());
    ASSERT_TRUE(wait_until([&] { return roce_stat(*b, offsetof(RoceStats, bad_packets)) == bad + 1; }));
    ASSERT_EQ(b->rdma.create_qp(GSI + 1, FakeRdma::QpOptions{.type = QpType::gsi}), FwReturn::ok)
        << "a port's GSI QP may be made again";
    ASSERT_EQ(b->rdma.datagrams_ready(GSI + 1, GSI_QKEY), FwReturn::ok);
    b->rdma.post_recv(GSI + 1, 41, {b->sge(RECV_AT, 4096)});
    send_from_a(mad());
    auto got = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].qp_id, GSI + 1);
}

} // namespace
} // namespace cna::fw::test
