/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the PF's side: a PF of the embedded adapter enables VFs, and the
 * test plays a VF at register level (its BAR0's channel, requests it writes
 * in its own DMA memory, the replies and the bulletin board the PF writes
 * there), as the VF's driver would.
 */
#include "fixture.h"

#include <cstring>
#include <span>
#include <type_traits>

#include "ecore_hw.h"
#include "ecore_iov_api.h"
#include "ecore_iov_tlv.h"
#include "ecore_sriov.h"
#include "hsi_iov.h"
#include "pci_attach.h"

using namespace cna;
using ecore::Status;
using ecore::VfLinkState;
using hsi::iov::TlvType;
using VfStatus = hsi::iov::Status;

namespace {

constexpr ecore::Mac PF_MAC{0x02, 0x00, 0xc0, 0xa0, 0x00, 0x01};

/* ---- without the adapter ---------------------------------------------------- */

TEST(IovPf, PermanentMacNumbersTheVfOnTheAdapter)
{
    EXPECT_EQ(ecore::iov_vf_permanent_mac(PF_MAC, 0, 0), (ecore::Mac{0x02, 0x00, 0xc0, 0xa0, 0x80, 0x00}));
    EXPECT_EQ(ecore::iov_vf_permanent_mac(PF_MAC, 1, 3), (ecore::Mac{0x02, 0x00, 0xc0, 0xa0, 0x80, 11}));
    /* Never a PF's MAC (byte 4 differs), never another VF's. */
    for (uint32_t pf = 0; pf < hsi::MAX_PFS; pf++) {
        for (uint32_t vf = 0; vf < hsi::iov::MAX_VFS_PER_PF; vf++) {
            const ecore::Mac mac = ecore::iov_vf_permanent_mac(PF_MAC, pf, vf);
            EXPECT_NE(mac[4], PF_MAC[4]);
            EXPECT_EQ(mac[5], pf * hsi::iov::MAX_VFS_PER_PF + vf);
            EXPECT_EQ(mac[0] & 1, 0) << "unicast";
        }
    }
}

ecore::McpLinkState port_link(bool up, uint32_t mbps)
{
    ecore::McpLinkState link;
    link.link_up = up;
    link.speed_mbps = up ? mbps : 0;
    link.full_duplex = up;
    return link;
}

TEST(IovPf, BulletinFollowsThePortByDefault)
{
    const ecore::VfAdmin admin;
    hsi::iov::Bulletin b = ecore::iov_bulletin_fields(admin, port_link(true, 25000), 100000);
    EXPECT_EQ(b.flags, 0u);
    EXPECT_EQ(b.link_up, 1);
    EXPECT_EQ(b.full_duplex, 1);
    EXPECT_EQ(b.speed_mbps, 25000u);
    EXPECT_EQ(b.tx_rate_mbps, 0u);
    EXPECT_EQ(b.version, 0u) << "the seal is not the fields' business";

    b = ecore::iov_bulletin_fields(admin, port_link(false, 0), 100000);
    EXPECT_EQ(b.link_up, 0);
    EXPECT_EQ(b.speed_mbps, 0u);
}

TEST(IovPf, BulletinShowsTheAdminsSettings)
{
    ecore::VfAdmin admin;
    admin.policy.mac_forced = true;
    admin.policy.forced_mac = {0x02, 1, 2, 3, 4, 5};
    admin.policy.port_vlan = 100;
    admin.policy.trusted = true;
    admin.spoofchk = true;
    admin.tx_rate_mbps = 1000;
    admin.link_state = VfLinkState::up;
    hsi::iov::Bulletin b = ecore::iov_bulletin_fields(admin, port_link(false, 0), 100000);
    EXPECT_EQ(b.flags, hsi::iov::BULLETIN_MAC_FORCED | hsi::iov::BULLETIN_VLAN_FORCED |
                           hsi::iov::BULLETIN_LINK_FORCED | hsi::iov::BULLETIN_TRUSTED |
                           hsi::iov::BULLETIN_SPOOFCHK);
    EXPECT_EQ(0, std::memcmp(b.mac, admin.policy.forced_mac.data(), 6));
    EXPECT_EQ(b.port_vlan, 100);
    EXPECT_EQ(b.link_up, 1) << "forced up while the port is down";
    EXPECT_EQ(b.speed_mbps, 100000u) << "the port's fastest";
    EXPECT_EQ(b.tx_rate_mbps, 1000u);

    admin.link_state = VfLinkState::down;
    b = ecore::iov_bulletin_fields(admin, port_link(true, 25000), 100000);
    EXPECT_EQ(b.link_up, 0) << "forced down while the port is up";
    EXPECT_EQ(b.speed_mbps, 0u);
    EXPECT_TRUE(b.flags & hsi::iov::BULLETIN_LINK_FORCED);
}

/* ---- a PF of the embedded adapter and a VF the test plays ------------------------ */

/* A VF's driver at register level: its BAR0, its memory (request, reply,
 * bulletin board, status blocks) and rings. */
class VfPlayer {
public:
    static constexpr uint32_t REQUEST = 0;
    static constexpr uint32_t REPLY = 1024;
    static constexpr uint32_t BULLETIN = 2048;
    static constexpr uint32_t SBS = 3072;
    static constexpr uint32_t RINGS = 4096; /* per queue: Rx BDs, Rx CQEs at +1 KiB, Tx BDs at +4 KiB */
    static constexpr uint32_t FRAME = RINGS + hsi::iov::MAX_VF_QUEUES * 2 * 4096;
    static constexpr uint16_t FRAME_LEN = 64;

