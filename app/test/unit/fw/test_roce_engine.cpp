/* SPDX-License-Identifier: BSD-3-Clause
 * The RoCE firmware end to end: two PFs on cabled ports, each driven by the
 * tests' RDMA driver, one RC QP each, connected to the other. Every opcode
 * with its payload checked byte for byte across MTU boundaries and the PSN
 * wrap; the error paths (a wrong rkey, no receive posted, a WQE the
 * storms refuse, a QP moved to ERR) with the completions and states verbs
 * promise; CQ notification; ramrods refused; and L2 on the same ports
 * carrying on.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "roce_fixture.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/responder.h"
#include "roce/transport.h"

/* WQEs are written as designated initializers naming only what each
 * operation uses: the rest is zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::rdma;
using roce::Responder;

TEST_F(RoceEngine, SendsAcrossTheMtuBoundaries)
{
    connect();
    uint64_t id = 1;
    for (uint32_t len : {0u, 1u, 1023u, 1024u, 1025u, 4096u, 65536u, 100000u})
        send_and_check(len, id++);
    EXPECT_EQ(a->rdma.requester_context(QP).sq_cons, 8u);
    EXPECT_EQ(b->rdma.responder_context(QP).msn, 8u);
}

TEST_F(RoceEngine, PsnsWrapAround)
{
    FakeRdma::ConnectOptions oa;
    oa.sq_psn = 0xfffff0;
    connect(oa);
    send_and_check(64 * 1024, 1); /* 64 packets: across the wrap */
    send_and_check(100, 2);
    EXPECT_EQ(a->rdma.requester_context(QP).sq_psn, (0xfffff0u + 65) & 0xffffff);
    EXPECT_EQ(b->rdma.responder_context(QP).rq_psn, (0xfffff0u + 65) & 0xffffff);
}

TEST_F(RoceEngine, InlineSendWithImmediateAndSolicited)
{
    connect();
    auto data = pattern(40, 9);
    b->rdma.post_recv(QP, 7, {b->sge(0, 4096)});
    a->rdma.post_send(QP,
                      SqWqe{.wr_id = 8, .opcode = uint8_t(SqOpcode::send_with_imm),
                            .flags = sq_wqe::SIGNALED | sq_wqe::INLINE | sq_wqe::SOLICITED, .length = 40,
                            .imm_data = 0x11223344},
                      {}, data);
    auto rx = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, uint8_t(CqeStatus::success));
    EXPECT_EQ(rx[0].byte_len, 40u);
    EXPECT_EQ(rx[0].imm_data, 0x11223344u);
    EXPECT_EQ(rx[0].flags & (cqe::WITH_IMM | cqe::SOLICITED), cqe::WITH_IMM | cqe::SOLICITED);
    EXPECT_EQ(std::memcmp(b->buf.va, data.data(), 40), 0);
    EXPECT_EQ(a->rdma.wait_cq(CQ, 1).size(), 1u);
}

TEST_F(RoceEngine, WritesAndReadsAcrossTheMtuBoundaries)
{
    connect();
    uint64_t id = 1;
    for (uint32_t len : {1u, 1023u, 1024u, 1025u, 65536u}) {
        auto data = pattern(len, static_cast<uint8_t>(id));
        std::memcpy(a->buf.va, data.data(), len);
        std::memset(b->buf.va + 4096, 0, len + 1);
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = id, .opcode = uint8_t(SqOpcode::rdma_write), .flags = sq_wqe::SIGNALED,
                                .length = len, .rkey = b->key, .remote_addr = b->va(4096)},
                          {a->sge(0, len)});
        auto tx = a->rdma.wait_cq(CQ, 1);
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(tx[0].opcode, uint8_t(CqeOpcode::rdma_write));
        EXPECT_EQ(std::memcmp(b->buf.va + 4096, data.data(), len), 0) << len;
        EXPECT_EQ(b->buf.va[4096 + len], 0);

        /* ...and back with a READ, into another place. */
        std::memset(a->buf.va + 128 * 1024, 0, len);
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = id + 100, .opcode = uint8_t(SqOpcode::rdma_read), .flags = sq_wqe::SIGNALED,
                                .length = len, .rkey = b->key, .remote_addr = b->va(4096)},
                          {a->sge(128 * 1024, len)});
        tx = a->rdma.wait_cq(CQ, 1);
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(tx[0].opcode, uint8_t(CqeOpcode::rdma_read));
        EXPECT_EQ(std::memcmp(a->buf.va + 128 * 1024, data.data(), len), 0) << len;
        id++;
    }
    EXPECT_TRUE(b->rdma.poll_cq(CQ).empty()) << "WRITE and READ take no receive";
}

