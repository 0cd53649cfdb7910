/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PMD as a verbs program uses it: two net_cna ports cabled in one
 * process, an RC QP on each connected through their GIDs, every opcode
 * with its payload checked, memory of DPDK's and of the application's own,
 * completion events through the event fd, and the errors verbs promises
 * (EINVAL naming the attribute, ENOMEM with bad_wr on a full SQ, flushes
 * in ERR, a remote access error).
 */
#include <poll.h>

#include "verbs_fixture.h"

namespace {

TEST_F(Verbs, DeviceAndPortAsVerbsReportThem)
{
    ibv_device_attr dev{};
    ASSERT_EQ(cna_rdma_query_device(a.dev, &dev), 0);
    EXPECT_EQ(dev.max_qp, 1024);
    EXPECT_EQ(dev.max_mr, 1024);
    EXPECT_EQ(dev.phys_port_cnt, 1);
    EXPECT_EQ(dev.atomic_cap, IBV_ATOMIC_HCA);
    ibv_port_attr port{};
    ASSERT_EQ(cna_rdma_query_port(a.dev, 1, &port), 0);
    EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
    EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
    EXPECT_EQ(port.active_mtu, IBV_MTU_1024) << "the largest IB MTU within 1500";
    rte_ether_addr mac;
    ASSERT_EQ(rte_eth_macaddr_get(a.port, &mac), 0);
    EXPECT_EQ(a.gid.raw[0], 0xfe);
    EXPECT_EQ(a.gid.raw[1], 0x80);
    EXPECT_EQ(a.gid.raw[8], mac.addr_bytes[0] ^ 2);
    EXPECT_EQ(a.gid.raw[15], mac.addr_bytes[5]);
    ibv_gid gid;
    EXPECT_EQ(cna_rdma_query_gid(a.dev, 1, 1, &gid), -1);
    EXPECT_EQ(cna_rdma_open(a.port), nullptr);
    EXPECT_EQ(errno, EBUSY);
}

TEST_F(Verbs, SendRecvAcrossTheMtuWithPsnsWrapping)
{
    connect_both();
    uint64_t id = 1;
    for (uint32_t len : {1u, 1023u, 1024u, 1025u, 65536u}) {
        auto data = pattern(len, static_cast<uint8_t>(id));
        std::memcpy(b.buf, data.data(), len);
        std::memset(a.buf, 0, len + 1);
        ASSERT_EQ(recv(a, 100 + id, a.buf, 128 * 1024), 0);
        ASSERT_EQ(post(b, IBV_WR_SEND, id, b.buf, len), 0);
        auto rx = wait_wc(a, 1);
        auto tx = wait_wc(b, 1);
        ASSERT_EQ(rx.size(), 1u);
        ASSERT_EQ(tx.size(), 1u);
        EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS) << "status " << int(rx[0].status);
        EXPECT_EQ(rx[0].opcode, IBV_WC_RECV);
        EXPECT_EQ(rx[0].byte_len, len);
        EXPECT_EQ(rx[0].wr_id, 100 + id);
        EXPECT_EQ(rx[0].qp_num, a.qp->qp_num);
        EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
        EXPECT_EQ(tx[0].opcode, IBV_WC_SEND);
        EXPECT_EQ(std::memcmp(a.buf, data.data(), len), 0) << len;
        EXPECT_EQ(a.buf[len], 0);
        id++;
    }
}

TEST_F(Verbs, WriteReadAndAtomicsOnDpdkAndApplicationMemory)
{
    connect_both();
    /* The application's own memory on b's side: mapped for the device. */
    std::vector<uint8_t> own(64 * 1024 + 100);
    ibv_mr* own_mr = cna_rdma_reg_mr(b.pd, own.data(), own.size(),
                                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    ASSERT_NE(own_mr, nullptr) << strerror(errno);

    auto data = pattern(64 * 1024, 3);
    std::memcpy(a.buf, data.data(), data.size());
    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 1, a.buf, uint32_t(data.size()), reinterpret_cast<uint64_t>(own.data() + 7),
                   own_mr->rkey),
              0);
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(tx[0].opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(std::memcmp(own.data() + 7, data.data(), data.size()), 0);

    std::memset(a.buf + 100000, 0, data.size());
    ASSERT_EQ(post(a, IBV_WR_RDMA_READ, 2, a.buf + 100000, uint32_t(data.size()),
                   reinterpret_cast<uint64_t>(own.data() + 7), own_mr->rkey),
              0);
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(tx[0].opcode, IBV_WC_RDMA_READ);
    EXPECT_EQ(std::memcmp(a.buf + 100000, data.data(), data.size()), 0);

    /* Atomics on b's DPDK memory. */
    auto* target = reinterpret_cast<uint64_t*>(b.buf + 4096);
    *target = 41;
    ibv_sge sge{reinterpret_cast<uint64_t>(a.buf), 8, a.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = 3;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.atomic.remote_addr = reinterpret_cast<uint64_t>(target);
    wr.wr.atomic.rkey = b.mr->rkey;
    wr.wr.atomic.compare_add = 1;
    ibv_send_wr* bad;
    ASSERT_EQ(cna_rdma_post_send(a.qp, &wr, &bad), 0);
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].opcode, IBV_WC_FETCH_ADD);
    EXPECT_EQ(*reinterpret_cast<uint64_t*>(a.buf), 41u);
    EXPECT_EQ(*target, 42u);
    wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
    wr.wr.atomic.compare_add = 42;
    wr.wr.atomic.swap = 7;
    ASSERT_EQ(cna_rdma_post_send(a.qp, &wr, &bad), 0);
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].opcode, IBV_WC_COMP_SWAP);
    EXPECT_EQ(*target, 7u);
    EXPECT_EQ(cna_rdma_dereg_mr(own_mr), 0);
}

