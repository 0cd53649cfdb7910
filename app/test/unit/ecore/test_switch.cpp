/* SPDX-License-Identifier: BSD-3-Clause
 * The port's switch through ecore (ecore_switch_api.h) against the embedded
 * adapter: switchdev mode and its counters' memory, a rule taking the
 * frames the loopback wire brings back and counting them where ecore reads
 * them, representor vports, the table's limits, legacy mode again, and no
 * memory left behind.
 */
#include "fixture.h"

#include <cstring>

#include "ecore_chain.h"
#include "ecore_l2_api.h"
#include "ecore_switch_api.h"
#include "hsi_switch.h"

using namespace cna;
using ecore::Status;
using namespace hsi::eth;
using namespace hsi::eswitch;

namespace {

constexpr uint16_t FRAME_LEN = 100;

SwitchRuleAddRamrodData from_the_wire_to(uint16_t destination)
{
    SwitchRuleAddRamrodData r{};
    r.source = endpoint::WIRE;
    r.fate = static_cast<uint8_t>(Fate::forward);
    r.destination = destination;
    r.actions = action::COUNT;
    return r;
}

TEST(Switch, SwitchdevRulesCountWhereEcoreReadsThem)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "t_switch", 0, osal::EmbeddedConfig{});
    const int zones = test::memzone_count();
    ASSERT_NO_FATAL_FAILURE(pf.bring_up_linked());
    ecore::Hwfn& hwfn = pf.hwfn();
    osal::DmaMem sb_mem;
    ASSERT_EQ(sb_mem.alloc(sizeof(hsi::StatusBlock), "test SB"), 0);
    ecore::SbInfo sb;
    {
        ecore::PttGuard ptt(hwfn);
        ASSERT_EQ(ecore::int_sb_init(hwfn, *ptt, sb, sb_mem.va(), sb_mem.iova(), 0), Status::success);
    }
    ecore::SpVportStartParams vp;
    ASSERT_EQ(ecore::sp_vport_start(hwfn, vp), Status::success);
    test::QueuePair qp;
    ASSERT_NO_FATAL_FAILURE(qp.start(hwfn));
    ecore::SpVportUpdateParams up;
    up.update_vport_active_rx_flg = up.vport_active_rx_flg = true;
    up.update_vport_active_tx_flg = up.vport_active_tx_flg = true;
    up.update_accept_flags = true;
    up.rx_accept = accept::UCAST_MATCHED | accept::UCAST_UNMATCHED | accept::BCAST;
    ASSERT_EQ(ecore::sp_vport_update(hwfn, up), Status::success);

    EXPECT_EQ(ecore::sp_switch_rule_add(hwfn, from_the_wire_to(endpoint::vport(0)), nullptr), Status::inval)
        << "legacy mode has no rules";
    EXPECT_EQ(ecore::switchdev_enable(hwfn, MAX_RULES + 1), Status::inval);
    ASSERT_EQ(ecore::switchdev_enable(hwfn, 2), Status::success);
    EXPECT_TRUE(ecore::switchdev_enabled(hwfn));
    EXPECT_EQ(ecore::switchdev_enable(hwfn, 2), Status::busy);

    /* Representors: a VF has one. */
    ecore::SpVportStartParams rep;
    rep.vport_id = 1;
    rep.represented_vf = 0;
    EXPECT_EQ(ecore::sp_vport_start(hwfn, rep), Status::success);
    rep.vport_id = 2;
    EXPECT_EQ(ecore::sp_vport_start(hwfn, rep), Status::busy) << "VF 0 has its representor";
    EXPECT_EQ(ecore::sp_vport_stop(hwfn, 1), Status::success);

    uint32_t id = UINT32_MAX, other = UINT32_MAX;
    EXPECT_EQ(ecore::sp_switch_rule_add(hwfn, from_the_wire_to(endpoint::vf(0)), &id), Status::inval)
        << "the PF has no VF 0";
    ASSERT_EQ(ecore::sp_switch_rule_add(hwfn, from_the_wire_to(endpoint::vport(0)), &id), Status::success);
    ASSERT_EQ(ecore::sp_switch_rule_add(hwfn, from_the_wire_to(endpoint::vport(0)), &other), Status::success);
    EXPECT_EQ(ecore::sp_switch_rule_add(hwfn, from_the_wire_to(endpoint::vport(0)), &other), Status::nospc);
    EXPECT_EQ(ecore::sp_switch_rule_del(hwfn, other), Status::success);
    EXPECT_EQ(ecore::sp_switch_rule_del(hwfn, other), Status::noent);

    /* The PF's Tx is the uplink's: to the wire, which loops it back; the
     * rule takes it back to vport 0 and counts it. */
    auto* frame = qp.tx_buf.as<uint8_t>();
    std::memset(frame, 0xff, 6);
    std::memcpy(frame + 6, hwfn.hw_info.mac.data(), 6);
    frame[12] = 0x88;
    frame[13] = 0xb5;
    auto* bd = qp.tx_bds.produce_as<TxBd>();
    *bd = TxBd{hsi::make_regpair(qp.tx_buf.iova()), FRAME_LEN, 1, txbd::START, 0, 0};
    ecore::doorbell(qp.tx.doorbell_addr, qp.tx_bds.prod());
    ASSERT_TRUE(test::wait_for([&] { return osal::observe(&sb.sb_virt->pi_array[hsi::L2_PI_RX]) == 1; }));
    EXPECT_EQ(ecore::switch_rule_counters(hwfn, id).hits, 1u);
    EXPECT_EQ(ecore::switch_rule_counters(hwfn, id).bytes, FRAME_LEN);
    {
        ecore::PttGuard ptt(hwfn);
        SwitchStats stats{};
        ecore::get_switch_stats(hwfn, *ptt, &stats);
        EXPECT_EQ(stats.misses, 1u) << "the PF's own frame, to the wire";
        EXPECT_EQ(stats.rule_hits, 1u) << "back from it";
    }

    EXPECT_EQ(ecore::switchdev_disable(hwfn), Status::success);
    EXPECT_FALSE(ecore::switchdev_enabled(hwfn));
    EXPECT_EQ(ecore::switch_rule_counters(hwfn, id).hits, 0u) << "no table, no counters";

    ecore::SpVportUpdateParams down;
    down.update_vport_active_rx_flg = down.update_vport_active_tx_flg = true;
    EXPECT_EQ(ecore::sp_vport_update(hwfn, down), Status::success);
    EXPECT_EQ(ecore::eth_tx_queue_stop(hwfn, qp.tx.handle), Status::success);
    EXPECT_EQ(ecore::eth_rx_queue_stop(hwfn, qp.rx.handle), Status::success);
    EXPECT_EQ(ecore::sp_vport_stop(hwfn, 0), Status::success);
    ASSERT_EQ(ecore::switchdev_enable(hwfn, 8), Status::success) << "again, for the unload to undo";
    {
        ecore::PttGuard ptt(hwfn);
        ecore::int_sb_release(hwfn, *ptt, sb);
        EXPECT_EQ(ecore::mcp_set_link(hwfn, *ptt, false), Status::success);
    }
    EXPECT_EQ(pf.tear_down(), Status::success);
    EXPECT_FALSE(ecore::switchdev_enabled(hwfn)) << "resc_free let the counters go";
    sb_mem.release();
    qp.rx_bds.free();
    qp.rx_cqes.free();
    qp.tx_bds.free();
    qp.rx_bufs.release();
    qp.tx_buf.release();
    EXPECT_EQ(test::memzone_count(), zones);
}

} // namespace
