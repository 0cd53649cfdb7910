/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the PF's side (guide chapter "Single Root I/O Virtualization"):
 * enabling VFs, and the administrator's settings for each of them.
 *
 * iov_enable after hw_init opens the VFs (the guide's iov_init_hw_for_vf for
 * each); from then on ecore answers their requests on the VF-PF channel by
 * itself, on the slowpath DPC, and keeps each VF's bulletin board current.
 * iov_disable closes them again, and so does hw_stop unless a driver holds
 * one of them (iov_unload).
 *
 * The iov_set_vf_* calls (the PMD's rte_pmd_cna_set_vf_*) change the PF's
 * policy for a VF: they take effect on the VF's bulletin board at once, on
 * its running vport when it has one, and on its requests from then on. They
 * post ramrods and wait for them: call from the control thread. Each fails
 * with Status::inval for a VF that is not enabled.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore.h"
#include "hsi_eth.h"

namespace cna::ecore {

/* Enables num_vfs VFs (1..reg::IOV_MAX_VFS) of a started PF, each open to
 * its driver: busy when VFs are enabled already, inval beyond the maximum. */
Status iov_enable(Hwfn& hwfn, uint32_t num_vfs);

/* Stops whatever the VFs left running (best effort), closes their channels
 * and disables them. */
Status iov_disable(Hwfn& hwfn);

/* hw_stop's part. While a driver holds one of them, the VFs stay enabled
 * and running past this driver, as assigned VFs outlive their PF's driver:
 * the adapter leaves their channels unattended once the PF unloads, until a
 * PF's driver loads (iov_disable_leftovers). Else iov_disable. */
Status iov_unload(Hwfn& hwfn);

/* hw_init's part: VFs a previous driver of this PF left enabled are
 * disabled, their channels closed (their drivers reset and acquire again
 * from this one), so that this driver starts with none. */
void iov_disable_leftovers(Hwfn& hwfn, Ptt& ptt);

/* VFs enabled (0 when none). */
uint32_t iov_num_vfs(const Hwfn& hwfn);

/* The VF's link as its bulletin tells it. */
enum class VfLinkState : uint8_t {
    automatic = 0, /* the PF's port's link */
    up = 1,        /* always up (e.g. for VF-to-VF traffic through the adapter) */
    down = 2,      /* down, and its vport neither sends nor receives */
};

/* Forces the VF's MAC (its only one; anti-spoofing checks against it); an
 * all-zero MAC lifts the force. */
Status iov_set_vf_mac(Hwfn& hwfn, uint32_t vf, const std::array<uint8_t, 6>& mac);
/* Port VLAN 1..4095: the adapter tags the VF's Tx, takes only that VLAN on
 * its Rx and strips it; 0 removes it. */
Status iov_set_vf_vlan(Hwfn& hwfn, uint32_t vf, uint16_t vlan);
/* Anti-spoofing: the VF's Tx frames must come from one of its MACs. */
Status iov_set_vf_spoofchk(Hwfn& hwfn, uint32_t vf, bool on);
/* A trusted VF may ask for promiscuous and all-multicast Rx. */
Status iov_set_vf_trust(Hwfn& hwfn, uint32_t vf, bool on);
Status iov_set_vf_link_state(Hwfn& hwfn, uint32_t vf, VfLinkState state);
/* Tx rate limit in Mbps, 0 for none, at most the port's fastest speed:
 * the adapter holds the VF's vport to it, and the VF learns it from its
 * bulletin. */
Status iov_set_vf_rate(Hwfn& hwfn, uint32_t vf, uint32_t mbps);

/* The VF's vport statistics, as the storms keep them in its GTT page. */
Status iov_get_vf_stats(Hwfn& hwfn, uint32_t vf, hsi::eth::VportStats* stats);

struct VfInfo {
    bool acquired = false;          /* a driver holds the VF */
    bool malicious = false;         /* the adapter stopped it; an FLR re-enables it */
    bool mac_forced = false;
    std::array<uint8_t, 6> mac{};   /* forced, or the one the PF gave at acquire */
    uint16_t port_vlan = 0;
    VfLinkState link_state = VfLinkState::automatic;
    bool link_up = false;           /* as its bulletin tells it */
    bool trusted = false;
    bool spoofchk = false;
    uint32_t tx_rate_mbps = 0;
    uint8_t rx_queues = 0;          /* granted at acquire */
    uint8_t tx_queues = 0;
    bool vport_started = false;
};
Status iov_vf_info(Hwfn& hwfn, uint32_t vf, VfInfo* info);

} // namespace cna::ecore