TEST_F(RoceEngine, WriteWithImmediateConsumesAReceive)
{
    connect();
    auto data = pattern(3000, 5);
    std::memcpy(a->buf.va, data.data(), data.size());
    b->rdma.post_recv(QP, 77, {b->sge(0, 16)});
    a->rdma.post_send(QP,
                      SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::rdma_write_with_imm), .flags = sq_wqe::SIGNALED,
                            .length = 3000, .imm_data = 0xabcdef01, .rkey = b->key, .remote_addr = b->va(8192)},
                      {a->sge(0, 3000)});
    auto rx = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, uint8_t(CqeStatus::success));
    EXPECT_EQ(rx[0].opcode, uint8_t(CqeOpcode::recv_rdma_with_imm));
    EXPECT_EQ(rx[0].wr_id, 77u);
    EXPECT_EQ(rx[0].byte_len, 3000u);
    EXPECT_EQ(rx[0].imm_data, 0xabcdef01u);
    EXPECT_EQ(std::memcmp(b->buf.va + 8192, data.data(), data.size()), 0);
    EXPECT_EQ(a->rdma.wait_cq(CQ, 1).size(), 1u);
}

TEST_F(RoceEngine, AtomicsExecuteOnceOnHostMemory)
{
    connect();
    uint64_t* target = b->buf.at<uint64_t>(512);
    *target = 100;
    uint64_t* result = a->buf.at<uint64_t>(0);
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::atomic_fetch_add), .flags = sq_wqe::SIGNALED,
                                .length = 8, .rkey = b->key, .remote_addr = b->va(512), .compare_add = 5},
                      {a->sge(0, 8)});
    auto tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
    EXPECT_EQ(tx[0].opcode, uint8_t(CqeOpcode::atomic_fetch_add));
    EXPECT_EQ(*result, 100u);
    EXPECT_EQ(*target, 105u);

    /* Compare and swap: a miss leaves the value, a hit swaps it. */
    for (uint64_t compare : {7ull, 105ull}) {
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = 2, .opcode = uint8_t(SqOpcode::atomic_cmp_swap), .flags = sq_wqe::SIGNALED,
                                .length = 8, .rkey = b->key, .remote_addr = b->va(512), .compare_add = compare,
                                .swap = 999},
                          {a->sge(8, 8)});
        tx = a->rdma.wait_cq(CQ, 1);
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(*a->buf.at<uint64_t>(8), 105u);
    }
    EXPECT_EQ(*target, 999u);

    /* A misaligned target is an invalid request. */
    a->rdma.post_send(QP, SqWqe{.wr_id = 3, .opcode = uint8_t(SqOpcode::atomic_fetch_add), .flags = sq_wqe::SIGNALED,
                                .length = 8, .rkey = b->key, .remote_addr = b->va(513), .compare_add = 1},
                      {a->sge(0, 8)});
    tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::local_qp_operation_error)) << "refused before it leaves";
}