    bool attach(const std::string& adapter, uint32_t pf, uint32_t vf, std::string* why)
    {
        params_.adapter = adapter;
        params_.pf = pf;
        params_.is_vf = true;
        params_.vf = vf;
        int err = 0;
        pci_ = osal::pci_attach(params_, &err, why);
        return pci_ != nullptr && mem_.alloc(FRAME + 4096, "test VF memory") == 0;
    }
    /* The driver lets the VF go (its function level reset) and a new one
     * attaches it. */
    bool reattach(std::string* why)
    {
        pci_.reset();
        int err = 0;
        pci_ = osal::pci_attach(params_, &err, why);
        return pci_ != nullptr;
    }

    uint64_t iova(uint32_t offset) const { return mem_.iova() + offset; }
    uint8_t* at(uint32_t offset) const { return mem_.as<uint8_t>() + offset; }

    /* A request of one TLV (its RequestHeader's reply address set here) and
     * the extra TLVs, ended. */
    template <typename T, typename... Parts> void write_request(TlvType type, T request, const Parts&... parts)
    {
        if constexpr (std::is_same_v<T, hsi::iov::RequestHeader>)
            request.reply_address = iova(REPLY);
        else
            request.hdr.reply_address = iova(REPLY);
        ecore::iov::TlvWriter writer(std::span<uint8_t>(at(REQUEST), hsi::iov::CHANNEL_REQUEST_MAX));
        const bool fits = writer.add(type, request) && (writer.add(parts.first, parts.second) && ...) && writer.end();
        ASSERT_TRUE(fits);
    }
    void write_raw(const void* bytes, std::size_t len)
    {
        std::memset(at(REQUEST), 0, hsi::iov::CHANNEL_REQUEST_MAX);
        std::memcpy(at(REQUEST), bytes, len);
    }

