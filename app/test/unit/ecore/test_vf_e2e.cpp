/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the VF's side, on the embedded adapter: the OSAL's attach of a
 * VF, and a VF's ecore with its PF's ecore on one adapter, end to end.
 */
#include "fixture.h"

#include <cstring>

#include "ecore_chain.h"
#include "ecore_iov_api.h"
#include "ecore_l2_api.h"
#include "ecore_ptp_api.h"
#include "ecore_rdma_api.h"
#include "ecore_sriov.h"
#include "ecore_vf_api.h"
#include "hsi_iov.h"
#include "pci_attach.h"

using namespace cna;
using ecore::Status;
using hsi::iov::ChannelState;
namespace vf_bar0 = hsi::iov::vf_bar0;
namespace accept = hsi::eth::accept;

namespace {

osal::PciAttachParams vf_params(const std::string& adapter, uint32_t pf, uint32_t vf)
{
    osal::PciAttachParams p;
    p.adapter = adapter;
    p.pf = pf;
    p.is_vf = true;
    p.vf = vf;
    return p;
}

TEST(VfOsal, AnEmbeddedVfJoinsAnAdapterWhosePfEnabledIt)
{
    int err = 0;
    std::string msg;
    EXPECT_EQ(osal::pci_attach(vf_params("t_vf_noadapter", 0, 0), &err, &msg), nullptr);
    if (err == -ENOTSUP)
        GTEST_SKIP() << "no embedded adapter in this build";
    EXPECT_EQ(err, -ENODEV);
    EXPECT_NE(msg.find("no adapter t_vf_noadapter"), std::string::npos) << msg;

    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_vf_attach", 0, osal::EmbeddedConfig{});
    EXPECT_EQ(osal::pci_attach(vf_params("t_vf_attach", 0, 0), &err, &msg), nullptr);
    EXPECT_EQ(err, -ENODEV);
    EXPECT_NE(msg.find("pf0 of adapter t_vf_attach has no VF 0 enabled (vfs=0)"), std::string::npos) << msg;
    EXPECT_EQ(osal::pci_attach(vf_params("t_vf_attach", 0, hsi::iov::MAX_VFS_PER_PF), &err, &msg), nullptr);
    EXPECT_EQ(err, -ENODEV);
    EXPECT_EQ(osal::pci_attach(vf_params("t_vf_attach", 7, 0), &err, &msg), nullptr);
    EXPECT_EQ(err, -ENODEV);

    /* A VF of the daemon's adapter never starts a daemon: its PF's serves. */
    osal::PciAttachParams remote = vf_params("", 0, 0);
    remote.backend = osal::Backend::remote;
    remote.daemon_socket = "/nonexistent/cna.sock";
    EXPECT_EQ(osal::pci_attach(remote, &err, &msg), nullptr);
    EXPECT_EQ(err, -ENOENT) << msg;
}

/* ---- a VF and its PF on one embedded adapter ------------------------------------- */

constexpr uint32_t RING = test::QueuePair::RING;
constexpr uint16_t BUF_SIZE = test::QueuePair::BUF_SIZE;
constexpr uint16_t FRAME_LEN = 128;

struct FastpathIrq {
    osal::MsixIrq irq;
    std::atomic<int> fired{0};
    static void isr(void* arg) { static_cast<FastpathIrq*>(arg)->fired++; }
};

/* A PF brought up with its link and `vfs` VFs enabled. */
void pf_with_vfs(test::Pf& pf, uint32_t vfs)
{
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    {
        ecore::PttGuard ptt(pf.hwfn());
        ASSERT_EQ(ecore::mcp_set_link(pf.hwfn(), *ptt, true), Status::success);
    }
    ASSERT_TRUE(test::wait_for([&] { return pf.link_up(); }));
    ASSERT_EQ(ecore::iov_enable(pf.hwfn(), vfs), Status::success);
}

TEST(VfEndToEnd, AcquireStartAndAFrameThroughItsOwnQueues)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_vf_e2e", 0, osal::EmbeddedConfig{});
    const int zones = test::memzone_count();
    pf_with_vfs(pf, 2);
    if (HasFatalFailure())
        return;

