/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA on VFs: each VF has its own RDMA slowpath (SPQ, EQ, ILT through its
 * BAR0), RoCE firmware and DPI page. Two VFs of one port talk RC through the
 * port's switch, never on the wire; a VF's reset mid-transfer leaves its
 * peer's QP to retry and fail; its RDMA events come on its own EQ; its
 * ramrods stay within its grant, its own memory and the MAC its PF gave
 * it; a VF breaking its SPQ's protocol is malicious.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "roce_fixture.h"

/* WQEs are written as designated initializers naming only what each
 * operation uses: the rest is zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace cna::fw::test {
namespace {

namespace iov = hsi::iov;

constexpr uint32_t EQ_SB = 2;  /* of a VF's four: L2 keeps 0 and 1 */
constexpr uint16_t CNQ_SB = 3;

/* Sides a and b are VFs 0 and 1 of PF 0, on port 0, the cable's other end
 * PF 1. */
class VfRoce : public RoceSides {
protected:
    void SetUp() override
    {
        adapter = Adapter::create(cabled_ports("vfroce"), nullptr);
        ASSERT_NE(adapter, nullptr);
        pf = std::make_unique<FakeDriver>(*adapter, 0);
        peer = std::make_unique<FakeDriver>(*adapter, 1);
        ASSERT_EQ(bring_up_l2(*pf, L2Setup{}), "");
        ASSERT_EQ(bring_up_l2(*peer, L2Setup{}), "");
        ASSERT_TRUE(wait_link(*pf));
        pf->wr(reg::IOV_NUM_VFS, 2);
        for (uint32_t vf = 0; vf < 2; vf++) {
            pf->wr(reg::IOV_VF_SELECT, vf);
            pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
        }
        a = std::make_unique<Side>(*adapter, *pf, 0, CNQ_SB);
        b = std::make_unique<Side>(*adapter, *pf, 1, CNQ_SB);
        for (Side* s : {a.get(), b.get()}) {
            /* The MAC its PF gives it, on its vport: its RoCE's address. */
            ASSERT_EQ(s->drv.vport_start(0), FwReturn::ok);
            ASSERT_EQ(s->drv.filter(eth::FilterOpcode::add, eth::FilterType::mac, 0, s->drv.mac().data()),
                      FwReturn::ok);
            ASSERT_EQ(s->drv.start_vf_slowpath(EQ_SB), FwReturn::ok);
            rdma_up(*s);
        }
    }

    uint64_t wire_tx() { return adapter->control().port_counters(0).wire_tx_frames; }

    std::unique_ptr<FakeDriver> pf, peer;
};

TEST_F(VfRoce, TwoVfsOfAPortTalkRcThroughItsSwitchNeverOnTheWire)
{
    connect();
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); /* the addresses' announcements are out */
    const uint64_t wire_before = wire_tx();
    uint64_t id = 1;
    for (uint32_t len : {1u, 1024u, 1025u, 65536u})
        send_and_check(len, id++);
    const uint32_t len = 65536;
    write_then_read(len, id);

    EXPECT_EQ(wire_tx(), wire_before) << "none of it on the cable";
    const auto stats = [](Side& s) {
        rdma::RoceStats st;
        std::memcpy(&st, const_cast<const uint8_t*>(s.drv.fn().gtt_memory()) + iov::vf_page::ROCE_STATS, sizeof(st));
        return st;
    };
    EXPECT_GE(stats(*a).tx_packets, 2u * len / 1024) << "VF 0 counts its packets in its own page";
    EXPECT_GE(stats(*b).rx_packets, 2u * len / 1024);
}

TEST_F(VfRoce, AVfResetMidTransferLeavesItsPeersQpToRetryAndFail)
{
    FakeRdma::ConnectOptions quick;
    quick.timeout = 8; /* 1 ms */
    quick.retry_cnt = 2;
    connect(quick, quick);
    b->rdma.post_recv(QP, 1, {b->sge(0, BUF / 2)});
    adapter->vf_level_reset(0, 1);
    a->rdma.post_send(QP, SqWqe{.wr_id = 7, .opcode = uint8_t(SqOpcode::send), .flags = sq_wqe::SIGNALED,
                                .length = 4096},
                      {a->sge(0, 4096)});
    auto tx = a->rdma.wait_cq(CQ, 1, std::chrono::seconds(5));
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::transport_retry_exceeded));
    EXPECT_EQ(a->rdma.state(QP), QpState::err);
}

TEST_F(VfRoce, AVfsRdmaEventsComeOnItsOwnEventQueue)
{
    connect();
    a->rdma.post_send(QP,
                      SqWqe{.wr_id = 1, .opcode = uint8_t(SqOpcode::rdma_write), .flags = sq_wqe::SIGNALED,
                            .length = 8, .rkey = b->key + 1, .remote_addr = b->va(0)},
                      {a->sge(0, 8)});
    auto tx = a->rdma.wait_cq(CQ, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, uint8_t(CqeStatus::remote_access_error));
    ASSERT_TRUE(wait_roce_event(b->drv, RdmaEvent::qp_access_error, QP))
        << "VF 1's responder refused the access: the event is on VF 1's EQ";
    for (const EventRingElement& e : pf->take_async_events())
        EXPECT_NE(e.protocol_id, uint8_t(ProtocolId::roce)) << "nothing of it on the PF's";
}

