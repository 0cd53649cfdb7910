/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the PF's side, ecore-internal part: each VF as the PF knows it
 * (its grant, its objects in the firmware, the administrator's settings,
 * its bulletin board) and the events the EQ recorded for it.
 *
 * Two contexts meet here. eq_process (under the DPC lock, which a ramrod
 * waiter may hold too) only records a VF's event; iov_process_pending, which
 * the DPC calls once it has released that lock, handles them: it copies the
 * request, acts on it with ramrods (waiting for them as any caller does)
 * and replies. Everything else is the control thread's (iov_enable, the
 * admin calls). PfIov::lock serialises the two over the VFs' state and the
 * PF's IOV_VF_SELECT and DMAE registers.
 *
 * ecore_sriov.cpp: enabling VFs, events, the channel, the bulletin, FLR and
 * the admin API. ecore_sriov_msg.cpp: the requests and the VF's vport.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ecore_hw.h"
#include "ecore_iov_api.h"
#include "ecore_iov_checks.h"
#include "ecore_mcp_api.h"
#include "hsi_iov.h"
#include "osal_mem.h"
#include "osal_sync.h"

namespace cna::ecore {

using VfStatus = hsi::iov::Status;
using Mac = std::array<uint8_t, 6>;

/* The administrator's settings for a VF (iov_set_vf_*): they outlive the
 * VF's drivers. */
struct VfAdmin {
    iov::VfPolicy policy;   /* what the request checks need: trust, forced MAC, port VLAN */
    bool spoofchk = false;
    VfLinkState link_state = VfLinkState::automatic;
    uint32_t tx_rate_mbps = 0;
};

/* One VF as its PF knows it. */
struct IovVf {
    uint32_t id = 0;
    VfAdmin admin;
    bool malicious = false;        /* the adapter stopped it until its FLR */

    /* From acquire to release (or FLR). */
    bool acquired = false;
    iov::VfGrant grant;
    uint64_t bulletin_address = 0; /* IOVA in the VF's domain */
    hsi::iov::Bulletin bulletin{}; /* as last written */

    /* Its vport in the firmware (iov::vf_vport(id)) and what is on it. */
    bool vport_started = false;
    uint8_t sbs = 0;               /* status blocks 0..sbs-1 programmed in its CAU */
    uint8_t own_sbs = 0;           /* a bit per SB sb_setup programmed (its RDMA's), kept across vports */
    uint8_t rx_started = 0;        /* a bit per queue */
    uint8_t tx_started = 0;
    uint16_t rx_accept = 0;        /* the rx mode applied (hsi::eth::accept) */
    bool forced_filter = false;    /* the PF's forced MAC is a filter of the vport */
    Mac forced_filter_mac{};
    std::vector<Mac> macs;         /* the VF's own unicast MAC filters */
    std::vector<uint16_t> vlans;   /* its VLAN filters */
    std::vector<Mac> mcast;        /* its multicast list */
};

/* What eq_process recorded for a VF and iov_process_pending has yet to do. */
struct IovEvents {
    bool message = false;          /* the channel holds one request at a time */
    uint64_t request_iova = 0;
    bool flr = false;
    bool malicious = false;
    uint8_t malicious_why = 0;     /* hsi::iov::MaliciousWhy */
};

struct PfIov {
    osal::Mutex lock;                       /* vfs, IOV_VF_SELECT, DMAE, buffer */
    std::atomic<uint32_t> num_vfs{0};
    /* The PF's end of the DMAE copies: a request as copied from a VF, the
     * reply composed for it, a bulletin board. */
    osal::DmaMem buffer;
    std::array<IovVf, hsi::iov::MAX_VFS_PER_PF> vfs;