    /* Triggers the channel and waits until the PF is done with the request;
     * the reply's status then (pending if none came). The channel's state
     * rather than the status byte is polled: the adapter's DMAE writes the
     * reply with plain stores, which only the channel's completion orders
     * before the VF's reads. */
    VfStatus send(uint32_t ms = 3000)
    {
        std::memset(at(REPLY), 0, hsi::iov::CHANNEL_REPLY_MAX);
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(iova(REQUEST)));
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(iova(REQUEST) >> 32));
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_TRIGGER, 1);
        test::wait_for([&] { return channel_state() != hsi::iov::ChannelState::pending; }, ms);
        return static_cast<VfStatus>(reply<hsi::iov::ReplyHeader>().status);
    }

    hsi::iov::ChannelState channel_state()
    {
        return static_cast<hsi::iov::ChannelState>(pci_->reg_rd(hsi::iov::vf_bar0::CHANNEL_STATE));
    }
    template <typename T> T reply() const
    {
        T out;
        std::memcpy(&out, at(REPLY), sizeof out);
        return out;
    }
    bool bulletin(hsi::iov::Bulletin* out) const
    {
        return ecore::iov::bulletin_read(std::span<const uint8_t>(at(BULLETIN), sizeof(hsi::iov::Bulletin)), out);
    }

    VfStatus acquire(uint8_t queues = 2, uint8_t sbs = 2)
    {
        hsi::iov::AcquireRequest req{};
        req.driver_version = 0x01020304;
        req.hsi_major = hsi::HSI_VERSION_MAJOR;
        req.hsi_minor = hsi::HSI_VERSION_MINOR;
        req.rx_queues = req.tx_queues = queues;
        req.sbs = sbs;
        req.mac_filters = 2;
        req.mcast_filters = 4;
        req.bulletin_size = sizeof(hsi::iov::Bulletin);
        req.bulletin_address = iova(BULLETIN);
        write_request(TlvType::acquire, req);
        return send();
    }

    VfStatus vport_start(uint8_t sbs = 2)
    {
        hsi::iov::VportStartRequest req{};
        req.mtu = 1500;
        req.sbs = sbs;
        for (uint32_t sb = 0; sb < sbs; sb++)
            req.sb_addr[sb] = iova(SBS + sb * sizeof(hsi::StatusBlock));
        write_request(TlvType::vport_start, req);
        return send();
    }

    VfStatus start_rxq(uint8_t queue, uint8_t sb = 0)
    {
        hsi::iov::StartRxqRequest req{};
        req.bd_ring = iova(RINGS + queue * 2 * 4096);
        req.cqe_ring = iova(RINGS + queue * 2 * 4096 + 1024);
        req.ring_size = 64;
        req.buf_size = 2048;
        req.queue = queue;
        req.sb = sb;
        req.sb_pi = hsi::L2_PI_RX;
        write_request(TlvType::start_rxq, req);
        return send();
    }

    VfStatus start_txq(uint8_t queue, uint8_t sb = 0)
    {
        hsi::iov::StartTxqRequest req{};
        req.bd_ring = iova(RINGS + queue * 2 * 4096 + 4096);
        req.ring_size = 64;
        req.queue = queue;
        req.sb = sb;
        req.sb_pi = hsi::L2_PI_TX;
        write_request(TlvType::start_txq, req);
        return send();
    }

    /* One frame from `src` on Tx queue `queue`, whose doorbell is at
     * `doorbell` (start_txq's reply). */
    void transmit(uint8_t queue, const ecore::Mac& src, uint32_t doorbell)
    {
        uint8_t* frame = at(FRAME);
        const uint8_t dst[6] = {0x02, 0xee, 0xee, 0xee, 0xee, 0xee};
        std::memcpy(frame, dst, 6);
        std::memcpy(frame + 6, src.data(), 6);
        frame[12] = 0x88;
        frame[13] = 0xb5;
        auto* ring = reinterpret_cast<hsi::eth::TxBd*>(at(RINGS + queue * 2 * 4096 + 4096));
        ring[tx_prod_ % 64] = hsi::eth::TxBd{hsi::make_regpair(iova(FRAME)), FRAME_LEN, 1, hsi::eth::txbd::START, 0, 0};
        tx_prod_++;
        osal::publish(reinterpret_cast<volatile uint32_t*>(pci_->doorbells() + doorbell), uint32_t{tx_prod_});
    }

    /* The channel's registers, as a VF that misuses them writes them. */
    void trigger_without_address()
    {
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_REQ_ADDR_LO, 0);
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_REQ_ADDR_HI, 0);
        pci_->reg_wr(hsi::iov::vf_bar0::CHANNEL_TRIGGER, 1);
    }

    VfStatus simple(TlvType type)
    {
        write_request(type, hsi::iov::CoalesceUpdateRequest{}); /* any body past the header: ignored */
        return send();
    }

private:
    osal::PciAttachParams params_;
    std::unique_ptr<osal::PciFunction> pci_;
    osal::DmaMem mem_;
    uint16_t tx_prod_ = 0;
};

template <typename T> std::pair<TlvType, T> part(TlvType type, const T& tlv) { return {type, tlv}; }

class IovPfChannel : public ::testing::Test {
protected:
    static constexpr uint32_t NUM_VFS = 2;

    void SetUp() override
    {
        ATTACH_OR_SKIP(pf_, "iov0", 0, osal::EmbeddedConfig{});
        ASSERT_EQ(pf_.bring_up(ecore::IntMode::msix), Status::success);
        up_ = true;
        const Status rc = ecore::iov_enable(hwfn(), NUM_VFS);
        if (rc != Status::success)
            GTEST_SKIP() << "the adapter enables no VF yet (iov_enable: " << ecore::status_name(rc) << ")";
        std::string why;
        if (!vf_.attach("iov0", 0, 0, &why))
            GTEST_SKIP() << "cannot attach VF 0: " << why;
    }
    void TearDown() override
    {
        if (up_) {
            EXPECT_EQ(pf_.tear_down(), Status::success);
        }
    }
    ecore::Hwfn& hwfn() { return pf_.hwfn(); }

    test::Pf pf_;
    bool up_ = false;
    VfPlayer vf_;
};

TEST_F(IovPfChannel, EnableIsBoundedByTheMaximum)
{
    EXPECT_EQ(ecore::iov_num_vfs(hwfn()), NUM_VFS);
    EXPECT_EQ(ecore::iov_enable(hwfn(), 1), Status::busy) << "enabled already";
    ASSERT_EQ(ecore::iov_disable(hwfn()), Status::success);
    EXPECT_EQ(ecore::iov_num_vfs(hwfn()), 0u);
    EXPECT_EQ(ecore::iov_enable(hwfn(), hsi::iov::MAX_VFS_PER_PF + 1), Status::inval);
    EXPECT_EQ(ecore::iov_enable(hwfn(), 0), Status::inval);
    EXPECT_EQ(ecore::iov_num_vfs(hwfn()), 0u);
    EXPECT_EQ(ecore::iov_enable(hwfn(), hsi::iov::MAX_VFS_PER_PF), Status::success);
    EXPECT_EQ(ecore::iov_num_vfs(hwfn()), hsi::iov::MAX_VFS_PER_PF);
}

