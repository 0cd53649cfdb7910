/* SPDX-License-Identifier: BSD-3-Clause
 * What a PF accepts of its VFs' requests: grants within the share, ids
 * within the grant, settings within the policy, and a reason for every
 * refusal.
 */
#include <gtest/gtest.h>

#include <vector>

#include "ecore_iov_checks.h"

namespace {

using namespace cna::hsi::iov;
using namespace cna::ecore::iov;

AcquireRequest acquire(uint8_t queues)
{
    AcquireRequest req{};
    req.hsi_major = cna::hsi::HSI_VERSION_MAJOR;
    req.rx_queues = req.tx_queues = req.sbs = queues;
    req.mac_filters = 1;
    req.bulletin_address = 0x10000;
    req.bulletin_size = sizeof(Bulletin);
    return req;
}

VfGrant two_queues()
{
    VfGrant g;
    g.rx_queues = g.tx_queues = g.sbs = 2;
    g.mac_filters = 1;
    g.vlan_filters = 2;
    g.mcast_filters = 4;
    g.bulletin_size = sizeof(Bulletin);
    return g;
}

StartRxqRequest rxq(uint8_t queue, uint8_t sb)
{
    StartRxqRequest r{};
    r.bd_ring = 0x20000;
    r.cqe_ring = 0x30000;
    r.ring_size = 1024;
    r.buf_size = 2048;
    r.queue = queue;
    r.sb = sb;
    return r;
}

TEST(IovChecks, AcquireGrantsWithinTheShare)
{
    VfShare share;
    share.queues = 2;
    share.sbs = 2;
    share.mac_filters = 4;
    share.mcast_filters = 8;
    VfGrant g;
    AcquireRequest req = acquire(4);
    req.mcast_filters = 16;
    ASSERT_TRUE(grant_acquire(req, share, &g).ok());
    EXPECT_EQ(g.rx_queues, 2);
    EXPECT_EQ(g.sbs, 2);
    EXPECT_EQ(g.mac_filters, 1) << "what was asked, within the share";
    EXPECT_EQ(g.mcast_filters, 8);
    EXPECT_EQ(g.vlan_filters, 0) << "none asked, none granted";
    req = acquire(0); /* 0: the whole share */
    ASSERT_TRUE(grant_acquire(req, share, &g).ok());
    EXPECT_EQ(g.tx_queues, 2);
    share.queues = 200; /* a share beyond what a VF can have */
    ASSERT_TRUE(grant_acquire(acquire(0), share, &g).ok());
    EXPECT_EQ(g.rx_queues, MAX_VF_QUEUES);
}

TEST(IovChecks, AcquireRefusals)
{
    VfGrant g;
    AcquireRequest req = acquire(1);
    req.hsi_major++;
    EXPECT_EQ(grant_acquire(req, {}, &g).status, Status::not_supported);
    req = acquire(1);
    req.bulletin_address = 0;
    EXPECT_EQ(grant_acquire(req, {}, &g).status, Status::bad_request);
    req = acquire(1);
    req.bulletin_size = 8;
    EXPECT_EQ(grant_acquire(req, {}, &g).status, Status::bad_request);
    VfShare empty;
    empty.queues = 0;
    const Verdict v = grant_acquire(acquire(1), empty, &g);
    EXPECT_EQ(v.status, Status::no_resource);
    EXPECT_STREQ(v.reason, "the VF's share has no queue or status block");
}

TEST(IovChecks, QueuesWithinTheGrant)
{
    const VfGrant g = two_queues();
    EXPECT_TRUE(check_start_rxq(rxq(1, 1), g).ok());
    EXPECT_STREQ(check_start_rxq(rxq(2, 0), g).reason, "queue beyond the VF's grant");
    EXPECT_STREQ(check_start_rxq(rxq(0, 2), g).reason, "status block beyond the VF's grant");
    StartRxqRequest r = rxq(0, 0);
    r.ring_size = 1000;
    EXPECT_EQ(check_start_rxq(r, g).status, Status::bad_request);
    r = rxq(0, 0);
    r.cqe_ring = 0x30008;
    EXPECT_EQ(check_start_rxq(r, g).status, Status::bad_request);
    r = rxq(0, 0);
    r.sb_pi = cna::hsi::PIS_PER_SB;
    EXPECT_EQ(check_start_rxq(r, g).status, Status::bad_request);
    StartTxqRequest t{};
    t.bd_ring = 0x40000;
    t.ring_size = 512;
    t.queue = 1;
    EXPECT_TRUE(check_start_txq(t, g).ok());
    t.queue = 2;
    EXPECT_EQ(check_start_txq(t, g).status, Status::bad_request);
    EXPECT_TRUE(check_stop_queues({{}, 0, 2, {}}, 2).ok());
    EXPECT_FALSE(check_stop_queues({{}, 1, 2, {}}, 2).ok());
    EXPECT_FALSE(check_stop_queues({{}, 0, 0, {}}, 2).ok());
    EXPECT_FALSE(check_stop_queues({{}, 255, 2, {}}, 2).ok());
}

/* A vport_update message of the given parts. */
template <typename... Parts>
std::vector<uint8_t> vport_update(const Parts&... parts)
{
    std::vector<uint8_t> buf(CHANNEL_REQUEST_MAX);
    TlvWriter w(buf);
    EXPECT_TRUE(w.add(TlvType::vport_update, RequestHeader{}));
    const bool added = (w.add(parts.first, parts.second) && ...);
    EXPECT_TRUE(added);
    EXPECT_TRUE(w.end());
    buf.resize(w.size());
    return buf;
}

TEST(IovChecks, RxModeNeedsTrust)
{
    const VfGrant g = two_queues();
    VfPolicy policy;
    const auto promisc = vport_update(std::pair{TlvType::vport_rx_mode, VportRxModeTlv{{}, 1, 0, 1, 0}});
    const Verdict v = check_vport_update(TlvReader(promisc), g, policy);
    EXPECT_EQ(v.status, Status::forbidden);
    EXPECT_STREQ(v.reason, "promiscuous or all-multicast asked by an untrusted VF");
    policy.trusted = true;
    EXPECT_TRUE(check_vport_update(TlvReader(promisc), g, policy).ok());
    const auto plain = vport_update(std::pair{TlvType::vport_rx_mode, VportRxModeTlv{{}, 0, 0, 1, 0}});
    EXPECT_TRUE(check_vport_update(TlvReader(plain), g, VfPolicy{}).ok());
}

TEST(IovChecks, RssAndMulticastWithinTheGrant)
{
    const VfGrant g = two_queues();
    VportRssTlv rss{};
    rss.enable = 1;
    for (std::size_t i = 0; i < std::size(rss.reta); i++)
        rss.reta[i] = i % 2;
    EXPECT_TRUE(check_vport_update(TlvReader(vport_update(std::pair{TlvType::vport_rss, rss})), g, {}).ok());
    rss.reta[77] = 2;
    EXPECT_STREQ(check_vport_update(TlvReader(vport_update(std::pair{TlvType::vport_rss, rss})), g, {}).reason,
                 "an RSS indirection entry beyond the VF's Rx queues");
    VportMcastTlv mc{};
    mc.count = 4;
    for (auto& mac : mc.macs)
        mac[0] = 0x01;
    EXPECT_TRUE(check_vport_update(TlvReader(vport_update(std::pair{TlvType::vport_mcast, mc})), g, {}).ok());
    mc.count = 5;
    EXPECT_EQ(check_vport_update(TlvReader(vport_update(std::pair{TlvType::vport_mcast, mc})), g, {}).status,
              Status::no_resource);
    mc.count = 1;
    mc.macs[0][0] = 0x02;
    EXPECT_EQ(check_vport_update(TlvReader(vport_update(std::pair{TlvType::vport_mcast, mc})), g, {}).status,
              Status::bad_request);
}

TEST(IovChecks, ATruncatedPartIsABadRequest)
{
    std::vector<uint8_t> msg = vport_update(std::pair{TlvType::vport_vlan_strip, VportVlanStripTlv{}});
    /* Rewrite the part's length to a header only. */
    const std::size_t part = sizeof(RequestHeader);
    msg[part + 2] = 4;
    msg.erase(msg.begin() + part + 4, msg.begin() + part + 8);
    EXPECT_STREQ(check_vport_update(TlvReader(msg), two_queues(), {}).reason,
                 "a vport_update part shorter than its type");
}

TEST(IovChecks, FiltersWithinThePolicy)
{
    const VfGrant g = two_queues();
    VfPolicy policy;
    UcastFilterRequest add{};
    add.op = static_cast<uint8_t>(FilterOp::add);
    add.kind = static_cast<uint8_t>(FilterKind::mac);
    const uint8_t mine[6] = {0x02, 0, 0, 0, 0, 0x10};
    std::copy(std::begin(mine), std::end(mine), add.mac);
    EXPECT_TRUE(check_ucast_filter(add, g, policy).ok());
    policy.mac_forced = true;
    policy.forced_mac = {0x02, 0, 0, 0, 0, 0x20};
    EXPECT_EQ(check_ucast_filter(add, g, policy).status, Status::forbidden);
    std::copy(policy.forced_mac.begin(), policy.forced_mac.end(), add.mac);
    EXPECT_TRUE(check_ucast_filter(add, g, policy).ok());
    add.mac[0] = 0x01;
    EXPECT_EQ(check_ucast_filter(add, g, VfPolicy{}).status, Status::bad_request);

    UcastFilterRequest vlan{};
    vlan.op = static_cast<uint8_t>(FilterOp::add);
    vlan.kind = static_cast<uint8_t>(FilterKind::vlan);
    vlan.vlan = 100;
    EXPECT_TRUE(check_ucast_filter(vlan, g, VfPolicy{}).ok());
    VfPolicy tagged;
    tagged.port_vlan = 7;
    EXPECT_STREQ(check_ucast_filter(vlan, g, tagged).reason, "VLAN filters of a VF whose port VLAN the PF set");
    vlan.vlan = 4096;
    EXPECT_EQ(check_ucast_filter(vlan, g, VfPolicy{}).status, Status::bad_request);
    vlan.op = 9;
    EXPECT_STREQ(check_ucast_filter(vlan, g, VfPolicy{}).reason, "an unknown filter operation");
}

TEST(IovChecks, MtuWithinThePort)
{
    VfPolicy policy;
    policy.max_mtu = 1500;
    EXPECT_TRUE(check_mtu(1500, policy).ok());
    EXPECT_FALSE(check_mtu(1501, policy).ok());
    EXPECT_FALSE(check_mtu(63, policy).ok());
}

} // namespace