TEST_F(RoceEngine, AWrongRkeyIsARemoteAccessErrorAndBothQpsGoToErr)
{
    connect();
    b->rdma.post_recv(QP, 5, {b->sge(0, 64)});
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::rdma_write), .flags = sq_wqe::SIGNALED,
                                .length = 64, .rkey = b->key ^ 0x1, .remote_addr = b->va(0)},
                      {a->sge(0, 64)});
    a->rdma.post_send(QP, SqWqe{.wr_id = 2, .opcode = uint8_t(SqOpcode::send), .length = 8}, {a->sge(0, 8)});
    auto tx = a->rdma.wait_cq(CQ, 2);
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].wr_id, 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::remote_access_error));
    EXPECT_EQ(tx[1].wr_id, 2u);
    EXPECT_EQ(tx[1].status, uint8_t(CqeStatus::work_request_flushed)) << "unsignaled, yet flushed with a CQE";
    EXPECT_EQ(a->rdma.state(QP), QpState::err);
    EXPECT_EQ(b->rdma.state(QP), QpState::err);
    auto rx = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, uint8_t(CqeStatus::work_request_flushed));
    ASSERT_TRUE(wait_roce_event(b->drv, RdmaEvent::qp_access_error, QP));
    /* Posting on a QP in ERR flushes. */
    a->rdma.post_send(QP, SqWqe{.wr_id = 3, .opcode = uint8_t(SqOpcode::send), .length = 0});
    tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::work_request_flushed));
}

TEST_F(RoceEngine, NoReceivePostedIsRnrRetriedThenExceeded)
{
    FakeRdma::ConnectOptions oa;
    oa.rnr_retry = 2;
    connect(oa);
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                .length = 16},
                      {a->sge(0, 16)});
    auto tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::rnr_retry_exceeded));
    EXPECT_EQ(a->rdma.requester_context(QP).rnr_naks_received, 3u) << "the first try and two retries";
    EXPECT_EQ(b->rdma.responder_context(QP).rnr_naks_sent, 3u);
    EXPECT_EQ(a->rdma.state(QP), QpState::err);
    EXPECT_EQ(b->rdma.state(QP), QpState::rts) << "RNR is no error of the responder's";
}

TEST_F(RoceEngine, AReceivePostedLateIsTakenOnTheRetry)
{
    FakeRdma::ConnectOptions oa;
    oa.rnr_retry = 7; /* forever */
    connect(oa);
    auto data = pattern(2000, 1);
    std::memcpy(a->buf.va, data.data(), data.size());
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                .length = 2000},
                      {a->sge(0, 2000)});
    ASSERT_TRUE(wait_until([&] { return b->rdma.responder_context(QP).rnr_naks_sent >= 2; }));
    b->rdma.post_recv(QP, 9, {b->sge(0, 4096)});
    auto rx = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].byte_len, 2000u);
    EXPECT_EQ(std::memcmp(b->buf.va, data.data(), data.size()), 0);
    EXPECT_EQ(a->rdma.wait_cq(CQ, 1).size(), 1u);
}

TEST_F(RoceEngine, AReceiveTooSmallFailsBothSides)
{
    connect();
    b->rdma.post_recv(QP, 5, {b->sge(0, 100)});
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                .length = 200},
                      {a->sge(0, 200)});
    auto rx = b->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, uint8_t(CqeStatus::local_length_error));
    auto tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::remote_invalid_request));
}

