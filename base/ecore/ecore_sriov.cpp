/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the PF's side: enabling VFs (the guide's iov_init_hw_for_vf and
 * iov_release_hw_for_vf), the events the adapter raises for them, the PF's
 * end of the VF-PF channel (DMAE copies of requests and replies), the
 * bulletin boards, FLR, and the administrator's settings.
 */
#include "ecore_sriov.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstddef>
#include <mutex>
#include <utility>

#include "ecore_log.h"
#include "ecore_mcp.h"
#include "ecore_spq.h"
#include "hsi_mfw.h"
#include "hsi_spq.h"

namespace cna::ecore {

using hsi::iov::Bulletin;
using hsi::iov::DmaeStatus;
using hsi::iov::IovEvent;
using hsi::iov::MaliciousWhy;
using hsi::iov::ReplyHeader;
using hsi::iov::RequestHeader;
using hsi::iov::TlvHeader;
using hsi::iov::TlvType;
namespace reg = hsi::reg;

namespace {

const char* dmae_status_name(DmaeStatus status)
{
    switch (status) {
    case DmaeStatus::done: return "done";
    case DmaeStatus::src_fault: return "the source is not mapped";
    case DmaeStatus::dst_fault: return "the destination is not mapped";
    case DmaeStatus::bad_request: return "refused by the DMAE";
    }
    return "unknown DMAE status";
}

const char* malicious_why_name(uint64_t why)
{
    switch (static_cast<MaliciousWhy>(why)) {
    case MaliciousWhy::channel_misuse: return "it misused the channel (a trigger while pending, or without an address)";
    case MaliciousWhy::queue_error: return "its queues broke their protocol";
    }
    return "reason unknown";
}

/* A copy of len bytes between the PF's memory and VF vf's, each side
 * through its own function's IOMMU. */
DmaeStatus dmae(Hwfn& hwfn, Ptt& ptt, uint32_t vf, bool to_vf, uint64_t src, uint64_t dst, uint32_t len)
{
    wr(hwfn, ptt, reg::DMAE_SRC_LO, static_cast<uint32_t>(src));
    wr(hwfn, ptt, reg::DMAE_SRC_HI, static_cast<uint32_t>(src >> 32));
    wr(hwfn, ptt, reg::DMAE_DST_LO, static_cast<uint32_t>(dst));
    wr(hwfn, ptt, reg::DMAE_DST_HI, static_cast<uint32_t>(dst >> 32));
    wr(hwfn, ptt, reg::DMAE_LEN, len);
    const uint32_t side = to_vf ? reg::DMAE_CTRL_DST_VF : reg::DMAE_CTRL_SRC_VF;
    wr(hwfn, ptt, reg::DMAE_CTRL, side | vf << reg::DMAE_CTRL_VF_SHIFT);
    wr(hwfn, ptt, reg::DMAE_GO, 1);
    return static_cast<DmaeStatus>(rd(hwfn, ptt, reg::DMAE_STATUS));
}

/* Writes bytes of PfIov::buffer from `offset` to the VF's `dst`. */
bool dmae_to_vf(Hwfn& hwfn, Ptt& ptt, uint32_t vf, uint32_t offset, uint64_t dst, uint32_t len, const char* what)
{
    const DmaeStatus st = dmae(hwfn, ptt, vf, true, hwfn.iov->buffer.iova() + offset, dst, len);
    if (st == DmaeStatus::done)
        return true;
    DP_ERR(hwfn, "VF %u: cannot write its %s at IOVA 0x%" PRIx64 ": %s", vf, what, dst, dmae_status_name(st));
    return false;
}

/* The guide's iov_init_hw_for_vf: opens the VF's channel and lets it
 * master the bus. */
void iov_init_hw_for_vf(Hwfn& hwfn, Ptt& ptt, uint32_t vf)
{
    wr(hwfn, ptt, reg::IOV_VF_SELECT, vf);
    wr(hwfn, ptt, reg::IOV_VF_CTRL, reg::IOV_VF_CTRL_ENABLE);
}

/* The guide's iov_release_hw_for_vf: closes both (a pending request is
 * forgotten). */
void iov_release_hw_for_vf(Hwfn& hwfn, Ptt& ptt, uint32_t vf)
{
    wr(hwfn, ptt, reg::IOV_VF_SELECT, vf);
    wr(hwfn, ptt, reg::IOV_VF_CTRL, 0);
}

/* The VF may trigger its channel again. */
void channel_done(Hwfn& hwfn, Ptt& ptt, uint32_t vf)
{
    wr(hwfn, ptt, reg::IOV_VF_SELECT, vf);
    wr(hwfn, ptt, reg::IOV_VF_CHANNEL_DONE, 1);
}

/* The reply, with its status last: the VF polls the status byte, so the
 * rest must be there before it stops being pending. */
void channel_reply(Hwfn& hwfn, Ptt& ptt, IovVf& vf, const RequestHeader& request, const VfReply& body,
                   VfStatus status)
{
    uint8_t* out = hwfn.iov->buffer.as<uint8_t>() + IOV_BUF_REPLY;
    std::memcpy(out, body.bytes.data(), body.length);
    const ReplyHeader header{{static_cast<uint16_t>(TlvType::reply), body.length}, request.tlv.type, 0,
                             static_cast<uint8_t>(VfStatus::pending)};
    std::memcpy(out, &header, sizeof header);
    const TlvHeader end{static_cast<uint16_t>(TlvType::list_end), sizeof(TlvHeader)};
    std::memcpy(out + body.length, &end, sizeof end);
    if (!dmae_to_vf(hwfn, ptt, vf.id, IOV_BUF_REPLY, request.reply_address, body.length + sizeof end, "reply"))
        return;
    constexpr uint32_t STATUS = offsetof(ReplyHeader, status);
    out[STATUS] = static_cast<uint8_t>(status);
    dmae_to_vf(hwfn, ptt, vf.id, IOV_BUF_REPLY + STATUS, request.reply_address + STATUS, 1, "reply status");
}

/* One request of a VF (the guide's iov_copy_vf_msg and
 * iov_process_mbx_req): copied, checked, acted on, answered. The caller
 * completes the channel whatever happens here. */
void process_message(Hwfn& hwfn, Ptt& ptt, IovVf& vf, uint64_t iova)
{
    PfIov& iov = *hwfn.iov;
    const DmaeStatus st = dmae(hwfn, ptt, vf.id, false, iova, iov.buffer.iova() + IOV_BUF_REQUEST,
                               hsi::iov::CHANNEL_REQUEST_MAX);
    if (st != DmaeStatus::done) {
        DP_ERR(hwfn, "VF %u: cannot copy its request at IOVA 0x%" PRIx64 ": %s; request dropped", vf.id, iova,
               dmae_status_name(st));
        return;
    }
    const std::span<const uint8_t> message(iov.buffer.as<uint8_t>() + IOV_BUF_REQUEST,
                                           hsi::iov::CHANNEL_REQUEST_MAX);
    /* Where to reply, if the first TLV is long enough to say it (even when
     * the list is malformed further on). */
    RequestHeader header{};
    std::memcpy(&header, message.data(), sizeof header);
    const bool can_reply = header.tlv.length >= sizeof header && header.reply_address != 0;

    const iov::TlvReader request(message);
    VfReply reply;
    iov::Verdict verdict;
    if (request.error() != nullptr) {
        verdict = {VfStatus::bad_request, request.error()};
        DP_NOTICE(hwfn, "VF %u: malformed request: %s", vf.id, request.error());
    } else if (!can_reply) {
        DP_NOTICE(hwfn, "VF %u: a request (type %u) that names no reply address: not answered", vf.id,
                  header.tlv.type);
        return;
    } else {
        verdict = iov_handle_request(hwfn, ptt, vf, request, &reply);
    }
    if (can_reply)
        channel_reply(hwfn, ptt, vf, header, reply, verdict.status);
}

/* What the VF's reset left to its PF (the adapter already forgot its
 * objects and closed its channel): its state here, then the final cleanup
 * ramrod and the MFW's ack, after which the VF may be enabled again. */
void flr_cleanup(Hwfn& hwfn, Ptt& ptt, IovVf& vf)
{
    iov_vf_forget(vf);
    vf.acquired = false;
    vf.grant = {};
    vf.bulletin_address = 0;
    vf.malicious = false;
    hsi::VfCleanupRamrodData cleanup{};
    cleanup.vf = static_cast<uint8_t>(vf.id);
    Status rc = spq_post(hwfn, SpqRequest{hsi::ProtocolId::common, static_cast<uint8_t>(hsi::CommonCmd::vf_cleanup),
                                          hsi::CID_SPQ, &cleanup, sizeof cleanup});
    if (rc == Status::success)
        rc = mcp_ack_vf_flr(hwfn, ptt, vf.id);
    if (rc != Status::success) {
        DP_ERR(hwfn, "VF %u: function level reset not cleaned up (%s): the VF stays disabled", vf.id,
               status_name(rc));
        return;
    }
    iov_init_hw_for_vf(hwfn, ptt, vf.id);
    DP_INFO(hwfn, "VF %u: function level reset cleaned up, the VF is enabled again", vf.id);
}

bool take_events(PfIov& iov, uint32_t vf, IovEvents* events)
{
    std::lock_guard guard(iov.events_lock);
    IovEvents& ev = iov.events[vf];
    if (!ev.message && !ev.flr && !ev.malicious)
        return false;
    *events = std::exchange(ev, IovEvents{});
    return true;
}

bool any_events(PfIov& iov)
{
    std::lock_guard guard(iov.events_lock);
    return std::any_of(iov.events.begin(), iov.events.end(),
                       [](const IovEvents& ev) { return ev.message || ev.flr || ev.malicious; });
}

void handle_events(Hwfn& hwfn, Ptt& ptt, IovVf& vf, const IovEvents& ev)
{
    if (ev.malicious) {
        /* Logged when recorded. The adapter closed its channel and forgot
         * its objects; it stays so (and acquired) until its FLR. */
        vf.malicious = true;
        iov_vf_forget(vf);
    }
    if (ev.flr) {
        /* A request from before the reset went with it. */
        flr_cleanup(hwfn, ptt, vf);
        return;
    }
    if (!ev.message)
        return;
    if (vf.malicious) {
        DP_NOTICE(hwfn, "VF %u is malicious: its request is dropped", vf.id);
        return;
    }
    process_message(hwfn, ptt, vf, ev.request_iova);
    channel_done(hwfn, ptt, vf.id);
}

uint32_t port_max_mbps(const Hwfn& hwfn)
{
    using hsi::mfw::LinkSpeed;
    const uint32_t caps = hwfn.hw_info.speed_capabilities &
                          ((hsi::mfw::speed_cap(LinkSpeed::s100g) << 1) - hsi::mfw::speed_cap(LinkSpeed::s1g));
    return caps == 0 ? 0 : hsi::mfw::link_speed_mbps(static_cast<LinkSpeed>(std::bit_width(caps) - 1));
}

/* Calls fn on VF vf, enabled, with the lock held. */
template <typename Fn> Status with_vf(Hwfn& hwfn, uint32_t vf, const char* what, Fn fn)
{
    PfIov* iov = hwfn.iov.get();
    if (iov == nullptr)
        return Status::inval;
    std::lock_guard guard(iov->lock);
    const uint32_t num_vfs = iov->num_vfs.load(std::memory_order_relaxed);
    if (vf >= num_vfs) {
        DP_ERR(hwfn, "%s: VF %u is not enabled (%u VFs)", what, vf, num_vfs);
        return Status::inval;
    }
    return fn(iov->vfs[vf]);
}

/* An admin call: the change, then the bulletin that shows it. */
template <typename Change> Status admin_change(Hwfn& hwfn, uint32_t vf, const char* what, Change change)
{
    return with_vf(hwfn, vf, what, [&](IovVf& v) {
        const Status rc = change(v);
        if (v.acquired) {
            PttGuard ptt(hwfn);
            if (ptt)
                iov_post_bulletin(hwfn, *ptt, v);
        }
        return rc;
    });
}

} // namespace

Mac iov_vf_permanent_mac(const Mac& pf_mac, uint32_t pf_id, uint32_t vf)
{
    Mac mac = pf_mac;
    mac[4] ^= 0x80;
    mac[5] = static_cast<uint8_t>(pf_id * hsi::iov::MAX_VFS_PER_PF + vf);
    return mac;
}

Mac iov_vf_mac(const Hwfn& hwfn, const IovVf& vf)
{
    const iov::VfPolicy& policy = vf.admin.policy;
    return policy.mac_forced ? policy.forced_mac : iov_vf_permanent_mac(hwfn.hw_info.mac, hwfn.hw_info.pf_id, vf.id);
}

Bulletin iov_bulletin_fields(const VfAdmin& admin, const McpLinkState& port, uint32_t port_max_mbps)
{
    Bulletin b{};
    const iov::VfPolicy& policy = admin.policy;
    if (policy.mac_forced) {
        b.flags |= hsi::iov::BULLETIN_MAC_FORCED;
        std::copy(policy.forced_mac.begin(), policy.forced_mac.end(), b.mac);
    }
    if (policy.port_vlan != 0) {
        b.flags |= hsi::iov::BULLETIN_VLAN_FORCED;
        b.port_vlan = policy.port_vlan;
    }
    switch (admin.link_state) {
    case VfLinkState::automatic:
        b.link_up = port.link_up;
        b.full_duplex = port.full_duplex;
        b.speed_mbps = port.link_up ? port.speed_mbps : 0;
        break;
    case VfLinkState::up:
        b.flags |= hsi::iov::BULLETIN_LINK_FORCED;
        b.link_up = 1;
        b.full_duplex = 1;
        b.speed_mbps = port.link_up ? port.speed_mbps : port_max_mbps;
        break;
    case VfLinkState::down:
        b.flags |= hsi::iov::BULLETIN_LINK_FORCED;
        break;
    }
    if (policy.trusted)
        b.flags |= hsi::iov::BULLETIN_TRUSTED;
    if (admin.spoofchk)
        b.flags |= hsi::iov::BULLETIN_SPOOFCHK;
    b.tx_rate_mbps = admin.tx_rate_mbps;
    return b;
}

Status iov_alloc(Hwfn& hwfn)
{
    hwfn.iov = std::make_unique<PfIov>();
    for (uint32_t vf = 0; vf < hwfn.iov->vfs.size(); vf++)
        hwfn.iov->vfs[vf].id = vf;
    spq_register_async_cb(hwfn, hsi::ProtocolId::iov, iov_async_event);
    return Status::success;
}

void iov_free(Hwfn& hwfn) { hwfn.iov.reset(); }

uint32_t iov_num_vfs(const Hwfn& hwfn) { return hwfn.iov ? hwfn.iov->num_vfs.load(std::memory_order_acquire) : 0; }

Status iov_enable(Hwfn& hwfn, uint32_t num_vfs)
{
    if (!hwfn.hw_init_done || !hwfn.iov) {
        DP_ERR(hwfn, "iov_enable needs a started PF (hw_init)");
        return Status::inval;
    }
    PfIov& iov = *hwfn.iov;
    std::lock_guard guard(iov.lock);
    if (iov.num_vfs.load(std::memory_order_relaxed) != 0) {
        DP_ERR(hwfn, "%u VFs are enabled already", iov.num_vfs.load(std::memory_order_relaxed));
        return Status::busy;
    }
    PttGuard ptt(hwfn);
    if (!ptt)
        return Status::again;
    const uint32_t max_vfs = std::min(rd(hwfn, *ptt, reg::IOV_MAX_VFS), hsi::iov::MAX_VFS_PER_PF);
    if (num_vfs == 0 || num_vfs > max_vfs) {
        DP_ERR(hwfn, "cannot enable %u VFs: this PF may enable 1 to %u", num_vfs, max_vfs);
        return Status::inval;
    }
    if (!iov.buffer && iov.buffer.alloc(IOV_BUF_SIZE, "IOV channel buffer") < 0)
        return Status::nomem;

    for (uint32_t vf = 0; vf < num_vfs; vf++) {
        iov.vfs[vf] = IovVf{};
        iov.vfs[vf].id = vf;
    }
    {
        std::lock_guard events(iov.events_lock);
        iov.events = {};
    }
    wr(hwfn, *ptt, reg::IOV_NUM_VFS, num_vfs);
    /* Before a VF can send its first request: eq_process drops events of
     * VFs beyond it. */
    iov.num_vfs.store(num_vfs, std::memory_order_release);
    for (uint32_t vf = 0; vf < num_vfs; vf++)
        iov_init_hw_for_vf(hwfn, *ptt, vf);
    DP_INFO(hwfn, "%u VFs enabled (of %u)", num_vfs, max_vfs);
    return Status::success;
}

Status iov_disable(Hwfn& hwfn)
{
    if (!hwfn.iov)
        return Status::success;
    PfIov& iov = *hwfn.iov;
    std::lock_guard guard(iov.lock);
    const uint32_t num_vfs = iov.num_vfs.load(std::memory_order_relaxed);
    if (num_vfs == 0)
        return Status::success;
    PttGuard ptt(hwfn);
    if (!ptt)
        return Status::again;
    /* Objects first, while the VFs may still master the bus: a queue
     * stopped after would fault on every frame until then. */
    for (uint32_t vf = 0; vf < num_vfs; vf++) {
        iov_vf_close(hwfn, *ptt, iov.vfs[vf]);
        iov_release_hw_for_vf(hwfn, *ptt, vf);
    }
    wr(hwfn, *ptt, reg::IOV_NUM_VFS, 0);
    iov.num_vfs.store(0, std::memory_order_release);
    {
        std::lock_guard events(iov.events_lock);
        iov.events = {};
    }
    DP_INFO(hwfn, "%u VFs disabled", num_vfs);
    return Status::success;
}

Status iov_unload(Hwfn& hwfn)
{
    if (!hwfn.iov)
        return Status::success;
    PfIov& iov = *hwfn.iov;
    uint32_t held = 0;
    {
        std::lock_guard guard(iov.lock);
        const uint32_t num_vfs = iov.num_vfs.load(std::memory_order_relaxed);
        held = static_cast<uint32_t>(std::count_if(iov.vfs.begin(), iov.vfs.begin() + num_vfs,
                                                   [](const IovVf& vf) { return vf.acquired; }));
        if (held != 0) {
            /* Their requests from now on wait for the next PF's driver. */
            iov.num_vfs.store(0, std::memory_order_release);
            DP_NOTICE(hwfn, "%u VFs stay enabled past this driver, %u of them held by their drivers", num_vfs, held);
        }
    }
    return held != 0 ? Status::success : iov_disable(hwfn);
}

void iov_disable_leftovers(Hwfn& hwfn, Ptt& ptt)
{
    const uint32_t left = rd(hwfn, ptt, reg::IOV_NUM_VFS);
    if (left == 0)
        return;
    wr(hwfn, ptt, reg::IOV_NUM_VFS, 0);
    DP_NOTICE(hwfn, "%u VFs a previous driver left enabled are disabled: their drivers reset to acquire them "
                    "from this one", left);
}

void iov_async_event(Hwfn& hwfn, uint8_t opcode, uint16_t vf, uint64_t data)
{
    PfIov* iov = hwfn.iov.get();
    if (iov == nullptr || vf >= iov->num_vfs.load(std::memory_order_acquire)) {
        DP_NOTICE(hwfn, "IOV event %u of VF %u, which is not enabled: ignored", opcode, vf);
        return;
    }
    bool second_message = false;
    {
        std::lock_guard guard(iov->events_lock);
        IovEvents& ev = iov->events[vf];
        switch (static_cast<IovEvent>(opcode)) {
        case IovEvent::vf_message:
            second_message = ev.message;
            ev.message = true;
            ev.request_iova = data;
            break;
        case IovEvent::vf_malicious:
            ev.malicious = true;
            ev.malicious_why = static_cast<uint8_t>(data);
            break;
        case IovEvent::vf_flr:
            ev.flr = true;
            break;
        default:
            DP_NOTICE(hwfn, "unknown IOV event %u of VF %u: ignored", opcode, vf);
            return;
        }
    }
    if (second_message)
        DP_ERR(hwfn, "VF %u: a request before its previous one was answered (the channel holds one): "
                     "the previous one is lost", vf);
    if (static_cast<IovEvent>(opcode) == IovEvent::vf_malicious)
        DP_ERR(hwfn, "VF %u is malicious: %s; the adapter stopped it until its FLR", vf, malicious_why_name(data));
    else
        DP_VERBOSE(hwfn, osal::dp_module::L2, "IOV event %u of VF %u, data 0x%" PRIx64, opcode, vf, data);
}

void iov_process_pending(Hwfn& hwfn)
{
    PfIov* iov = hwfn.iov.get();
    if (iov == nullptr || !any_events(*iov))
        return;
    std::lock_guard guard(iov->lock);
    PttGuard ptt(hwfn);
    if (!ptt)
        return; /* logged; the events wait for the next DPC */
    /* Each VF's events once: what VFs send meanwhile (the ramrods' waits
     * process the EQ) waits for the DPC's next run, so that VFs keeping
     * their channels busy starve neither each other nor what else the
     * interrupt thread does. */
    for (uint32_t vf = 0; vf < iov->events.size(); vf++) {
        IovEvents events;
        if (take_events(*iov, vf, &events) && vf < iov->num_vfs.load(std::memory_order_relaxed))
            handle_events(hwfn, *ptt, iov->vfs[vf], events);
    }
    if (any_events(*iov))
        osal::msix_rearm(hwfn.dev->pci->msix_eventfd(hsi::SP_MSIX_VECTOR));
}

void iov_link_changed(Hwfn& hwfn)
{
    PfIov* iov = hwfn.iov.get();
    if (iov == nullptr || iov->num_vfs.load(std::memory_order_acquire) == 0)
        return;
    std::lock_guard guard(iov->lock);
    PttGuard ptt(hwfn);
    if (!ptt)
        return;
    for (uint32_t vf = 0; vf < iov->num_vfs.load(std::memory_order_relaxed); vf++)
        iov_post_bulletin(hwfn, *ptt, iov->vfs[vf]);
}

bool iov_post_bulletin(Hwfn& hwfn, Ptt& ptt, IovVf& vf, bool force)
{
    if (!vf.acquired)
        return true;
    Bulletin board = iov_bulletin_fields(vf.admin, mcp_get_link_state(hwfn), port_max_mbps(hwfn));
    board.crc = vf.bulletin.crc;
    board.size = vf.bulletin.size;
    board.version = vf.bulletin.version;
    if (!force && std::memcmp(&board, &vf.bulletin, sizeof board) == 0)
        return true;
    iov::bulletin_seal(board, vf.grant.bulletin_size);
    std::memcpy(hwfn.iov->buffer.as<uint8_t>() + IOV_BUF_BULLETIN, &board, board.size);
    if (!dmae_to_vf(hwfn, ptt, vf.id, IOV_BUF_BULLETIN, vf.bulletin_address, board.size, "bulletin board"))
        return false;
    vf.bulletin = board;
    DP_VERBOSE(hwfn, osal::dp_module::L2, "VF %u: bulletin version %" PRIu64 ", flags 0x%" PRIx64, vf.id,
               board.version, board.flags);
    return true;
}

/* ---- the administrator's settings ---------------------------------------- */

Status iov_set_vf_mac(Hwfn& hwfn, uint32_t vf, const std::array<uint8_t, 6>& mac)
{
    const bool force = std::any_of(mac.begin(), mac.end(), [](uint8_t b) { return b != 0; });
    if (force && (mac[0] & 1) != 0) {
        DP_ERR(hwfn, "VF %u: cannot force a multicast MAC", vf);
        return Status::inval;
    }
    return admin_change(hwfn, vf, "iov_set_vf_mac", [&](IovVf& v) {
        v.admin.policy.mac_forced = force;
        v.admin.policy.forced_mac = force ? mac : Mac{};
        return iov_vf_apply_forced_mac(hwfn, v);
    });
}

Status iov_set_vf_vlan(Hwfn& hwfn, uint32_t vf, uint16_t vlan)
{
    if (vlan > 4095) {
        DP_ERR(hwfn, "VF %u: VLAN %u is not a VLAN id (0..4095)", vf, vlan);
        return Status::inval;
    }
    return admin_change(hwfn, vf, "iov_set_vf_vlan", [&](IovVf& v) {
        v.admin.policy.port_vlan = vlan;
        return iov_vf_apply_vport_policy(hwfn, v, hsi::eth::vport_update::UPDATE_PORT_VLAN);
    });
}

Status iov_set_vf_spoofchk(Hwfn& hwfn, uint32_t vf, bool on)
{
    return admin_change(hwfn, vf, "iov_set_vf_spoofchk", [&](IovVf& v) {
        v.admin.spoofchk = on;
        return iov_vf_apply_vport_policy(hwfn, v, hsi::eth::vport_update::UPDATE_ANTI_SPOOF);
    });
}

Status iov_set_vf_trust(Hwfn& hwfn, uint32_t vf, bool on)
{
    return admin_change(hwfn, vf, "iov_set_vf_trust", [&](IovVf& v) {
        v.admin.policy.trusted = on;
        return iov_vf_apply_trust(hwfn, v);
    });
}

Status iov_set_vf_link_state(Hwfn& hwfn, uint32_t vf, VfLinkState state)
{
    if (state != VfLinkState::automatic && state != VfLinkState::up && state != VfLinkState::down) {
        DP_ERR(hwfn, "VF %u: link state %u is none of automatic, up and down", vf, static_cast<uint32_t>(state));
        return Status::inval;
    }
    return admin_change(hwfn, vf, "iov_set_vf_link_state", [&](IovVf& v) {
        v.admin.link_state = state;
        return iov_vf_apply_vport_policy(hwfn, v, hsi::eth::vport_update::UPDATE_LINK_DOWN);
    });
}

Status iov_set_vf_rate(Hwfn& hwfn, uint32_t vf, uint32_t mbps)
{
    const uint32_t port_mbps = port_max_mbps(hwfn);
    if (mbps > port_mbps) {
        DP_ERR(hwfn, "VF %u: a Tx rate limit of %u Mbps is more than the port's %u Mbps", vf, mbps, port_mbps);
        return Status::inval;
    }
    return admin_change(hwfn, vf, "iov_set_vf_rate", [&](IovVf& v) {
        v.admin.tx_rate_mbps = mbps;
        return iov_vf_apply_vport_policy(hwfn, v, hsi::eth::vport_update::UPDATE_TX_RATE);
    });
}

Status iov_get_vf_stats(Hwfn& hwfn, uint32_t vf, hsi::eth::VportStats* stats)
{
    return with_vf(hwfn, vf, "iov_get_vf_stats", [&](IovVf&) {
        PttGuard ptt(hwfn);
        if (!ptt)
            return Status::again;
        wr(hwfn, *ptt, reg::IOV_VF_SELECT, vf);
        read_counters([&](uint32_t addr) { return rd(hwfn, *ptt, addr); },
                      reg::IOV_VF_PAGE + hsi::iov::vf_page::VPORT_STATS, stats);
        return Status::success;
    });
}

Status iov_vf_info(Hwfn& hwfn, uint32_t vf, VfInfo* info)
{
    return with_vf(hwfn, vf, "iov_vf_info", [&](const IovVf& v) {
        const iov::VfPolicy& policy = v.admin.policy;
        *info = VfInfo{};
        info->acquired = v.acquired;
        info->malicious = v.malicious;
        info->mac_forced = policy.mac_forced;
        info->mac = iov_vf_mac(hwfn, v);
        info->port_vlan = policy.port_vlan;
        info->link_state = v.admin.link_state;
        info->link_up = iov_bulletin_fields(v.admin, mcp_get_link_state(hwfn), port_max_mbps(hwfn)).link_up != 0;
        info->trusted = policy.trusted;
        info->spoofchk = v.admin.spoofchk;
        info->tx_rate_mbps = v.admin.tx_rate_mbps;
        info->rx_queues = v.grant.rx_queues;
        info->tx_queues = v.grant.tx_queues;
        info->vport_started = v.vport_started;
        return Status::success;
    });
}

} // namespace cna::ecore
