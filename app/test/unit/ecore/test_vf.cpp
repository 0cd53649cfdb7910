/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the VF's side, against a PF the test plays (fake_vf.h): the VF
 * function's BAR0 layout, requests as they leave, replies, refusals,
 * malformed replies, timeouts, L2 over the channel, the bulletin board.
 * test_vf_e2e.cpp: a VF with its PF on one embedded adapter.
 */
#include "fake_vf.h"

#include <cstring>
#include <thread>
#include <vector>

#include "ecore_l2_api.h"
#include "ecore_vf.h"

using namespace cna;
using namespace test; /* Status, VfStatus, TlvType, vf_bar0, ... */
namespace vf_page = hsi::iov::vf_page;
namespace accept = hsi::eth::accept;

namespace {

/* ---- the OSAL's VF function ---------------------------------------------------- */

TEST(VfOsal, AVfsGttIsItsOwnPage)
{
    FakeVf vf;
    EXPECT_TRUE(vf.is_vf());
    EXPECT_EQ(vf.gtt_base(), vf_bar0::GTT_BASE);

    /* The page is memory: Rx producers, statistics. */
    vf.reg_wr(vf_bar0::rx_prod(1), 0x00050040);
    uint32_t word;
    std::memcpy(&word, vf.page() + vf_page::rx_prod(1), 4);
    EXPECT_EQ(word, 0x00050040u);
    word = 0xdeadbeef;
    std::memcpy(vf.page() + hsi::WINDOW_SIZE - 4, &word, 4);
    EXPECT_EQ(vf.reg_rd(vf_bar0::GTT_BASE + hsi::WINDOW_SIZE - 4), 0xdeadbeefu);
    EXPECT_TRUE(vf.writes.empty() && vf.reads.empty());

    /* Everything else is the device's: the channel and IGU below the page,
     * whatever lies past it (a PF's GTT offsets among them), and an
     * unaligned access. */
    vf.reg_wr(vf_bar0::CHANNEL_REQ_ADDR_LO, 1);
    vf.reg_wr(vf_bar0::igu_cmd(3), 2);
    vf.reg_wr(vf_bar0::GTT_BASE - 4, 3);
    vf.reg_wr(vf_bar0::SIZE, 4);
    vf.reg_wr(hsi::BAR0_GTT_BASE, 5);
    vf.reg_wr(vf_bar0::GTT_BASE + 2, 6);
    const std::vector<std::pair<uint32_t, uint32_t>> expected = {
        {vf_bar0::CHANNEL_REQ_ADDR_LO, 1}, {vf_bar0::igu_cmd(3), 2}, {vf_bar0::GTT_BASE - 4, 3},
        {vf_bar0::SIZE, 4},                {hsi::BAR0_GTT_BASE, 5},  {vf_bar0::GTT_BASE + 2, 6}};
    EXPECT_EQ(vf.writes, expected);
    EXPECT_EQ(vf.reg_rd(vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(ChannelState::idle));
    EXPECT_EQ(vf.reg_rd(vf_bar0::SIZE), 0xffffffffu);
    EXPECT_EQ(vf.reads, (std::vector<uint32_t>{vf_bar0::CHANNEL_STATE, vf_bar0::SIZE}));
}

/* ---- the channel, against the test's PF ---------------------------------------- */

TEST(VfChannel, AcquireAsksAndTheGrantBecomesHwInfo)
{
    FakeVfDev vf;
    EXPECT_TRUE(vf.dev.is_vf);
    const int zones = test::memzone_count();
    ecore::VfAcquireParams params;
    params.rx_queues = 3;
    params.mcast_filters = 5;
    params.driver_version = 0x0a0b0c0d;
    ASSERT_EQ(ecore::vf_hw_prepare(vf.hwfn(), params), Status::success);
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), params), Status::busy) << "prepared once";

    ASSERT_EQ(vf.pci.requests.size(), 1u);
    const Received& r = vf.pci.requests[0];
    EXPECT_EQ(r.type(), TlvType::acquire);
    const auto req = r.get<hsi::iov::AcquireRequest>(TlvType::acquire);
    EXPECT_EQ(req.hsi_major, hsi::HSI_VERSION_MAJOR);
    EXPECT_EQ(req.hsi_minor, hsi::HSI_VERSION_MINOR);
    EXPECT_EQ(req.driver_version, 0x0a0b0c0du);
    EXPECT_EQ(req.rx_queues, 3);
    EXPECT_EQ(req.tx_queues, hsi::iov::MAX_VF_QUEUES);
    EXPECT_EQ(req.sbs, hsi::iov::MAX_VF_SBS);
    EXPECT_EQ(req.mcast_filters, 5);
    EXPECT_EQ(req.bulletin_size, sizeof(hsi::iov::Bulletin));
    EXPECT_NE(req.bulletin_address, 0u);
    EXPECT_EQ(req.bulletin_address % 8, 0u);
    EXPECT_NE(req.hdr.reply_address, 0u);
    EXPECT_EQ(vf.pci.misuse, 0);

    const ecore::HwInfo& info = vf.hwfn().hw_info;
    const hsi::iov::AcquireReply g = grant();
    EXPECT_EQ(info.pf_id, g.pf_id);
    EXPECT_EQ(info.port_id, g.port_id);
    EXPECT_EQ(info.mtu, g.mtu);
    EXPECT_EQ(info.fw_version, g.fw_version);
    EXPECT_EQ(std::memcmp(info.mac.data(), g.mac, 6), 0);
    EXPECT_EQ(info.resc.num_rx_queues, 2u);
    EXPECT_EQ(info.resc.num_tx_queues, 2u);
    EXPECT_EQ(info.resc.num_sbs, 2u);
    EXPECT_EQ(info.resc.num_mac_filters, 4u);
    EXPECT_EQ(info.resc.num_vlan_filters, 2u);
    EXPECT_EQ(info.resc.num_vports, 1u);
    EXPECT_EQ(vf.hwfn().vf_iov->vf_id, 3u);
    EXPECT_TRUE(vf.hwfn().hw_prepared);
    EXPECT_EQ(vf.hwfn().ptt_pool, nullptr) << "a VF has no PTT";
    EXPECT_FALSE(ecore::PttGuard(vf.hwfn())) << "and says so instead of crashing";

    ecore::hw_remove(vf.dev);
    EXPECT_EQ(vf.pci.requests.back().type(), TlvType::release);
    EXPECT_FALSE(vf.hwfn().hw_prepared);
    EXPECT_EQ(test::memzone_count(), zones);
}

