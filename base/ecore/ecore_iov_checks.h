/* SPDX-License-Identifier: BSD-3-Clause
 * What a PF accepts of a VF's request (hsi_iov.h), before it acts on any of
 * it: every id within the VF's grant, every setting within the PF's policy
 * for the VF. A refusal is a Status for the VF and a reason for the PF's
 * log; nothing of a refused request is done.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore_iov_tlv.h"
#include "hsi_iov.h"

namespace cna::ecore::iov {

using hsi::iov::Status;

/* The resources a VF may be granted: the PF's share for it. */
struct VfShare {
    uint8_t queues = 1;        /* per direction */
    uint8_t sbs = 1;
    uint8_t mac_filters = 1;
    uint8_t vlan_filters = 0;
    uint8_t mcast_filters = 0;
};

/* What the VF was granted at acquire: its ids are 0..n-1 of each. */
struct VfGrant {
    uint8_t rx_queues = 0;
    uint8_t tx_queues = 0;
    uint8_t sbs = 0;
    uint8_t mac_filters = 0;
    uint8_t vlan_filters = 0;
    uint8_t mcast_filters = 0;
    uint32_t bulletin_size = 0;
};

/* The PF's settings for the VF (the administrator's, through the PF). */
struct VfPolicy {
    bool trusted = false;        /* may ask for promiscuous and all-multicast */
    bool mac_forced = false;     /* forced_mac is the only MAC the VF may use */
    std::array<uint8_t, 6> forced_mac{};
    uint16_t port_vlan = 0;      /* 0: none; else the VF may not filter VLANs */
    uint16_t max_mtu = hsi::eth::MAX_MTU; /* the port's */
};

struct Verdict {
    Status status = Status::success;
    const char* reason = nullptr; /* why not, for the PF's log */
    bool ok() const { return status == Status::success; }
};

/* acquire: a grant of what the VF asks for within its share (asking for 0
 * of a resource is asking for the share), or a refusal. */
Verdict grant_acquire(const hsi::iov::AcquireRequest& req, const VfShare& share, VfGrant* grant);

Verdict check_start_rxq(const hsi::iov::StartRxqRequest& req, const VfGrant& grant);
Verdict check_start_txq(const hsi::iov::StartTxqRequest& req, const VfGrant& grant);
Verdict check_stop_queues(const hsi::iov::StopQueuesRequest& req, uint8_t granted_queues);
/* vport_update: every part present, each against the grant and the policy. */
Verdict check_vport_update(const TlvReader& message, const VfGrant& grant, const VfPolicy& policy);
Verdict check_ucast_filter(const hsi::iov::UcastFilterRequest& req, const VfGrant& grant, const VfPolicy& policy);
Verdict check_mtu(uint16_t mtu, const VfPolicy& policy);
/* sb_setup: an SB of the grant, none of the vport's (vport_sbs of them from
 * 0 while its vport is started), at an 8-byte aligned address (0 clears). */
Verdict check_sb_setup(const hsi::iov::SbSetupRequest& req, const VfGrant& grant, uint8_t vport_sbs);

} // namespace cna::ecore::iov