TEST_F(RoceEngine, AnArmedCqNotifiesOnce)
{
    connect();
    const uint16_t before = b->rdma.cnq_prod();
    b->rdma.arm_cq(CQ);
    send_and_check(10, 1);
    ASSERT_TRUE(wait_until([&] { return b->rdma.cnq_prod() == uint16_t(before + 1); }));
    EXPECT_EQ(b->rdma.cnq_entry(before), 0xc0000000ull + CQ);
    send_and_check(10, 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(b->rdma.cnq_prod(), uint16_t(before + 1)) << "not armed again";
    b->rdma.arm_cq(CQ, true);
    send_and_check(10, 3); /* not solicited */
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(b->rdma.cnq_prod(), uint16_t(before + 1)) << "armed for solicited completions only";
}

TEST_F(RoceEngine, ModifyToErrFlushesEveryPostedReceive)
{
    connect();
    for (uint64_t i = 0; i < 3; i++)
        b->rdma.post_recv(QP, 50 + i, {b->sge(0, 64)});
    ModifyQpRamrodData d{};
    d.qp_id = QP;
    d.cur_state = uint8_t(QpState::rts);
    d.new_state = uint8_t(QpState::err);
    ASSERT_EQ(b->rdma.modify_qp(d), FwReturn::ok);
    auto rx = b->rdma.wait_cq(CQ, 3);
    ASSERT_EQ(rx.size(), 3u);
    for (uint64_t i = 0; i < 3; i++) {
        EXPECT_EQ(rx[i].wr_id, 50 + i);
        EXPECT_EQ(rx[i].status, uint8_t(CqeStatus::work_request_flushed));
    }
    /* ERR -> RESET -> INIT: usable again. */
    d.cur_state = uint8_t(QpState::err);
    d.new_state = uint8_t(QpState::reset);
    EXPECT_EQ(b->rdma.modify_qp(d), FwReturn::ok);
    EXPECT_EQ(b->rdma.state(QP), QpState::reset);
}

TEST_F(RoceEngine, RamrodsRefuseWhatIsWrong)
{
    EXPECT_EQ(a->rdma.init(), FwReturn::bad_state) << "initialised twice";
    ASSERT_EQ(a->rdma.create_qp(QP), FwReturn::ok);
    EXPECT_EQ(a->rdma.create_qp(QP), FwReturn::bad_state);
    FakeRdma::QpOptions o;
    o.sq_cq = 9;
    EXPECT_EQ(a->rdma.create_qp(4, o), FwReturn::not_found) << "no such CQ";
    o = {};
    o.sq_size = 48;
    EXPECT_EQ(a->rdma.create_qp(4, o), FwReturn::invalid_param) << "not a power of two";
    EXPECT_EQ(a->rdma.create_qp(FakeDriver::RDMA_QPS, {}), FwReturn::no_resource) << "beyond the ILT";

    ModifyQpRamrodData d{};
    d.qp_id = QP;
    d.cur_state = uint8_t(QpState::reset);
    d.new_state = uint8_t(QpState::rts);
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::invalid_param) << "RESET -> RTS";
    d.cur_state = uint8_t(QpState::init);
    d.new_state = uint8_t(QpState::rtr);
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::bad_state) << "the QP is not in INIT";
    d.cur_state = uint8_t(QpState::rts);
    d.new_state = uint8_t(QpState::err);
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::ok) << "to ERR whatever the driver believes the state is";
    d.new_state = uint8_t(QpState::reset);
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::ok) << "and to RESET";
    d.cur_state = uint8_t(QpState::reset);
    d.new_state = uint8_t(QpState::init);
    d.modify = qp_modify::RETRY_CNT;
    d.retry_cnt = 8;
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::invalid_param) << "retry_cnt is 3 bits";
    d.modify = 0;
    ASSERT_EQ(a->rdma.modify_qp(d), FwReturn::ok);
    d.cur_state = uint8_t(QpState::init);
    d.new_state = uint8_t(QpState::rtr);
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::invalid_param) << "RTR without a path and an MTU";
    d.modify = qp_modify::PATH_MTU;
    d.path_mtu = 1000;
    EXPECT_EQ(a->rdma.modify_qp(d), FwReturn::invalid_param) << "not an IB MTU";

    EXPECT_EQ(a->rdma.destroy_cq(CQ), FwReturn::bad_state) << "a QP completes on it";
    EXPECT_EQ(a->rdma.close(), FwReturn::bad_state) << "objects left";
    uint64_t counts = 1;
    EXPECT_EQ(a->rdma.destroy_qp(QP, &counts), FwReturn::ok);
    EXPECT_EQ(counts, 0u);
    EXPECT_EQ(a->rdma.destroy_qp(QP), FwReturn::not_found);
    EXPECT_EQ(a->rdma.destroy_cq(CQ), FwReturn::ok);
    EXPECT_EQ(a->rdma.dereg_mr(1), FwReturn::ok);
    EXPECT_EQ(a->rdma.close(), FwReturn::ok);
    EXPECT_EQ(a->rdma.create_cq(CQ), FwReturn::bad_state) << "RDMA closed";
}