TEST(VfChannel, TheLifeCycleOfAPfIsTheVfsToo)
{
    FakeVfDev vf;
    ASSERT_EQ(ecore::hw_prepare(vf.dev), Status::success) << "hw_prepare of a VF acquires";
    EXPECT_EQ(vf.pci.requests.back().get<hsi::iov::AcquireRequest>(TlvType::acquire).rx_queues,
              hsi::iov::MAX_VF_QUEUES);
    ASSERT_EQ(ecore::resc_alloc(vf.dev), Status::success);
    EXPECT_EQ(vf.hwfn().spq, nullptr) << "no slowpath of its own";
    EXPECT_EQ(vf.hwfn().sp_sb, nullptr);
    ecore::resc_setup(vf.dev);
    ASSERT_EQ(ecore::hw_init(vf.dev, ecore::HwInitParams{}), Status::success);
    EXPECT_EQ(vf.pci.requests.size(), 1u) << "hw_init asks the PF nothing";
    EXPECT_EQ(ecore::hw_stop(vf.dev), Status::success);
    EXPECT_EQ(vf.pci.requests.back().type(), TlvType::close);
    ecore::int_disable_post_isr_release(vf.dev);
    ecore::resc_free(vf.dev);
    ecore::hw_remove(vf.dev);
    ASSERT_EQ(vf.pci.requests.size(), 3u);
    EXPECT_EQ(vf.pci.requests.back().type(), TlvType::release);

    /* vf_release does both, and only once. */
    ASSERT_EQ(vf.prepare(), Status::success);
    ecore::vf_release(vf.hwfn());
    ecore::vf_release(vf.hwfn());
    ASSERT_EQ(vf.pci.requests.size(), 6u);
    EXPECT_EQ(vf.pci.requests[4].type(), TlvType::close);
    EXPECT_EQ(vf.pci.requests[5].type(), TlvType::release);
    EXPECT_EQ(vf.hwfn().vf_iov, nullptr);
}

