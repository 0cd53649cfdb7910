/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV in the adapter: VFs as PCI functions of their own, enabled by their
 * PF; their L2 objects made by the PF's ramrods and served with the VF's own
 * memory, status blocks and pages; the port's switch between its functions;
 * the channel's events and the DMAE on the PF's side; malice and FLR.
 */
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "fake_driver.h"
#include "hsi_iov.h"
#include "iov_fixture.h"
#include "l2/tx_rate.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;
namespace iov = hsi::iov;

constexpr uint8_t VF0_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0xf0, 0x00};
constexpr uint8_t VF1_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0xf0, 0x01};

class Iov : public PfWithVfs {
protected:
    void SetUp() override
    {
        L2Setup setup;
        setup.accept = accept::UCAST_MATCHED | accept::BCAST;
        ASSERT_NO_FATAL_FAILURE(bring_up("iov", setup));
    }

    /* As SHMEM tells it, read through the cable's other end. */
    bool port0_link_up()
    {
        return peer->rd(mfw::port_addr(0) + offsetof(mfw::PublicPort, link_status)) & mfw::LINK_STATUS_LINK_UP;
    }

    std::vector<EventRingElement> iov_events()
    {
        std::vector<EventRingElement> found;
        for (const EventRingElement& e : pf->take_async_events())
            if (e.protocol_id == static_cast<uint8_t>(ProtocolId::iov))
                found.push_back(e);
        return found;
    }
};

TEST_F(Iov, PfEnablesVfsWithinWhatTheMfwAllows)
{
    EXPECT_EQ(pf->rd(reg::IOV_MAX_VFS), iov::MAX_VFS_PER_PF);
    EXPECT_EQ(adapter->vf_function(0, 0), nullptr) << "no VF before the PF enables one";
    pf->wr(reg::IOV_NUM_VFS, iov::MAX_VFS_PER_PF + 1);
    EXPECT_EQ(pf->rd(reg::IOV_NUM_VFS), 0u) << "past IOV_MAX_VFS: refused";
    pf->wr(reg::IOV_NUM_VFS, 2);
    EXPECT_EQ(pf->rd(reg::IOV_NUM_VFS), 2u);
    DeviceFunction* vf1 = adapter->vf_function(0, 1);
    ASSERT_NE(vf1, nullptr);
    EXPECT_EQ(adapter->vf_function(0, 2), nullptr);
    EXPECT_TRUE(vf1->is_vf());
    EXPECT_EQ(vf1->vf_id(), 1u);
    EXPECT_EQ(vf1->pf_id(), 0u);
    EXPECT_EQ(vf1->msix_count(), iov::VF_MSIX_VECTORS);
    EXPECT_EQ(vf1->bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled))
        << "disabled until the PF enables it";
    pf->wr(reg::IOV_VF_SELECT, 1);
    pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
    EXPECT_EQ(vf1->bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::idle));
    EXPECT_EQ(vf1->bar0_read(iov::vf_bar0::SIZE), 0xffffffffu) << "past the VF's BAR0";

    pf->wr(reg::IOV_NUM_VFS, 1);
    EXPECT_EQ(adapter->vf_function(0, 1), nullptr);
    EXPECT_EQ(vf1->bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled))
        << "a VF the PF removed answers nothing, its function still there";
}

TEST_F(Iov, VfRamrodsStayWithinTheVfGrant)
{
    enable_vfs(1);
    FakeDriver vf(*adapter, *pf, 0);
    ASSERT_EQ(vf.vport_start(0), FwReturn::ok);
    EXPECT_EQ(vf.vport_start(1), FwReturn::no_resource) << "a VF has one vport";
    EXPECT_EQ(vf.rx_queue_start(iov::MAX_VF_QUEUES, 0, 0), FwReturn::no_resource);
    EXPECT_EQ(vf.rx_queue_start(0, 0, iov::MAX_VF_SBS), FwReturn::no_resource) << "SB past the VF's";
    TxQueueStartRamrodData d{};
    d.vport_id = iov::vf_vport(0);
    d.sb_pi = L2_PI_TX;
    d.queue_id = 1;
    d.bd_ring_size = 64;
    d.cid = cid_tx_queue(2);
    EXPECT_EQ(pf->eth(EthCmd::tx_queue_start, &d, sizeof(d)), FwReturn::invalid_param)
        << "a VF's queue rings its own doorbell";
    d.vport_id = iov::vf_vport(3);
    EXPECT_EQ(pf->eth(EthCmd::tx_queue_start, &d, sizeof(d)), FwReturn::no_resource) << "VF 3 is not enabled";
}