TEST_F(RoceEngine, ALossyWireIsRecoveredByRetransmission)
{
    connect();
    adapter->control().set_roce_loss(0, 100'000); /* 10% each way */
    adapter->control().set_roce_loss(1, 100'000);
    for (uint64_t round = 1; round <= 3; round++) {
        send_and_check(64 * 1024, round);
        auto data = pattern(64 * 1024, static_cast<uint8_t>(round + 50));
        std::copy(data.begin(), data.end(), a->buf.va);
        a->rdma.post_send(QP, SqWqe{.wr_id = 10 + round, .opcode = uint8_t(SqOpcode::rdma_write),
                                    .length = uint32_t(data.size()), .rkey = b->key, .remote_addr = b->va(65536)},
                          {a->sge(0, uint32_t(data.size()))});
        std::memset(a->buf.va + 131072, 0, data.size());
        a->rdma.post_send(QP, SqWqe{.wr_id = 20 + round, .opcode = uint8_t(SqOpcode::rdma_read),
                                    .flags = sq_wqe::SIGNALED, .length = uint32_t(data.size()), .rkey = b->key,
                                    .remote_addr = b->va(65536)},
                          {a->sge(131072, uint32_t(data.size()))});
        auto tx = a->rdma.wait_cq(CQ, 1, std::chrono::seconds(10));
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(tx[0].wr_id, 20 + round);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_TRUE(std::equal(data.begin(), data.end(), b->buf.va + 65536)) << "the WRITE";
        EXPECT_TRUE(std::equal(data.begin(), data.end(), a->buf.va + 131072)) << "the READ back";
    }
    const auto lost = adapter->control().port_counters(0).wire_roce_lost +
                      adapter->control().port_counters(1).wire_roce_lost;
    EXPECT_GT(lost, 20u);
    EXPECT_GT(a->rdma.requester_context(QP).retransmitted, 0u);
    EXPECT_EQ(a->rdma.state(QP), QpState::rts);
    EXPECT_EQ(b->rdma.state(QP), QpState::rts);
}

TEST_F(RoceEngine, PipelinedReadsCompleteOverALossyWire)
{
    /* Sixteen READs in flight at a time: a lost response makes the
     * requester ask again while answers are on their way, and the
     * responder must neither answer twice nor refuse the next READ. */
    FakeRdma::ConnectOptions o;
    o.max_rd_atomic = 16;
    connect(o, o);
    adapter->control().set_roce_loss(0, 100'000);
    adapter->control().set_roce_loss(1, 100'000);
    constexpr uint32_t LEN = 4096, READS = 60;
    const auto data = pattern(BUF / 2, 77);
    std::copy(data.begin(), data.end(), b->buf.va);
    std::memset(a->buf.va, 0, BUF);
    uint32_t done = 0;
    for (uint32_t i = 0; i < READS; i++) {
        const uint32_t off = (i * LEN) % (BUF / 2);
        a->rdma.post_send(QP, SqWqe{.wr_id = i, .opcode = uint8_t(SqOpcode::rdma_read), .flags = sq_wqe::SIGNALED,
                                    .length = LEN, .rkey = b->key, .remote_addr = b->va(off)},
                          {a->sge(off, LEN)});
        if (i - done >= 30) { /* the SQ holds 64 */
            auto tx = a->rdma.wait_cq(CQ, 10, std::chrono::seconds(20));
            ASSERT_GE(tx.size(), 10u);
            for (const auto& c : tx)
                ASSERT_EQ(c.status, uint8_t(CqeStatus::success)) << "READ " << c.wr_id << " vendor error "
                                                                  << int(c.vendor_error);
            done += uint32_t(tx.size());
        }
    }
    auto tx = a->rdma.wait_cq(CQ, READS - done, std::chrono::seconds(20));
    ASSERT_EQ(tx.size(), READS - done);
    for (const auto& c : tx)
        ASSERT_EQ(c.status, uint8_t(CqeStatus::success)) << "READ " << c.wr_id;
    EXPECT_TRUE(std::equal(data.begin(), data.end(), a->buf.va)) << "every byte read back";
    EXPECT_GT(a->rdma.requester_context(QP).retransmitted, 0u);
    EXPECT_EQ(b->rdma.state(QP), QpState::rts);
}

TEST_F(RoceEngine, AQpDestroyedInFlightLeavesNothingBehind)
{
    connect();
    adapter->control().set_roce_loss(0, 300'000); /* keep a long WRITE in flight */
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::rdma_write), .flags = sq_wqe::SIGNALED,
                                .length = 200 * 1024, .rkey = b->key, .remote_addr = b->va(0)},
                      {a->sge(0, 200 * 1024)});
    ASSERT_TRUE(wait_until([&] { return adapter->control().port_counters(0).wire_tx_frames > 10; }));
    uint64_t counts = 0;
    ASSERT_EQ(a->rdma.destroy_qp(QP, &counts), FwReturn::ok);
    EXPECT_EQ(counts >> 32, 0u) << "the WRITE was not retired";
    const uint64_t sent = adapter->control().port_counters(0).wire_tx_frames;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, sent) << "nothing is sent for it any more";
    /* Its memory can go at once: no DMA into it is left. */
    EXPECT_EQ(a->drv.fn().dma_unmap(a->buf.iova, a->buf.len), 0);
    EXPECT_EQ(a->rdma.destroy_cq(CQ), FwReturn::ok);
    EXPECT_EQ(adapter->control().dma_faults(0), 0u);
    EXPECT_TRUE(a->rdma.poll_cq(CQ).empty());
    /* The peer carries on: a new QP on the same ids connects and works. */
    adapter->control().set_roce_loss(0, 0);
    EXPECT_EQ(b->rdma.state(QP), QpState::rts);
}

TEST_F(RoceEngine, ADmaFaultIsAQpFatalEventNotACrash)
{
    connect();
    /* The MR's memory leaves the IOMMU behind the storms' back. */
    ASSERT_EQ(a->drv.fn().dma_unmap(a->buf.iova, a->buf.len), 0);
    a->rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                .length = 64},
                      {a->sge(0, 64)});
    auto tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::fatal));
    EXPECT_EQ(tx[0].vendor_error, uint8_t(RdmaError::dma_fault));
    EXPECT_EQ(a->rdma.state(QP), QpState::err);
    EXPECT_GE(adapter->control().dma_faults(0), 1u);
    ASSERT_TRUE(wait_roce_event(a->drv, RdmaEvent::qp_fatal, QP));
    EXPECT_NE(a->drv.attn_status() & attn::DMA_FAULT, 0u);
}