TEST(VfChannel, ARefusalIsAStatus)
{
    const std::pair<VfStatus, Status> cases[] = {
        {VfStatus::failure, Status::io},         {VfStatus::not_supported, Status::notimpl},
        {VfStatus::bad_request, Status::inval},  {VfStatus::no_resource, Status::nospc},
        {VfStatus::forbidden, Status::perm},     {VfStatus::not_acquired, Status::busy},
        {static_cast<VfStatus>(99), Status::io},
    };
    const int zones = test::memzone_count();
    for (const auto& [refusal, status] : cases) {
        SCOPED_TRACE(static_cast<int>(refusal));
        FakeVfDev vf;
        vf.refusals[TlvType::acquire] = refusal;
        EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), status);
        EXPECT_FALSE(vf.hwfn().hw_prepared);
        EXPECT_EQ(vf.hwfn().vf_iov, nullptr);
        EXPECT_EQ(test::memzone_count(), zones) << "nothing left behind";
    }
    EXPECT_EQ(ecore::status_to_errno(Status::perm), -EPERM);
}

TEST(VfChannel, AReplyThatMakesNoSenseIsAnIoError)
{
    /* A reply to another request. */
    FakeVfDev vf;
    vf.pci.on_request = [&](const Received&) {
        hsi::iov::AcquireReply r = grant();
        vf.pci.answer(VfStatus::success, r, false);
        reinterpret_cast<ReplyHeader*>(vf.pci.reply())->request = static_cast<uint16_t>(TlvType::release);
        vf.pci.complete();
    };
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::io);

    /* A TLV list without its end. */
    vf.pci.on_request = [&](const Received&) {
        const ReplyHeader h{{static_cast<uint16_t>(TlvType::reply), sizeof(ReplyHeader)},
                            static_cast<uint16_t>(TlvType::acquire), 0, 0};
        std::memcpy(vf.pci.reply(), &h, sizeof h);
        std::memset(vf.pci.reply() + sizeof h, 0xff, 8);
        vf.pci.publish_status(VfStatus::success);
        vf.pci.complete();
    };
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::io);

    /* A grant without its body. */
    vf.pci.on_request = [&](const Received&) { vf.pci.answer(VfStatus::success); };
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::io);

    /* More than a VF can have. */
    vf.pci.on_request = [&](const Received&) {
        hsi::iov::AcquireReply r = grant();
        r.rx_queues = hsi::iov::MAX_VF_QUEUES + 1;
        vf.pci.answer(VfStatus::success, r);
    };
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::io);
    EXPECT_EQ(vf.pci.misuse, 0);
}

TEST(VfChannel, AClosedChannelIsNoDevice)
{
    FakeVfDev vf;
    vf.pci.state = static_cast<uint32_t>(ChannelState::disabled);
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::nodev);
    EXPECT_TRUE(vf.pci.requests.empty()) << "nothing triggered";

    /* Closed with the request pending (the PF disabled the VF), or completed
     * without a reply (the PF dropped it): known at once, not at the timeout. */
    vf.pci.state = static_cast<uint32_t>(ChannelState::idle);
    vf.pci.on_request = [&](const Received&) { vf.pci.state = static_cast<uint32_t>(ChannelState::disabled); };
    uint64_t asked = osal::time_ms();
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::nodev);
    vf.pci.state = static_cast<uint32_t>(ChannelState::idle);
    vf.pci.on_request = [&](const Received&) { vf.pci.complete(); };
    EXPECT_EQ(ecore::vf_hw_prepare(vf.hwfn(), {}), Status::io);
    EXPECT_LT(osal::time_ms() - asked, 1000u);
    EXPECT_EQ(vf.pci.requests.size(), 2u);
}