TEST_F(Iov, VfToVfFramesAreSwitchedInsideTheAdapter)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    const PortCounters before = adapter->control().port_counters(0);

    vf0->send(0, udp4_frame(VF1_MAC, VF0_MAC, 0x0a000001, 0x0a000002, 1000, 2000, 100));
    auto got = vf1->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(std::memcmp(got[0].data.data(), VF1_MAC, 6), 0);
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_TRUE(vf0->rx_poll(0).empty()) << "the sender does not see its own frame";
    EXPECT_TRUE(pf->rx_poll(0).empty()) << "not the PF's";
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, before.wire_tx_frames)
        << "a frame for a function of the port never leaves the adapter";
    EXPECT_EQ(vf0->vport_stats(0).tx_ucast_pkts, 1u);
    EXPECT_EQ(vf1->vport_stats(0).rx_ucast_pkts, 1u);

    /* The VF to the PF, the PF to the VF: the same switch. */
    const std::array<uint8_t, 6> pf_mac = pf->mac();
    ASSERT_EQ(pf->filter(FilterOpcode::add, FilterType::mac, 0, pf_mac.data()), FwReturn::ok);
    vf1->send(0, eth_frame(pf_mac.data(), VF1_MAC, 0x88b5, 60));
    EXPECT_EQ(pf->rx_wait(0, 1).size(), 1u);
    pf->send(0, eth_frame(VF0_MAC, pf_mac.data(), 0x88b5, 60));
    EXPECT_EQ(vf0->rx_wait(0, 1).size(), 1u);
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, before.wire_tx_frames);

    /* A broadcast reaches the port's other functions and the wire. */
    vf0->send(0, eth_frame(BCAST, VF0_MAC, 0x88b5, 60));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u);
    EXPECT_EQ(pf->rx_wait(0, 1).size(), 1u);
    EXPECT_TRUE(wait_until([&] { return adapter->control().port_counters(0).wire_tx_frames == before.wire_tx_frames + 1; }));
    /* ... and a frame for no function of the port, the wire alone. */
    vf0->send(0, eth_frame(PEER_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_TRUE(wait_until([&] { return adapter->control().port_counters(0).wire_tx_frames == before.wire_tx_frames + 2; }));
    EXPECT_TRUE(vf1->rx_poll(0).empty());
    EXPECT_EQ(peer->rx_wait(0, 2).size(), 2u) << "the broadcast and the frame for the peer, over the cable";
}

TEST_F(Iov, ChannelRaisesAnEventAndDmaeCopiesBetweenPfAndVf)
{
    enable_vfs(1);
    FakeDriver vf(*adapter, *pf, 0);
    HostMem request = vf.alloc(4096);
    for (uint32_t i = 0; i < 64; i++)
        request.va[i] = static_cast<uint8_t>(0xa0 + i);
    DeviceFunction& fn = vf.fn();
    fn.bar0_write(iov::vf_bar0::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(request.iova));
    fn.bar0_write(iov::vf_bar0::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(request.iova >> 32));
    fn.bar0_write(iov::vf_bar0::CHANNEL_TRIGGER, 1);
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::pending));

    std::vector<EventRingElement> events;
    ASSERT_TRUE(wait_until([&] {
        auto more = iov_events();
        events.insert(events.end(), more.begin(), more.end());
        return !events.empty();
    }));
    EXPECT_EQ(events[0].opcode, static_cast<uint8_t>(iov::IovEvent::vf_message));
    EXPECT_EQ(events[0].echo, 0);
    EXPECT_EQ(events[0].data, request.iova);

    /* The PF copies the request in, and a reply out. */
    HostMem copy = pf->alloc(4096);
    auto dmae = [&](uint64_t src, uint64_t dst, uint32_t len, uint32_t ctrl) {
        pf->wr(reg::DMAE_SRC_LO, static_cast<uint32_t>(src));
        pf->wr(reg::DMAE_SRC_HI, static_cast<uint32_t>(src >> 32));
        pf->wr(reg::DMAE_DST_LO, static_cast<uint32_t>(dst));
        pf->wr(reg::DMAE_DST_HI, static_cast<uint32_t>(dst >> 32));
        pf->wr(reg::DMAE_LEN, len);
        pf->wr(reg::DMAE_CTRL, ctrl);
        pf->wr(reg::DMAE_GO, 1);
        return static_cast<iov::DmaeStatus>(pf->rd(reg::DMAE_STATUS));
    };
    ASSERT_EQ(dmae(request.iova, copy.iova, 64, reg::DMAE_CTRL_SRC_VF), iov::DmaeStatus::done);
    EXPECT_EQ(std::memcmp(copy.va, request.va, 64), 0);
    copy.va[0] = 0x5a;
    ASSERT_EQ(dmae(copy.iova, request.iova + 2048, 1, reg::DMAE_CTRL_DST_VF), iov::DmaeStatus::done);
    EXPECT_EQ(request.va[2048], 0x5a);
    EXPECT_EQ(dmae(request.iova, copy.iova, 64, 0), iov::DmaeStatus::src_fault)
        << "a VF's IOVA means nothing in the PF's domain";
    EXPECT_EQ(dmae(copy.iova, copy.iova + 64, 64, reg::DMAE_CTRL_DST_VF), iov::DmaeStatus::dst_fault)
        << "nor the PF's in the VF's";
    EXPECT_EQ(dmae(copy.iova, request.iova, 0, reg::DMAE_CTRL_DST_VF), iov::DmaeStatus::bad_request);
    EXPECT_EQ(dmae(request.iova, copy.iova, 64, reg::DMAE_CTRL_SRC_VF | 5u << reg::DMAE_CTRL_VF_SHIFT),
              iov::DmaeStatus::bad_request)
        << "a VF the PF has not enabled";

    pf->wr(reg::IOV_VF_SELECT, 0);
    pf->wr(reg::IOV_VF_CHANNEL_DONE, 1);
    EXPECT_EQ(fn.bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::idle));

    /* Two triggers without the PF in between: malice. */
    fn.bar0_write(iov::vf_bar0::CHANNEL_TRIGGER, 1);
    fn.bar0_write(iov::vf_bar0::CHANNEL_TRIGGER, 1);
    EXPECT_EQ(pf->rd(reg::IOV_MALICIOUS), 1u);
    events.clear();
    ASSERT_TRUE(wait_until([&] {
        auto more = iov_events();
        events.insert(events.end(), more.begin(), more.end());
        return std::any_of(events.begin(), events.end(), [](const EventRingElement& e) {
            return e.opcode == static_cast<uint8_t>(iov::IovEvent::vf_malicious);
        });
    }));
    pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
    EXPECT_EQ(pf->rd(reg::IOV_MALICIOUS), 0u) << "the PF enabling it again clears it";
}

