/* SPDX-License-Identifier: BSD-3-Clause
 * Surprise removal: a port on cna-adapterd whose daemon is killed (SIGKILL)
 * hears it at once (link down with an LSC, RTE_ETH_EVENT_INTR_RMV), moves
 * no frames, fails every operation at once with an errno rather than
 * waiting out a timeout, never shows its dead counters, closes with every
 * mbuf back, and comes back with rte_eth_dev_reset once a daemon serves
 * the socket again.
 */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "port_fixture.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class SurpriseRemoval : public PortTest {
protected:
    void SetUp() override
    {
        socket_ = "/tmp/cna-removal-" + std::to_string(::getpid()) + ".sock";
        start_daemon();
        rte_eth_conf conf{};
        conf.intr_conf.lsc = 1;
        open_port("daemon=" + socket_ + ",pf=0", 1, conf);
        ASSERT_EQ(rte_eth_dev_callback_register(port_, RTE_ETH_EVENT_INTR_LSC, on_event, &lsc_), 0);
        ASSERT_EQ(rte_eth_dev_callback_register(port_, RTE_ETH_EVENT_INTR_RMV, on_event, &rmv_), 0);
    }

    void TearDown() override
    {
        rte_eth_dev_callback_unregister(port_, RTE_ETH_EVENT_INTR_LSC, on_event, &lsc_);
        rte_eth_dev_callback_unregister(port_, RTE_ETH_EVENT_INTR_RMV, on_event, &rmv_);
        PortTest::TearDown();
        kill_daemon();
        ::unlink(socket_.c_str());
    }

    /* cna-adapterd on socket_: a one-port loopback adapter. */
    void start_daemon()
    {
        daemon_ = ::fork();
        ASSERT_GE(daemon_, 0);
        if (daemon_ == 0) {
            ::execl(CNA_ADAPTERD, CNA_ADAPTERD, "--socket", socket_.c_str(), "--ports", "1", "--wire", "loopback",
                    "--idle-exit", "0", "--link-up-delay", "0", "--log-level", "err", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        struct stat st {};
        for (int i = 0; i < 500 && ::stat(socket_.c_str(), &st) != 0; i++)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        ASSERT_EQ(::stat(socket_.c_str(), &st), 0) << "the daemon did not listen on " << socket_;
    }

    void kill_daemon()
    {
        if (daemon_ <= 0)
            return;
        ::kill(daemon_, SIGKILL);
        ::waitpid(daemon_, nullptr, 0);
        daemon_ = -1;
    }

    /* Kills the daemon and waits for the port's next removal event: how
     * long it took. */
    double kill_and_wait_for_removal()
    {
        ::unlink(socket_.c_str()); /* a dead daemon's socket stays behind */
        const int before = rmv_.load();
        const auto t0 = Clock::now();
        kill_daemon();
        while (rmv_.load() == before && ms_since(t0) < 5000)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return ms_since(t0);
    }

    /* Frames to the port's own MAC, back over the loopback wire. */
    void expect_traffic()
    {
        ASSERT_TRUE(send_udp(0, 16, 1000));
        EXPECT_EQ(receive(0, 16), 16u);
    }

    static int on_event(uint16_t, rte_eth_event_type, void* arg, void*)
    {
        static_cast<std::atomic<int>*>(arg)->fetch_add(1);
        return 0;
    }

    std::string socket_;
    pid_t daemon_ = -1;
    std::atomic<int> lsc_{0}, rmv_{0};
};

TEST_F(SurpriseRemoval, TheEndOfTheDaemonIsHeardAtOnceAndEveryOperationFailsFast)
{
    expect_traffic();
    rte_mbuf* held[8];
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool_, held, 8), 0);

    const double heard_ms = kill_and_wait_for_removal();
    ASSERT_EQ(rmv_.load(), 1) << "RTE_ETH_EVENT_INTR_RMV";
    EXPECT_LT(heard_ms, 1000.0) << "heard from the hang-up, not a timeout";
    EXPECT_GE(lsc_.load(), 1) << "the link went down with an LSC";
    rte_eth_link link{};
    EXPECT_EQ(rte_eth_link_get_nowait(port_, &link), 0);
    EXPECT_EQ(link.link_status, RTE_ETH_LINK_DOWN);

    /* The bursts move nothing: the mbufs stay the application's. */
    EXPECT_EQ(rte_eth_tx_burst(port_, 0, held, 8), 0);
    rte_pktmbuf_free_bulk(held, 8);
    rte_mbuf* rx[8];
    EXPECT_EQ(rte_eth_rx_burst(port_, 0, rx, 8), 0);

    /* Counters read from the dead device are refused, not shown. */
    rte_eth_stats stats{};
    EXPECT_EQ(rte_eth_stats_get(port_, &stats), -ENODEV);
    rte_eth_xstat xstats[64];
    EXPECT_LT(rte_eth_xstats_get(port_, xstats, 64), 0);

    /* Each operation that needs the device fails at once. */
    const auto t0 = Clock::now();
    EXPECT_NE(rte_eth_dev_set_link_up(port_), 0);
    EXPECT_NE(rte_eth_promiscuous_enable(port_), 0);
    rte_ether_addr mac{{0x02, 0, 0, 0, 0, 0x42}};
    EXPECT_NE(rte_eth_dev_mac_addr_add(port_, &mac, 0), 0);
    EXPECT_LT(ms_since(t0), 500.0) << "no operation waits out a timeout";

    /* Stop and close at once too, every mbuf back (TearDown checks it). */
    const auto t1 = Clock::now();
    EXPECT_EQ(rte_eth_dev_stop(port_), 0);
    EXPECT_LT(ms_since(t1), 500.0);
}

TEST_F(SurpriseRemoval, AResetAttachesThePortAgainOnceADaemonServes)
{
    expect_traffic();
    ASSERT_LT(kill_and_wait_for_removal(), 5000.0);
    start_daemon();
    ASSERT_EQ(rte_eth_dev_reset(port_), 0);
    rte_eth_conf conf{};
    conf.intr_conf.lsc = 1;
    start_port(port_, pool_, 1, conf);
    expect_traffic();
    /* Watching again: the next daemon's end is heard as the first was. */
    EXPECT_LT(kill_and_wait_for_removal(), 1000.0);
    EXPECT_EQ(rmv_.load(), 2);
}

} // namespace