TEST(VfChannel, ATimeoutIsAnErrorAndALateReplyHarmless)
{
    FakeVfDev vf;
    vf.pci.on_request = [](const Received&) {}; /* a PF that never answers */
    const int zones = test::memzone_count();
    const uint64_t start = osal::time_ms();
    EXPECT_EQ(vf.prepare(100), Status::timeout);
    EXPECT_LT(osal::time_ms() - start, 1000u);
    EXPECT_FALSE(vf.hwfn().hw_prepared);
    /* The PF may still write the reply: that memory is not given back. */
    EXPECT_EQ(test::memzone_count(), zones + 1);
    vf.pci.answer(VfStatus::success, grant());

    /* A PF that completes the channel a while after its reply: the reply
     * is the PF's until then. */
    std::thread done;
    vf.pci.on_request = [&](const Received&) {
        vf.pci.answer(VfStatus::success, grant(), false);
        done = std::thread([&] {
            osal::msleep(50);
            vf.pci.complete();
        });
    };
    const uint64_t asked = osal::time_ms();
    ASSERT_EQ(vf.prepare(), Status::success);
    EXPECT_GE(osal::time_ms() - asked, 50u);
    done.join();
    EXPECT_EQ(vf.pci.misuse, 0);

    /* A request that times out leaves the channel pending: the next one
     * waits for it in vain, and says so. */
    ecore::SpVportUpdateParams p;
    p.update_mtu = true;
    p.mtu = 1400;
    vf.pci.on_request = [](const Received&) {};
    vf.hwfn().vf_iov->timeout_ms = 50;
    EXPECT_EQ(ecore::sp_vport_update(vf.hwfn(), p), Status::timeout);
    EXPECT_EQ(ecore::sp_vport_update(vf.hwfn(), p), Status::timeout);
    EXPECT_EQ(vf.pci.misuse, 0);
    const std::size_t sent = vf.pci.requests.size();
    ecore::vf_release(vf.hwfn());
    EXPECT_EQ(vf.pci.requests.size(), sent) << "close and release wait in vain too";
    EXPECT_EQ(test::memzone_count(), zones + 1) << "the request and reply mailboxes, kept for a late reply: "
                                                   "pages of one DMA arena";
    vf.pci.answer(VfStatus::success);
}

/* ---- L2 through the channel ------------------------------------------------------ */

class VfL2 : public ::testing::Test {
protected:
    void SetUp() override
    {
        ASSERT_EQ(vf_.prepare(), Status::success);
        for (uint32_t i = 0; i < 2; i++) {
            ASSERT_EQ(sb_mem_[i].alloc(sizeof(hsi::StatusBlock), "test VF SB"), 0);
            ASSERT_EQ(ecore::int_sb_init(hwfn(), vf_.no_ptt, sbs_[i], sb_mem_[i].va(), sb_mem_[i].iova(), i),
                      Status::success);
        }
    }
    void TearDown() override
    {
        for (ecore::SbInfo& sb : sbs_)
            ecore::int_sb_release(hwfn(), vf_.no_ptt, sb);
        vf_.remove();
    }
    ecore::Hwfn& hwfn() { return vf_.hwfn(); }
    const Received& last() const { return vf_.pci.requests.back(); }

    ecore::RxQueueStartParams rxq(uint16_t queue) const
    {
        ecore::RxQueueStartParams p;
        p.queue = {0, queue, queue, hsi::L2_PI_RX};
        p.bd_max_bytes = 2048;
        p.bd_ring_iova = 0x10000 * (queue + 1);
        p.bd_ring_size = p.cqe_ring_size = 64;
        p.cqe_ring_iova = 0x10000 * (queue + 1) + 0x1000;
        return p;
    }

    FakeVfDev vf_;
    osal::DmaMem sb_mem_[2];
    ecore::SbInfo sbs_[2];
};

TEST_F(VfL2, TheStatusBlocksGoWithTheVport)
{
    /* No CAU for a VF: its SBs wait for vport_start; acks are its own IGU's. */
    EXPECT_EQ(vf_.pci.writes.size(), 3u) << "acquire's address and trigger, nothing for the SBs";
    ecore::sb_ack(sbs_[1], hsi::IguIntOp::enable);
    EXPECT_EQ(vf_.pci.writes.back(), std::make_pair(vf_bar0::igu_cmd(1), hsi::igu_cmd(0, hsi::IguIntOp::enable)));

    ecore::SpVportStartParams p;
    p.mtu = 1400;
    p.vlan_strip = true;
    p.max_bds_per_packet = 4;
    p.rx_csum = true;
    ASSERT_EQ(ecore::sp_vport_start(hwfn(), p), Status::success);
    const auto req = last().get<hsi::iov::VportStartRequest>(TlvType::vport_start);
    EXPECT_EQ(req.mtu, 1400);
    EXPECT_EQ(req.vlan_strip, 1);
    EXPECT_EQ(req.max_bds_per_packet, 4);
    EXPECT_EQ(req.rx_csum, 1);
    ASSERT_EQ(req.sbs, 2);
    EXPECT_EQ(req.sb_addr[0], sb_mem_[0].iova());
    EXPECT_EQ(req.sb_addr[1], sb_mem_[1].iova());
    EXPECT_EQ(ecore::sp_vport_stop(hwfn(), 0), Status::success);
    EXPECT_EQ(last().type(), TlvType::vport_teardown);

    /* A released SB is not sent; a gap is refused before asking. */
    ecore::int_sb_release(hwfn(), vf_.no_ptt, sbs_[0]);
    const std::size_t sent = vf_.pci.requests.size();
    EXPECT_EQ(ecore::sp_vport_start(hwfn(), p), Status::inval);
    ecore::int_sb_release(hwfn(), vf_.no_ptt, sbs_[1]);
    EXPECT_EQ(ecore::sp_vport_start(hwfn(), p), Status::inval);
    EXPECT_EQ(vf_.pci.requests.size(), sent);
    EXPECT_EQ(ecore::int_sb_init(hwfn(), vf_.no_ptt, sbs_[0], sb_mem_[0].va(), sb_mem_[0].iova(), hsi::SP_SB_ID),
              Status::inval)
        << "a VF has no slowpath SB";
    EXPECT_EQ(ecore::int_sb_init(hwfn(), vf_.no_ptt, sbs_[0], sb_mem_[0].va(), sb_mem_[0].iova(), 2), Status::inval)
        << "beyond the grant";
}