/* Two PFs of one port (its partitions): the port's switch hands each
 * RoCE frame one sends to the other's RoCE firmware, so their RDMA never
 * touches the cable; L2 still does. */
class RoceOnOnePort : public RoceEngine {
protected:
    void SetUp() override { set_up(EnginePlacement::threads, 2); }
};

TEST_F(RoceOnOnePort, SendsWritesAndReadsBetweenItsPfsStayInTheAdapter)
{
    connect();
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); /* the addresses' announcements are out */
    const uint64_t wire_before = adapter->control().port_counters(0).wire_tx_frames;
    const uint64_t sent_before = roce_stat(*a, offsetof(RoceStats, tx_packets));
    uint64_t id = 1;
    for (uint32_t len : {1u, 1024u, 1025u, 65536u})
        send_and_check(len, id++);
    const uint32_t len = 65536;
    write_then_read(len, id);

    EXPECT_GE(roce_stat(*a, offsetof(RoceStats, tx_packets)) - sent_before, 2u * len / 1024)
        << "a sent its requests";
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, wire_before) << "none of them to the cable";

    /* L2 between the two PFs still goes by the cable: the port has no VFs,
     * so no L2 switching. */
    std::vector<uint8_t> frame(60, 0);
    const auto to = b->drv.mac();
    std::memcpy(frame.data(), to.data(), 6);
    frame[12] = 0x88;
    frame[13] = 0xb5;
    a->drv.send(0, frame);
    EXPECT_TRUE(wait_until([&] { return adapter->control().port_counters(0).wire_tx_frames == wire_before + 1; }));
}

/* The dataplane on the host's threads: each pass is the test's. */
class RoceHostPasses : public RoceEngine {
protected:
    void SetUp() override { set_up(EnginePlacement::host); }

    uint64_t packets_received(Side& s) { return roce_stat(s, offsetof(RoceStats, rx_packets)); }
};