TEST_F(Iov, AQueueBreakingItsProtocolMakesTheVfMalicious)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    vf0->ring_doorbell_at(vf0->tx_cid(0), 200); /* more than the 64-entry ring ahead */
    std::vector<EventRingElement> events;
    ASSERT_TRUE(wait_until([&] {
        auto more = iov_events();
        events.insert(events.end(), more.begin(), more.end());
        return !events.empty();
    }));
    EXPECT_EQ(events[0].opcode, static_cast<uint8_t>(iov::IovEvent::vf_malicious));
    EXPECT_EQ(events[0].echo, 0);
    EXPECT_EQ(events[0].data, static_cast<uint64_t>(iov::MaliciousWhy::queue_error));
    EXPECT_EQ(pf->rd(reg::IOV_MALICIOUS), 1u);
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled));
    /* Its objects are gone; the other VF carries on. */
    EXPECT_EQ(vf0->vport_start(0), FwReturn::ok) << "the malicious VF's vport was forgotten";
    vf1->send(0, eth_frame(BCAST, VF1_MAC, 0x88b5, 60));
    EXPECT_EQ(pf->rx_wait(0, 1).size(), 1u);
}

TEST_F(Iov, FunctionLevelResetForgetsTheVfAndTellsItsPf)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    adapter->vf_level_reset(0, 0);
    EXPECT_EQ(pf->rd(reg::IOV_FLR_PENDING), 1u);
    std::vector<EventRingElement> events;
    ASSERT_TRUE(wait_until([&] {
        auto more = iov_events();
        events.insert(events.end(), more.begin(), more.end());
        return !events.empty();
    }));
    EXPECT_EQ(events[0].opcode, static_cast<uint8_t>(iov::IovEvent::vf_flr));
    EXPECT_EQ(events[0].echo, 0);
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled));
    vf1->send(0, eth_frame(VF0_MAC, VF1_MAC, 0x88b5, 60));
    ASSERT_TRUE(vf1->wait_tx_done(0));
    EXPECT_TRUE(vf0->rx_poll(0).empty()) << "the reset VF's queues are gone";

    /* Not enabled again before the PF's cleanup: the final cleanup ramrod,
     * then the MFW's ack. A new driver then starts afresh. */
    pf->wr(reg::IOV_VF_SELECT, 0);
    pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
    EXPECT_EQ(pf->rd(reg::IOV_VF_CTRL), 0u);
    EXPECT_EQ(pf->mcp_cmd(mfw::DRV_MSG_CODE_VF_DISABLED_DONE, 1), mfw::FW_MSG_CODE_INVALID_SEQUENCE) << "no FLR of VF 1";
    VfCleanupRamrodData cleanup{};
    cleanup.vf = 1;
    EXPECT_EQ(pf->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::vf_cleanup), &cleanup, sizeof cleanup)
                  .fw_return_code,
              static_cast<uint8_t>(FwReturn::bad_state));
    cleanup.vf = 0;
    EXPECT_EQ(pf->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::vf_cleanup), &cleanup, sizeof cleanup)
                  .fw_return_code,
              static_cast<uint8_t>(FwReturn::ok));
    EXPECT_EQ(pf->mcp_cmd(mfw::DRV_MSG_CODE_VF_DISABLED_DONE, 0), mfw::FW_MSG_CODE_VF_DISABLED_DONE);
    EXPECT_EQ(pf->rd(reg::IOV_FLR_PENDING), 0u);
    pf->wr(reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
    EXPECT_EQ(pf->rd(reg::IOV_VF_CTRL), reg::IOV_VF_CTRL_ENABLE);
    vf0.reset();
    auto again = bring_up_vf(0, VF0_MAC);
    vf1->send(0, eth_frame(VF0_MAC, VF1_MAC, 0x88b5, 60));
    EXPECT_EQ(again->rx_wait(0, 1).size(), 1u);
}