TEST_F(VfL2, QueuesGetTheirProducerAndDoorbellFromThePf)
{
    ASSERT_EQ(ecore::sp_vport_start(hwfn(), ecore::SpVportStartParams{}), Status::success);
    /* A producer left from before: the queue starts from 0. */
    vf_.pci.reg_wr(vf_bar0::rx_prod(1), 0x12345678);
    ecore::RxQueueStartRet rx;
    ASSERT_EQ(ecore::eth_rx_queue_start(hwfn(), rxq(1), &rx), Status::success);
    const auto rreq = last().get<hsi::iov::StartRxqRequest>(TlvType::start_rxq);
    EXPECT_EQ(rreq.queue, 1);
    EXPECT_EQ(rreq.sb, 1);
    EXPECT_EQ(rreq.sb_pi, hsi::L2_PI_RX);
    EXPECT_EQ(rreq.bd_ring, rxq(1).bd_ring_iova);
    EXPECT_EQ(rreq.cqe_ring, rxq(1).cqe_ring_iova);
    EXPECT_EQ(rreq.ring_size, 64);
    EXPECT_EQ(rreq.buf_size, 2048);
    ASSERT_EQ(rx.rx_prod_addr, reinterpret_cast<volatile uint32_t*>(vf_.pci.page() + vf_page::rx_prod(1)));
    EXPECT_EQ(*rx.rx_prod_addr, 0u);
    ecore::eth_rx_prod_update(rx.rx_prod_addr, 64, 0);
    EXPECT_EQ(vf_.pci.reg_rd(vf_bar0::rx_prod(1)), 64u);

    ecore::TxQueueStartParams tp;
    tp.queue = {0, 1, 0, hsi::L2_PI_TX};
    tp.bd_ring_iova = 0x40000;
    tp.bd_ring_size = 128;
    ecore::TxQueueStartRet tx;
    ASSERT_EQ(ecore::eth_tx_queue_start(hwfn(), tp, &tx), Status::success);
    const auto treq = last().get<hsi::iov::StartTxqRequest>(TlvType::start_txq);
    EXPECT_EQ(treq.queue, 1);
    EXPECT_EQ(treq.sb, 0);
    EXPECT_EQ(treq.ring_size, 128);
    EXPECT_EQ(treq.bd_ring, 0x40000u);
    EXPECT_EQ(tx.doorbell_addr, reinterpret_cast<volatile uint32_t*>(vf_.pci.doorbell_page() +
                                                                      hsi::db_offset(hsi::cid_tx_queue(1))));

    EXPECT_EQ(ecore::eth_tx_queue_stop(hwfn(), tx.handle), Status::success);
    auto stop = last().get<hsi::iov::StopQueuesRequest>(TlvType::stop_txqs);
    EXPECT_EQ(stop.first, 1);
    EXPECT_EQ(stop.count, 1);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn(), rx.handle), Status::success);
    EXPECT_EQ(last().type(), TlvType::stop_rxqs);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn(), rx.handle), Status::inval) << "a handle is good once";

    /* A PF that refuses, or puts the producer outside the VF's page. */
    vf_.refusals[TlvType::start_rxq] = VfStatus::bad_request;
    EXPECT_EQ(ecore::eth_rx_queue_start(hwfn(), rxq(0), &rx), Status::inval);
    vf_.refusals.clear();
    vf_.pci.on_request = [&](const Received&) {
        hsi::iov::StartQueueReply reply{};
        reply.offset = hsi::BAR0_GTT_BASE;
        vf_.pci.answer(VfStatus::success, reply);
    };
    EXPECT_EQ(ecore::eth_rx_queue_start(hwfn(), rxq(0), &rx), Status::io);
    EXPECT_EQ(ecore::eth_tx_queue_start(hwfn(), tp, &tx), Status::io);
    vf_.pci.on_request = [&](const Received& r) { vf_.serve(r); };

    /* Within the grant, checked before asking. */
    const std::size_t sent = vf_.pci.requests.size();
    EXPECT_EQ(ecore::eth_rx_queue_start(hwfn(), rxq(2), &rx), Status::inval);
    ecore::RxQueueStartParams uneven = rxq(0);
    uneven.cqe_ring_size = 128;
    EXPECT_EQ(ecore::eth_rx_queue_start(hwfn(), uneven, &rx), Status::inval) << "one ring size for both";
    EXPECT_EQ(vf_.pci.requests.size(), sent);
}

