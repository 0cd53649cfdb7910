/* SPDX-License-Identifier: BSD-3-Clause
 * The whole life of an L2 function, as the PMD drives it: bring-up, one
 * frame sent on a loopback wire and received, tear-down; twice. */
#include "fixture.h"

#include <cstring>

#include "ecore_chain.h"
#include "ecore_l2_api.h"
#include "hsi_eth.h"

using namespace cna;
using ecore::Status;
using namespace hsi::eth;

namespace {

constexpr uint32_t RING = test::QueuePair::RING;
constexpr uint16_t BUF_SIZE = test::QueuePair::BUF_SIZE;
constexpr uint16_t FRAME_LEN = 128;

struct FastpathIrq {
    osal::MsixIrq irq;
    std::atomic<int> fired{0};
    static void isr(void* arg) { static_cast<FastpathIrq*>(arg)->fired++; }
};

void run_life_cycle(const char* adapter)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, adapter, 0, osal::EmbeddedConfig{});
    const int zones = test::memzone_count();
    ASSERT_NO_FATAL_FAILURE(pf.bring_up_linked());
    ecore::Hwfn& hwfn = pf.hwfn();

    /* Fastpath status block 0, armed on its vector. */
    osal::DmaMem sb_mem;
    ASSERT_EQ(sb_mem.alloc(sizeof(hsi::StatusBlock), "test SB"), 0);
    ecore::SbInfo sb;
    FastpathIrq fp;
    {
        ecore::PttGuard ptt(hwfn);
        ASSERT_EQ(ecore::int_sb_init(hwfn, *ptt, sb, sb_mem.va(), sb_mem.iova(), 0), Status::success);
    }
    ASSERT_EQ(fp.irq.request(pf.pci->msix_eventfd(hsi::msix_vector_of_sb(0)), FastpathIrq::isr, &fp), 0);
    ecore::sb_ack(sb, hsi::IguIntOp::enable);

    ecore::SpVportStartParams vp;
    vp.mtu = 1500;
    ASSERT_EQ(ecore::sp_vport_start(hwfn, vp), Status::success);

    /* Rx: BD ring full of buffers, CQE ring. */
    test::QueuePair qp;
    ASSERT_NO_FATAL_FAILURE(qp.start(hwfn));
    auto& [rx_bds, rx_cqes, tx_bds, rx_bufs, tx_buf, rx, tx] = qp;

    ecore::SpVportUpdateParams up;
    up.update_vport_active_rx_flg = up.vport_active_rx_flg = true;
    up.update_vport_active_tx_flg = up.vport_active_tx_flg = true;
    up.update_accept_flags = true;
    up.rx_accept = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::BCAST;
    ASSERT_EQ(ecore::sp_vport_update(hwfn, up), Status::success);

    /* Our own MAC is the only unicast accepted; removing a filter twice fails. */
    ecore::FilterUcast filter;
    filter.mac = hwfn.hw_info.mac;
    ASSERT_EQ(ecore::sp_eth_filter_ucast(hwfn, filter), Status::success);
    ecore::FilterUcast absent = filter;
    absent.opcode = ecore::FilterOpcode::remove;
    absent.mac[0] ^= 0x02;
    EXPECT_EQ(ecore::sp_eth_filter_ucast(hwfn, absent), Status::noent);

    /* One frame to ourselves. */
    auto* frame = tx_buf.as<uint8_t>();
    memcpy(frame, hwfn.hw_info.mac.data(), 6);
    memcpy(frame + 6, hwfn.hw_info.mac.data(), 6);
    frame[12] = 0x88;
    frame[13] = 0xb5;
    for (uint32_t i = 14; i < FRAME_LEN; i++)
        frame[i] = static_cast<uint8_t>(i);
    auto* bd = tx_bds.produce_as<TxBd>();
    *bd = TxBd{hsi::make_regpair(tx_buf.iova()), FRAME_LEN, 1, txbd::START, 0, 0};
    ecore::doorbell(tx.doorbell_addr, tx_bds.prod());

    /* Tx completes, Rx places it, the SB says so and interrupts. */
    EXPECT_TRUE(test::wait_for([&] { return osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_TX]) == tx_bds.prod(); }));
    ASSERT_TRUE(test::wait_for([&] { return osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_RX]) == 1; }));
    EXPECT_TRUE(ecore::sb_update_sb_idx(sb));
    EXPECT_TRUE(test::wait_for([&] { return fp.fired.load() > 0; }));
    rx_cqes.set_prod(osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_RX]));
    auto* cqe = rx_cqes.consume_as<RxCqe>();
    ASSERT_NE(cqe, nullptr);
    EXPECT_EQ(cqe->type, static_cast<uint8_t>(CqeType::regular));
    EXPECT_EQ(cqe->pkt_len, FRAME_LEN);
    EXPECT_EQ(cqe->bd_num, 1);
    EXPECT_EQ(memcmp(rx_bufs.as<uint8_t>() + cqe->placement_offset, frame, FRAME_LEN), 0);
    ecore::eth_rx_prod_update(rx.rx_prod_addr, rx_bds.prod(), rx_cqes.cons());
    ecore::sb_ack(sb, hsi::IguIntOp::enable);

    {
        ecore::PttGuard ptt(hwfn);
        VportStats vs{};
        ASSERT_EQ(ecore::get_vport_stats(hwfn, *ptt, 0, &vs), Status::success);
        EXPECT_EQ(vs.tx_ucast_pkts, 1u);
        EXPECT_EQ(vs.rx_ucast_pkts, 1u);
        EXPECT_EQ(vs.rx_ucast_bytes, FRAME_LEN);
        QueueStats qs{};
        ASSERT_EQ(ecore::get_rx_queue_stats(hwfn, *ptt, 0, &qs), Status::success);
        EXPECT_EQ(qs.pkts, 1u);
        ASSERT_EQ(ecore::get_tx_queue_stats(hwfn, *ptt, 0, &qs), Status::success);
        EXPECT_EQ(qs.pkts, 1u);
    }

    /* Tear-down in reverse. */
    ecore::SpVportUpdateParams down;
    down.update_vport_active_rx_flg = down.update_vport_active_tx_flg = true;
    EXPECT_EQ(ecore::sp_vport_update(hwfn, down), Status::success);
    EXPECT_EQ(ecore::eth_tx_queue_stop(hwfn, tx.handle), Status::success);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn, rx.handle), Status::success);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn, rx.handle), Status::inval) << "a handle is good once";
    EXPECT_EQ(ecore::sp_vport_stop(hwfn, 0), Status::success);
    fp.irq.release();
    {
        ecore::PttGuard ptt(hwfn);
        ecore::int_sb_release(hwfn, *ptt, sb);
        EXPECT_EQ(ecore::mcp_set_link(hwfn, *ptt, false), Status::success);
    }
    EXPECT_EQ(pf.tear_down(), Status::success);
    EXPECT_FALSE(pf.sp_irq.requested());
    sb_mem.release();
    rx_bds.free();
    rx_cqes.free();
    tx_bds.free();
    rx_bufs.release();
    tx_buf.release();
    EXPECT_EQ(test::memzone_count(), zones);
}

} // namespace

TEST(BringUp, FrameOnLoopbackTwice)
{
    for (int round = 0; round < 2; round++) {
        SCOPED_TRACE(round);
        run_life_cycle("t_bringup");
        if (HasFatalFailure() || IsSkipped())
            return;
    }
}

TEST(BringUp, SamePfTwiceWithoutDetaching)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_bringup_again", 0, osal::EmbeddedConfig{});
    for (int round = 0; round < 2; round++) {
        ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success) << round;
        EXPECT_EQ(pf.tear_down(), Status::success) << round;
    }
}