/* The PF's driver unloads (LINK_RESET, UNLOAD_REQ, UNLOAD_DONE) leaving
 * its VFs enabled: they switch to each other and to the wire on (the
 * port's PHY stays up for them), their channels take no request, and so it
 * stays past the PF's reset at its host's detach, until a PF's driver loads
 * and writes IOV_NUM_VFS. */
TEST_F(Iov, VfsAnUnloadedPfLeftEnabledRunUntilANewDriverDisablesThem)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    EXPECT_EQ(pf->mcp_cmd(mfw::DRV_MSG_CODE_LINK_RESET), mfw::FW_MSG_CODE_LINK_DONE);
    pf->mcp_cmd(mfw::DRV_MSG_CODE_UNLOAD_REQ);
    EXPECT_EQ(pf->mcp_cmd(mfw::DRV_MSG_CODE_UNLOAD_DONE), mfw::FW_MSG_CODE_DRV_UNLOAD_DONE);

    const auto unattended = static_cast<uint32_t>(iov::ChannelState::unattended);
    auto forwarding = [&](const char* when) {
        SCOPED_TRACE(when);
        for (FakeDriver* vf : {vf0.get(), vf1.get()})
            EXPECT_EQ(vf->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), unattended);
        vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
        EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u) << "VF to VF";
        EXPECT_TRUE(port0_link_up());
        vf1->send(0, eth_frame(PEER_MAC, VF1_MAC, 0x88b5, 60));
        EXPECT_EQ(peer->rx_wait(0, 1).size(), 1u) << "VF to the wire";
    };
    forwarding("the PF unloaded");
    vf0->fn().bar0_write(iov::vf_bar0::CHANNEL_REQ_ADDR_LO, 0x1000);
    vf0->fn().bar0_write(iov::vf_bar0::CHANNEL_TRIGGER, 1);
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), unattended) << "a trigger goes nowhere";
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_REQ_ADDR_LO), 0u);

    adapter->function_level_reset(0);
    forwarding("the PF's host detached");

    pf.reset();
    auto next = std::make_unique<FakeDriver>(*adapter, 0);
    ASSERT_EQ(bring_up_l2(*next, L2Setup{}), "");
    EXPECT_EQ(next->rd(reg::IOV_NUM_VFS), 2u) << "the predecessor's VFs";
    next->wr(reg::IOV_NUM_VFS, 0);
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled));
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_TRUE(vf1->rx_wait(0, 1, std::chrono::milliseconds(200)).empty()) << "disabled: their queues are gone";
}