TEST_F(VfL2, VportUpdatesTravelAsParts)
{
    ASSERT_EQ(ecore::sp_vport_start(hwfn(), ecore::SpVportStartParams{}), Status::success);
    ecore::RssParams rss;
    rss.enable = true;
    rss.hash_types = hsi::eth::rss::IPV4 | hsi::eth::rss::TCP_IPV4;
    rss.key[0] = 0x6d5a6d5a;
    for (uint32_t i = 0; i < rss.reta.size(); i++)
        rss.reta[i] = static_cast<uint16_t>(i % 2);
    ecore::SpVportUpdateParams p;
    p.update_vport_active_rx_flg = p.vport_active_rx_flg = true;
    p.update_vport_active_tx_flg = true;
    p.update_accept_flags = true;
    p.rx_accept = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::MCAST_UNMATCHED | accept::BCAST;
    p.update_mtu = true;
    p.mtu = 9000;
    p.update_vlan_strip = p.vlan_strip = true;
    p.rss_params = &rss;
    const std::size_t before = vf_.pci.requests.size();
    ASSERT_EQ(ecore::sp_vport_update(hwfn(), p), Status::success);
    ASSERT_EQ(vf_.pci.requests.size(), before + 2) << "the MTU is a request of its own";
    const Received& mtu = vf_.pci.requests[before];
    EXPECT_EQ(mtu.get<hsi::iov::UpdateMtuRequest>(TlvType::update_mtu).mtu, 9000);
    const Received& u = last();
    EXPECT_EQ(u.type(), TlvType::vport_update);
    const auto act = u.get<hsi::iov::VportActivateTlv>(TlvType::vport_activate);
    EXPECT_EQ(act.update_rx, 1);
    EXPECT_EQ(act.active_rx, 1);
    EXPECT_EQ(act.update_tx, 1);
    EXPECT_EQ(act.active_tx, 0);
    const auto mode = u.get<hsi::iov::VportRxModeTlv>(TlvType::vport_rx_mode);
    EXPECT_EQ(mode.unicast_accept_all, 0);
    EXPECT_EQ(mode.multicast_accept_all, 1);
    EXPECT_EQ(mode.broadcast_accept, 1);
    EXPECT_EQ(u.get<hsi::iov::VportVlanStripTlv>(TlvType::vport_vlan_strip).strip, 1);
    const auto r = u.get<hsi::iov::VportRssTlv>(TlvType::vport_rss);
    EXPECT_EQ(r.enable, 1);
    EXPECT_EQ(r.hash_types, rss.hash_types);
    EXPECT_EQ(r.key[0], rss.key[0]);
    EXPECT_EQ(r.reta[1], 1);
    EXPECT_FALSE(u.has(TlvType::vport_mcast));

    /* filter_accept_cmd is a vport_update with the rx mode alone. */
    ASSERT_EQ(ecore::filter_accept_cmd(hwfn(), 0, accept::UCAST_MATCHED | accept::UCAST_UNMATCHED), Status::success);
    EXPECT_TRUE(last().has(TlvType::vport_rx_mode));
    EXPECT_FALSE(last().has(TlvType::vport_activate));
    EXPECT_EQ(last().get<hsi::iov::VportRxModeTlv>(TlvType::vport_rx_mode).unicast_accept_all, 1);

    /* The PF's policy says no: an untrusted VF's promiscuity. */
    vf_.refusals[TlvType::vport_update] = VfStatus::forbidden;
    EXPECT_EQ(ecore::filter_accept_cmd(hwfn(), 0, accept::UCAST_UNMATCHED), Status::perm);
    vf_.refusals.clear();

    /* What the channel cannot carry is refused before asking. */
    const std::size_t sent = vf_.pci.requests.size();
    rss.reta[5] = 2;
    ecore::SpVportUpdateParams only_rss;
    only_rss.rss_params = &rss;
    EXPECT_EQ(ecore::sp_vport_update(hwfn(), only_rss), Status::inval) << "beyond its Rx queues";
    EXPECT_EQ(ecore::sp_vport_update(hwfn(), ecore::SpVportUpdateParams{}), Status::success) << "nothing to update";
    only_rss.vport_id = 1;
    EXPECT_EQ(ecore::sp_vport_update(hwfn(), only_rss), Status::inval) << "a VF has vport 0 only";
    EXPECT_EQ(vf_.pci.requests.size(), sent);
}

