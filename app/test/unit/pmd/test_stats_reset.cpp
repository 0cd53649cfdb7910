/* SPDX-License-Identifier: BSD-3-Clause
 * Statistics read while another thread resets them, under traffic: what
 * testpmd's `clear port stats` does while EAL's telemetry thread (or the
 * thread serving dpdk-proc-info) reads the same port. Every figure a reader
 * gets must be one the port really counted since some reset: never more
 * than the frames ever sent, never a baseline from a later reset
 * subtracted from an earlier reading.
 */
#include <atomic>
#include <cinttypes>
#include <thread>

#include <rte_cycles.h>

#include "port_fixture.h"

namespace {

class StatsReset : public PortTest {
protected:
    /* Sends and receives on the main lcore until `stop`; returns frames sent. */
    uint64_t traffic(const std::atomic<bool>& stop, std::atomic<uint64_t>& sent)
    {
        rte_mbuf* tx[32];
        while (!stop.load(std::memory_order_relaxed)) {
            for (auto& m : tx)
                m = udp_frame(7);
            const uint16_t n = rte_eth_tx_burst(port_, 0, tx, 32);
            rte_pktmbuf_free_bulk(tx + n, 32 - n);
            sent.fetch_add(n, std::memory_order_release);
            rte_mbuf* rx[64];
            for (uint16_t k; (k = rte_eth_rx_burst(port_, 0, rx, 64)) != 0;)
                rte_pktmbuf_free_bulk(rx, k);
        }
        rte_mbuf* rx[64];
        for (int idle = 0; idle < 20;) { /* what is still in flight */
            const uint16_t k = rte_eth_rx_burst(port_, 0, rx, 64);
            rte_pktmbuf_free_bulk(rx, k);
            if (k == 0) {
                idle++;
                rte_delay_ms(1);
            }
        }
        return sent.load();
    }
};

TEST_F(StatsReset, ReadersNeverSeeAFigureThePortDidNotCount)
{
    open_port("", 1, rte_eth_conf{});
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> sent{0};
    std::atomic<uint64_t> resets{0};

    std::thread resetter([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            if (rte_eth_stats_reset(port_) == 0)
                resets.fetch_add(1, std::memory_order_relaxed);
        }
    });
    uint64_t reads = 0, wrong = 0;
    uint64_t first_wrong = 0;
    std::atomic<uint64_t> reads_done{0}; /* reads, for the timer */
    std::thread reader([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            rte_eth_stats st;
            if (rte_eth_stats_get(port_, &st) != 0)
                continue;
            /* Read after the figures: every genuine figure is at most this. */
            const uint64_t bound = sent.load(std::memory_order_acquire) + 32;
            reads_done.store(++reads, std::memory_order_relaxed);
            if (st.ipackets > bound || st.opackets > bound || st.q_ipackets[0] > bound ||
                st.q_opackets[0] > bound || st.ibytes > bound * 128 || st.obytes > bound * 128) {
                if (wrong++ == 0)
                    first_wrong = st.ipackets > bound ? st.ipackets : st.opackets;
            }
        }
    });

    /* A second, and on until the resets and the reads have raced the
     * traffic often enough (a sanitizer's build on a loaded machine resets
     * slower), but never past 20 s. */
    const uint64_t start = rte_get_timer_cycles(), hz = rte_get_timer_hz();
    std::thread timer([&] {
        for (;;) {
            const uint64_t elapsed = rte_get_timer_cycles() - start;
            if (elapsed >= 20 * hz || (elapsed >= hz && resets.load() > 100 && reads_done.load() > 100))
                break;
            rte_delay_us_sleep(10000);
        }
        stop.store(true);
    });
    const uint64_t total = traffic(stop, sent);
    timer.join();
    resetter.join();
    reader.join();

    ASSERT_GT(total, 1000u) << "too little traffic to race the resets";
    ASSERT_GT(resets.load(), 100u);
    ASSERT_GT(reads, 100u);
    EXPECT_EQ(wrong, 0u) << wrong << " of " << reads << " reads (" << resets.load()
                         << " concurrent resets) gave a figure the port never counted, e.g. " << first_wrong;
}

/* A queue that was not configured when the stats were reset counts from
 * that reset when it comes back, like the queues that were. */
TEST_F(StatsReset, CoversQueuesConfiguredAfterIt)
{
    open_port("", 2, rte_eth_conf{});
    ASSERT_TRUE(send_udp(1, 10, 5));
    ASSERT_EQ(receive(0, 10), 10u);

    auto reconfigure = [&](uint16_t queues) {
        ASSERT_EQ(rte_eth_dev_stop(port_), 0);
        const rte_eth_conf conf{};
        ASSERT_EQ(rte_eth_dev_configure(port_, queues, queues, &conf), 0);
        for (uint16_t q = 0; q < queues; q++) {
            ASSERT_EQ(rte_eth_rx_queue_setup(port_, q, RING, 0, nullptr, pool_), 0);
            ASSERT_EQ(rte_eth_tx_queue_setup(port_, q, RING, 0, nullptr), 0);
        }
        ASSERT_EQ(rte_eth_dev_start(port_), 0);
    };
    reconfigure(1);
    ASSERT_EQ(rte_eth_stats_reset(port_), 0);
    reconfigure(2);
    rte_eth_stats st;
    ASSERT_EQ(rte_eth_stats_get(port_, &st), 0);
    EXPECT_EQ(st.q_opackets[1], 0u) << "Tx queue 1's frames from before the reset";
    EXPECT_EQ(st.q_obytes[1], 0u);
    EXPECT_EQ(st.opackets, 0u);
}

} // namespace