/* A PF whose driver died (loaded at its reset) takes its VFs along, as a
 * PCIe FLR of a PF clears its VF Enable; the PHY goes down with them. */
TEST_F(Iov, APfWhoseDriverDiedTakesItsVfsAlong)
{
    enable_vfs(1);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    vf0->send(0, eth_frame(PEER_MAC, VF0_MAC, 0x88b5, 60));
    ASSERT_EQ(peer->rx_wait(0, 1).size(), 1u);
    adapter->function_level_reset(0);
    EXPECT_EQ(vf0->fn().bar0_read(iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(iov::ChannelState::disabled));
    EXPECT_EQ(pf->rd(reg::IOV_NUM_VFS), 0u);
    EXPECT_TRUE(wait_until([&] { return !port0_link_up(); })) << "no one wants the PHY";
}

/* The PF's policy for a VF, on the VF's vport: the fields of the update
 * flags, which fill sets. */
template <typename Fill> FwReturn update_vport(FakeDriver& vf, uint32_t update_flags, Fill fill)
{
    VportUpdateRamrodData d{};
    d.update_flags = update_flags;
    fill(d);
    return vf.eth(EthCmd::vport_update, &d, sizeof(d));
}

FwReturn set_policy(FakeDriver& vf, bool anti_spoof, uint16_t port_vlan)
{
    return update_vport(vf, vport_update::UPDATE_ANTI_SPOOF | vport_update::UPDATE_PORT_VLAN,
                        [&](VportUpdateRamrodData& d) {
                            d.anti_spoof = anti_spoof;
                            d.port_vlan = port_vlan;
                        });
}

TEST_F(Iov, AntiSpoofingDropsFramesFromAnotherMac)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    ASSERT_EQ(set_policy(*vf0, true, 0), FwReturn::ok);
    vf0->send(0, eth_frame(VF1_MAC, PEER_MAC, 0x88b5, 60)); /* not its MAC */
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    auto got = vf1->rx_wait(0, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(std::memcmp(got[0].data.data() + 6, VF0_MAC, 6), 0) << "only the frame from its own MAC";
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_TRUE(vf1->rx_poll(0).empty());
    EXPECT_EQ(vf0->vport_stats(0).tx_spoofed_pkts, 1u);
    EXPECT_EQ(vf0->vport_stats(0).tx_ucast_pkts, 1u);

    /* A VLAN it has no filter for is spoofing too; one it has is not. */
    ASSERT_EQ(vf0->filter(FilterOpcode::add, FilterType::vlan, 0, nullptr, 7), FwReturn::ok);
    vf0->send(0, with_vlan(eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60), 8));
    vf0->send(0, with_vlan(eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60), 7));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u);
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_TRUE(vf1->rx_poll(0).empty());
    EXPECT_EQ(vf0->vport_stats(0).tx_spoofed_pkts, 2u);

    ASSERT_EQ(set_policy(*vf0, false, 0), FwReturn::ok);
    vf0->send(0, eth_frame(VF1_MAC, PEER_MAC, 0x88b5, 60));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u) << "spoof checking off";
}

