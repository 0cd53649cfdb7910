/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the VF's side (guide chapter "Single Root I/O Virtualization").
 *
 * The upper layer drives a VF through the API it drives a PF with; ecore
 * asks the PF, over the VF-PF channel (hsi_iov.h), for whatever the PF would
 * do itself with a ramrod or a register:
 *
 *   init_struct (its PCI function is a VF) -> hw_prepare (acquire: hw_info
 *   and its grant in hw_info.resc) -> resc_alloc -> resc_setup -> hw_init
 *   -> int_sb_init for each fastpath SB (ecore records its address)
 *   -> sp_vport_start (the PF configures those SBs with the vport) -> queue
 *   starts -> sp_vport_update, filters, ... -> get_*_stats (its GTT page)
 *   ... vf_bulletin_read periodically (link, forced MAC and VLAN, trust)
 *   -> the tear-down of the vport and queues -> hw_stop (close)
 *   -> int_disable_post_isr_release -> resc_free -> hw_remove (release).
 *
 * What differs on a VF: one vport (0); the queues and status blocks of its
 * grant, SB i raising MSI-X vector i (there is no slowpath vector, no
 * slowpath DPC to run); no PTT: the calls that take a Ptt ignore it (pass a
 * default-constructed one), and PttGuard finds none; its Rx BD and CQE
 * rings have one size; it always accepts the unicast and multicast frames
 * its filters match; filter moves, flow rules and the MFW are its PF's.
 * Its RDMA is its own (ecore_rdma_api.h): pf_params.rdma before
 * resc_alloc gives it an SPQ, EQ and ILT of its own. The PF may refuse a request by its policy for the
 * VF (forced MAC or VLAN, untrusted VF): Status::perm.
 *
 * Each request waits for the PF's reply, bounded by the channel timeout: call
 * from the control thread, never from the EAL interrupt thread (the PF's DPC,
 * which answers, may run there in this very process).
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "hsi_iov.h"

namespace cna::ecore {

inline constexpr uint32_t VF_CHANNEL_TIMEOUT_MS = 2000;

/* What a VF asks its PF for at acquire; the PF grants at most its share for
 * the VF, and hw_info.resc tells what it granted. */
struct VfAcquireParams {
    uint8_t rx_queues = hsi::iov::MAX_VF_QUEUES;
    uint8_t tx_queues = hsi::iov::MAX_VF_QUEUES;
    uint8_t sbs = hsi::iov::MAX_VF_SBS;
    uint8_t mac_filters = hsi::iov::MAX_VF_MAC_FILTERS;
    uint8_t vlan_filters = hsi::iov::MAX_VF_VLAN_FILTERS;
    uint8_t mcast_filters = hsi::iov::MAX_VF_MCAST_FILTERS;
    uint32_t driver_version = 0;                  /* for the PF's log */
    uint32_t channel_timeout_ms = VF_CHANNEL_TIMEOUT_MS; /* per request */
};

/* hw_prepare of a VF: the channel's and the bulletin board's memory, then
 * acquire, which fills hw_info (MAC, MTU, port, PF, firmware version, the
 * grant). hw_prepare(dev) of a VF is this with the default params. */
Status vf_hw_prepare(Hwfn& hwfn, const VfAcquireParams& params);

/* Polls the bulletin board the PF writes: true when it holds a consistent
 * board newer than the last one this returned, copied into *out. From one
 * thread at a time (an EAL alarm), between hw_prepare and hw_remove. */
bool vf_bulletin_read(Hwfn& hwfn, hsi::iov::Bulletin* out);

/* Whether the VF's channel to its PF is open. Closed, the VF is cut off:
 * its PF disabled it (a PF's driver that died takes its VFs along), took
 * it for malicious or is cleaning up after its reset; its driver must
 * reset (acquire again). */
bool vf_channel_open(Hwfn& hwfn);
/* The channel's state, one read: disabled is closed (above); unattended,
 * open but the PF's driver unloaded leaving the VF enabled: its queues run
 * on, its requests fail with Status::again until a PF's driver loads,
 * which closes the channel. */
hsi::iov::ChannelState vf_channel_state(Hwfn& hwfn);

/* dev_close of a VF in one call, as hw_stop then hw_remove: close (the PF
 * stops whatever the VF left started) and release (the PF forgets the
 * grant), each best effort, then the channel's memory freed. */
void vf_release(Hwfn& hwfn);

} // namespace cna::ecore