TEST_F(VfL2, FiltersUnicastByRequestMulticastByList)
{
    ASSERT_EQ(ecore::sp_vport_start(hwfn(), ecore::SpVportStartParams{}), Status::success);
    ecore::FilterUcast f;
    f.mac = {0x02, 1, 2, 3, 4, 5};
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn(), f), Status::success);
    auto req = last().get<hsi::iov::UcastFilterRequest>(TlvType::ucast_filter);
    EXPECT_EQ(req.op, static_cast<uint8_t>(hsi::iov::FilterOp::add));
    EXPECT_EQ(req.kind, static_cast<uint8_t>(hsi::iov::FilterKind::mac));
    EXPECT_EQ(std::memcmp(req.mac, f.mac.data(), 6), 0);
    ecore::FilterUcast vlan;
    vlan.type = ecore::FilterType::vlan;
    vlan.opcode = ecore::FilterOpcode::remove;
    vlan.vlan = 100;
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn(), vlan), Status::success);
    req = last().get<hsi::iov::UcastFilterRequest>(TlvType::ucast_filter);
    EXPECT_EQ(req.op, static_cast<uint8_t>(hsi::iov::FilterOp::remove));
    EXPECT_EQ(req.kind, static_cast<uint8_t>(hsi::iov::FilterKind::vlan));
    EXPECT_EQ(req.vlan, 100);

    /* Multicast: the whole list in a vport_update, each time. */
    auto list = [&] { return last().get<hsi::iov::VportMcastTlv>(TlvType::vport_mcast); };
    ecore::FilterUcast m1, m2, m3;
    m1.mac = {0x01, 0x00, 0x5e, 0, 0, 1};
    m2.mac = {0x01, 0x00, 0x5e, 0, 0, 2};
    m3.mac = {0x33, 0x33, 0, 0, 0, 3};
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m1), Status::success);
    EXPECT_EQ(list().count, 1);
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m2), Status::success);
    ASSERT_EQ(list().count, 2);
    EXPECT_EQ(std::memcmp(list().macs[1], m2.mac.data(), 6), 0);
    std::size_t sent = vf_.pci.requests.size();
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m1), Status::success) << "there already";
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m3), Status::nospc) << "2 granted";
    EXPECT_EQ(vf_.pci.requests.size(), sent);
    m1.opcode = ecore::FilterOpcode::remove;
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m1), Status::success);
    ASSERT_EQ(list().count, 1);
    EXPECT_EQ(std::memcmp(list().macs[0], m2.mac.data(), 6), 0);
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m1), Status::noent);

    /* A refused list is not taken; a new vport starts with none. */
    vf_.refusals[TlvType::vport_update] = VfStatus::failure;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m3), Status::io);
    vf_.refusals.clear();
    m3.opcode = ecore::FilterOpcode::remove;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m3), Status::noent);
    ASSERT_EQ(ecore::sp_vport_stop(hwfn(), 0), Status::success);
    ASSERT_EQ(ecore::sp_vport_start(hwfn(), ecore::SpVportStartParams{}), Status::success);
    m2.opcode = ecore::FilterOpcode::remove;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), m2), Status::noent);

    /* What a VF does not do. */
    sent = vf_.pci.requests.size();
    ecore::FilterUcast move = f;
    move.opcode = ecore::FilterOpcode::move;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), move), Status::notimpl);
    ecore::FilterUcast mac_vlan = f;
    mac_vlan.type = ecore::FilterType::mac_vlan;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), mac_vlan), Status::notimpl);
    ecore::FilterUcast other_vport = f;
    other_vport.vport_to_add_to = 1;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn(), other_vport), Status::inval);
    EXPECT_EQ(vf_.pci.requests.size(), sent);
}