TEST_F(IovPfChannel, AdminCallsNeedAnEnabledVf)
{
    ecore::VfInfo info;
    EXPECT_EQ(ecore::iov_vf_info(hwfn(), NUM_VFS, &info), Status::inval);
    EXPECT_EQ(ecore::iov_set_vf_trust(hwfn(), NUM_VFS, true), Status::inval);
    EXPECT_EQ(ecore::iov_set_vf_vlan(hwfn(), 0, 4096), Status::inval);
    EXPECT_EQ(ecore::iov_set_vf_mac(hwfn(), 0, {0x01, 0, 0, 0, 0, 1}), Status::inval) << "multicast";
    EXPECT_EQ(ecore::iov_set_vf_rate(hwfn(), 0, hsi::eth::vport_update::MAX_TX_RATE_MBPS + 1), Status::inval)
        << "faster than the port";
    ASSERT_EQ(ecore::iov_vf_info(hwfn(), 1, &info), Status::success);
    EXPECT_FALSE(info.acquired);
    EXPECT_EQ(info.mac, ecore::iov_vf_permanent_mac(hwfn().hw_info.mac, hwfn().hw_info.pf_id, 1));
    hsi::eth::VportStats stats{};
    EXPECT_EQ(ecore::iov_get_vf_stats(hwfn(), 1, &stats), Status::success);
    EXPECT_EQ(stats.rx_ucast_pkts, 0u);
}

TEST_F(IovPfChannel, AcquireGrantsAndWritesTheBulletin)
{
    EXPECT_EQ(vf_.simple(TlvType::vport_teardown), VfStatus::not_acquired);
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    const auto reply = vf_.reply<hsi::iov::AcquireReply>();
    EXPECT_EQ(reply.hdr.tlv.type, static_cast<uint16_t>(TlvType::reply));
    EXPECT_EQ(reply.hdr.request, static_cast<uint16_t>(TlvType::acquire));
    EXPECT_EQ(reply.pf_id, hwfn().hw_info.pf_id);
    EXPECT_EQ(reply.vf_id, 0);
    EXPECT_EQ(reply.rx_queues, 2);
    EXPECT_EQ(reply.tx_queues, 2);
    EXPECT_EQ(reply.sbs, 2);
    EXPECT_EQ(reply.mac_filters, 2);
    EXPECT_EQ(reply.vlan_filters, 0) << "not asked for";
    EXPECT_EQ(reply.mcast_filters, 4);
    EXPECT_EQ(reply.mtu, hwfn().hw_info.mtu);
    EXPECT_EQ(reply.bulletin_size, sizeof(hsi::iov::Bulletin));
    const ecore::Mac mac = ecore::iov_vf_permanent_mac(hwfn().hw_info.mac, hwfn().hw_info.pf_id, 0);
    EXPECT_EQ(0, std::memcmp(reply.mac, mac.data(), 6));

    hsi::iov::Bulletin board;
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_GE(board.version, 1u);
    EXPECT_EQ(board.flags, 0u);
    EXPECT_EQ(board.link_up != 0, pf_.link_up());

    ecore::VfInfo info;
    ASSERT_EQ(ecore::iov_vf_info(hwfn(), 0, &info), Status::success);
    EXPECT_TRUE(info.acquired);
    EXPECT_EQ(info.rx_queues, 2);
}

