/* SPDX-License-Identifier: BSD-3-Clause
 * The RoCE firmware's test fixtures: two sides, each driven by the tests'
 * RDMA driver with a CQ and a registered buffer, and what the tests do
 * between them (RoceSides); two PFs on cabled ports (RoceEngine:
 * test_roce_engine.cpp, test_roce_gsi.cpp); two VFs (test_vf_roce.cpp).
 */
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "rdma_side.h"

/* WQEs are written as designated initializers naming only what each
 * operation uses: the rest is zero on purpose. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace cna::fw::test {

using namespace hsi;
using namespace hsi::rdma;
inline constexpr uint16_t QP = 3;
inline constexpr uint16_t CQ = 0;
inline constexpr std::size_t BUF = 256 * 1024;

inline std::vector<uint8_t> pattern(std::size_t len, uint8_t seed)
{
    std::vector<uint8_t> v(len);
    for (std::size_t i = 0; i < len; i++)
        v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
    return v;
}

/* Waits (bounded) for the RoCE asynchronous event `event` of object `id`
 * on the driver's EQ; the events before it are taken with it. */
inline bool wait_roce_event(FakeDriver& drv, RdmaEvent event, uint64_t id)
{
    bool seen = false;
    return wait_until([&] {
        for (const EventRingElement& e : drv.take_async_events())
            seen |= e.protocol_id == uint8_t(ProtocolId::roce) && e.opcode == uint8_t(event) && e.data == id;
        return seen;
    });
}

/* The side's L2 frames on `queue` but the peer port's announcements of
 * its addresses (ARP, IPv6 neighbour discovery), which come as its
 * link comes up. */
inline std::vector<FakeDriver::RxFrame> l2_frames(Side& s, uint16_t queue = 0)
{
    std::vector<FakeDriver::RxFrame> frames = s.drv.rx_poll(queue);
    std::erase_if(frames, [](const FakeDriver::RxFrame& f) {
        const uint16_t type = f.data.size() >= 14 ? uint16_t(f.data[12] << 8 | f.data[13]) : 0;
        return type == 0x0806 || (type == 0x86dd && f.data.size() > 20 && f.data[20] == 58);
    });
    return frames;
}

/* l2_frames until there are `count` of them, or 2 s went by. */
inline std::vector<FakeDriver::RxFrame> l2_wait(Side& s, std::size_t count)
{
    std::vector<FakeDriver::RxFrame> frames;
    wait_until([&] {
        for (FakeDriver::RxFrame& f : l2_frames(s))
            frames.push_back(std::move(f));
        return frames.size() >= count;
    });
    return frames;
}

/* Two sides, each with RDMA up, a CQ and a registered buffer, and what
 * the tests do between them over one RC QP each. */
class RoceSides : public ::testing::Test {
protected:
    /* RDMA up on a side whose function is ready for it, with CQ and the
     * buffer registered as key 1. */
    static void rdma_up(Side& s)
    {
        ASSERT_EQ(s.rdma.init(), FwReturn::ok);
        ASSERT_EQ(s.rdma.create_cq(CQ), FwReturn::ok);
        s.buf = s.drv.alloc(BUF);
        FwReturn rc;
        s.key = s.rdma.reg_mr(1, s.buf, 0, BUF, access::ALL, 1, &rc);
        ASSERT_EQ(rc, FwReturn::ok);
    }

    void connect(FakeRdma::ConnectOptions oa = {}, FakeRdma::ConnectOptions ob = {})
    {
        ASSERT_EQ(a->rdma.create_qp(QP), FwReturn::ok);
        ASSERT_EQ(b->rdma.create_qp(QP), FwReturn::ok);
        /* Each side's receive PSN is the other's send PSN. */
        ob.rq_psn = oa.sq_psn;
        oa.rq_psn = ob.sq_psn;
        ASSERT_EQ(a->rdma.connect(QP, b->peer(QP), oa), FwReturn::ok);
        ASSERT_EQ(b->rdma.connect(QP, a->peer(QP), ob), FwReturn::ok);
    }