TEST_F(Iov, APortVlanIsTaggedOnTxAndRequiredAndStrippedOnRx)
{
    enable_vfs(1);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    ASSERT_EQ(set_policy(*vf0, false, 4097), FwReturn::invalid_param);
    ASSERT_EQ(set_policy(*vf0, false, 100), FwReturn::ok);
    /* Tx: tagged on the wire. */
    const auto frame = eth_frame(PEER_MAC, VF0_MAC, 0x88b5, 60);
    vf0->send(0, frame);
    auto out = peer->rx_wait(0, 1);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].data.size(), frame.size() + 4);
    EXPECT_EQ(out[0].data[12], 0x81);
    EXPECT_EQ(out[0].data[13], 0x00);
    EXPECT_EQ((out[0].data[14] << 8 | out[0].data[15]) & 0x0fff, 100);
    EXPECT_TRUE(std::equal(frame.begin() + 12, frame.end(), out[0].data.begin() + 16));
    /* Rx: its VLAN only, the tag gone. */
    const std::array<uint8_t, 6> peer_mac = peer->mac();
    peer->send(0, eth_frame(VF0_MAC, peer_mac.data(), 0x88b5, 60));              /* untagged */
    peer->send(0, with_vlan(eth_frame(VF0_MAC, peer_mac.data(), 0x88b5, 60), 7)); /* another VLAN */
    const auto tagged = with_vlan(eth_frame(VF0_MAC, peer_mac.data(), 0x88b5, 60), 100);
    peer->send(0, tagged);
    auto in = vf0->rx_wait(0, 1);
    ASSERT_EQ(in.size(), 1u);
    EXPECT_EQ(in[0].data.size(), tagged.size() - 4);
    EXPECT_EQ(in[0].data[12], 0x88);
    EXPECT_FALSE(in[0].cqe.pars_flags & pars::VLAN_STRIPPED) << "the port VLAN is the adapter's business";
    ASSERT_TRUE(peer->wait_tx_done(0));
    EXPECT_TRUE(vf0->rx_poll(0).empty());
    EXPECT_EQ(vf0->vport_stats(0).rx_filtered_pkts, 2u);
    /* Under a port VLAN and anti-spoofing, a tag of the VF's own is spoofing. */
    ASSERT_EQ(set_policy(*vf0, true, 100), FwReturn::ok);
    vf0->send(0, with_vlan(eth_frame(PEER_MAC, VF0_MAC, 0x88b5, 60), 100));
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_EQ(vf0->vport_stats(0).tx_spoofed_pkts, 1u);
}

/* The PF's Tx rate limit on the VF's vport, in Mbps (0: none). */
FwReturn set_rate(FakeDriver& vf, uint32_t mbps)
{
    return update_vport(vf, vport_update::UPDATE_TX_RATE, [&](VportUpdateRamrodData& d) { d.tx_rate_mbps = mbps; });
}

