/* SPDX-License-Identifier: BSD-3-Clause
 * A PF brought up for traffic: loaded, PF started, link up, one vport with
 * Rx queues 0..n-1 (SBs 0..n-1) and Tx queue 0 (SB n).
 */
#pragma once

#include <memory>

#include <gtest/gtest.h>

#include "fake_driver.h"

namespace cna::fw::test {

inline void bring_up_l2(FakeDriver& drv, uint16_t rx_queues = 1, uint16_t accept = 0, uint16_t mtu = 1500,
                        uint8_t max_bds = 1, bool strip = false, uint16_t bd_max_bytes = 2048)
{
    using namespace hsi;
    ASSERT_NE(drv.load(), 0u);
    ASSERT_EQ(drv.start_pf(), FwReturn::ok);
    mfw::DrvPhyCfg cfg{};
    drv.write_union(&cfg, sizeof(cfg));
    ASSERT_EQ(drv.mcp_cmd(mfw::DRV_MSG_CODE_INIT_PHY), mfw::FW_MSG_CODE_LINK_DONE);
    ASSERT_EQ(drv.vport_start(0, mtu, max_bds, strip), FwReturn::ok);
    for (uint16_t q = 0; q < rx_queues; q++) {
        ASSERT_EQ(drv.rx_queue_start(q, 0, q, bd_max_bytes), FwReturn::ok);
        drv.rx_post(q, 63);
    }
    ASSERT_EQ(drv.tx_queue_start(0, 0, rx_queues), FwReturn::ok);
    if (accept == 0)
        accept = eth::accept::UCAST_UNMATCHED | eth::accept::MCAST_UNMATCHED | eth::accept::BCAST;
    ASSERT_EQ(drv.vport_activate(0, accept), FwReturn::ok);
}

inline bool wait_link(FakeDriver& drv)
{
    using namespace hsi::mfw;
    return wait_until([&] {
        return drv.rd(port_addr(drv.fn().port_id()) + offsetof(PublicPort, link_status)) & LINK_STATUS_LINK_UP;
    });
}

/* A one-port adapter on a loopback wire with its PF brought up for traffic. */
class L2PortTest : public ::testing::Test {
protected:
    void bring_up(const char* adapter_name)
    {
        AdapterConfig config;
        config.name = adapter_name;
        config.link_up_delay_ms = 0;
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
