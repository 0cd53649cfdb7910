/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PMD on VF ports (net_cna_vf rdma=1): the device is the VF's
 * grant; it opens on a started port only; two VFs of a port talk RC
 * through its switch; an error's async event comes through the VF's own
 * EQ, which its CNQ's interrupt processes.
 */
#include <poll.h>

#include "verbs_fixture.h"

namespace {

TEST_F(VfVerbs, TheDeviceIsTheVfsGrantAndOpensOnAStartedPort)
{
    ibv_device_attr dev{};
    ASSERT_EQ(cna_rdma_query_device(a.dev, &dev), 0);
    EXPECT_EQ(dev.max_qp, 64);
    EXPECT_EQ(dev.max_mr, 256);
    ibv_port_attr port{};
    ASSERT_EQ(cna_rdma_query_port(a.dev, 1, &port), 0);
    EXPECT_EQ(port.state, IBV_PORT_ACTIVE) << "its bulletin board's link";

    /* VF 2: probed, not started. */
    Side c;
    c.name = "net_cna_vf" + adapter + "c";
    ASSERT_EQ(rte_vdev_init(c.name.c_str(), ("adapter=" + adapter + ",vf=2,rdma=1").c_str()), 0);
    ASSERT_EQ(rte_eth_dev_get_port_by_name(c.name.c_str(), &c.port), 0);
    EXPECT_EQ(cna_rdma_open(c.port), nullptr);
    EXPECT_EQ(errno, EAGAIN) << "its RoCE needs the MAC its started port filters";
    rte_eth_dev_info info;
    ASSERT_EQ(rte_eth_dev_info_get(c.port, &info), 0);
    EXPECT_EQ(info.max_rx_queues, 3u) << "its RDMA keeps the last of its 4 status blocks";
    EXPECT_EQ(rte_eth_dev_close(c.port), 0);
    rte_vdev_uninit(c.name.c_str());
}

TEST_F(VfVerbs, TwoVfsTalkRcAndAnAccessErrorsEventComesThroughTheVfsEq)
{
    connect_both();
    const uint32_t len = 65536;
    auto data = pattern(len, 7);
    std::memcpy(b.buf, data.data(), len);
    ASSERT_EQ(recv(a, 100, a.buf, 128 * 1024), 0);
    ASSERT_EQ(post(b, IBV_WR_SEND, 1, b.buf, len), 0);
    auto rx = wait_wc(a, 1);
    ASSERT_EQ(rx.size(), 1u);
    EXPECT_EQ(rx[0].status, IBV_WC_SUCCESS) << "status " << int(rx[0].status);
    EXPECT_EQ(rx[0].byte_len, len);
    EXPECT_EQ(std::memcmp(a.buf, data.data(), len), 0);
    ASSERT_EQ(wait_wc(b, 1).size(), 1u);

    std::memset(a.buf + len, 0, len);
    ASSERT_EQ(post(a, IBV_WR_RDMA_READ, 2, a.buf + len, len, reinterpret_cast<uint64_t>(b.buf), b.mr->rkey), 0);
    auto tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(std::memcmp(a.buf + len, data.data(), len), 0);

    ASSERT_EQ(post(a, IBV_WR_RDMA_WRITE, 3, a.buf, 8, reinterpret_cast<uint64_t>(b.buf), b.mr->rkey + 1), 0);
    tx = wait_wc(a, 1);
    ASSERT_EQ(tx.size(), 1u);
    EXPECT_EQ(tx[0].status, IBV_WC_REM_ACCESS_ERR);
    pollfd pfd{cna_rdma_event_fd(b.dev), POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 2000), 1) << "the event on b's EQ, taken by its CNQ's interrupt";
    ibv_async_event ev{};
    ASSERT_EQ(cna_rdma_get_async_event(b.dev, &ev), 0);
    EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
    EXPECT_EQ(ev.element.qp, b.qp);

    cna_rdma_port_counters counters{};
    ASSERT_EQ(cna_rdma_query_port_counters(b.dev, &counters), 0);
    EXPECT_GE(counters.tx_packets, len / 1024) << "its own page's RoCE counters";
}

/* The port closing under its open RDMA device (a QP, a CQ and an MR
 * still there): the device gives everything back, the VF's RDMA function
 * closes, and a new port on the VF opens RDMA again. */
TEST_F(VfVerbs, APortClosedUnderItsRdmaDeviceLeavesTheVfReady)
{
    connect_both();
    EXPECT_EQ(rte_eth_dev_stop(b.port), 0);
    EXPECT_EQ(rte_eth_dev_close(b.port), 0);
    rte_vdev_uninit(b.name.c_str());
    rte_mempool_free(b.pool);
    rte_free(b.buf);
    b = Side{};
    b.name = "net_cna_vf" + adapter + "b2";
    /* Until its PF's DPC has cleaned up after the VF's reset, the VF is
     * not enabled: as an application would, try again. */
    int rc = -ENODEV;
    for (int i = 0; i < 100 && rc == -ENODEV; i++) {
        rc = rte_vdev_init(b.name.c_str(), ("adapter=" + adapter + ",vf=1,rdma=1").c_str());
        if (rc == -ENODEV)
            rte_delay_ms(20);
    }
    ASSERT_EQ(rc, 0);
    ASSERT_NO_FATAL_FAILURE(start(b));
    b.dev = cna_rdma_open(b.port);
    ASSERT_NE(b.dev, nullptr) << strerror(errno);
    ibv_port_attr port{};
    ASSERT_EQ(cna_rdma_query_port(b.dev, 1, &port), 0);
}

} // namespace