TEST_F(VfRoce, AVfsRamrodsStayWithinItsGrantAndItsOwnDoorbells)
{
    /* Its one DPI: another's doorbells would be past its BAR. */
    CreateCqRamrodData cq{};
    cq.cq_id = 5;
    cq.dpi = iov::VF_DPI + 1;
    cq.ring_size = 64;
    cq.ring_base = make_regpair(a->buf.iova);
    EXPECT_EQ(a->rdma.rc(RdmaCmd::create_cq, &cq, sizeof(cq)), FwReturn::no_resource);
    EXPECT_EQ(a->rdma.create_qp(iov::VF_RDMA_QPS), FwReturn::no_resource) << "past the QPs it may have";
    /* Memory of the other VF's is not its own: not in its IOMMU. */
    cq.dpi = iov::VF_DPI;
    cq.ring_base = make_regpair(b->buf.iova);
    EXPECT_EQ(a->rdma.rc(RdmaCmd::create_cq, &cq, sizeof(cq)), FwReturn::dma_error);
    /* An L2 ramrod on its own SPQ: its L2 is its PF's to make. */
    eth::VportStartRamrodData vport{};
    EXPECT_EQ(a->drv.ramrod(ProtocolId::eth, static_cast<uint8_t>(eth::EthCmd::vport_start), &vport, sizeof(vport))
                  .fw_return_code,
              static_cast<uint8_t>(FwReturn::invalid_command));
    EXPECT_EQ(a->rdma.close(), FwReturn::bad_state) << "its CQ and MR are still there";

    /* Closed, it may init again, within its grant and with its own MAC
     * only: VF 0's would take VF 0's RoCE frames. */
    ASSERT_EQ(b->rdma.dereg_mr(1), FwReturn::ok);
    ASSERT_EQ(b->rdma.destroy_cq(CQ), FwReturn::ok);
    ASSERT_EQ(b->rdma.close(), FwReturn::ok);
    EXPECT_EQ(b->rdma.init(iov::VF_RDMA_QPS, iov::VF_RDMA_TIDS + 1), FwReturn::no_resource);
    FuncInitRamrodData init{};
    init.num_cnqs = 1;
    std::memcpy(init.mac, a->drv.mac().data(), 6);
    init.num_qps = iov::VF_RDMA_QPS;
    init.num_tids = 64;
    init.max_mtu = 4096;
    init.tid_context_base = make_regpair(b->buf.iova);
    init.cnq[0].ring_base = make_regpair(b->buf.iova + BUF / 2);
    init.cnq[0].ring_size = 64;
    init.cnq[0].sb_id = CNQ_SB;
    EXPECT_EQ(b->rdma.rc(RdmaCmd::func_init, &init, sizeof(init)), FwReturn::invalid_param);
    EXPECT_EQ(b->rdma.init(iov::VF_RDMA_QPS, iov::VF_RDMA_TIDS), FwReturn::ok);
}

TEST_F(VfRoce, ARamrodBeforeItsPfStartMakesTheVfMalicious)
{
    /* VF 0 disabled and enabled again: its RDMA slowpath is back at
     * power-on (the PF's next ramrod runs after the VF's reset). */
    EXPECT_EQ(a->drv.fn().bar0_read(iov::vf_bar0::slowpath(reg::STORM_PF_ENABLE)), 1u);
    pf->wr(reg::IOV_VF_SELECT, 0);
    pf->wr(reg::IOV_VF_CTRL, 0);
    EXPECT_EQ(a->drv.fn().bar0_read(iov::vf_bar0::slowpath(reg::STORM_PF_ENABLE)), 0xffffffffu)
        << "a disabled VF's registers answer nothing";
    ASSERT_EQ(pf->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0).fw_return_code,
              static_cast<uint8_t>(FwReturn::ok));
    pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
    EXPECT_EQ(a->drv.fn().bar0_read(iov::vf_bar0::slowpath(reg::STORM_PF_ENABLE)), 0u) << "reset";

    /* An SPQ with a RoCE ramrod, rung without PF_START. */
    HostMem spq = a->drv.alloc(4096);
    SlowPathElement elem{};
    elem.hdr.protocol_id = static_cast<uint8_t>(ProtocolId::roce);
    elem.hdr.cmd_id = static_cast<uint8_t>(RdmaCmd::func_close);
    elem.data_ptr = make_regpair(spq.iova + 2048);
    std::memcpy(spq.va, &elem, sizeof(elem));
    const auto set = [&](uint32_t r, uint32_t v) { a->drv.fn().bar0_write(iov::vf_bar0::slowpath(r), v); };
    set(reg::STORM_SPQ_BASE_LO, static_cast<uint32_t>(spq.iova));
    set(reg::STORM_SPQ_BASE_HI, static_cast<uint32_t>(spq.iova >> 32));
    set(reg::STORM_SPQ_SIZE, 64);
    set(reg::STORM_PF_ENABLE, 1);
    pf->take_async_events();
    a->drv.ring_doorbell_at(CID_SPQ, 1);
    ASSERT_TRUE(wait_until([&] { return pf->rd(reg::IOV_MALICIOUS) == 1u; }));
    std::vector<EventRingElement> events;
    ASSERT_TRUE(wait_until([&] {
        for (const EventRingElement& e : pf->take_async_events())
            if (e.protocol_id == static_cast<uint8_t>(ProtocolId::iov))
                events.push_back(e);
        return !events.empty();
    }));
    EXPECT_EQ(events[0].opcode, static_cast<uint8_t>(iov::IovEvent::vf_malicious));
    EXPECT_EQ(events[0].echo, 0u) << "VF 0";
}

} // namespace
} // namespace cna::fw::test
