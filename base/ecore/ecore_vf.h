/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the VF's side, ecore-internal part: the VF's end of the channel,
 * and what the device, interrupt and L2 functions call instead of a ramrod,
 * a PTT or a CAU register when their hwfn is a VF. Each is called after the
 * caller's own checks of its arguments (ids within hw_info.resc, ring sizes).
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "ecore_sb.h"
#include "ecore_l2_api.h"
#include "ecore_vf_api.h"
#include "hsi_iov.h"
#include "hsi_rdma.h"
#include "osal_mem.h"
#include "osal_sync.h"

namespace cna::ecore {

/* One page of DMA memory: the request, the PF's reply to it, the bulletin
 * board the PF writes. */
inline constexpr uint32_t VF_MEM_REQUEST = 0;
inline constexpr uint32_t VF_MEM_REPLY = VF_MEM_REQUEST + hsi::iov::CHANNEL_REQUEST_MAX;
inline constexpr uint32_t VF_MEM_BULLETIN = VF_MEM_REPLY + hsi::iov::CHANNEL_REPLY_MAX;
inline constexpr uint32_t VF_MEM_SIZE = VF_MEM_BULLETIN + sizeof(hsi::iov::Bulletin);
static_assert(VF_MEM_BULLETIN % 8 == 0, "the PF takes an 8-byte aligned board only");

struct VfIov {
    osal::DmaMem mem;
    uint32_t timeout_ms = VF_CHANNEL_TIMEOUT_MS;

    /* The channel holds one request at a time; the lock also guards what
     * the requests change below. */
    osal::Mutex lock;
    bool unanswered = false;    /* the last request timed out: the PF may still answer it */
    uint32_t vf_id = 0;         /* relative to the PF (acquire) */
    uint8_t pf_hsi_minor = 0;   /* what the PF's driver understands (acquire) */
    uint32_t mcast_filters = 0; /* granted */
    std::vector<std::array<uint8_t, 6>> mcast; /* the vport's multicast list */

    /* SBs int_sb_init recorded (nullptr: none): the vport's go with
     * vport_start, the others (its RDMA's CNQs and EQ) with sb_setup. */
    std::array<const SbInfo*, hsi::iov::MAX_VF_SBS> sbs{};
    uint8_t set_up_sbs = 0; /* a bit per SB sb_setup programmed */
    uint8_t held_sbs = 0;   /* a bit per SB the vport never takes (vf_hold_sb) */

    uint32_t bulletin_size = 0;                /* agreed at acquire */
    std::atomic<uint64_t> bulletin_version{0}; /* of the last board vf_bulletin_read returned */
    std::atomic<uint64_t> link{0};             /* its link_up << 32 | speed_mbps */
};

/* ecore_dev and ecore_hw_init: hw_stop and hw_remove of a VF. */
Status vf_close(Hwfn& hwfn);

/* ecore_int: int_sb_init and int_sb_release of a VF's status block, whose
 * CAU its PF configures at vport_start. */
void vf_sb_init(Hwfn& hwfn, const SbInfo& sb_info);
void vf_sb_release(Hwfn& hwfn, const SbInfo& sb_info);

/* Status blocks apart from the vport's, for the VF's RDMA (ecore_rdma_vf):
 * the PF programs (on) or clears one that int_sb_init recorded
 * (sb_setup); vport_start never takes one programmed so, nor one held
 * (RDMA's, from its resc_alloc on, started or not). */
Status vf_sb_setup(Hwfn& hwfn, uint32_t sb_id, bool on);
void vf_sb_setup_clear_all(Hwfn& hwfn);
void vf_hold_sb(Hwfn& hwfn, uint32_t sb_id, bool held);
/* The link of the last bulletin board vf_bulletin_read returned. */
bool vf_link_up(const Hwfn& hwfn, uint32_t* speed_mbps);
void vf_get_roce_stats(Hwfn& hwfn, hsi::rdma::RoceStats* stats);

/* ecore_l2. */
Status vf_vport_start(Hwfn& hwfn, const SpVportStartParams& params);
Status vf_vport_update(Hwfn& hwfn, const SpVportUpdateParams& params);
Status vf_vport_stop(Hwfn& hwfn);
Status vf_rx_queue_start(Hwfn& hwfn, const RxQueueStartParams& params, RxQueueStartRet* ret);
Status vf_tx_queue_start(Hwfn& hwfn, const TxQueueStartParams& params, TxQueueStartRet* ret);
Status vf_queue_stop(Hwfn& hwfn, uint16_t queue_id, bool rx);
Status vf_filter_ucast(Hwfn& hwfn, const FilterUcast& filter);
void vf_get_vport_stats(Hwfn& hwfn, hsi::eth::VportStats* stats);
void vf_get_queue_stats(Hwfn& hwfn, uint16_t queue_id, bool rx, hsi::eth::QueueStats* stats);

} // namespace cna::ecore
