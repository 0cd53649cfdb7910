/* SPDX-License-Identifier: BSD-3-Clause
 * Several engine threads: one per port group at most, each named and
 * pinnable, every group carrying traffic at once, and the slowpath holding
 * the other threads between passes without losing or damaging a frame.
 *
 * And the dataplane on the host's threads (EnginePlacement::host): nothing
 * is sent but in a DeviceFunction::engine_pass, a pass serves its function's
 * port group only, concurrent passes neither lose nor repeat a frame (a
 * caller finding another in the pass leaves it its work), a Tx doorbell's
 * queue pass runs beside the group's and other queues' without losing,
 * repeating or reordering a frame, and the slowpath keeps its engine
 * thread.
 */
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

AdapterConfig config_of(const char* name, Wire wire, uint32_t ports, uint32_t engine_threads)
{
    AdapterConfig config;
    config.name = name;
    config.wire = wire;
    config.ports = ports;
    config.engine_threads = engine_threads;
    config.link_up_delay_ms = 0;
    return config;
}

TEST(EngineThreads, AtMostOnePerPortGroup)
{
    std::string error;
    EXPECT_EQ(Adapter::create(config_of("et", Wire::loopback, 1, 0), &error), nullptr);
    EXPECT_NE(error.find("engine_threads"), std::string::npos) << error;
    error.clear();
    /* A cable pair is one group: its frames cross between its two ports. */
    EXPECT_EQ(port_groups(config_of("et", Wire::cable, 2, 1)), 1u);
    EXPECT_EQ(Adapter::create(config_of("et", Wire::cable, 2, 2), &error), nullptr);
    EXPECT_NE(error.find("engine_threads"), std::string::npos) << error;
    EXPECT_EQ(port_groups(config_of("et", Wire::cable, 4, 1)), 2u);
    EXPECT_NE(Adapter::create(config_of("et", Wire::cable, 4, 2), nullptr), nullptr);
    EXPECT_EQ(port_groups(config_of("et", Wire::loopback, 4, 1)), 4u);
    EXPECT_NE(Adapter::create(config_of("et", Wire::loopback, 4, 4), nullptr), nullptr);
    EXPECT_EQ(Adapter::create(config_of("et", Wire::loopback, 4, 5), &error), nullptr);
}

TEST(EngineThreads, EachIsNamedAndPinnable)
{
    auto adapter = Adapter::create(config_of("named", Wire::loopback, 2, 2), nullptr);
    ASSERT_NE(adapter, nullptr);
    EXPECT_EQ(engine_thread_name("named", 0), "cna-named");
    EXPECT_EQ(engine_thread_name("named", 1), "cna1-named");
    EXPECT_EQ(engine_thread_name("a-very-long-adapter-name", 1).size(), 15u);
    EXPECT_GE(thread_cpu_seconds("cna-named"), 0);
    EXPECT_GE(thread_cpu_seconds("cna1-named"), 0);
    EXPECT_EQ(thread_cpu_seconds("cna2-named"), -1);
    EXPECT_EQ(adapter->set_engine_affinity(1, 0), 0);
    EXPECT_EQ(adapter->set_engine_affinity(1, -1), 0);
    EXPECT_EQ(adapter->set_engine_affinity(2, 0), -EINVAL);
}

/* Two cable pairs, one engine thread each: PF n is on port n. */
class TwoGroups : public ::testing::Test {
protected:
    void SetUp() override
    {
        adapter = Adapter::create(config_of("groups", Wire::cable, 4, 2), nullptr);
        ASSERT_NE(adapter, nullptr);
        for (uint32_t pf = 0; pf < 4; pf++) {
            drv[pf] = std::make_unique<FakeDriver>(*adapter, pf);
            bring_up_l2(*drv[pf]);
        }
        for (auto& d : drv)
            ASSERT_TRUE(wait_link(*d));
    }

