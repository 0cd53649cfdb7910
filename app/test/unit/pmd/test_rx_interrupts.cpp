/* SPDX-License-Identifier: BSD-3-Clause
 * Rx queue interrupts, driven the way interrupt-mode applications (l3fwd-power)
 * use them: the queue's eventfd in an epoll set, armed by
 * rte_eth_dev_rx_intr_enable, woken by the adapter's MSI-X when frames arrive.
 */
#include <rte_interrupts.h>

#include "port_fixture.h"

namespace {

class RxInterrupts : public PortTest {
protected:
    void SetUp() override
    {
        rte_eth_conf conf{};
        conf.intr_conf.rxq = 1;
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

TEST_F(RxInterrupts, ArmedQueueWakesOnArrivalAndStaysQuietOtherwise)
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

TEST_F(RxInterrupts, DisabledQueueDoesNotWake)
{
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    ASSERT_EQ(rte_eth_dev_rx_intr_disable(port_, 0), 0);
    send(4);
    EXPECT_EQ(wait_ms(200), 0);
    EXPECT_EQ(receive(0, 4), 4u);
}

TEST_F(RxInterrupts, ArmingAfterArrivalFiresAtOnce)
{
    send(3);
    for (int i = 0; i < 1000 && rte_eth_rx_queue_count(port_, 0) < 3; i++)
        rte_delay_ms(1);
    ASSERT_EQ(rte_eth_dev_rx_intr_enable(port_, 0), 0);
    EXPECT_EQ(wait_ms(2000), 1) << "the SB moved before arming: the IGU must fire on enable";
    EXPECT_EQ(receive(0, 3), 3u);
}

} // namespace
