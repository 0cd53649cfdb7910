/* SPDX-License-Identifier: BSD-3-Clause
 * Several engine threads: one per port group at most, each named and
 * pinnable, every group carrying traffic at once, and the slowpath holding
 * the other threads between passes without losing or damaging a frame.
 */
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <thread>

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

} // namespace
} // namespace cna::fw::test