    /* `rounds` bursts of 16 numbered frames from `from` to `to`; the
     * frames that did not arrive as sent, in order (empty: all did). */
    static std::string carry(FakeDriver& from, FakeDriver& to, int rounds)
    {
        constexpr int BURST = 16;
        for (int r = 0; r < rounds; r++) {
            std::vector<std::vector<uint8_t>> sent;
            for (int i = 0; i < BURST; i++) {
                sent.push_back(udp4_frame(BCAST, PEER_MAC, 0x0a000001, 0x0a000002, static_cast<uint16_t>(r),
                                          static_cast<uint16_t>(i), 64 + (r + i) % 200));
                from.send(0, sent.back());
            }
            auto got = to.rx_wait(0, BURST, std::chrono::seconds(2));
            if (got.size() != sent.size())
                return "round " + std::to_string(r) + ": " + std::to_string(got.size()) + " of 16 frames arrived";
            for (int i = 0; i < BURST; i++)
                if (got[i].data != sent[i])
                    return "round " + std::to_string(r) + ": frame " + std::to_string(i) + " differs";
        }
        return "";
    }

    /* carry() from PF `from0` of group 0 and PF `from1` of group 1 to
     * their cable partners, at once (a thread each); what went wrong. */
    std::string carry_in_both_groups(uint32_t from0, uint32_t from1, int rounds)
    {
        std::string errors[2];
        std::thread group0([&] { errors[0] = carry(*drv[from0], *drv[from0 ^ 1], rounds); });
        std::thread group1([&] { errors[1] = carry(*drv[from1], *drv[from1 ^ 1], rounds); });
        group0.join();
        group1.join();
        std::string both;
        for (int g = 0; g < 2; g++)
            if (!errors[g].empty())
                both += "group " + std::to_string(g) + ": " + errors[g] + "; ";
        return both;
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv[4];
};

TEST_F(TwoGroups, EveryGroupCarriesTrafficAtOnce)
{
    constexpr int ROUNDS = 300;
    EXPECT_EQ(carry_in_both_groups(0, 2, ROUNDS), "");
    /* And back, to the other two PFs' Rx. */
    EXPECT_EQ(carry_in_both_groups(1, 3, ROUNDS), "");
    for (uint32_t pf = 0; pf < 4; pf++) {
        EXPECT_EQ(drv[pf]->vport_stats(0).tx_bcast_pkts, ROUNDS * 16u) << "PF " << pf;
        EXPECT_EQ(drv[pf]->vport_stats(0).rx_bcast_pkts, ROUNDS * 16u) << "PF " << pf;
        EXPECT_EQ(adapter->control().port_counters(pf).wire_rx_frames, ROUNDS * 16u) << "port " << pf;
    }
}

TEST_F(TwoGroups, SlowpathHoldsTheOtherThreadWithoutLosingAFrame)
{
    /* Group 1 (thread 1) carries traffic while PF 0 (group 0) keeps the
     * slowpath busy with ramrods: each runs with thread 1 held, and ends by
     * writing back group 1's status blocks too, whose CAUs thread 1 owns. */
    std::atomic<bool> done{false};
    std::atomic<int> ramrods{0};
    std::string traffic;
    uint32_t rounds = 0;
    /* Traffic goes on until the ramrods overlapped it, however the two
     * threads are scheduled. */
    std::thread pair([&] {
        while (traffic.empty() && (rounds < 300 || ramrods < 20)) {
            traffic = carry(*drv[2], *drv[3], 30);
            rounds += 30;
        }
        done = true;
    });
    const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    while (!done) {
        ASSERT_EQ(drv[0]->filter(FilterOpcode::add, FilterType::mac, 0, mac), FwReturn::ok);
        ASSERT_EQ(drv[0]->filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::ok);
        ramrods += 2;
    }
    pair.join();
    EXPECT_EQ(traffic, "");
    EXPECT_GE(ramrods, 20);
    EXPECT_EQ(drv[3]->vport_stats(0).rx_bcast_pkts, rounds * 16u);
    EXPECT_EQ(drv[3]->rx_queue_stats(0).drops, 0u);
}

/* ---- The dataplane on the host's threads ---- */

AdapterConfig host_config(const char* name, Wire wire, uint32_t ports)
{
    AdapterConfig config = config_of(name, wire, ports, 1);
    config.engine_placement = EnginePlacement::host;
    return config;
}

/* A broadcast frame numbered `seq` (its last four bytes). */
std::vector<uint8_t> numbered_frame(uint32_t seq)
{
    std::vector<uint8_t> f = eth_frame(BCAST, PEER_MAC, 0x88b5, 46 + seq % 64);
    for (int i = 0; i < 4; i++)
        f[f.size() - 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    return f;
}

/* What is wrong with `got` as frames first..first+count-1, in order
 * (empty: nothing). */
std::string check_numbered(const std::vector<FakeDriver::RxFrame>& got, uint32_t first, uint32_t count)
{
    if (got.size() != count)
        return std::to_string(got.size()) + " of " + std::to_string(count) + " frames from " +
               std::to_string(first) + " arrived";
    for (uint32_t i = 0; i < count; i++)
        if (got[i].data != numbered_frame(first + i))
            return "frame " + std::to_string(first + i) + " differs (lost, repeated or reordered)";
    return "";
}

TEST(HostPlacement, CreateRefusesEngineThreads)
{
    std::string error;
    /* Two loopback ports are two groups: two engine threads would do. */
    AdapterConfig config = host_config("hp", Wire::loopback, 2);
    config.engine_threads = 2;
    EXPECT_EQ(Adapter::create(config, &error), nullptr);
    EXPECT_NE(error.find("engine_threads"), std::string::npos) << error;
    config.engine_threads = 0;
    error.clear();
    EXPECT_EQ(Adapter::create(config, &error), nullptr);
    EXPECT_FALSE(error.empty());
    /* One is the slowpath's, whatever the number of groups. */
    EXPECT_NE(Adapter::create(host_config("hp", Wire::loopback, 4), nullptr), nullptr);
    config.engine_threads = 2;
    config.engine_placement = EnginePlacement::threads;
    EXPECT_NE(Adapter::create(config, nullptr), nullptr);
}

TEST(HostPlacement, OnlyTheSlowpathHasAThread)
{
    /* Two groups: engine threads would be cna-hostthr and cna1-hostthr. */
    auto adapter = Adapter::create(host_config("hostthr", Wire::loopback, 2), nullptr);
    ASSERT_NE(adapter, nullptr);
    EXPECT_GE(thread_cpu_seconds("cna-hostthr"), 0);
    EXPECT_EQ(thread_cpu_seconds("cna1-hostthr"), -1);
    EXPECT_EQ(adapter->set_engine_affinity(0, 0), 0);
    EXPECT_EQ(adapter->set_engine_affinity(0, -1), 0);
    EXPECT_EQ(adapter->set_engine_affinity(1, 0), -EINVAL);
}

/* The slowpath (MFW mailbox, SPQ ramrods, link) needs no pass: nobody calls
 * engine_pass here. */
TEST(HostPlacement, SlowpathRunsWithoutPasses)
{
    auto adapter = Adapter::create(host_config("hostslow", Wire::loopback, 1), nullptr);
    ASSERT_NE(adapter, nullptr);
    FakeDriver drv(*adapter, 0);
    ASSERT_NO_FATAL_FAILURE(bring_up_l2(drv)); /* load, PF_START, INIT_PHY, vport and queue ramrods */
    ASSERT_TRUE(wait_link(drv));
    const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(drv.filter(FilterOpcode::add, FilterType::mac, 0, mac), FwReturn::ok) << i;
        ASSERT_EQ(drv.filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::ok) << i;
    }
    EXPECT_FALSE(drv.eqe_timed_out());
}

/* A one-port loopback adapter whose dataplane the test's threads run. */
class HostLoopback : public L2PortTest {
protected:
    void SetUp() override { bring_up("hostloop", EnginePlacement::host); }
};

TEST_F(HostLoopback, TxWaitsForAPassAndOnePassDeliversIt)
{
    DeviceFunction& fn = drv->fn();
    EXPECT_FALSE(fn.engine_pass(PassCause::doorbell)) << "a pass with nothing to do";
    constexpr uint32_t N = 8;
    for (uint32_t i = 0; i < N; i++)
        drv->send(0, numbered_frame(i));
    /* No engine thread serves the doorbells. */
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(drv->rx_poll(0).empty());
    EXPECT_EQ(drv->tx_free(0), 64u - N) << "the adapter consumed Tx BDs without a pass";
    EXPECT_EQ(drv->vport_stats(0).tx_bcast_pkts, 0u);
    /* One pass: sent, looped back, completed, status blocks written. */
    EXPECT_TRUE(fn.engine_pass(PassCause::doorbell));
    EXPECT_EQ(check_numbered(drv->rx_poll(0), 0, N), "");
    EXPECT_EQ(drv->tx_free(0), 64u);
    EXPECT_EQ(drv->vport_stats(0).tx_bcast_pkts, N);
    EXPECT_EQ(drv->vport_stats(0).rx_bcast_pkts, N);
    EXPECT_FALSE(fn.engine_pass(PassCause::doorbell)) << "idle again";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(drv->rx_poll(0).empty()) << "a frame delivered twice";
    /* And again: still nothing without a pass. */
    drv->send(0, numbered_frame(N));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(drv->rx_poll(0).empty());
    EXPECT_TRUE(fn.engine_pass(PassCause::doorbell));
    EXPECT_EQ(check_numbered(drv->rx_poll(0), N, 1), "");
}

TEST(HostPlacement, EnginePassIsFalseWithEngineThreads)
{
    auto adapter = Adapter::create(config_of("threadspass", Wire::loopback, 1, 1), nullptr);
    ASSERT_NE(adapter, nullptr);
    FakeDriver drv(*adapter, 0);
    ASSERT_NO_FATAL_FAILURE(bring_up_l2(drv));
    ASSERT_TRUE(wait_link(drv));
    EXPECT_FALSE(drv.fn().engine_pass(PassCause::doorbell));
    /* Frames waiting or not: the engine thread sends them, never the caller. */
    for (uint32_t round = 0; round < 50; round++) {
        for (uint32_t i = 0; i < 8; i++)
            drv.send(0, numbered_frame(round * 8 + i));
        EXPECT_FALSE(drv.fn().engine_pass(PassCause::doorbell)) << "round " << round;
        ASSERT_EQ(check_numbered(drv.rx_wait(0, 8, std::chrono::seconds(2)), round * 8, 8), "") << "round " << round;
    }
}

/* A cable pair (one port group), PF n on port n, and for the four-port
 * variant a second pair (another group) on ports 2 and 3. */
class HostCable : public ::testing::Test {
protected:
    void bring_up(uint32_t ports, const L2Setup& setup = {})
    {
        adapter = Adapter::create(host_config("hostcable", Wire::cable, ports), nullptr);
        ASSERT_NE(adapter, nullptr);
        for (uint32_t pf = 0; pf < ports; pf++) {
            drv.push_back(std::make_unique<FakeDriver>(*adapter, pf));
            ASSERT_EQ(bring_up_l2(*drv.back(), setup), "");
        }
        for (auto& d : drv)
            ASSERT_TRUE(wait_link(*d));
    }