TEST_F(IovPfChannel, VportAndQueuesOnTheVfsOwnIds)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    ASSERT_EQ(vf_.vport_start(), VfStatus::success);
    {
        /* The VF's CAU has its status blocks, on its vectors. */
        ecore::PttGuard ptt(hwfn());
        ASSERT_TRUE(ptt);
        ecore::wr(hwfn(), *ptt, hsi::reg::IOV_VF_SELECT, 0);
        EXPECT_EQ(ecore::rd(hwfn(), *ptt, hsi::reg::iov_vf_cau(hsi::reg::cau_sb_addr_lo(1))),
                  static_cast<uint32_t>(vf_.iova(VfPlayer::SBS + sizeof(hsi::StatusBlock))));
        EXPECT_EQ(ecore::rd(hwfn(), *ptt, hsi::reg::iov_vf_cau(hsi::reg::cau_sb_conf(1))),
                  hsi::reg::CAU_SB_CONF_VALID | 1u << hsi::reg::CAU_SB_CONF_VECTOR_SHIFT);
    }
    ASSERT_EQ(vf_.start_rxq(1, 1), VfStatus::success);
    EXPECT_EQ(vf_.reply<hsi::iov::StartQueueReply>().offset, hsi::iov::vf_bar0::rx_prod(1));
    ASSERT_EQ(vf_.start_txq(1, 1), VfStatus::success);
    EXPECT_EQ(vf_.reply<hsi::iov::StartQueueReply>().offset, hsi::db_offset(hsi::cid_tx_queue(1)));
    EXPECT_EQ(vf_.start_rxq(1, 1), VfStatus::failure) << "started already";

    hsi::iov::VportActivateTlv activate{};
    activate.update_rx = activate.active_rx = activate.update_tx = activate.active_tx = 1;
    hsi::iov::VportRxModeTlv mode{};
    mode.broadcast_accept = 1;
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_activate, activate),
                      part(TlvType::vport_rx_mode, mode));
    EXPECT_EQ(vf_.send(), VfStatus::success);

    EXPECT_EQ(vf_.simple(TlvType::vport_teardown), VfStatus::failure) << "queues still started";
    hsi::iov::StopQueuesRequest stop{};
    stop.first = 0;
    stop.count = 2;
    vf_.write_request(TlvType::stop_rxqs, stop);
    EXPECT_EQ(vf_.send(), VfStatus::success);
    vf_.write_request(TlvType::stop_txqs, stop);
    EXPECT_EQ(vf_.send(), VfStatus::success);
    EXPECT_EQ(vf_.simple(TlvType::vport_teardown), VfStatus::success);

    ecore::VfInfo info;
    ASSERT_EQ(ecore::iov_vf_info(hwfn(), 0, &info), Status::success);
    EXPECT_FALSE(info.vport_started);
    EXPECT_EQ(vf_.simple(TlvType::release), VfStatus::success);
    ASSERT_EQ(ecore::iov_vf_info(hwfn(), 0, &info), Status::success);
    EXPECT_FALSE(info.acquired);
}

/* A status block apart from the vport's (a VF's RDMA slowpath): programmed
 * at once, kept while the vport stops and starts, never one of the
 * vport's, cleared by close. */
TEST_F(IovPfChannel, AStatusBlockApartFromTheVportsLivesThroughIt)
{
    ASSERT_EQ(vf_.acquire(2, 2), VfStatus::success);
    const auto cau = [&](uint32_t sb_reg) {
        ecore::PttGuard ptt(hwfn());
        ecore::wr(hwfn(), *ptt, hsi::reg::IOV_VF_SELECT, 0);
        return ecore::rd(hwfn(), *ptt, hsi::reg::iov_vf_cau(sb_reg));
    };
    const uint64_t addr = vf_.iova(VfPlayer::SBS + sizeof(hsi::StatusBlock));
    hsi::iov::SbSetupRequest setup{};
    setup.sb = 2;
    setup.sb_addr = addr;
    vf_.write_request(TlvType::sb_setup, setup);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request) << "beyond the grant of 2";
    setup.sb = 1;
    setup.sb_addr = addr + 4;
    vf_.write_request(TlvType::sb_setup, setup);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request) << "not 8-byte aligned";
    setup.sb_addr = addr;
    vf_.write_request(TlvType::sb_setup, setup);
    ASSERT_EQ(vf_.send(), VfStatus::success);
    EXPECT_EQ(cau(hsi::reg::cau_sb_addr_lo(1)), static_cast<uint32_t>(addr));
    EXPECT_EQ(cau(hsi::reg::cau_sb_conf(1)), hsi::reg::CAU_SB_CONF_VALID | 1u << hsi::reg::CAU_SB_CONF_VECTOR_SHIFT);

    EXPECT_EQ(vf_.vport_start(2), VfStatus::bad_request) << "SB 1 is not the vport's";
    ASSERT_EQ(vf_.vport_start(1), VfStatus::success);
    setup.sb = 0;
    vf_.write_request(TlvType::sb_setup, setup);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request) << "SB 0 is the started vport's";
    ASSERT_EQ(vf_.simple(TlvType::vport_teardown), VfStatus::success);
    EXPECT_EQ(cau(hsi::reg::cau_sb_conf(0)), 0u) << "the vport's SB went with it";
    EXPECT_EQ(cau(hsi::reg::cau_sb_conf(1)), hsi::reg::CAU_SB_CONF_VALID | 1u << hsi::reg::CAU_SB_CONF_VECTOR_SHIFT)
        << "the other stayed";

    setup.sb = 1;
    setup.sb_addr = 0;
    vf_.write_request(TlvType::sb_setup, setup);
    ASSERT_EQ(vf_.send(), VfStatus::success);
    EXPECT_EQ(cau(hsi::reg::cau_sb_conf(1)), 0u) << "an address of 0 clears it";
    EXPECT_EQ(cau(hsi::reg::cau_sb_addr_lo(1)), 0u);

    setup.sb_addr = addr;
    vf_.write_request(TlvType::sb_setup, setup);
    ASSERT_EQ(vf_.send(), VfStatus::success);
    ASSERT_EQ(vf_.simple(TlvType::close), VfStatus::success);
    EXPECT_EQ(cau(hsi::reg::cau_sb_conf(1)), 0u) << "close clears it";
    EXPECT_EQ(cau(hsi::reg::cau_sb_addr_lo(1)), 0u);
}