    int err = 0;
    std::string msg;
    std::unique_ptr<osal::PciFunction> pci = osal::pci_attach(vf_params("t_vf_e2e", 0, 1), &err, &msg);
    ASSERT_NE(pci, nullptr) << msg;
    EXPECT_TRUE(pci->is_vf());
    EXPECT_EQ(pci->name(), "t_vf_e2e/pf0/vf1");
    EXPECT_EQ(osal::pci_attach(vf_params("t_vf_e2e", 0, 1), &err, &msg), nullptr);
    EXPECT_EQ(err, -EBUSY) << msg;

    /* The PMD's probe, as for a PF. */
    ecore::Dev dev;
    ecore::init_struct(dev, "t_vf_e2e/vf1", *pci, {});
    ecore::Hwfn& hwfn = dev.hwfn;
    ASSERT_EQ(ecore::hw_prepare(dev), Status::success);
    ASSERT_EQ(ecore::resc_alloc(dev), Status::success);
    ecore::resc_setup(dev);
    ASSERT_EQ(ecore::hw_init(dev, ecore::HwInitParams{}), Status::success);
    const ecore::HwInfo& pf_info = pf.hwfn().hw_info;
    EXPECT_EQ(hwfn.hw_info.mac, ecore::iov_vf_permanent_mac(pf_info.mac, pf_info.pf_id, 1));
    EXPECT_EQ(hwfn.hw_info.pf_id, pf_info.pf_id);
    EXPECT_EQ(hwfn.hw_info.port_id, pf_info.port_id);
    EXPECT_EQ(hwfn.hw_info.fw_version, pf_info.fw_version);
    EXPECT_EQ(hwfn.hw_info.mtu, pf_info.mtu);
    EXPECT_EQ(hwfn.hw_info.resc.num_vports, 1u);
    EXPECT_GE(hwfn.hw_info.resc.num_rx_queues, 1u);
    ecore::VfInfo info;
    ASSERT_EQ(ecore::iov_vf_info(pf.hwfn(), 1, &info), Status::success);
    EXPECT_TRUE(info.acquired);

    /* The bulletin: the port's link, then the administrator's. */
    hsi::iov::Bulletin board{};
    ASSERT_TRUE(test::wait_for([&] { return ecore::vf_bulletin_read(hwfn, &board); }));
    EXPECT_EQ(board.link_up, 1);
    ASSERT_EQ(ecore::iov_set_vf_link_state(pf.hwfn(), 1, ecore::VfLinkState::down), Status::success);
    ASSERT_TRUE(test::wait_for([&] { return ecore::vf_bulletin_read(hwfn, &board); }));
    EXPECT_EQ(board.link_up, 0);
    EXPECT_TRUE(board.flags & hsi::iov::BULLETIN_LINK_FORCED);
    ASSERT_EQ(ecore::iov_set_vf_link_state(pf.hwfn(), 1, ecore::VfLinkState::automatic), Status::success);

    /* Its fastpath SB on its own vector 0, then the vport and queues. */
    ecore::Ptt no_ptt;
    osal::DmaMem sb_mem;
    ASSERT_EQ(sb_mem.alloc(sizeof(hsi::StatusBlock), "test VF SB"), 0);
    ecore::SbInfo sb;
    ASSERT_EQ(ecore::int_sb_init(hwfn, no_ptt, sb, sb_mem.va(), sb_mem.iova(), 0), Status::success);
    FastpathIrq fp;
    ASSERT_EQ(fp.irq.request(pci->msix_eventfd(0), FastpathIrq::isr, &fp), 0);
    ecore::sb_ack(sb, hsi::IguIntOp::enable);
    ecore::SpVportStartParams vp;
    vp.rx_csum = true;
    ASSERT_EQ(ecore::sp_vport_start(hwfn, vp), Status::success);