TEST_F(Verbs, RegionsOfApplicationMemoryMayOverlapAndGoInAnyOrder)
{
    connect_both();
    /* Three regions over one buffer: two overlapping halves and the whole
     * (as a registration cache does), each usable alone once the others go. */
    std::vector<uint8_t> own(5 * 4096);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    ibv_mr* low = cna_rdma_reg_mr(b.pd, own.data(), 3 * 4096, access);
    ibv_mr* high = cna_rdma_reg_mr(b.pd, own.data() + 2 * 4096, 3 * 4096, access);
    ibv_mr* whole = cna_rdma_reg_mr(b.pd, own.data(), own.size(), access);
    ASSERT_TRUE(low && high && whole) << strerror(errno);
    auto write_through = [&](ibv_mr* mr, std::size_t offset, uint32_t len, uint8_t seed) {
        auto data = pattern(len, seed);
        std::memcpy(a.buf, data.data(), len);
        EXPECT_EQ(post(a, IBV_WR_RDMA_WRITE, seed, a.buf, len, reinterpret_cast<uint64_t>(own.data() + offset),
                       mr->rkey),
                  0);
        auto tx = wait_wc(a, 1);
        return tx.size() == 1 && tx[0].status == IBV_WC_SUCCESS &&
               std::memcmp(own.data() + offset, data.data(), len) == 0;
    };
    /* Across the pages where the regions were mapped in pieces. */
    EXPECT_TRUE(write_through(whole, 100, 4 * 4096, 1));
    EXPECT_TRUE(write_through(high, 2 * 4096 + 5, 2 * 4096, 2));
    ASSERT_EQ(cna_rdma_dereg_mr(low), 0);
    EXPECT_TRUE(write_through(whole, 4000, 8192, 3)) << "the first region's pages stay mapped for the others";
    ASSERT_EQ(cna_rdma_dereg_mr(whole), 0);
    EXPECT_TRUE(write_through(high, 3 * 4096, 4096, 4));
    ASSERT_EQ(cna_rdma_dereg_mr(high), 0);
}

