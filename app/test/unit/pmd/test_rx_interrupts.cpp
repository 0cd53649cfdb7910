/* SPDX-License-Identifier: BSD-3-Clause
 * Rx queue interrupts, driven the way interrupt-mode applications (l3fwd-power)
 * use them: the queue's eventfd in an epoll set, armed by
 * rte_eth_dev_rx_intr_enable, woken by the adapter's MSI-X when frames arrive;
 * on a PF's port and on a VF's.
 */
#include <rte_interrupts.h>

#include "port_fixture.h"

namespace {

/* The PF's port, or a VF's: a VF's queues raise the VF's own MSI-X vectors. */
enum class Function { pf, vf };

class RxInterrupts : public PortTest, public ::testing::WithParamInterface<Function> {
protected:
    void SetUp() override
    {
        rte_eth_conf conf{};
        conf.intr_conf.rxq = 1;
        if (GetParam() == Function::vf)
            open_vf_port(conf);
        else
            open_port("", 1, conf);
        ASSERT_EQ(rte_eth_dev_rx_intr_ctl_q(port_, 0, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD, nullptr), 0);
    }

    void TearDown() override
    {
        rte_eth_dev_rx_intr_ctl_q(port_, 0, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_DEL, nullptr);
        PortTest::TearDown();
    }

    int wait_ms(int timeout)
    {
        rte_epoll_event ev[1];
        return rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, 1, timeout);
    }

    void send(unsigned n)
    {
        for (unsigned i = 0; i < n; i++) {
            rte_mbuf* m = udp_frame(static_cast<uint16_t>(i));
            ASSERT_EQ(rte_eth_tx_burst(port_, 0, &m, 1), 1);
        }
    }
};

TEST_P(RxInterrupts, ArmedQueueWakesOnArrivalAndStaysQuietOtherwise)
{
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    EXPECT_EQ(wait_ms(100), 0) << "no traffic, no interrupt";
    send(8);
    EXPECT_EQ(wait_ms(2000), 1) << "frames arrived: the queue's vector fires";
    EXPECT_EQ(receive(0, 8), 8u);

    /* Re-armed with nothing new: quiet again. */
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    EXPECT_EQ(wait_ms(100), 0);
}

TEST_P(RxInterrupts, DisabledQueueDoesNotWake)
{
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    ASSERT_EQ(rte_eth_dev_rx_intr_disable(port_, 0), 0);
    send(4);
    EXPECT_EQ(wait_ms(200), 0);
    EXPECT_EQ(receive(0, 4), 4u);
}

TEST_P(RxInterrupts, ArmingAfterArrivalFiresAtOnce)
{
    send(3);
    for (int i = 0; i < 1000 && rte_eth_rx_queue_count(port_, 0) < 3; i++)
        rte_delay_ms(1);
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    EXPECT_EQ(wait_ms(2000), 1) << "the SB moved before arming: the IGU must fire on enable";
    EXPECT_EQ(receive(0, 3), 3u);
}

/* engine=inline moves frames only in the lcores' polls, which an
 * interrupt-mode application stops making: its start is refused, the port
 * left stopped, every mbuf back in the pool. So for a port that joins such
 * an adapter without saying engine= (it takes the adapter as it is). */
void expect_start_refused(const std::string& name)
{
    uint16_t port;
    ASSERT_EQ(rte_eth_dev_get_port_by_name(name.c_str(), &port), 0);
    constexpr unsigned POOL = 2048;
    rte_mempool* pool = rte_pktmbuf_pool_create((name + "_pool").c_str(), POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    ASSERT_NE(pool, nullptr);
    rte_eth_conf conf{};
    conf.intr_conf.rxq = 1;
    ASSERT_EQ(rte_eth_dev_configure(port, 1, 1, &conf), 0);
    ASSERT_EQ(rte_eth_rx_queue_setup(port, 0, 512, 0, nullptr, pool), 0);
    ASSERT_EQ(rte_eth_tx_queue_setup(port, 0, 512, 0, nullptr), 0);
    EXPECT_EQ(rte_eth_dev_start(port), -ENOTSUP) << name;
    EXPECT_EQ(rte_eth_dev_close(port), 0);
    EXPECT_EQ(rte_mempool_avail_count(pool), POOL);
    rte_mempool_free(pool);
}

TEST(RxInterruptsInline, AreRefused)
{
    const std::string first = "net_cna_intr_inline";
    const std::string joined = "net_cna_intr_joined";
    ASSERT_EQ(rte_vdev_init(first.c_str(), "engine=inline,ports=2"), 0);
    ASSERT_EQ(rte_vdev_init(joined.c_str(), ("adapter=" + first + ",port=1").c_str()), 0);
    EXPECT_NO_FATAL_FAILURE(expect_start_refused(joined));
    EXPECT_NO_FATAL_FAILURE(expect_start_refused(first));
    EXPECT_EQ(rte_vdev_uninit(joined.c_str()), 0);
    EXPECT_EQ(rte_vdev_uninit(first.c_str()), 0);
}

INSTANTIATE_TEST_SUITE_P(PfAndVf, RxInterrupts, ::testing::Values(Function::pf, Function::vf),
                         [](const ::testing::TestParamInfo<Function>& info) {
                             return info.param == Function::pf ? "Pf" : "Vf";
                         });

} // namespace