    using namespace hsi::eth;
    test::QueuePair qp;
    ASSERT_NO_FATAL_FAILURE(qp.start(hwfn));
    auto& [rx_bds, rx_cqes, tx_bds, rx_bufs, tx_buf, rx, tx] = qp;
    ecore::SpVportUpdateParams up;
    up.update_vport_active_rx_flg = up.vport_active_rx_flg = true;
    up.update_vport_active_tx_flg = up.vport_active_tx_flg = true;
    up.update_accept_flags = true;
    up.rx_accept = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::BCAST;
    ASSERT_EQ(ecore::sp_vport_update(hwfn, up), Status::success);
    ecore::FilterUcast own;
    own.mac = hwfn.hw_info.mac;
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn, own), Status::success);
    ecore::FilterUcast mcast;
    mcast.mac = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn, mcast), Status::success);
    EXPECT_EQ(ecore::filter_accept_cmd(hwfn, 0, up.rx_accept | accept::UCAST_UNMATCHED), Status::perm)
        << "an untrusted VF is not promiscuous";

    /* A frame to itself: out on the loopback wire, back into its queue. */
    auto* frame = tx_buf.as<uint8_t>();
    std::memcpy(frame, hwfn.hw_info.mac.data(), 6);
    std::memcpy(frame + 6, hwfn.hw_info.mac.data(), 6);
    frame[12] = 0x88;
    frame[13] = 0xb5;
    for (uint32_t i = 14; i < FRAME_LEN; i++)
        frame[i] = static_cast<uint8_t>(i);
    *tx_bds.produce_as<TxBd>() = TxBd{hsi::make_regpair(tx_buf.iova()), FRAME_LEN, 1, txbd::START, 0, 0};
    ecore::doorbell(tx.doorbell_addr, tx_bds.prod());
    EXPECT_TRUE(test::wait_for([&] { return osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_TX]) == tx_bds.prod(); }));
    ASSERT_TRUE(test::wait_for([&] { return osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_RX]) == 1; }));
    EXPECT_TRUE(ecore::sb_update_sb_idx(sb));
    EXPECT_TRUE(test::wait_for([&] { return fp.fired.load() > 0; })) << "its vector 0";
    rx_cqes.set_prod(osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_RX]));
    auto* cqe = rx_cqes.consume_as<RxCqe>();
    ASSERT_NE(cqe, nullptr);
    EXPECT_EQ(cqe->pkt_len, FRAME_LEN);
    EXPECT_EQ(std::memcmp(rx_bufs.as<uint8_t>() + cqe->placement_offset, frame, FRAME_LEN), 0);
    ecore::eth_rx_prod_update(rx.rx_prod_addr, rx_bds.prod(), rx_cqes.cons());

    /* Its statistics, from its page, as its PF reads them. */
    VportStats vs{}, pf_view{};
    ASSERT_TRUE(test::wait_for([&] {
        return ecore::get_vport_stats(hwfn, no_ptt, 0, &vs) == Status::success && vs.rx_ucast_pkts == 1;
    }));
    EXPECT_EQ(vs.tx_ucast_pkts, 1u);
    EXPECT_EQ(vs.rx_ucast_bytes, FRAME_LEN);
    ASSERT_EQ(ecore::iov_get_vf_stats(pf.hwfn(), 1, &pf_view), Status::success);
    EXPECT_EQ(std::memcmp(&vs, &pf_view, sizeof vs), 0);
    QueueStats qs{};
    ASSERT_EQ(ecore::get_rx_queue_stats(hwfn, no_ptt, 0, &qs), Status::success);
    EXPECT_EQ(qs.pkts, 1u);
    ASSERT_EQ(ecore::get_tx_queue_stats(hwfn, no_ptt, 0, &qs), Status::success);
    EXPECT_EQ(qs.pkts, 1u);

    /* The PMD's stop and close. */
    ecore::SpVportUpdateParams down;
    down.update_vport_active_rx_flg = down.update_vport_active_tx_flg = true;
    EXPECT_EQ(ecore::sp_vport_update(hwfn, down), Status::success);
    EXPECT_EQ(ecore::eth_tx_queue_stop(hwfn, tx.handle), Status::success);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn, rx.handle), Status::success);
    EXPECT_EQ(ecore::sp_vport_stop(hwfn, 0), Status::success);
    fp.irq.release();
    ecore::int_sb_release(hwfn, no_ptt, sb);
    EXPECT_EQ(ecore::hw_stop(dev), Status::success);
    ecore::int_disable_post_isr_release(dev);
    ecore::resc_free(dev);
    ecore::hw_remove(dev);
    ASSERT_EQ(ecore::iov_vf_info(pf.hwfn(), 1, &info), Status::success);
    EXPECT_FALSE(info.acquired) << "released";
    pci.reset();

    EXPECT_EQ(pf.tear_down(), Status::success);
    sb_mem.release();
    rx_bds.free();
    rx_cqes.free();
    tx_bds.free();
    rx_bufs.release();
    tx_buf.release();
    EXPECT_EQ(test::memzone_count(), zones);
}

/* A VF's RDMA on its own slowpath: its SPQ and EQ (on CNQ 0's status
 * block, which raises that SB's vector), its grant's limits, its one DPI
 * page, the MAC its vport filters; its L2 vport stops under it; stopped
 * and started again. */