TEST_F(IovPfChannel, RefusesWhatTheGrantOrPolicyDoesNotAllow)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    ASSERT_EQ(vf_.vport_start(), VfStatus::success);
    EXPECT_EQ(vf_.start_rxq(2), VfStatus::bad_request) << "queue beyond the grant of 2";
    EXPECT_EQ(vf_.start_txq(0, 3), VfStatus::bad_request) << "SB beyond the grant";

    hsi::iov::VportRxModeTlv promisc{};
    promisc.unicast_accept_all = 1;
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_rx_mode, promisc));
    EXPECT_EQ(vf_.send(), VfStatus::forbidden) << "untrusted";
    ASSERT_EQ(ecore::iov_set_vf_trust(hwfn(), 0, true), Status::success);
    EXPECT_EQ(vf_.send(), VfStatus::success) << "trusted now";

    /* A forced MAC is the only one. */
    const std::array<uint8_t, 6> forced{0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    ASSERT_EQ(ecore::iov_set_vf_mac(hwfn(), 0, forced), Status::success);
    hsi::iov::UcastFilterRequest mac{};
    mac.op = static_cast<uint8_t>(hsi::iov::FilterOp::add);
    mac.kind = static_cast<uint8_t>(hsi::iov::FilterKind::mac);
    std::memcpy(mac.mac, "\x02\x01\x01\x01\x01\x01", 6);
    vf_.write_request(TlvType::ucast_filter, mac);
    EXPECT_EQ(vf_.send(), VfStatus::forbidden);
    std::memcpy(mac.mac, forced.data(), 6);
    vf_.write_request(TlvType::ucast_filter, mac);
    EXPECT_EQ(vf_.send(), VfStatus::success);

    hsi::iov::UpdateMtuRequest mtu{};
    mtu.mtu = hsi::eth::MAX_MTU + 1;
    vf_.write_request(TlvType::update_mtu, mtu);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request);
    mtu.mtu = 9000;
    vf_.write_request(TlvType::update_mtu, mtu);
    EXPECT_EQ(vf_.send(), VfStatus::success);

    hsi::iov::CoalesceUpdateRequest coalesce{};
    coalesce.rx_usecs = coalesce.tx_usecs = 10;
    coalesce.queue = 2;
    vf_.write_request(TlvType::coalesce_update, coalesce);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request) << "queue beyond the grant";
    coalesce.queue = 1;
    vf_.write_request(TlvType::coalesce_update, coalesce);
    EXPECT_EQ(vf_.send(), VfStatus::success);

    /* Multicast lists within the grant of 4, of multicast addresses. */
    hsi::iov::VportMcastTlv mcast{};
    mcast.count = 5;
    for (uint32_t i = 0; i < mcast.count; i++) {
        const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, static_cast<uint8_t>(i)};
        std::memcpy(mcast.macs[i], group, sizeof group);
    }
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_mcast, mcast));
    EXPECT_EQ(vf_.send(), VfStatus::no_resource);
    mcast.count = 4;
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_mcast, mcast));
    EXPECT_EQ(vf_.send(), VfStatus::success);
    mcast.count = 2; /* replaces the list */
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_mcast, mcast));
    EXPECT_EQ(vf_.send(), VfStatus::success);
    mcast.macs[0][0] = 0x02;
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_mcast, mcast));
    EXPECT_EQ(vf_.send(), VfStatus::bad_request) << "a unicast address";

    EXPECT_EQ(vf_.simple(TlvType::update_rxq), VfStatus::not_supported);
    EXPECT_EQ(vf_.simple(TlvType::close), VfStatus::success);
}