/* A requester posting one WRITE per pass (engine=inline's post_send):
 * the responder holds its ACK back while requests keep coming, up to
 * Responder::ACK_HOLD of them, and a pass that brings none sends it; a
 * SEND's ACK is never held. */
TEST_F(RoceHostPasses, AcksOfWritesCoalesceWhileTheyKeepComing)
{
    /* The passes are the test's, but the time between them is the
     * machine's: a slow one (a sanitizer, a loaded CPU) must not make the
     * requester retransmit, whose duplicates are acknowledged at once. */
    FakeRdma::ConnectOptions patient;
    patient.timeout = 18; /* 1 s */
    connect(patient, patient);
    constexpr uint32_t WRITES = 2 * Responder::ACK_HOLD + 8;
    for (uint32_t i = 0; i < WRITES; i++) {
        a->buf.va[i] = static_cast<uint8_t>(i + 1);
        const bool last = i + 1 == WRITES;
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = i, .opcode = uint8_t(SqOpcode::rdma_write),
                                .flags = uint8_t(last ? sq_wqe::SIGNALED : 0), .length = 1, .rkey = b->key,
                                .remote_addr = b->va(i)},
                          {a->sge(i, 1)});
        ASSERT_TRUE(a->drv.fn().engine_pass(PassCause::doorbell)) << "WRITE " << i;
        EXPECT_EQ(b->buf.va[i], i + 1) << "placed in the pass that sent it";
    }
    EXPECT_EQ(packets_received(*a), 2u) << "one ACK per ACK_HOLD requests while they keep coming";
    EXPECT_TRUE(a->rdma.poll_cq(CQ).empty()) << "the last WRITEs are not acknowledged yet";
    a->drv.fn().engine_pass(PassCause::doorbell);
    EXPECT_EQ(packets_received(*a), 3u) << "a pass without a new request sends the held ACK";
    auto tx = a->rdma.poll_cq(CQ);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].wr_id, WRITES - 1);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
    EXPECT_EQ(b->rdma.responder_context(QP).msn, WRITES);

    /* A SEND's receive completes on the host, which may act on it at
     * once: its ACK goes in the same pass, also right behind a WRITE. */
    for (uint64_t id : {100u, 101u}) {
        const uint64_t acks = packets_received(*a);
        b->rdma.post_recv(QP, id, {b->sge(BUF / 2, 64)});
        a->rdma.post_send(QP, SqWqe{.wr_id = WRITES, .opcode = uint8_t(SqOpcode::rdma_write), .length = 1,
                                    .rkey = b->key, .remote_addr = b->va(0)},
                          {a->sge(0, 1)});
        a->rdma.post_send(QP, SqWqe{.wr_id = id, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                    .length = 8},
                          {a->sge(0, 8)});
        ASSERT_TRUE(a->drv.fn().engine_pass(PassCause::doorbell));
        EXPECT_EQ(packets_received(*a), acks + 1) << "one ACK, for the WRITE and the SEND";
        auto rx = b->rdma.poll_cq(CQ);
        ASSERT_EQ(rx.size(), 1u);
        EXPECT_EQ(rx[0].wr_id, id);
        tx = a->rdma.poll_cq(CQ);
        ASSERT_EQ(tx.size(), 1u) << "the SEND completed in its pass";
        EXPECT_EQ(tx[0].wr_id, id);
    }
}

TEST_F(RoceEngine, L2OnTheSamePortsCarriesOn)
{
    connect();
    send_and_check(5000, 1);
    EXPECT_TRUE(l2_frames(*b).empty()) << "RoCE frames are not L2's";
    auto f = udp4_frame(BCAST, PEER_MAC, 1, 2, 3, 4, 200);
    a->drv.send(0, f);
    auto at_b = l2_wait(*b, 1);
    ASSERT_EQ(at_b.size(), 1u);
    EXPECT_EQ(at_b[0].data, f);
    send_and_check(100, 2);
}