TEST(VfEndToEnd, ItsRdmaRunsOnItsOwnSlowpathUnderItsVport)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_vf_rdma", 0, osal::EmbeddedConfig{});
    const int zones = test::memzone_count();
    pf_with_vfs(pf, 1);
    if (HasFatalFailure())
        return;
    int err = 0;
    std::string msg;
    std::unique_ptr<osal::PciFunction> pci = osal::pci_attach(vf_params("t_vf_rdma", 0, 0), &err, &msg);
    ASSERT_NE(pci, nullptr) << msg;
    ecore::Dev dev;
    ecore::init_struct(dev, "t_vf_rdma/vf0", *pci, {});
    ecore::Hwfn& hwfn = dev.hwfn;
    ASSERT_EQ(ecore::hw_prepare(dev), Status::success);
    hwfn.pf_params.rdma = ecore::RdmaPfParams{hsi::iov::VF_RDMA_QPS + 1, 16};
    EXPECT_EQ(ecore::resc_alloc(dev), Status::inval) << "beyond a VF's grant";
    hwfn.pf_params.rdma = ecore::RdmaPfParams{hsi::iov::VF_RDMA_QPS, 16};
    ASSERT_EQ(ecore::resc_alloc(dev), Status::success);
    ecore::resc_setup(dev);
    ASSERT_EQ(ecore::hw_init(dev, ecore::HwInitParams{}), Status::success);
    ASSERT_EQ(hwfn.hw_info.resc.num_sbs, hsi::iov::MAX_VF_SBS);

    /* L2 on SB 0; RDMA on the last, its interrupt processing the EQ. */
    ecore::Ptt no_ptt;
    osal::DmaMem l2_sb_mem, rdma_sb_mem, cnq, cq_ring;
    ASSERT_EQ(l2_sb_mem.alloc(sizeof(hsi::StatusBlock), "test VF L2 SB"), 0);
    ASSERT_EQ(rdma_sb_mem.alloc(sizeof(hsi::StatusBlock), "test VF RDMA SB"), 0);
    ASSERT_EQ(cnq.alloc(64 * sizeof(hsi::rdma::CnqEntry), "test VF CNQ"), 0);
    ASSERT_EQ(cq_ring.alloc(256 * sizeof(hsi::rdma::RdmaCqe), "test VF CQ"), 0);
    ecore::SbInfo l2_sb, rdma_sb;
    const uint16_t sb_id = ecore::rdma_get_sb_id(hwfn, 0);
    EXPECT_EQ(sb_id, hsi::iov::MAX_VF_SBS - 1);
    ASSERT_EQ(ecore::int_sb_init(hwfn, no_ptt, l2_sb, l2_sb_mem.va(), l2_sb_mem.iova(), 0), Status::success);
    ASSERT_EQ(ecore::int_sb_init(hwfn, no_ptt, rdma_sb, rdma_sb_mem.va(), rdma_sb_mem.iova(), sb_id),
              Status::success);
    struct RdmaIrq {
        osal::MsixIrq irq;
        ecore::Hwfn* hwfn;
        ecore::SbInfo* sb;
        std::atomic<int> fired{0};
        static void isr(void* arg)
        {
            auto* self = static_cast<RdmaIrq*>(arg);
            self->fired++;
            ecore::sb_update_sb_idx(*self->sb);
            ecore::rdma_process_eq(*self->hwfn);
            ecore::sb_ack(*self->sb, hsi::IguIntOp::enable);
        }
    } rdma_irq{{}, &hwfn, &rdma_sb};
    ASSERT_EQ(rdma_irq.irq.request(pci->msix_eventfd(sb_id), RdmaIrq::isr, &rdma_irq), 0);
    ecore::sb_ack(rdma_sb, hsi::IguIntOp::enable);

    ecore::RdmaStartParams p;
    p.desired_cnq = 1;
    p.cnq[0] = {cnq.iova(), 64, sb_id};
    p.mac_addr = hwfn.hw_info.mac;
    ecore::FilterUcast own;
    own.mac = hwfn.hw_info.mac;
    const uint8_t& programmed = pf.hwfn().iov->vfs[0].own_sbs; /* the PF's record of sb_setup */
    for (int round = 0; round < 2; round++) {
        ASSERT_EQ(ecore::sp_vport_start(hwfn, ecore::SpVportStartParams{}), Status::success);
        if (round == 0) {
            EXPECT_EQ(ecore::rdma_start(hwfn, p), Status::inval) << "its MAC is not its vport's yet";
            EXPECT_EQ(programmed, 0) << "its status block cleared after the refusal";
        }
        ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn, own), Status::success);
        rdma_irq.fired = 0;
        ASSERT_EQ(ecore::rdma_start(hwfn, p), Status::success) << "round " << round;
        EXPECT_EQ(programmed, 1u << sb_id);
        EXPECT_TRUE(test::wait_for([&] { return rdma_irq.fired.load() > 0; })) << "PF_START's EQE on its vector";
        const ecore::RdmaDevice caps = ecore::rdma_query_device(hwfn);
        EXPECT_EQ(caps.max_qp, hsi::iov::VF_RDMA_QPS);
        ecore::RdmaUser user, second;
        ASSERT_EQ(ecore::rdma_add_user(hwfn, &user), Status::success);
        EXPECT_EQ(user.dpi, hsi::iov::VF_DPI);
        EXPECT_EQ(user.doorbells, pci->doorbells() + hsi::dpi_offset(hsi::iov::VF_DPI));
        EXPECT_EQ(ecore::rdma_add_user(hwfn, &second), Status::nospc) << "one DPI page";

        /* Its vport goes; its ramrods still complete. */
        EXPECT_EQ(ecore::sp_vport_stop(hwfn, 0), Status::success);
        uint16_t pd, cq;
        ASSERT_EQ(ecore::rdma_alloc_pd(hwfn, &pd), Status::success);
        ASSERT_EQ(ecore::rdma_create_cq(hwfn, {user.dpi, 0, cq_ring.iova(), 256}, &cq), Status::success);
        hsi::rdma::RoceStats stats;
        EXPECT_EQ(ecore::rdma_get_stats(hwfn, no_ptt, &stats), Status::success);
        EXPECT_EQ(stats.tx_packets, 0u);
        EXPECT_EQ(ecore::rdma_stop(hwfn), Status::busy) << "its CQ still exists";
        EXPECT_EQ(ecore::rdma_destroy_cq(hwfn, cq), Status::success);
        ecore::rdma_free_pd(hwfn, pd);
        ecore::rdma_remove_user(hwfn, user.dpi);
        EXPECT_EQ(ecore::rdma_stop(hwfn), Status::success);
        EXPECT_FALSE(ecore::rdma_started(hwfn));
        EXPECT_EQ(programmed, 0) << "cleared with its slowpath";
    }

    rdma_irq.irq.release();
    ecore::int_sb_release(hwfn, no_ptt, rdma_sb);
    ecore::int_sb_release(hwfn, no_ptt, l2_sb);
    EXPECT_EQ(ecore::hw_stop(dev), Status::success);
    ecore::int_disable_post_isr_release(dev);
    ecore::resc_free(dev);
    ecore::hw_remove(dev);
    pci.reset();
    EXPECT_EQ(pf.tear_down(), Status::success);
    for (osal::DmaMem* m : {&l2_sb_mem, &rdma_sb_mem, &cnq, &cq_ring})
        m->release();
    EXPECT_EQ(test::memzone_count(), zones);
}