    std::unique_ptr<Adapter> adapter;
    std::vector<std::unique_ptr<FakeDriver>> drv;
};

TEST_F(HostCable, APassServesItsFunctionsGroupOnly)
{
    ASSERT_NO_FATAL_FAILURE(bring_up(4));
    /* PF 2 (group 1) sends to PF 3: passes of group 0 do not send it, a
     * pass on the partner's function (the same group) does; and the other
     * way, in group 0, PF 0 to PF 1. */
    struct Case {
        int sender, partner, others[2];
        uint32_t number;
    };
    for (const Case& c : {Case{2, 3, {0, 1}, 7}, Case{0, 1, {2, 3}, 8}}) {
        drv[c.sender]->send(0, numbered_frame(c.number));
        for (int other : c.others)
            EXPECT_FALSE(drv[other]->fn().engine_pass(PassCause::doorbell)) << "PF " << other;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_TRUE(drv[c.partner]->rx_poll(0).empty());
        EXPECT_TRUE(drv[c.partner]->fn().engine_pass(PassCause::doorbell));
        EXPECT_EQ(check_numbered(drv[c.partner]->rx_poll(0), c.number, 1), "");
    }
}

/* Two host threads passing without pause, one on each PF's function, while
 * the test rings PF 0's doorbells: each frame reaches PF 1 once, in order. */
TEST_F(HostCable, ConcurrentPassesDeliverEveryFrameOnce)
{
    ASSERT_NO_FATAL_FAILURE(bring_up(2));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> worked[2] = {0, 0};
    std::vector<std::thread> passers;
    for (uint32_t t = 0; t < 2; t++)
        passers.emplace_back([&, t] {
            while (!stop.load(std::memory_order_relaxed))
                if (drv[t]->fn().engine_pass(PassCause::doorbell))
                    worked[t]++;
        });
    constexpr uint32_t ROUNDS = 500, BURST = 16;
    std::string error;
    uint32_t round = 0;
    for (; round < ROUNDS && error.empty(); round++) {
        for (uint32_t i = 0; i < BURST; i++)
            drv[0]->send(0, numbered_frame(round * BURST + i));
        error = check_numbered(drv[1]->rx_wait(0, BURST, std::chrono::seconds(2)), round * BURST, BURST);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::size_t extra = drv[1]->rx_poll(0).size();
    stop = true;
    for (auto& t : passers)
        t.join();
    EXPECT_EQ(error, "") << "round " << round - 1;
    EXPECT_EQ(extra, 0u) << "frames delivered more than once";
    EXPECT_EQ(drv[0]->vport_stats(0).tx_bcast_pkts, ROUNDS * BURST);
    EXPECT_EQ(drv[1]->vport_stats(0).rx_bcast_pkts, ROUNDS * BURST);
    EXPECT_EQ(drv[1]->rx_queue_stats(0).drops, 0u);
    EXPECT_GT(worked[0] + worked[1], 0u);
}

/* Two threads meeting at each wait() (a spinning barrier: a thread
 * blocked in the kernel would wake too late to overlap the other's pass). */
class SpinBarrier {
public:
    void wait()
    {
        const uint32_t phase = phase_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) == 1) {
            arrived_.store(0, std::memory_order_relaxed);
            phase_.store(phase + 1, std::memory_order_release);
            return;
        }
        while (phase_.load(std::memory_order_acquire) == phase)
            std::this_thread::yield();
    }

private:
    std::atomic<uint32_t> arrived_{0};
    std::atomic<uint32_t> phase_{0};
};

