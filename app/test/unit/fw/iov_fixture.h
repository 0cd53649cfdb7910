/* SPDX-License-Identifier: BSD-3-Clause
 * A PF with VFs for the adapter's tests: a cabled adapter, PF 0 and the
 * cable's other end (PF 1) up for L2, PF 0's link up, and the VFs the PF
 * enables, each brought up as a plain L2 function when a test wants it.
 */
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "fake_driver.h"
#include "hsi_iov.h"

namespace cna::fw::test {

class PfWithVfs : public ::testing::Test {
protected:
    /* Call through ASSERT_NO_FATAL_FAILURE. */
    void bring_up(const char* name, const L2Setup& pf_setup = L2Setup{}, const L2Setup& peer_setup = L2Setup{})
    {
        adapter = Adapter::create(cabled_ports(name), nullptr);
        ASSERT_NE(adapter, nullptr);
        pf = std::make_unique<FakeDriver>(*adapter, 0);
        peer = std::make_unique<FakeDriver>(*adapter, 1); /* at the cable's other end */
        ASSERT_EQ(bring_up_l2(*pf, pf_setup), "");
        ASSERT_EQ(bring_up_l2(*peer, peer_setup), "");
        ASSERT_TRUE(wait_link(*pf));
    }

    void enable_vfs(uint32_t count)
    {
        pf->wr(hsi::reg::IOV_NUM_VFS, count);
        for (uint32_t vf = 0; vf < count; vf++) {
            pf->wr(hsi::reg::IOV_VF_SELECT, vf);
            pf->wr(hsi::reg::IOV_VF_CTRL, hsi::reg::IOV_VF_CTRL_ENABLE);
        }
    }

    /* A VF's vport with Rx queue 0 (SB 0) and Tx queue 0 (SB 1), its MAC as
     * its one filter, taking matched unicast and broadcast. */
    std::unique_ptr<FakeDriver> bring_up_vf(uint32_t vf, const uint8_t* mac)
    {
        using namespace hsi::eth;
        auto drv = std::make_unique<FakeDriver>(*adapter, *pf, vf);
        EXPECT_EQ(drv->vport_start(0), hsi::FwReturn::ok);
        EXPECT_EQ(drv->rx_queue_start(0, 0, 0), hsi::FwReturn::ok);
        drv->rx_post(0, 63);
        EXPECT_EQ(drv->tx_queue_start(0, 0, 1), hsi::FwReturn::ok);
        EXPECT_EQ(drv->filter(FilterOpcode::add, FilterType::mac, 0, mac), hsi::FwReturn::ok);
        EXPECT_EQ(drv->vport_activate(0, accept::UCAST_MATCHED | accept::BCAST), hsi::FwReturn::ok);
        return drv;
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> pf;
    std::unique_ptr<FakeDriver> peer;
};

} // namespace cna::fw::test