/* A VF its driver holds outlives its PF's driver (hw_stop leaves it
 * enabled): its channel is unattended, a request fails at once with
 * Status::again, and the next PF's driver (hw_init) disables it. */
TEST(VfEndToEnd, AVfItsDriverHoldsOutlivesItsPfsDriver)
{
    int err = 0;
    std::string msg;
    std::unique_ptr<osal::PciFunction> pci;
    ecore::Dev dev;
    {
        test::Pf pf;
        ATTACH_OR_SKIP(pf, "t_vf_outlive", 0, osal::EmbeddedConfig{});
        pf_with_vfs(pf, 2);
        if (HasFatalFailure())
            return;
        pci = osal::pci_attach(vf_params("t_vf_outlive", 0, 0), &err, &msg);
        ASSERT_NE(pci, nullptr) << msg;
        ecore::init_struct(dev, "t_vf_outlive/vf0", *pci, {});
        ASSERT_EQ(ecore::hw_prepare(dev), Status::success);
        ASSERT_EQ(ecore::resc_alloc(dev), Status::success);
        ecore::resc_setup(dev);
        ASSERT_EQ(ecore::hw_init(dev, ecore::HwInitParams{}), Status::success);
        EXPECT_EQ(pf.tear_down(), Status::success);
    } /* the PF's driver unloaded, its function detached */
    ecore::Hwfn& hwfn = dev.hwfn;
    EXPECT_TRUE(ecore::vf_channel_open(hwfn));
    EXPECT_EQ(ecore::vf_channel_state(hwfn), hsi::iov::ChannelState::unattended);
    const auto asked = std::chrono::steady_clock::now();
    ecore::FilterUcast own;
    own.mac = hwfn.hw_info.mac;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn, own), Status::again);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(500)) << "no timeout waited out";

    test::Pf next;
    ATTACH_OR_SKIP(next, "t_vf_outlive", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(next.bring_up(ecore::IntMode::msix), Status::success);
    EXPECT_FALSE(ecore::vf_channel_open(hwfn)) << "the new PF's driver disabled it: the VF resets";
    EXPECT_EQ(ecore::iov_num_vfs(next.hwfn()), 0u);
    EXPECT_EQ(ecore::hw_stop(dev), Status::nodev) << "its close finds the channel closed";
    ecore::resc_free(dev);
    ecore::hw_remove(dev);
    pci.reset();
    EXPECT_EQ(next.tear_down(), Status::success);
}