/* Pins `t` to the `n`th CPU this process may use, if it may use more than
 * one (two threads meant to overlap, the scheduler not putting them on one
 * CPU). */
void pin_to_nth_cpu(std::thread& t, int n)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2)
        return;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed) && n-- == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_setaffinity_np(t.native_handle(), sizeof(one), &one);
            return;
        }
    }
}

/* Each of two threads rings its PF's doorbell and asks for one pass, then
 * waits for its partner's burst without passing again. A thread that finds
 * the other in the pass leaves it the request, and that one passes again: no
 * burst is left behind, or the partner waiting for it never gets it (the
 * threads go in lockstep, so no later pass rescues it). In each round one
 * thread rings first and passes at once, with a long burst; the other rings
 * while that pass runs, likely after it looked at the other's queue, and
 * then asks for its pass. The request and the holder's last look at it are a
 * store then a load on each side (the flag then the lock word, the lock word
 * then the flag): without a full fence between them on both sides, the two
 * can miss each other (a failed try_lock is a plain load). */
TEST_F(HostCable, APassLeftToTheHolderIsNotLost)
{
    ASSERT_NO_FATAL_FAILURE(bring_up(2));
    constexpr uint32_t LONG_BURST = 32, SHORT_BURST = 8;
    /* Rounds for 3 s (a lost request is a narrow race), and on until the
     * hand-over happened at least once, 10 s at most. */
    const auto start = std::chrono::steady_clock::now();
    SpinBarrier sync;
    std::atomic<uint32_t> sync_jitter{0};
    std::atomic<bool> failed{false};
    std::atomic<bool> enough{false};
    std::atomic<uint32_t> handoffs{0};
    std::string errors[2];
    uint32_t rounds = 0;
    uint64_t frames_sent[2] = {0, 0};
    /* Frame numbers: round r's long burst from r * 64, its short one from
     * r * 64 + 32; bigger frames in the long one (a longer pass). */
    auto burst = [](uint32_t r, bool early) {
        std::vector<std::vector<uint8_t>> frames;
        for (uint32_t i = 0; i < (early ? LONG_BURST : SHORT_BURST); i++) {
            const uint32_t seq = r * 64 + (early ? 0 : LONG_BURST) + i;
            std::vector<uint8_t> f = eth_frame(BCAST, PEER_MAC, 0x88b5, early ? 1400 : 46 + i);
            for (int b = 0; b < 4; b++)
                f[f.size() - 4 + b] = static_cast<uint8_t>(seq >> (24 - 8 * b));
            frames.push_back(std::move(f));
        }
        return frames;
    };
    auto side = [&](uint32_t me) {
        FakeDriver& own = *drv[me];
        for (uint32_t r = 0;; r++) {
            const bool early = r % 2 == me;
            const auto mine = burst(r, early);
            const auto theirs = burst(r, !early);
            sync.wait(); /* both out of the last round's passes */
            if (failed || enough)
                break; /* both threads see the same: set before the barrier */
            if (early)
                for (const auto& f : mine)
                    own.send(0, f);
            sync.wait();
            if (!early) {
                for (const auto& f : mine)
                    own.send(0, f);
                /* The request at a different point of the other's pass
                 * each round, its end included. */
                for (uint32_t spin = (r * 7919u) % 16384u; spin != 0; spin--)
                    (void)sync_jitter.load(std::memory_order_relaxed);
            }
            const bool worked = own.fn().engine_pass(PassCause::doorbell);
            if (!early && !worked)
                handoffs++; /* the other thread's pass sent them, or is to */
            frames_sent[me] += mine.size();
            const auto got = own.rx_wait(0, theirs.size(), std::chrono::seconds(2));
            std::string error;
            if (got.size() != theirs.size())
                error = std::to_string(got.size()) + " of the partner's " + std::to_string(theirs.size()) +
                        " frames arrived";
            for (std::size_t i = 0; error.empty() && i < got.size(); i++)
                if (got[i].data != theirs[i])
                    error = "frame " + std::to_string(i) + " differs";
            if (!error.empty()) {
                errors[me] = "round " + std::to_string(r) + (early ? " (rang first): " : " (rang second): ") + error;
                failed = true;
            }
            if (me == 0) {
                rounds = r + 1;
                const auto elapsed = std::chrono::steady_clock::now() - start;
                if ((elapsed > std::chrono::seconds(3) && handoffs > 0) || elapsed > std::chrono::seconds(10))
                    enough = true;
            }
        }
    };
    std::thread sides[2] = {std::thread(side, 0), std::thread(side, 1)};
    pin_to_nth_cpu(sides[0], 0);
    pin_to_nth_cpu(sides[1], 1);
    for (auto& t : sides)
        t.join();
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
    /* The hand-over happened (else the test proved nothing), as it does
     * with the two threads on two CPUs. */
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && CPU_COUNT(&allowed) >= 2) {
        EXPECT_GT(handoffs.load(), 0u) << "in " << rounds << " rounds";
    }
    /* Nothing left over or repeated. */
    EXPECT_FALSE(drv[0]->fn().engine_pass(PassCause::doorbell));
    for (uint32_t pf = 0; pf < 2; pf++) {
        EXPECT_TRUE(drv[pf]->rx_poll(0).empty()) << "PF " << pf;
        EXPECT_EQ(drv[pf]->vport_stats(0).tx_bcast_pkts, frames_sent[pf]) << "PF " << pf;
        EXPECT_EQ(drv[pf ^ 1]->vport_stats(0).rx_bcast_pkts, frames_sent[pf]) << "PF " << pf;
    }
    RecordProperty("rounds", static_cast<int>(rounds));
    RecordProperty("handoffs", static_cast<int>(handoffs.load()));
}