TEST_F(RoceEngine, RoceFramesFromTheHostHaveTheirIcrcChecked)
{
    /* The frames a's RoCE engine builds reach b's over the cable unchecked
     * (they never left the adapter); a RoCE frame a's host sends through
     * its L2 Tx queue is checked like one from outside: a wrong ICRC is
     * dropped and counted, a right one is not. */
    connect();
    send_and_check(3000, 1);
    const std::size_t ICRC_ERRORS = offsetof(RoceStats, icrc_errors), RECEIVED = offsetof(RoceStats, rx_packets);
    EXPECT_EQ(roce_stat(*b, ICRC_ERRORS), 0u);
    const RocePath path = a->path_to(*b);
    constexpr uint32_t PAYLOAD = 16;
    std::vector<uint8_t> f(roce::encap_len(path) + roce::BTH_LEN + PAYLOAD + roce::ICRC_LEN);
    FrameLayout l = roce::write_encap(f.data(), path, roce::BTH_LEN + PAYLOAD + roce::ICRC_LEN);
    roce::write_bth(f.data() + l.l4_off + roce::UDP_HLEN,
                    roce::Bth{.opcode = roce::op::SEND_ONLY, .dest_qp = 0x3ff, .psn = 1}); /* no such QP */
    roce::icrc_insert(f.data(), l);
    auto host_sends = [&](const std::vector<uint8_t>& frame) {
        const uint64_t received = roce_stat(*b, RECEIVED);
        a->drv.send(0, frame);
        return wait_until([&] { return roce_stat(*b, RECEIVED) == received + 1; });
    };
    std::vector<uint8_t> wrong = f;
    wrong[l.l3_end - 1] ^= 0x01;
    ASSERT_TRUE(host_sends(wrong));
    EXPECT_EQ(roce_stat(*b, ICRC_ERRORS), 1u) << "a wrong ICRC";
    ASSERT_TRUE(host_sends(f));
    EXPECT_EQ(roce_stat(*b, ICRC_ERRORS), 1u) << "a right ICRC";
    send_and_check(3000, 2);
    EXPECT_EQ(roce_stat(*b, ICRC_ERRORS), 1u);
}

/* a's RC QP connected to `to`, one SEND: its frame reaches b's L2 queue
 * (b's vport takes unmatched unicast) with the ICRC the sender left
 * pending written, as on every frame seen outside the adapter's RoCE
 * engines. */
void expect_l2_gets_a_right_icrc(Side& a, Side& b, const FakeRdma::Peer& to)
{
    ASSERT_EQ(a.rdma.create_qp(QP), FwReturn::ok);
    ASSERT_EQ(a.rdma.connect(QP, to, {}), FwReturn::ok);
    const uint32_t len = 300;
    a.rdma.post_send(QP, SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                               .length = len},
                     {a.sge(0, len)});
    auto at_b = l2_wait(b, 1);
    ASSERT_GE(at_b.size(), 1u);
    std::vector<uint8_t>& f = at_b[0].data;
    FrameLayout l;
    ASSERT_TRUE(parse_frame(f.data(), static_cast<uint32_t>(f.size()), l));
    ASSERT_TRUE(roce::is_roce(f.data(), l));
    EXPECT_TRUE(roce::icrc_ok(f.data(), l));
}

TEST_F(RoceEngine, ItsFramesReachL2WithTheirIcrcWritten)
{
    /* A path to a MAC no RoCE engine of the peer port owns. */
    FakeRdma::Peer elsewhere = b->peer(QP);
    std::copy(std::begin(PEER_MAC), std::end(PEER_MAC), elsewhere.mac.begin());
    ASSERT_NE(elsewhere.mac, b->rdma.mac());
    expect_l2_gets_a_right_icrc(*a, *b, elsewhere);
}

TEST_F(RoceEngine, ItsFramesReachAPortWithoutRoceWithTheirIcrcWritten)
{
    /* The peer port's RoCE closed (its MR and CQ first): every frame it
     * receives is L2's. */
    const FakeRdma::Peer b_roce = b->peer(QP);
    ASSERT_EQ(b->rdma.dereg_mr(1), FwReturn::ok);
    ASSERT_EQ(b->rdma.destroy_cq(CQ), FwReturn::ok);
    ASSERT_EQ(b->rdma.close(), FwReturn::ok);
    expect_l2_gets_a_right_icrc(*a, *b, b_roce);
}

} // namespace
} // namespace cna::fw::test