TEST_F(IovPfChannel, MalformedRequestsAreAnsweredWhenTheyCanBe)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);

    /* A request header, then a TLV of length 6: bad_request, to the reply
     * address the header gives. */
    struct {
        hsi::iov::RequestHeader hdr;
        hsi::iov::TlvHeader bad;
    } broken{};
    broken.hdr.tlv = {static_cast<uint16_t>(TlvType::vport_teardown), sizeof(hsi::iov::RequestHeader)};
    broken.hdr.reply_address = vf_.iova(VfPlayer::REPLY);
    broken.bad = {static_cast<uint16_t>(TlvType::vport_mcast), 6};
    vf_.write_raw(&broken, sizeof broken);
    EXPECT_EQ(vf_.send(), VfStatus::bad_request);

    /* An unknown request type, well formed. */
    struct {
        hsi::iov::RequestHeader hdr;
        hsi::iov::TlvHeader end;
    } unknown{};
    unknown.hdr.tlv = {99, sizeof(hsi::iov::RequestHeader)};
    unknown.hdr.reply_address = vf_.iova(VfPlayer::REPLY);
    unknown.end = {static_cast<uint16_t>(TlvType::list_end), sizeof(hsi::iov::TlvHeader)};
    vf_.write_raw(&unknown, sizeof unknown);
    EXPECT_EQ(vf_.send(), VfStatus::not_supported);

    /* No room for a reply address: no reply, but the channel is free again. */
    const hsi::iov::TlvHeader tiny[] = {{static_cast<uint16_t>(TlvType::close), 4},
                                        {static_cast<uint16_t>(TlvType::list_end), 4}};
    vf_.write_raw(tiny, sizeof tiny);
    EXPECT_EQ(vf_.send(500), VfStatus::pending);
    EXPECT_EQ(vf_.channel_state(), hsi::iov::ChannelState::idle);

    /* And the VF is still served. */
    EXPECT_EQ(vf_.simple(TlvType::int_cleanup), VfStatus::success);
}

TEST_F(IovPfChannel, AdminChangesReachTheBulletin)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    hsi::iov::Bulletin before;
    ASSERT_TRUE(vf_.bulletin(&before));

    const std::array<uint8_t, 6> forced{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
    ASSERT_EQ(ecore::iov_set_vf_mac(hwfn(), 0, forced), Status::success);
    hsi::iov::Bulletin board;
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_GT(board.version, before.version);
    EXPECT_TRUE(board.flags & hsi::iov::BULLETIN_MAC_FORCED);
    EXPECT_EQ(0, std::memcmp(board.mac, forced.data(), 6));

    ASSERT_EQ(ecore::iov_set_vf_vlan(hwfn(), 0, 42), Status::success);
    ASSERT_EQ(ecore::iov_set_vf_link_state(hwfn(), 0, VfLinkState::down), Status::success);
    ASSERT_EQ(ecore::iov_set_vf_spoofchk(hwfn(), 0, true), Status::success);
    ASSERT_EQ(ecore::iov_set_vf_rate(hwfn(), 0, 500), Status::success);
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_TRUE(board.flags & hsi::iov::BULLETIN_VLAN_FORCED);
    EXPECT_EQ(board.port_vlan, 42);
    EXPECT_TRUE(board.flags & hsi::iov::BULLETIN_LINK_FORCED);
    EXPECT_EQ(board.link_up, 0);
    EXPECT_TRUE(board.flags & hsi::iov::BULLETIN_SPOOFCHK);
    EXPECT_EQ(board.tx_rate_mbps, 500u);

    /* Unchanged settings write nothing new. */
    const uint64_t version = board.version;
    ASSERT_EQ(ecore::iov_set_vf_rate(hwfn(), 0, 500), Status::success);
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_EQ(board.version, version);

    /* The acquire reply gives the forced MAC, and a new driver keeps it. */
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    EXPECT_EQ(0, std::memcmp(vf_.reply<hsi::iov::AcquireReply>().mac, forced.data(), 6));
    ecore::VfInfo info;
    ASSERT_EQ(ecore::iov_vf_info(hwfn(), 0, &info), Status::success);
    EXPECT_TRUE(info.mac_forced);
    EXPECT_EQ(info.mac, forced);
    EXPECT_EQ(info.port_vlan, 42);
    EXPECT_FALSE(info.link_up);
}

TEST_F(IovPfChannel, TheBulletinFollowsThePortsLink)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    ASSERT_FALSE(pf_.link_up());
    hsi::iov::Bulletin board;
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_EQ(board.link_up, 0);

    const int updates = pf_.link_updates.load();
    {
        ecore::PttGuard ptt(hwfn());
        ASSERT_EQ(ecore::mcp_set_link(hwfn(), *ptt, true), Status::success);
    }
    /* The DPC writes the bulletins before it calls link_update. */
    ASSERT_TRUE(test::wait_for([&] { return pf_.link_updates.load() > updates && pf_.link_up(); }));
    ASSERT_TRUE(vf_.bulletin(&board));
    EXPECT_EQ(board.link_up, 1);
    EXPECT_EQ(board.speed_mbps, ecore::mcp_get_link_state(hwfn()).speed_mbps);
    EXPECT_GT(board.speed_mbps, 0u);
}