/* Ramrods while host threads pass and carry traffic: the slowpath takes
 * the group's pass lock between two passes (a pass finding it waiting
 * leaves it the request) and no frame is lost or damaged. */
/* Two threads each send on a Tx queue of its own of PF 0 and have its
 * doorbell served (DeviceFunction::doorbell_pass), in passes that run beside
 * each other and beside the group's, which a third thread keeps running
 * (idle passes, which also look at both Tx queues). Both queues' frames go
 * to PF 1's one Rx queue, which the passes claim in turn. Every frame
 * arrives once, each queue's in order, and the counters the passes share
 * add up. */
TEST_F(HostCable, QueuePassesRunBesideEachOtherAndTheGroupsPass)
{
    L2Setup setup;
    setup.tx_queues = 2;
    ASSERT_NO_FATAL_FAILURE(bring_up(2, setup));
    constexpr uint32_t SENDERS = 2, BURST = 8, ROUNDS = 400, SENDER_BIT = 1u << 20;
    std::atomic<bool> stop{false};
    std::atomic<uint32_t> received[SENDERS] = {0, 0};
    std::atomic<uint64_t> served_here{0};
    std::thread idle([&] {
        while (!stop.load(std::memory_order_relaxed))
            drv[1]->fn().engine_pass(PassCause::idle);
    });
    std::vector<std::thread> senders;
    for (uint32_t t = 0; t < SENDERS; t++)
        senders.emplace_back([&, t] {
            const uint32_t offset = db_offset(drv[0]->tx_cid(static_cast<uint16_t>(t)));
            for (uint32_t round = 0; round < ROUNDS && !stop.load(std::memory_order_relaxed); round++) {
                std::vector<std::vector<uint8_t>> burst;
                for (uint32_t i = 0; i < BURST; i++)
                    burst.push_back(numbered_frame(t * SENDER_BIT + round * BURST + i));
                drv[0]->send_burst(static_cast<uint16_t>(t), burst);
                if (drv[0]->fn().doorbell_pass(offset))
                    served_here++;
                /* The next burst once this one is in: the Rx ring never fills. */
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (received[t].load(std::memory_order_acquire) < (round + 1) * BURST &&
                       std::chrono::steady_clock::now() < deadline)
                    std::this_thread::yield();
            }
        });
    std::string error;
    uint32_t next[SENDERS] = {0, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (error.empty() && next[0] + next[1] < SENDERS * ROUNDS * BURST &&
           std::chrono::steady_clock::now() < deadline) {
        for (const FakeDriver::RxFrame& f : drv[1]->rx_poll(0)) {
            const std::size_t n = f.data.size();
            const uint32_t seq =
                n < 4 ? 0 : uint32_t{f.data[n - 4]} << 24 | f.data[n - 3] << 16 | f.data[n - 2] << 8 | f.data[n - 1];
            const uint32_t t = seq / SENDER_BIT;
            if (t >= SENDERS || seq % SENDER_BIT != next[t] || f.data != numbered_frame(seq)) {
                error = "queue " + std::to_string(t) + ": frame " + std::to_string(seq % SENDER_BIT) + " where " +
                        std::to_string(t < SENDERS ? next[t] : 0) + " was next (lost, repeated, reordered or damaged)";
                break;
            }
            received[t].store(++next[t], std::memory_order_release);
        }
    }
    stop = true;
    for (auto& t : senders)
        t.join();
    idle.join();
    EXPECT_EQ(error, "");
    EXPECT_EQ(next[0], ROUNDS * BURST);
    EXPECT_EQ(next[1], ROUNDS * BURST);
    EXPECT_TRUE(drv[1]->rx_poll(0).empty()) << "frames delivered more than once";
    EXPECT_EQ(drv[0]->vport_stats(0).tx_bcast_pkts, SENDERS * ROUNDS * BURST);
    EXPECT_EQ(drv[1]->vport_stats(0).rx_bcast_pkts, SENDERS * ROUNDS * BURST);
    EXPECT_EQ(drv[1]->rx_queue_stats(0).pkts, SENDERS * ROUNDS * BURST);
    EXPECT_EQ(drv[1]->rx_queue_stats(0).drops, 0u);
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, SENDERS * ROUNDS * BURST);
    EXPECT_GT(served_here.load(), 0u) << "no doorbell was served on its own thread";
}

