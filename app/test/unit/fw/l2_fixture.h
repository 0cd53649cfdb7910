/* SPDX-License-Identifier: BSD-3-Clause
 * A PF brought up for traffic: loaded, PF started, link up, one vport with
 * Rx queues 0..n-1 (SBs 0..n-1) and Tx queue 0 (SB n).
 */
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "fake_driver.h"

namespace cna::fw::test {

/* The fixture's form of the shared bring-up (fake_driver.h): one Tx queue,
 * 64-element rings, and a gtest failure naming the step that failed. */
inline void bring_up_l2(FakeDriver& drv, uint16_t rx_queues = 1, uint16_t accept = 0, uint16_t mtu = 1500,
                        uint8_t max_bds = 1, bool strip = false, uint16_t bd_max_bytes = 2048)
{
    L2Setup setup;
    setup.rx_queues = rx_queues;
    setup.accept = accept;
    setup.mtu = mtu;
    setup.max_bds = max_bds;
    setup.strip = strip;
    setup.bd_max_bytes = bd_max_bytes;
    ASSERT_EQ(bring_up_l2(drv, setup), "");
}

/* A one-port adapter on a loopback wire with its PF brought up for traffic. */
class L2PortTest : public ::testing::Test {
protected:
    void bring_up(const char* adapter_name, EnginePlacement placement = EnginePlacement::threads)
    {
        AdapterConfig config;
        config.name = adapter_name;
        config.link_up_delay_ms = 0;
        config.engine_placement = placement;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
        drv = std::make_unique<FakeDriver>(*adapter, 0);
        bring_up_l2(*drv);
        ASSERT_TRUE(wait_link(*drv));
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
};

} // namespace cna::fw::test