    osal::Spinlock events_lock;             /* events: eq_process records them on any thread */
    std::array<IovEvents, hsi::iov::MAX_VFS_PER_PF> events;
};

/* The offsets of PfIov::buffer. */
inline constexpr uint32_t IOV_BUF_REQUEST = 0;
inline constexpr uint32_t IOV_BUF_REPLY = IOV_BUF_REQUEST + hsi::iov::CHANNEL_REQUEST_MAX;
inline constexpr uint32_t IOV_BUF_BULLETIN = IOV_BUF_REPLY + hsi::iov::CHANNEL_REPLY_MAX;
inline constexpr uint32_t IOV_BUF_SIZE = IOV_BUF_BULLETIN + sizeof(hsi::iov::Bulletin);

Status iov_alloc(Hwfn& hwfn);
void iov_free(Hwfn& hwfn);

/* eq_process: an asynchronous IOV event (hsi::iov::IovEvent) of VF vf
 * (iov_alloc registers it). Only records it. */
void iov_async_event(Hwfn& hwfn, uint8_t opcode, uint16_t vf, uint64_t data);
/* The DPC, outside its lock: handles every event recorded. */
void iov_process_pending(Hwfn& hwfn);
/* The DPC, when the port's link changed: the bulletins that show it. */
void iov_link_changed(Hwfn& hwfn);

/* A VF's MAC when the PF forces none: the PF's with the locally
 * administered range's bit 7 of byte 4 flipped and byte 5 numbering the VF
 * on the adapter (hsi_iov.h's decided details). */
Mac iov_vf_permanent_mac(const Mac& pf_mac, uint32_t pf_id, uint32_t vf);
/* The MAC the VF is to use: the forced one, else its permanent one. */
Mac iov_vf_mac(const Hwfn& hwfn, const IovVf& vf);

/* The bulletin's fields (not its seal) for a VF's settings and the port's
 * link; port_max_mbps is the speed a link forced up shows while the port is
 * down. */
hsi::iov::Bulletin iov_bulletin_fields(const VfAdmin& admin, const McpLinkState& port, uint32_t port_max_mbps);

/* ---- between ecore_sriov.cpp and ecore_sriov_msg.cpp (PfIov::lock held) ---- */

/* The reply's first TLV, a ReplyHeader followed by what the request returns. */
struct VfReply {
    alignas(8) std::array<uint8_t, 64> bytes{};
    uint16_t length = sizeof(hsi::iov::ReplyHeader);
    template <typename T> void set(const T& body)
    {
        static_assert(sizeof(T) <= sizeof(bytes) && sizeof(T) % 4 == 0);
        std::memcpy(bytes.data(), &body, sizeof body);
        length = sizeof(T);
    }
};

/* A well-formed request from a VF: acted on, *reply filled after its
 * header. The verdict is the reply's status (and why not, for the log). */
iov::Verdict iov_handle_request(Hwfn& hwfn, Ptt& ptt, IovVf& vf, const iov::TlvReader& request, VfReply* reply);

/* Writes the VF's bulletin if it changed (or `force`); false when the VF's
 * board could not be reached. */
bool iov_post_bulletin(Hwfn& hwfn, Ptt& ptt, IovVf& vf, bool force = false);

/* Stops the VF's queues and vport (ramrods, best effort) and clears its
 * CAU: what close, release and iov_disable do. */
void iov_vf_close(Hwfn& hwfn, Ptt& ptt, IovVf& vf);
/* Forgets the VF's objects without a ramrod: the adapter already did (FLR). */
void iov_vf_forget(IovVf& vf);

/* The admin's settings onto the VF's running vport, if it has one;
 * update_flags: any of vport_update::UPDATE_ANTI_SPOOF, UPDATE_PORT_VLAN,
 * UPDATE_TX_RATE and UPDATE_LINK_DOWN. */
Status iov_vf_apply_forced_mac(Hwfn& hwfn, IovVf& vf);
Status iov_vf_apply_vport_policy(Hwfn& hwfn, IovVf& vf, uint32_t update_flags);
Status iov_vf_apply_trust(Hwfn& hwfn, IovVf& vf);

} // namespace cna::ecore