    /* One SEND of `len` bytes from a to b: the receive and the send
     * complete, the bytes arrive. */
    void send_and_check(uint32_t len, uint64_t id)
    {
        auto data = pattern(len, static_cast<uint8_t>(id));
        std::copy(data.begin(), data.end(), a->buf.va);
        std::memset(b->buf.va, 0, len + 64);
        b->rdma.post_recv(QP, 1000 + id, {b->sge(0, BUF / 2)});
        a->rdma.post_send(QP, SqWqe{.wr_id = id, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                    .length = len},
                          {a->sge(0, len)});
        auto rx = b->rdma.wait_cq(CQ, 1);
        auto tx = a->rdma.wait_cq(CQ, 1);
        ASSERT_EQ(rx.size(), 1u) << len;
        ASSERT_EQ(tx.size(), 1u) << len;
        EXPECT_EQ(rx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(rx[0].opcode, uint8_t(CqeOpcode::recv));
        EXPECT_EQ(rx[0].byte_len, len);
        EXPECT_EQ(rx[0].wr_id, 1000 + id);
        EXPECT_EQ(rx[0].flags & cqe::REQUESTER, 0);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(tx[0].opcode, uint8_t(CqeOpcode::send));
        EXPECT_EQ(tx[0].wr_id, id);
        EXPECT_TRUE(std::equal(data.begin(), data.end(), b->buf.va)) << len;
        EXPECT_EQ(b->buf.va[len], 0) << "nothing past the message";
    }

    /* A WRITE of `len` bytes from a into b's buffer at 4 KiB, then a READ
     * of them back into a's at 128 KiB, posted together: both complete
     * and the bytes went there and back. */
    void write_then_read(uint32_t len, uint64_t id)
    {
        auto data = pattern(len, static_cast<uint8_t>(id));
        std::memcpy(a->buf.va, data.data(), len);
        std::memset(a->buf.va + 128 * 1024, 0, len);
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = id, .opcode = uint8_t(SqOpcode::rdma_write), .flags = sq_wqe::SIGNALED,
                                .length = len, .rkey = b->key, .remote_addr = b->va(4096)},
                          {a->sge(0, len)});
        a->rdma.post_send(QP,
                          SqWqe{.wr_id = id + 1, .opcode = uint8_t(SqOpcode::rdma_read), .flags = sq_wqe::SIGNALED,
                                .length = len, .rkey = b->key, .remote_addr = b->va(4096)},
                          {a->sge(128 * 1024, len)});
        auto tx = a->rdma.wait_cq(CQ, 2);
        ASSERT_EQ(tx.size(), 2u);
        EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(tx[1].status, uint8_t(CqeStatus::success));
        EXPECT_EQ(std::memcmp(b->buf.va + 4096, data.data(), len), 0) << "the WRITE landed";
        EXPECT_EQ(std::memcmp(a->buf.va + 128 * 1024, data.data(), len), 0) << "the READ brought it back";
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<Side> a, b;
};

class RoceEngine : public RoceSides {
protected:
    void SetUp() override { set_up(EnginePlacement::threads); }

    /* The sides are PFs 0 and 1, on the cable's two ports; with
     * pfs_per_port 2, PFs 0 and 2, both on port 0, and PF 1 holds up
     * port 1, the cable's other end. */
    void set_up(EnginePlacement placement, uint32_t pfs_per_port = 1)
    {
        AdapterConfig config = cabled_ports("roce");
        config.pfs_per_port = pfs_per_port;
        config.engine_placement = placement;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
        a = std::make_unique<Side>(*adapter, 0);
        b = std::make_unique<Side>(*adapter, pfs_per_port == 1 ? 1 : 2);
        /* A cable's link comes up once both ends are up. */
        ASSERT_EQ(bring_up_l2(a->drv, L2Setup{}), "");
        ASSERT_EQ(bring_up_l2(b->drv, L2Setup{}), "");
        if (pfs_per_port > 1) {
            cable_end = std::make_unique<FakeDriver>(*adapter, 1);
            ASSERT_EQ(bring_up_l2(*cable_end, L2Setup{}), "");
        }
        for (Side* s : {a.get(), b.get()}) {
            ASSERT_TRUE(wait_link(s->drv));
            rdma_up(*s);
        }
    }

    /* A RoceStats counter of the side's port, as the storms keep it. */
    static uint64_t roce_stat(Side& s, std::size_t field)
    {
        return s.drv.rd(reg::STORM_RAM_BASE + iro::roce_stats(s.drv.pf()) + field);
    }

    std::unique_ptr<FakeDriver> cable_end; /* port 1's PF, when both sides are on port 0 */
};

} // namespace cna::fw::test

#pragma GCC diagnostic pop
