/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_iov_checks.h"

#include <algorithm>
#include <bit>

namespace cna::ecore::iov {
namespace {

using namespace hsi::iov;

constexpr Verdict refuse(Status status, const char* reason) { return {status, reason}; }

/* 0 asks for the whole share; more than the share (or than a VF can have)
 * gets the share. */
uint8_t within(uint8_t asked, uint8_t share, uint32_t most)
{
    const uint8_t can = static_cast<uint8_t>(std::min<uint32_t>(share, most));
    return asked == 0 ? can : std::min(asked, can);
}

/* Filters only when asked for. */
uint8_t filters(uint8_t asked, uint8_t share, uint32_t most)
{
    return asked == 0 ? 0 : within(asked, share, most);
}

bool ring_size_ok(uint32_t size)
{
    return std::has_single_bit(size) && size >= hsi::eth::MIN_RING_SIZE && size <= hsi::eth::MAX_RING_SIZE;
}

/* A ring the adapter DMAs: present and aligned to its elements. */
bool ring_address_ok(uint64_t iova) { return iova != 0 && iova % 64 == 0; }

/* Where a queue lives: its id, its status block and the protocol index. */
Verdict check_queue_and_sb(uint8_t queue, uint8_t queues, uint8_t sb, uint8_t sb_pi, const VfGrant& grant)
{
    if (queue >= queues)
        return refuse(Status::bad_request, "queue beyond the VF's grant");
    if (sb >= grant.sbs)
        return refuse(Status::bad_request, "status block beyond the VF's grant");
    if (sb_pi >= hsi::PIS_PER_SB)
        return refuse(Status::bad_request, "a protocol index past the status block's");
    return {};
}

bool multicast(const uint8_t* mac) { return (mac[0] & 1) != 0; }
bool zero(const uint8_t* mac) { return std::all_of(mac, mac + 6, [](uint8_t b) { return b == 0; }); }

} // namespace

Verdict grant_acquire(const AcquireRequest& req, const VfShare& share, VfGrant* grant)
{
    if (req.hsi_major != hsi::HSI_VERSION_MAJOR)
        return refuse(Status::not_supported, "the VF's HSI major version differs from the PF's");
    if (req.bulletin_address == 0 || req.bulletin_address % 8 != 0)
        return refuse(Status::bad_request, "no bulletin board, or one not 8-byte aligned");
    if (req.bulletin_size < BULLETIN_MIN_SIZE)
        return refuse(Status::bad_request, "a bulletin board smaller than its first fields");
    grant->rx_queues = within(req.rx_queues, share.queues, MAX_VF_QUEUES);
    grant->tx_queues = within(req.tx_queues, share.queues, MAX_VF_QUEUES);
    grant->sbs = within(req.sbs, share.sbs, MAX_VF_SBS);
    grant->mac_filters = within(req.mac_filters, share.mac_filters, MAX_VF_MAC_FILTERS);
    grant->vlan_filters = filters(req.vlan_filters, share.vlan_filters, MAX_VF_VLAN_FILTERS);
    grant->mcast_filters = filters(req.mcast_filters, share.mcast_filters, MAX_VF_MCAST_FILTERS);
    grant->bulletin_size = std::min<uint32_t>(req.bulletin_size, sizeof(Bulletin));
    if (grant->rx_queues == 0 || grant->tx_queues == 0 || grant->sbs == 0)
        return refuse(Status::no_resource, "the VF's share has no queue or status block");
    return {};
}

Verdict check_start_rxq(const StartRxqRequest& req, const VfGrant& grant)
{
    if (Verdict v = check_queue_and_sb(req.queue, grant.rx_queues, req.sb, req.sb_pi, grant); !v.ok())
        return v;
    if (!ring_size_ok(req.ring_size))
        return refuse(Status::bad_request, "an Rx ring size that is not a power of two within the adapter's limits");
    if (!ring_address_ok(req.bd_ring) || !ring_address_ok(req.cqe_ring))
        return refuse(Status::bad_request, "an Rx ring address that is 0 or not 64-byte aligned");
    if (req.buf_size < hsi::eth::MIN_MTU || req.buf_size > hsi::eth::MAX_MTU + hsi::eth::ETH_OVERHEAD)
        return refuse(Status::bad_request, "an Rx buffer size outside the adapter's limits");
    if ((req.flags & ~hsi::eth::rxq_flags::ALL) != 0)
        return refuse(Status::bad_request, "Rx queue flags the adapter does not know");
    return {};
}

Verdict check_start_txq(const StartTxqRequest& req, const VfGrant& grant)
{
    if (Verdict v = check_queue_and_sb(req.queue, grant.tx_queues, req.sb, req.sb_pi, grant); !v.ok())
        return v;
    if (!ring_size_ok(req.ring_size))
        return refuse(Status::bad_request, "a Tx ring size that is not a power of two within the adapter's limits");
    if (!ring_address_ok(req.bd_ring))
        return refuse(Status::bad_request, "a Tx ring address that is 0 or not 64-byte aligned");
    return {};
}

Verdict check_stop_queues(const StopQueuesRequest& req, uint8_t granted_queues)
{
    if (req.count == 0 || req.first >= granted_queues || req.count > granted_queues - req.first)
        return refuse(Status::bad_request, "queues beyond the VF's grant");
    return {};
}

Verdict check_vport_update(const TlvReader& message, const VfGrant& grant, const VfPolicy& policy)
{
    using Find = TlvReader::Find;
    VportRxModeTlv mode{};
    VportRssTlv rss{};
    VportMcastTlv mcast{};
    VportActivateTlv activate{};
    VportVlanStripTlv strip{};
    const Find found[] = {message.find(TlvType::vport_rx_mode, &mode), message.find(TlvType::vport_rss, &rss),
                          message.find(TlvType::vport_mcast, &mcast),
                          message.find(TlvType::vport_activate, &activate),
                          message.find(TlvType::vport_vlan_strip, &strip)};
    if (std::find(std::begin(found), std::end(found), Find::too_short) != std::end(found))
        return refuse(Status::bad_request, "a vport_update part shorter than its type");
    if (found[0] == Find::found && (mode.unicast_accept_all || mode.multicast_accept_all) && !policy.trusted)
        return refuse(Status::forbidden, "promiscuous or all-multicast asked by an untrusted VF");
    if (found[1] == Find::found && rss.enable) {
        if (std::any_of(std::begin(rss.reta), std::end(rss.reta), [&](uint8_t q) { return q >= grant.rx_queues; }))
            return refuse(Status::bad_request, "an RSS indirection entry beyond the VF's Rx queues");
    }
    if (found[2] == Find::found) {
        if (mcast.count > std::min<uint32_t>(grant.mcast_filters, MAX_VF_MCAST_FILTERS))
            return refuse(Status::no_resource, "more multicast addresses than the VF's grant");
        for (uint16_t i = 0; i < mcast.count; i++)
            if (!multicast(mcast.macs[i]))
                return refuse(Status::bad_request, "a unicast address in the multicast list");
    }
    return {};
}

Verdict check_ucast_filter(const UcastFilterRequest& req, const VfGrant& grant, const VfPolicy& policy)
{
    const auto op = static_cast<FilterOp>(req.op);
    const auto kind = static_cast<FilterKind>(req.kind);
    if (op != FilterOp::add && op != FilterOp::remove && op != FilterOp::flush)
        return refuse(Status::bad_request, "an unknown filter operation");
    if (kind == FilterKind::mac) {
        if (op != FilterOp::flush && (multicast(req.mac) || zero(req.mac)))
            return refuse(Status::bad_request, "a MAC filter on a multicast or zero address");
        if (op == FilterOp::add && policy.mac_forced &&
            !std::equal(std::begin(req.mac), std::end(req.mac), policy.forced_mac.begin()))
            return refuse(Status::forbidden, "a MAC other than the one the PF forced");
        if (op == FilterOp::add && grant.mac_filters == 0)
            return refuse(Status::no_resource, "no MAC filter in the VF's grant");
        return {};
    }
    if (kind == FilterKind::vlan) {
        if (op == FilterOp::add && policy.port_vlan != 0)
            return refuse(Status::forbidden, "VLAN filters of a VF whose port VLAN the PF set");
        if (op != FilterOp::flush && (req.vlan == 0 || req.vlan > 4095))
            return refuse(Status::bad_request, "a VLAN id outside 1..4095");
        if (op == FilterOp::add && grant.vlan_filters == 0)
            return refuse(Status::no_resource, "no VLAN filter in the VF's grant");
        return {};
    }
    return refuse(Status::bad_request, "an unknown filter kind");
}

Verdict check_mtu(uint16_t mtu, const VfPolicy& policy)
{
    if (mtu < hsi::eth::MIN_MTU || mtu > policy.max_mtu)
        return refuse(Status::bad_request, "an MTU outside the port's limits");
    return {};
}

Verdict check_sb_setup(const hsi::iov::SbSetupRequest& req, const VfGrant& grant, uint8_t vport_sbs)
{
    if (req.sb >= grant.sbs)
        return {Status::bad_request, "a status block beyond the VF's grant"};
    if (req.sb < vport_sbs)
        return {Status::bad_request, "a status block of its started vport"};
    if (req.sb_addr % 8 != 0)
        return {Status::bad_request, "a status block address not 8-byte aligned"};
    return {};
}

} // namespace cna::ecore::iov