TEST_F(Iov, ARateLimitHoldsTheVfsTxAndLeavesTheRestOnItsRing)
{
    using std::chrono::steady_clock;
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    ASSERT_EQ(set_rate(*vf0, vport_update::MAX_TX_RATE_MBPS + 1), FwReturn::invalid_param);
    /* 1 Mbps: 125 bytes a millisecond, from a full bucket. */
    constexpr double DEPTH_BYTES = TxRateLimit::DEPTH_NS / 8000.0;
    const auto t0 = steady_clock::now();
    ASSERT_EQ(set_rate(*vf0, 1), FwReturn::ok);
    const auto frame = eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 986);
    ASSERT_EQ(frame.size(), 1000u);
    constexpr std::size_t FRAMES = 20;
    for (std::size_t i = 0; i < FRAMES; i++)
        vf0->send(0, frame);
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    const std::size_t early = vf1->rx_poll(0).size();
    const double ms = std::chrono::duration<double, std::milli>(steady_clock::now() - t0).count();
    /* Sent: what the bucket held, what the time earned, and the one frame
     * that may overdraw it. */
    EXPECT_LE(early * 1000.0, DEPTH_BYTES + ms * 125 + 1000) << ms << " ms";
    EXPECT_GE(early, 2u) << "the limit slows the VF, it does not stop it";

    /* Lifted: the rest, which waited on the VF's ring, goes at once. */
    ASSERT_EQ(set_rate(*vf0, 0), FwReturn::ok);
    EXPECT_EQ(vf1->rx_wait(0, FRAMES - early, std::chrono::milliseconds(50)).size(), FRAMES - early);
    ASSERT_TRUE(vf0->wait_tx_done(0));
    const VportStats stats = vf0->vport_stats(0);
    EXPECT_EQ(stats.tx_ucast_pkts, FRAMES);
    EXPECT_EQ(stats.tx_error_pkts, 0u) << "nothing was dropped";
}

/* The PF forcing the VF's link down (1) or lifting that (0). */
FwReturn set_link_down(FakeDriver& vf, bool down)
{
    return update_vport(vf, vport_update::UPDATE_LINK_DOWN, [&](VportUpdateRamrodData& d) { d.link_down = down; });
}

TEST_F(Iov, AVfWhoseLinkIsForcedDownNeitherSendsNorReceives)
{
    enable_vfs(2);
    auto vf0 = bring_up_vf(0, VF0_MAC);
    auto vf1 = bring_up_vf(1, VF1_MAC);
    const PortCounters before = adapter->control().port_counters(0);
    ASSERT_EQ(set_link_down(*vf1, true), FwReturn::ok);
    vf1->send(0, eth_frame(VF0_MAC, VF1_MAC, 0x88b5, 60));
    vf1->send(0, eth_frame(BCAST, VF1_MAC, 0x88b5, 60));
    ASSERT_TRUE(vf1->wait_tx_done(0)) << "its BDs are consumed, as behind a port without link";
    vf0->send(0, eth_frame(BCAST, VF0_MAC, 0x88b5, 60));
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    ASSERT_TRUE(vf0->wait_tx_done(0));
    EXPECT_EQ(peer->rx_wait(0, 1).size(), 1u) << "VF 0's broadcast, on the wire";
    EXPECT_TRUE(vf0->rx_poll(0).empty()) << "nothing from VF 1";
    EXPECT_TRUE(vf1->rx_poll(0).empty()) << "not even a broadcast for VF 1";
    EXPECT_TRUE(peer->rx_poll(0).empty()) << "nor its unicast, which stays in the port";
    EXPECT_EQ(adapter->control().port_counters(0).wire_tx_frames, before.wire_tx_frames + 1);
    const VportStats stats = vf1->vport_stats(0);
    EXPECT_EQ(stats.tx_bcast_pkts + stats.tx_ucast_pkts, 0u);
    EXPECT_EQ(stats.tx_link_down_pkts, 2u) << "dropped and counted";
    EXPECT_EQ(stats.rx_ucast_pkts + stats.rx_bcast_pkts, 0u);
    EXPECT_EQ(stats.rx_link_down_pkts, 2u) << "VF 0's broadcast and unicast, dropped and counted";

    ASSERT_EQ(set_link_down(*vf1, false), FwReturn::ok);
    vf1->send(0, eth_frame(VF0_MAC, VF1_MAC, 0x88b5, 60));
    EXPECT_EQ(vf0->rx_wait(0, 1).size(), 1u);
    vf0->send(0, eth_frame(VF1_MAC, VF0_MAC, 0x88b5, 60));
    EXPECT_EQ(vf1->rx_wait(0, 1).size(), 1u);
}

} // namespace
} // namespace cna::fw::test