TEST_F(Verbs, WriteWithImmediateWakesTheArmedCqThroughTheEventFd)
{
    connect_both();
    ASSERT_EQ(recv(b, 9, b.buf, 64), 0);
    ASSERT_EQ(cna_rdma_req_notify_cq(b.cq, 0), 0);
    ibv_sge sge{reinterpret_cast<uint64_t>(a.buf), 100, a.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = 1;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htobe32(0xfeedf00d);
    wr.wr.rdma.remote_addr = reinterpret_cast<uint64_t>(b.buf + 1000);
    wr.wr.rdma.rkey = b.mr->rkey;
    ibv_send_wr* bad;
    ASSERT_EQ(cna_rdma_post_send(a.qp, &wr, &bad), 0);
    pollfd pfd{cna_rdma_event_fd(b.dev), POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "no completion event";
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    ASSERT_EQ(cna_rdma_get_cq_event(b.dev, &cq, &ctx), 0);
    EXPECT_EQ(cq, b.cq);
    EXPECT_EQ(ctx, &b);
    cna_rdma_ack_cq_events(cq, 1);
    EXPECT_EQ(cna_rdma_get_cq_event(b.dev, &cq, &ctx), -1);
    EXPECT_EQ(errno, EAGAIN);
    auto rx = wait_wc(b, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
    EXPECT_EQ(rx[0].wc_flags & IBV_WC_WITH_IMM, unsigned(IBV_WC_WITH_IMM));
    EXPECT_EQ(be32toh(rx[0].imm_data), 0xfeedf00du);
    EXPECT_EQ(rx[0].byte_len, 100u);
}

TEST_F(Verbs, ErrorsAreVerbs)
{
    /* A post before RTS, an attribute missing, a bad opcode. */
    EXPECT_EQ(post(a, IBV_WR_SEND, 1, a.buf, 8), EINVAL);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    EXPECT_NE(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS), 0)
        << "IBV_QP_PORT missing";
    EXPECT_EQ(cna_rdma_modify_qp(a.qp, &attr, IBV_QP_STATE | IBV_QP_QKEY), EINVAL) << "not an RC attribute";
    connect_both();
    EXPECT_EQ(post(a, IBV_WR_BIND_MW, 1, a.buf, 8), EINVAL);

    /* A full SQ: ENOMEM and bad_wr at the first WR that did not fit. */
    std::vector<ibv_sge> sges(80, ibv_sge{reinterpret_cast<uint64_t>(a.buf), 8, a.mr->lkey});
    std::vector<ibv_send_wr> wrs(80);
    for (size_t i = 0; i < wrs.size(); i++) {
        wrs[i].wr_id = i;
        wrs[i].sg_list = &sges[i];
        wrs[i].num_sge = 1;
        wrs[i].opcode = IBV_WR_RDMA_WRITE;
        wrs[i].wr.rdma.remote_addr = reinterpret_cast<uint64_t>(b.buf);
        wrs[i].wr.rdma.rkey = b.mr->rkey;
        wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
    }
    wrs[63].send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(cna_rdma_post_send(a.qp, wrs.data(), &bad), ENOMEM);
    EXPECT_EQ(bad, &wrs[64]);
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].wr_id, 63u) << "the one signalled retires the 63 before it";

    /* A wrong rkey: remote access error, both QPs in ERR, later WRs flushed. */
    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 200, a.buf, 8, reinterpret_cast<uint64_t>(b.buf), b.mr->rkey + 1), 0);
    ASSERT_EQ(post(a, IBV_WR_SEND, 201, a.buf, 8, 0, 0, 0), 0);
    tx = wait_wc(a, 2);
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx[0].status, IBV_WC_REM_ACCESS_ERR) << "status " << int(tx[0].status);
    EXPECT_EQ(tx[1].status, IBV_WC_WR_FLUSH_ERR);
    ibv_qp_attr q{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(cna_rdma_query_qp(a.qp, &q, IBV_QP_STATE, &init), 0);
    EXPECT_EQ(q.qp_state, IBV_QPS_ERR);
    ASSERT_EQ(cna_rdma_query_qp(b.qp, &q, IBV_QP_STATE, &init), 0);
    EXPECT_EQ(q.qp_state, IBV_QPS_ERR);
    ibv_async_event ev{};
    for (int i = 0; i < 200 && cna_rdma_get_async_event(b.dev, &ev) != 0; i++)
        rte_delay_ms(5);
    EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
    EXPECT_EQ(ev.element.qp, b.qp);
    ASSERT_EQ(post(a, IBV_WR_SEND, 202, a.buf, 8), 0) << "posting in ERR is allowed...";
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_WR_FLUSH_ERR) << "...and flushes";

    /* Objects in use are not destroyed. */
    EXPECT_EQ(cna_rdma_destroy_cq(a.cq), EBUSY);
    EXPECT_EQ(cna_rdma_dealloc_pd(a.pd), EBUSY);
    EXPECT_EQ(cna_rdma_close(a.dev), -1);
    EXPECT_EQ(errno, EBUSY);
}

TEST_F(Verbs, ZeroLengthReadsAndWritesNeedNoValidKey)
{
    /* IBA C9-88: a zero-length RDMA operation accesses no memory, and its
     * R_Key and VA are not checked (UCX flushes a QP with one). */
    connect_both();
    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 1, a.buf, 0, 0, 0), 0);
    ASSERT_EQ(post(a, IBV_WR_RDMA_READ, 2, a.buf, 0, 0, 0), 0);
    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 3, a.buf, 8, reinterpret_cast<uint64_t>(b.buf), b.mr->rkey), 0);
    auto tx = wait_wc(a, 3);
    ASSERT_EQ(tx.size(), 3u);
    for (const ibv_wc& wc : tx)
        EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << "wr " << wc.wr_id;
}

TEST_F(Verbs, ADestroyedObjectsEventsGoWithIt)
{
    connect_both();
    /* A wrong rkey: b's QP gets an access error, which nobody reads. */
    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 1, a.buf, 8, reinterpret_cast<uint64_t>(b.buf), b.mr->rkey + 1), 0);
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_REM_ACCESS_ERR);
    pollfd pfd{cna_rdma_event_fd(b.dev), POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "the event is queued";
    ASSERT_EQ(cna_rdma_destroy_qp(b.qp), 0);
    b.qp = nullptr;
    ibv_async_event ev{};
    EXPECT_EQ(cna_rdma_get_async_event(b.dev, &ev), -1) << "an event naming a QP that is gone";
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(poll(&pfd, 1, 0), 0) << "the event fd is no longer readable";
}