TEST_F(IovPfChannel, PolicyReachesARunningVport)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    ASSERT_EQ(ecore::iov_set_vf_spoofchk(hwfn(), 0, true), Status::success);
    ASSERT_EQ(ecore::iov_set_vf_rate(hwfn(), 0, 1000), Status::success);
    ASSERT_EQ(vf_.vport_start(), VfStatus::success) << "with anti-spoofing and a rate limit from the start";
    EXPECT_EQ(ecore::iov_set_vf_rate(hwfn(), 0, 0), Status::success) << "limit lifted";
    EXPECT_EQ(ecore::iov_set_vf_vlan(hwfn(), 0, 7), Status::success);
    EXPECT_EQ(ecore::iov_set_vf_mac(hwfn(), 0, {0x02, 9, 9, 9, 9, 9}), Status::success);
    EXPECT_EQ(ecore::iov_set_vf_mac(hwfn(), 0, {}), Status::success) << "force lifted";
    EXPECT_EQ(ecore::iov_set_vf_trust(hwfn(), 0, false), Status::success);
    EXPECT_EQ(vf_.simple(TlvType::close), VfStatus::success);
}

TEST_F(IovPfChannel, StatisticsAndAntiSpoofingOfTheVfsTraffic)
{
    {
        ecore::PttGuard ptt(hwfn());
        ASSERT_EQ(ecore::mcp_set_link(hwfn(), *ptt, true), Status::success);
    }
    ASSERT_TRUE(test::wait_for([&] { return pf_.link_up(); }));
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    const auto acquired = vf_.reply<hsi::iov::AcquireReply>();
    ecore::Mac own;
    std::memcpy(own.data(), acquired.mac, 6);
    ASSERT_EQ(ecore::iov_set_vf_spoofchk(hwfn(), 0, true), Status::success);
    ASSERT_EQ(vf_.vport_start(1), VfStatus::success);
    ASSERT_EQ(vf_.start_txq(0), VfStatus::success);
    const uint32_t doorbell = vf_.reply<hsi::iov::StartQueueReply>().offset;
    hsi::iov::VportActivateTlv activate{};
    activate.update_tx = activate.active_tx = 1;
    vf_.write_request(TlvType::vport_update, hsi::iov::RequestHeader{}, part(TlvType::vport_activate, activate));
    ASSERT_EQ(vf_.send(), VfStatus::success);

    hsi::eth::VportStats stats{};
    auto counted = [&](uint64_t hsi::eth::VportStats::*counter) {
        return test::wait_for([&] {
            return ecore::iov_get_vf_stats(hwfn(), 0, &stats) == Status::success && stats.*counter == 1;
        });
    };
    /* Its own MAC is not one of its vport's filters yet: spoofed. */
    vf_.transmit(0, own, doorbell);
    EXPECT_TRUE(counted(&hsi::eth::VportStats::tx_spoofed_pkts));
    EXPECT_EQ(stats.tx_ucast_pkts, 0u);

    hsi::iov::UcastFilterRequest filter{};
    filter.op = static_cast<uint8_t>(hsi::iov::FilterOp::add);
    filter.kind = static_cast<uint8_t>(hsi::iov::FilterKind::mac);
    std::memcpy(filter.mac, own.data(), 6);
    vf_.write_request(TlvType::ucast_filter, filter);
    ASSERT_EQ(vf_.send(), VfStatus::success);
    vf_.transmit(0, own, doorbell);
    EXPECT_TRUE(counted(&hsi::eth::VportStats::tx_ucast_pkts));
    EXPECT_EQ(stats.tx_spoofed_pkts, 1u);
}

TEST_F(IovPfChannel, MaliciousUntilItsFlr)
{
    ASSERT_EQ(vf_.acquire(), VfStatus::success);
    vf_.trigger_without_address();
    ecore::VfInfo info;
    EXPECT_TRUE(test::wait_for(
        [&] { return ecore::iov_vf_info(hwfn(), 0, &info) == Status::success && info.malicious; }));
    EXPECT_EQ(vf_.channel_state(), hsi::iov::ChannelState::disabled);
    EXPECT_TRUE(info.acquired);

    /* Its driver lets it go: the adapter resets it, and the PF cleans up
     * (final cleanup ramrod, the MFW's ack) and enables it again. */
    std::string why;
    ASSERT_TRUE(vf_.reattach(&why)) << why;
    EXPECT_TRUE(test::wait_for([&] {
        return ecore::iov_vf_info(hwfn(), 0, &info) == Status::success && !info.acquired &&
               vf_.channel_state() == hsi::iov::ChannelState::idle;
    }));
    EXPECT_FALSE(info.malicious);
    EXPECT_EQ(vf_.acquire(), VfStatus::success) << "a new driver";
}

} // namespace