TEST_F(VfL2, StatisticsAreReadFromItsPage)
{
    hsi::eth::VportStats vs{};
    vs.rx_ucast_pkts = 0x1'0000'0002;
    vs.tx_bcast_bytes = 77;
    std::memcpy(vf_.pci.page() + vf_page::VPORT_STATS, &vs, sizeof vs);
    hsi::eth::QueueStats rq{3, 300, 1, {}}, tq{4, 400, 0, {}};
    std::memcpy(vf_.pci.page() + vf_page::rx_queue_stats(1), &rq, sizeof rq);
    std::memcpy(vf_.pci.page() + vf_page::tx_queue_stats(1), &tq, sizeof tq);

    const std::size_t reads = vf_.pci.reads.size();
    hsi::eth::VportStats got{};
    ASSERT_EQ(ecore::get_vport_stats(hwfn(), vf_.no_ptt, 0, &got), Status::success);
    EXPECT_EQ(std::memcmp(&got, &vs, sizeof vs), 0);
    hsi::eth::QueueStats q{};
    ASSERT_EQ(ecore::get_rx_queue_stats(hwfn(), vf_.no_ptt, 1, &q), Status::success);
    EXPECT_EQ(std::memcmp(&q, &rq, sizeof q), 0);
    ASSERT_EQ(ecore::get_tx_queue_stats(hwfn(), vf_.no_ptt, 1, &q), Status::success);
    EXPECT_EQ(std::memcmp(&q, &tq, sizeof q), 0);
    EXPECT_EQ(ecore::get_rx_queue_stats(hwfn(), vf_.no_ptt, 2, &q), Status::inval);
    EXPECT_EQ(ecore::get_vport_stats(hwfn(), vf_.no_ptt, 1, &got), Status::inval);
    EXPECT_EQ(vf_.pci.reads.size(), reads) << "the page is memory, not the device's";
}

/* ---- the bulletin board ---------------------------------------------------------- */

TEST(VfBulletin, OnlyANewConsistentBoardIsRead)
{
    FakeVfDev vf;
    ASSERT_EQ(vf.prepare(), Status::success);
    hsi::iov::Bulletin out{};
    EXPECT_FALSE(ecore::vf_bulletin_read(vf.hwfn(), &out)) << "never written";

    auto* board = reinterpret_cast<hsi::iov::Bulletin*>(
        vf.pci.requests[0].get<hsi::iov::AcquireRequest>(TlvType::acquire).bulletin_address);
    hsi::iov::Bulletin pf_board{};
    pf_board.flags = hsi::iov::BULLETIN_MAC_FORCED;
    pf_board.mac[5] = 0x42;
    pf_board.link_up = 1;
    pf_board.speed_mbps = 25000;
    ecore::iov::bulletin_seal(pf_board, sizeof pf_board);
    std::memcpy(board, &pf_board, sizeof pf_board);
    ASSERT_TRUE(ecore::vf_bulletin_read(vf.hwfn(), &out));
    EXPECT_EQ(out.version, 1u);
    EXPECT_EQ(out.flags, hsi::iov::BULLETIN_MAC_FORCED);
    EXPECT_EQ(out.mac[5], 0x42);
    EXPECT_EQ(out.speed_mbps, 25000u);
    EXPECT_FALSE(ecore::vf_bulletin_read(vf.hwfn(), &out)) << "not new";

    /* A board the PF is writing (its CRC does not hold yet). */
    pf_board.link_up = 0;
    ecore::iov::bulletin_seal(pf_board, sizeof pf_board);
    hsi::iov::Bulletin torn = pf_board;
    torn.link_up = 1;
    std::memcpy(board, &torn, sizeof torn);
    EXPECT_FALSE(ecore::vf_bulletin_read(vf.hwfn(), &out));
    std::memcpy(board, &pf_board, sizeof pf_board);
    ASSERT_TRUE(ecore::vf_bulletin_read(vf.hwfn(), &out));
    EXPECT_EQ(out.version, 2u);
    EXPECT_EQ(out.link_up, 0);
    vf.remove();
    EXPECT_FALSE(ecore::vf_bulletin_read(vf.hwfn(), &out)) << "released";
}

} // namespace