uint64_t xstat(uint16_t port, const char* name)
{
    uint64_t id, value;
    if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 || rte_eth_xstats_get_by_id(port, &id, &value, 1) != 1)
        ADD_FAILURE() << "no xstat " << name;
    return value;
}

/* Completions the old ring holds come first, in order; then the new
 * ring's. A ring too small for what the CQ holds is refused. */
TEST_F(Verbs, ResizingACqKeepsItsCompletions)
{
    connect_both();
    auto send_and_settle = [&](uint64_t first, int count) {
        for (int i = 0; i < count; i++) {
            ASSERT_EQ(recv(b, 500 + first + i, b.buf, 64), 0);
            ASSERT_EQ(post(a, IBV_WR_SEND, first + i, a.buf, 8), 0);
        }
        EXPECT_EQ(wait_wc(b, count).size(), static_cast<size_t>(count));
        rte_delay_ms(20); /* the ACKs retire a's sends: its CQ holds them */
    };
    send_and_settle(1, 20);
    EXPECT_EQ(cna_rdma_resize_cq(a.cq, 1), EINVAL) << "a ring of 16 cannot hold 20";
    EXPECT_EQ(cna_rdma_resize_cq(a.cq, 1000), 0);
    EXPECT_GE(a.cq->cqe, 1000);
    send_and_settle(21, 5);
    auto wc = wait_wc(a, 25);
    ASSERT_EQ(wc.size(), 25u);
    for (size_t i = 0; i < wc.size(); i++) {
        EXPECT_EQ(wc[i].wr_id, i + 1) << "in order, across the two rings";
        EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
    }
    EXPECT_EQ(cna_rdma_resize_cq(a.cq, 1), 0) << "empty, it may shrink";
    EXPECT_EQ(a.cq->cqe, 15);
    send_and_settle(26, 10);
    EXPECT_EQ(wait_wc(a, 10).size(), 10u);
}

TEST_F(Verbs, NoReceivePostedRetriesRnrThenFailsAndEveryCounterSaysSo)
{
    connect(a, b, 0x100, 0x200, 2);
    connect(b, a, 0x200, 0x100);
    ASSERT_EQ(post(a, IBV_WR_SEND, 7, a.buf, 64), 0);
    const auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << "status " << int(tx[0].status);
    EXPECT_EQ(tx[0].wr_id, 7u);
    ibv_qp_attr q{};
    ibv_qp_init_attr init{};
    ASSERT_EQ(cna_rdma_query_qp(a.qp, &q, IBV_QP_STATE, &init), 0);
    EXPECT_EQ(q.qp_state, IBV_QPS_ERR);
    ASSERT_EQ(cna_rdma_query_qp(b.qp, &q, IBV_QP_STATE, &init), 0);
    EXPECT_EQ(q.qp_state, IBV_QPS_RTS) << "an RNR is no error of the responder's";

    /* The first try and rnr_retry = 2 more, each answered by an RNR NAK. */
    cna_rdma_qp_counters qa{}, qb{};
    ASSERT_EQ(cna_rdma_query_qp_counters(a.qp, &qa), 0);
    ASSERT_EQ(cna_rdma_query_qp_counters(b.qp, &qb), 0);
    EXPECT_EQ(qa.rnr_naks_received, 3u);
    EXPECT_EQ(qb.rnr_naks_sent, 3u);
    EXPECT_EQ(qa.packets_sent, 3u);
    cna_rdma_port_counters pa{}, pb{};
    ASSERT_EQ(cna_rdma_query_port_counters(a.dev, &pa), 0);
    ASSERT_EQ(cna_rdma_query_port_counters(b.dev, &pb), 0);
    EXPECT_EQ(pa.rnr_naks_received, 3u);
    EXPECT_EQ(pb.rnr_naks_sent, 3u);
    EXPECT_EQ(pa.tx_packets, pb.rx_packets) << "the cable loses nothing";
    EXPECT_EQ(pb.tx_packets, pa.rx_packets);
    EXPECT_EQ(pa.icrc_errors + pb.icrc_errors, 0u);

    /* The same figures are the ports' roce_* xstats; a stats reset clears those. */
    EXPECT_EQ(xstat(b.port, "roce_rnr_naks_sent"), 3u);
    EXPECT_EQ(xstat(a.port, "roce_tx_packets"), pa.tx_packets);
    ASSERT_EQ(rte_eth_stats_reset(b.port), 0);
    EXPECT_EQ(xstat(b.port, "roce_rnr_naks_sent"), 0u);
    ASSERT_EQ(cna_rdma_query_port_counters(b.dev, &pb), 0);
    EXPECT_EQ(pb.rnr_naks_sent, 3u) << "the device's own count stays";
}

} // namespace