/* A VF reads its port's clock, stamps on its own, and may not steer. */
TEST(VfEndToEnd, AVfReadsItsPortsClockAndMayNotSteerIt)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_vf_ptp", 0, osal::EmbeddedConfig{});
    pf_with_vfs(pf, 1);
    if (HasFatalFailure())
        return;
    int err = 0;
    std::string msg;
    std::unique_ptr<osal::PciFunction> pci = osal::pci_attach(vf_params("t_vf_ptp", 0, 0), &err, &msg);
    ASSERT_NE(pci, nullptr) << msg;
    ecore::Dev dev;
    ecore::init_struct(dev, "t_vf_ptp/vf0", *pci, {});
    ASSERT_EQ(ecore::hw_prepare(dev), Status::success);
    ecore::Hwfn& hwfn = dev.hwfn;

    ASSERT_EQ(ecore::ptp_settime(pf.hwfn(), 9'000'000'000'000), Status::success);
    uint64_t now = 0;
    ASSERT_EQ(ecore::ptp_read_cc(hwfn, &now), Status::success);
    EXPECT_GE(now, 9'000'000'000'000u);
    EXPECT_LT(now, 9'000'100'000'000u);
    EXPECT_EQ(ecore::ptp_settime(hwfn, 1), Status::perm);
    EXPECT_EQ(ecore::ptp_adjtime(hwfn, 1), Status::perm);
    EXPECT_EQ(ecore::ptp_adjfreq(hwfn, 1), Status::perm);
    ASSERT_EQ(ecore::ptp_enable(hwfn), Status::success);
    ecore::PtpStamp stamp;
    EXPECT_EQ(ecore::ptp_read_rx_ts(hwfn, 0, &stamp), Status::again);
    EXPECT_EQ(ecore::ptp_disable(hwfn), Status::success);
    ecore::hw_remove(dev);
    pci.reset();
    EXPECT_EQ(pf.tear_down(), Status::success);
}

TEST(VfEndToEnd, AVfKeepsItsAdapterPastItsPf)
{
    std::unique_ptr<osal::PciFunction> vf;
    {
        test::Pf pf;
        ATTACH_OR_SKIP(pf, "t_vf_keep", 0, osal::EmbeddedConfig{});
        pf_with_vfs(pf, 1);
        if (HasFatalFailure())
            return;
        int err = 0;
        std::string msg;
        vf = osal::pci_attach(vf_params("t_vf_keep", 0, 0), &err, &msg);
        ASSERT_NE(vf, nullptr) << msg;
        EXPECT_EQ(vf->reg_rd(vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(ChannelState::idle));
        EXPECT_EQ(pf.tear_down(), Status::success);
    } /* the PF detached */
    EXPECT_EQ(vf->reg_rd(vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(ChannelState::disabled))
        << "its PF disabled it on the way out";

    /* The adapter is still there: another layout is refused... */
    osal::EmbeddedConfig two_ports;
    two_ports.ports = 2;
    test::Pf other;
    bool skip = false;
    EXPECT_FALSE(other.attach("t_vf_keep", 0, two_ports, &skip));
    /* ...until the VF goes too. */
    vf.reset();
    EXPECT_TRUE(other.attach("t_vf_keep", 0, two_ports, &skip));
}

} // namespace