TEST_F(HostCable, SlowpathRunsBetweenHostPasses)
{
    /* Traffic in group 0 (PF 0 to PF 1, its doorbells served in queue
     * passes), ramrods on PF 2 (group 1): the slowpath holds every group's
     * passes off, the queue passes too, whichever PF it serves. */
    ASSERT_NO_FATAL_FAILURE(bring_up(4));
    std::atomic<bool> done{false};
    std::atomic<bool> give_up{false};
    std::atomic<bool> stop_passing{false};
    std::atomic<int> ramrods{0};
    std::thread passer([&] {
        while (!stop_passing.load(std::memory_order_relaxed))
            drv[1]->fn().engine_pass(PassCause::idle);
    });
    std::string traffic;
    uint32_t sent = 0;
    std::thread carrier([&] {
        constexpr uint32_t BURST = 16;
        while (traffic.empty() && !give_up && (sent < 300 * BURST || ramrods < 20)) {
            for (uint32_t i = 0; i < BURST; i++)
                drv[0]->send(0, numbered_frame(sent + i));
            drv[0]->fn().doorbell_pass(db_offset(drv[0]->tx_cid(0)));
            traffic = check_numbered(drv[1]->rx_wait(0, BURST, std::chrono::seconds(2)), sent, BURST);
            sent += BURST;
        }
        done = true;
    });
    const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    std::string slowpath;
    while (!done && slowpath.empty()) {
        if (drv[2]->filter(FilterOpcode::add, FilterType::mac, 0, mac) != FwReturn::ok ||
            drv[2]->filter(FilterOpcode::remove, FilterType::mac, 0, mac) != FwReturn::ok)
            slowpath = "a filter ramrod failed after " + std::to_string(ramrods) + " ramrods";
        ramrods += 2;
    }
    give_up = true;
    carrier.join();
    stop_passing = true;
    passer.join();
    EXPECT_EQ(slowpath, "");
    EXPECT_EQ(traffic, "");
    EXPECT_GE(ramrods, 20);
    EXPECT_EQ(drv[1]->vport_stats(0).rx_bcast_pkts, sent);
    EXPECT_EQ(drv[1]->rx_queue_stats(0).drops, 0u);
}

} // namespace
} // namespace cna::fw::test
