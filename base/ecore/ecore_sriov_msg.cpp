/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the PF's side: a VF's requests on the channel and its vport.
 *
 * Each request is checked first (ecore_iov_checks: ids within the VF's
 * grant, settings within the PF's policy) and then acted on with the PF's
 * own L2 ramrods on the VF's vport (hsi::iov::vf_vport), whose queue, status
 * block and connection ids are the VF's own. ecore_l2's functions are the
 * PF's (its vports, its GTT, its queue handles): the ramrods here are posted
 * on the SPQ directly. What the VF has on its vport is kept in IovVf, so
 * that close, FLR and the admin's changes know what to undo or redo.
 */
#include "ecore_sriov.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ecore_log.h"
#include "ecore_spq.h"
#include "hsi_eth.h"

namespace cna::ecore {

using hsi::iov::TlvType;
using iov::Verdict;
using namespace hsi::eth;
namespace reg = hsi::reg;

namespace {

/* A request being handled. */
struct Request {
    Hwfn& hwfn;
    Ptt& ptt;
    IovVf& vf;
    const iov::TlvReader& tlvs;
    VfReply& reply;

    /* The request's first TLV (present: it is its type) or a part of it. */
    template <typename T> bool read(TlvType type, T* out) const
    {
        return tlvs.find(type, out) == iov::TlvReader::Find::found;
    }
};

constexpr Verdict SHORT{VfStatus::bad_request, "a request shorter than its type"};
constexpr Verdict OK{};

/* ---- ramrods on the VF's objects ------------------------------------------- */

template <typename Data> Status post_vf(Hwfn& hwfn, EthCmd cmd, const Data& data, uint32_t cid = hsi::CID_SPQ)
{
    return spq_post(hwfn, SpqRequest{hsi::ProtocolId::eth, static_cast<uint8_t>(cmd), cid, &data, sizeof data});
}

uint8_t vport_of(const IovVf& vf) { return hsi::iov::vf_vport(vf.id); }

Status vport_update(Hwfn& hwfn, const IovVf& vf, VportUpdateRamrodData& data)
{
    data.vport_id = vport_of(vf);
    return post_vf(hwfn, EthCmd::vport_update, data);
}

Status filter(Hwfn& hwfn, const IovVf& vf, FilterOpcode op, const Mac* mac, uint16_t vlan = 0)
{
    FiltersUpdateRamrodData data{};
    data.vport_id = data.dst_vport_id = vport_of(vf);
    data.opcode = static_cast<uint8_t>(op);
    data.type = static_cast<uint8_t>(mac != nullptr ? FilterType::mac : FilterType::vlan);
    if (mac != nullptr)
        std::copy(mac->begin(), mac->end(), data.mac);
    data.vlan = vlan;
    return post_vf(hwfn, EthCmd::filters_update, data);
}

/* Removes every filter of `list` (MACs or VLANs); the first failure. */
template <typename T> Status remove_all(Hwfn& hwfn, const IovVf& vf, std::vector<T>& list)
{
    Status first = Status::success;
    for (const T& item : list) {
        Status rc;
        if constexpr (std::is_same_v<T, Mac>)
            rc = filter(hwfn, vf, FilterOpcode::remove, &item);
        else
            rc = filter(hwfn, vf, FilterOpcode::remove, nullptr, item);
        if (first == Status::success)
            first = rc;
    }
    list.clear();
    return first;
}

Status queue_stop(Hwfn& hwfn, IovVf& vf, bool rx, uint8_t queue)
{
    QueueStopRamrodData data{};
    data.vport_id = vport_of(vf);
    data.queue_id = queue;
    const Status rc = post_vf(hwfn, rx ? EthCmd::rx_queue_stop : EthCmd::tx_queue_stop, data,
                              rx ? hsi::CID_SPQ : hsi::cid_tx_queue(queue));
    if (rc == Status::success)
        (rx ? vf.rx_started : vf.tx_started) &= static_cast<uint8_t>(~(1u << queue));
    return rc;
}

/* Forgets its vport and what is on it (not sb_setup's status blocks). */
void forget_vport(IovVf& vf);
/* Its vport deactivated, queues and vport stopped (ramrods, best effort),
 * the vport's status blocks cleared: not sb_setup's, which its RDMA may
 * still use. */
void close_vport(Hwfn& hwfn, Ptt& ptt, IovVf& vf);

/* One of the VF's status blocks in its CAU: at addr (0: none), raising VF
 * vector sb. IOV_VF_SELECT names the VF. */
void cau_set(Hwfn& hwfn, Ptt& ptt, uint32_t sb, uint64_t addr)
{
    wr(hwfn, ptt, reg::iov_vf_cau(reg::cau_sb_conf(sb)), 0);
    wr(hwfn, ptt, reg::iov_vf_cau(reg::cau_sb_addr_lo(sb)), static_cast<uint32_t>(addr));
    wr(hwfn, ptt, reg::iov_vf_cau(reg::cau_sb_addr_hi(sb)), static_cast<uint32_t>(addr >> 32));
    if (addr != 0)
        wr(hwfn, ptt, reg::iov_vf_cau(reg::cau_sb_conf(sb)),
           reg::CAU_SB_CONF_VALID | sb << reg::CAU_SB_CONF_VECTOR_SHIFT);
}

/* The vport's status blocks: SB i at sb_addr[i]. */
void cau_program(Hwfn& hwfn, Ptt& ptt, IovVf& vf, const uint64_t* sb_addr, uint8_t sbs)
{
    wr(hwfn, ptt, reg::IOV_VF_SELECT, vf.id);
    for (uint32_t sb = 0; sb < sbs; sb++)
        cau_set(hwfn, ptt, sb, sb_addr[sb]);
    vf.sbs = sbs;
}

/* The CAU stops writing the vport's status blocks (with own, sb_setup's
 * too): their memory is the VF's to free. */
void cau_clear(Hwfn& hwfn, Ptt& ptt, IovVf& vf, bool own = false)
{
    wr(hwfn, ptt, reg::IOV_VF_SELECT, vf.id);
    for (uint32_t sb = 0; sb < hsi::iov::MAX_VF_SBS; sb++)
        if (sb < vf.sbs || (own && (vf.own_sbs & (1u << sb))))
            cau_set(hwfn, ptt, sb, 0);
    vf.sbs = 0;
    if (own)
        vf.own_sbs = 0;
}

uint32_t policy_flags(const VfAdmin& admin)
{
    uint32_t flags = 0;
    if (admin.spoofchk || admin.policy.port_vlan != 0)
        flags |= vport_update::UPDATE_ANTI_SPOOF | vport_update::UPDATE_PORT_VLAN;
    if (admin.tx_rate_mbps != 0)
        flags |= vport_update::UPDATE_TX_RATE;
    if (admin.link_state == VfLinkState::down)
        flags |= vport_update::UPDATE_LINK_DOWN;
    return flags;
}

/* ---- the requests --------------------------------------------------------- */

iov::VfShare vf_share()
{
    /* Each VF has a vport object of its own in the firmware: a VF may have
     * what the channel can describe. */
    iov::VfShare share;
    share.queues = hsi::iov::MAX_VF_QUEUES;
    share.sbs = hsi::iov::MAX_VF_SBS;
    share.mac_filters = hsi::iov::MAX_VF_MAC_FILTERS;
    share.vlan_filters = hsi::iov::MAX_VF_VLAN_FILTERS;
    share.mcast_filters = hsi::iov::MAX_VF_MCAST_FILTERS;
    return share;
}

Verdict acquire(Request& r)
{
    hsi::iov::AcquireRequest req{};
    if (!r.read(TlvType::acquire, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (vf.acquired) {
        DP_NOTICE(r.hwfn, "VF %u acquired again (its driver restarted without an FLR): its objects are closed",
                  vf.id);
        iov_vf_close(r.hwfn, r.ptt, vf);
        vf.acquired = false;
        vf.grant = {};
        vf.bulletin_address = 0;
    }
    iov::VfGrant grant;
    if (Verdict v = iov::grant_acquire(req, vf_share(), &grant); !v.ok())
        return v;
    vf.grant = grant;
    vf.bulletin_address = req.bulletin_address;
    vf.acquired = true;
    if (!iov_post_bulletin(r.hwfn, r.ptt, vf, true)) {
        vf.acquired = false;
        vf.grant = {};
        vf.bulletin_address = 0;
        return {VfStatus::bad_request, "its bulletin board is not reachable"};
    }

    const HwInfo& info = r.hwfn.hw_info;
    hsi::iov::AcquireReply reply{};
    reply.pf_id = static_cast<uint8_t>(info.pf_id);
    reply.vf_id = static_cast<uint8_t>(vf.id);
    reply.port_id = static_cast<uint8_t>(info.port_id);
    reply.hsi_minor = hsi::HSI_VERSION_MINOR;
    reply.rx_queues = grant.rx_queues;
    reply.tx_queues = grant.tx_queues;
    reply.sbs = grant.sbs;
    reply.mac_filters = grant.mac_filters;
    reply.vlan_filters = grant.vlan_filters;
    reply.mcast_filters = grant.mcast_filters;
    reply.mtu = info.mtu;
    const Mac mac = iov_vf_mac(r.hwfn, vf);
    std::copy(mac.begin(), mac.end(), reply.mac);
    reply.fw_version = info.fw_version;
    reply.bulletin_size = grant.bulletin_size;
    r.reply.set(reply);
    DP_INFO(r.hwfn, "VF %u acquired by driver 0x%08x (HSI %u.%u): %u Rx / %u Tx queues, %u SBs, "
                    "%u MAC, %u VLAN and %u multicast filters",
            vf.id, req.driver_version, req.hsi_major, req.hsi_minor, grant.rx_queues, grant.tx_queues, grant.sbs,
            grant.mac_filters, grant.vlan_filters, grant.mcast_filters);
    return OK;
}

Verdict vport_start(Request& r)
{
    hsi::iov::VportStartRequest req{};
    if (!r.read(TlvType::vport_start, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (vf.vport_started)
        return {VfStatus::failure, "its vport is started already"};
    if (req.sbs == 0 || req.sbs > vf.grant.sbs)
        return {VfStatus::bad_request, "no status block, or more than the VF's grant"};
    for (uint32_t sb = 0; sb < req.sbs; sb++)
        if (req.sb_addr[sb] == 0 || req.sb_addr[sb] % 8 != 0)
            return {VfStatus::bad_request, "a status block address that is 0 or not 8-byte aligned"};
    if (vf.own_sbs & ((1u << req.sbs) - 1))
        return {VfStatus::bad_request, "a status block sb_setup programmed already"};
    if (Verdict v = iov::check_mtu(req.mtu, vf.admin.policy); !v.ok())
        return v;

    /* Before the vport: its queues' status blocks must be reachable. */
    cau_program(r.hwfn, r.ptt, vf, req.sb_addr, req.sbs);
    VportStartRamrodData data{};
    data.vport_id = vport_of(vf);
    data.vlan_strip = req.vlan_strip != 0;
    data.max_bds_per_packet = req.max_bds_per_packet; /* the firmware checks the limit */
    data.rx_csum_en = req.rx_csum != 0;
    data.mtu = req.mtu;
    if (post_vf(r.hwfn, EthCmd::vport_start, data) != Status::success) {
        cau_clear(r.hwfn, r.ptt, vf);
        return {VfStatus::failure, "the firmware refused its vport"};
    }
    vf.vport_started = true;

    /* The PF's policy, before the VF can activate the vport. */
    Status rc = iov_vf_apply_forced_mac(r.hwfn, vf);
    if (rc == Status::success && policy_flags(vf.admin) != 0)
        rc = iov_vf_apply_vport_policy(r.hwfn, vf, policy_flags(vf.admin));
    if (rc != Status::success) {
        close_vport(r.hwfn, r.ptt, vf);
        return {VfStatus::failure, "the PF's policy could not be applied to its vport"};
    }
    return OK;
}

/* Replaces the VF's multicast list: the old one's filters removed, the
 * new one's added. */
Status set_mcast(Hwfn& hwfn, IovVf& vf, const hsi::iov::VportMcastTlv& tlv)
{
    Status rc = remove_all(hwfn, vf, vf.mcast);
    for (uint16_t i = 0; i < tlv.count && rc == Status::success; i++) {
        Mac mac;
        std::copy(std::begin(tlv.macs[i]), std::end(tlv.macs[i]), mac.begin());
        if (std::find(vf.mcast.begin(), vf.mcast.end(), mac) != vf.mcast.end())
            continue;
        rc = filter(hwfn, vf, FilterOpcode::add, &mac);
        if (rc == Status::success)
            vf.mcast.push_back(mac);
    }
    return rc;
}

Verdict vport_update_request(Request& r)
{
    IovVf& vf = r.vf;
    if (!vf.vport_started)
        return {VfStatus::failure, "its vport is not started"};
    if (Verdict v = iov::check_vport_update(r.tlvs, vf.grant, vf.admin.policy); !v.ok())
        return v;

    hsi::iov::VportMcastTlv mcast{};
    if (r.read(TlvType::vport_mcast, &mcast) && set_mcast(r.hwfn, vf, mcast) != Status::success)
        return {VfStatus::failure, "its multicast list could not be set"};

    VportUpdateRamrodData data{};
    hsi::iov::VportActivateTlv activate{};
    if (r.read(TlvType::vport_activate, &activate)) {
        if (activate.update_rx) {
            data.update_flags |= vport_update::UPDATE_ACTIVE_RX;
            data.active_rx = activate.active_rx != 0;
        }
        if (activate.update_tx) {
            data.update_flags |= vport_update::UPDATE_ACTIVE_TX;
            data.active_tx = activate.active_tx != 0;
        }
    }
    hsi::iov::VportRxModeTlv mode{};
    if (r.read(TlvType::vport_rx_mode, &mode)) {
        /* Its own MACs and multicast list, and broadcast, always; the
         * unmatched only as the checks allowed (a trusted VF). */
        data.update_flags |= vport_update::UPDATE_RX_MODE;
        data.rx_accept = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::BCAST |
                         (mode.unicast_accept_all ? accept::UCAST_UNMATCHED : 0) |
                         (mode.multicast_accept_all ? accept::MCAST_UNMATCHED : 0);
    }
    hsi::iov::VportRssTlv rss{};
    if (r.read(TlvType::vport_rss, &rss)) {
        data.update_flags |= vport_update::UPDATE_RSS;
        data.rss_enable = rss.enable != 0;
        data.rss_hash_types = rss.hash_types;
        std::copy(std::begin(rss.key), std::end(rss.key), data.rss_key);
        std::copy(std::begin(rss.reta), std::end(rss.reta), data.rss_reta);
    }
    hsi::iov::VportVlanStripTlv strip{};
    if (r.read(TlvType::vport_vlan_strip, &strip)) {
        data.update_flags |= vport_update::UPDATE_VLAN_STRIP;
        data.vlan_strip = strip.strip != 0;
    }
    if (data.update_flags == 0)
        return OK;
    if (vport_update(r.hwfn, vf, data) != Status::success)
        return {VfStatus::failure, "the firmware refused the vport update"};
    if (data.update_flags & vport_update::UPDATE_RX_MODE)
        vf.rx_accept = data.rx_accept;
    return OK;
}

Verdict vport_teardown(Request& r)
{
    IovVf& vf = r.vf;
    if (!vf.vport_started)
        return OK;
    if (vf.rx_started != 0 || vf.tx_started != 0)
        return {VfStatus::failure, "queues are still started on its vport"};
    VportStopRamrodData data{};
    data.vport_id = vport_of(vf);
    if (post_vf(r.hwfn, EthCmd::vport_stop, data) != Status::success)
        return {VfStatus::failure, "the firmware refused to stop its vport"};
    /* The firmware dropped the vport's filters with it. */
    cau_clear(r.hwfn, r.ptt, vf);
    forget_vport(vf);
    return OK;
}

/* A queue start the grant allows, against what the VF has started: its
 * vport, the status blocks it gave, the queue not yet. */
Verdict check_queue_start(const IovVf& vf, uint8_t queue, uint8_t sb, uint8_t started, const char* already)
{
    if (!vf.vport_started)
        return {VfStatus::failure, "its vport is not started"};
    if (sb >= vf.sbs)
        return {VfStatus::bad_request, "a status block its vport_start gave no address for"};
    if (started & (1u << queue))
        return {VfStatus::failure, already};
    return OK;
}

Verdict start_rxq(Request& r)
{
    hsi::iov::StartRxqRequest req{};
    if (!r.read(TlvType::start_rxq, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (Verdict v = iov::check_start_rxq(req, vf.grant); !v.ok())
        return v;
    if (Verdict v = check_queue_start(vf, req.queue, req.sb, vf.rx_started, "the Rx queue is started already");
        !v.ok())
        return v;
    RxQueueStartRamrodData data{};
    data.vport_id = vport_of(vf);
    data.sb_pi = req.sb_pi;
    data.queue_id = req.queue;
    data.sb_id = req.sb;
    data.bd_max_bytes = req.buf_size;
    data.bd_base = hsi::make_regpair(req.bd_ring);
    data.cqe_base = hsi::make_regpair(req.cqe_ring);
    data.bd_ring_size = data.cqe_ring_size = req.ring_size;
    data.flags = req.flags;
    if (post_vf(r.hwfn, EthCmd::rx_queue_start, data) != Status::success)
        return {VfStatus::failure, "the firmware refused the Rx queue"};
    vf.rx_started |= static_cast<uint8_t>(1u << req.queue);
    hsi::iov::StartQueueReply reply{};
    reply.offset = hsi::iov::vf_bar0::rx_prod(req.queue);
    r.reply.set(reply);
    return OK;
}

Verdict start_txq(Request& r)
{
    hsi::iov::StartTxqRequest req{};
    if (!r.read(TlvType::start_txq, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (Verdict v = iov::check_start_txq(req, vf.grant); !v.ok())
        return v;
    if (Verdict v = check_queue_start(vf, req.queue, req.sb, vf.tx_started, "the Tx queue is started already");
        !v.ok())
        return v;
    const uint32_t cid = hsi::cid_tx_queue(req.queue);
    TxQueueStartRamrodData data{};
    data.vport_id = vport_of(vf);
    data.sb_pi = req.sb_pi;
    data.queue_id = req.queue;
    data.sb_id = req.sb;
    data.bd_ring_size = req.ring_size;
    data.bd_base = hsi::make_regpair(req.bd_ring);
    data.cid = cid;
    if (post_vf(r.hwfn, EthCmd::tx_queue_start, data, cid) != Status::success)
        return {VfStatus::failure, "the firmware refused the Tx queue"};
    vf.tx_started |= static_cast<uint8_t>(1u << req.queue);
    hsi::iov::StartQueueReply reply{};
    reply.offset = hsi::db_offset(cid);
    r.reply.set(reply);
    return OK;
}

Verdict stop_queues(Request& r, bool rx)
{
    hsi::iov::StopQueuesRequest req{};
    if (!r.read(rx ? TlvType::stop_rxqs : TlvType::stop_txqs, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (Verdict v = iov::check_stop_queues(req, rx ? vf.grant.rx_queues : vf.grant.tx_queues); !v.ok())
        return v;
    const uint8_t started = rx ? vf.rx_started : vf.tx_started;
    for (uint32_t q = req.first; q < uint32_t{req.first} + req.count; q++) {
        if ((started & (1u << q)) && queue_stop(r.hwfn, vf, rx, static_cast<uint8_t>(q)) != Status::success)
            return {VfStatus::failure, "the firmware refused to stop a queue"};
    }
    return OK;
}

/* Adds or removes one of the VF's own filters (MAC or VLAN). */
template <typename T>
Verdict own_filter(Request& r, std::vector<T>& list, uint8_t granted, hsi::iov::FilterOp op, const T& item)
{
    IovVf& vf = r.vf;
    auto post = [&](FilterOpcode opcode) {
        if constexpr (std::is_same_v<T, Mac>)
            return filter(r.hwfn, vf, opcode, &item);
        else
            return filter(r.hwfn, vf, opcode, nullptr, item);
    };
    const auto it = std::find(list.begin(), list.end(), item);
    if (op == hsi::iov::FilterOp::add) {
        if (it != list.end())
            return OK;
        if (list.size() >= granted)
            return {VfStatus::no_resource, "more filters than the VF's grant"};
        if (post(FilterOpcode::add) != Status::success)
            return {VfStatus::failure, "the firmware refused the filter"};
        list.push_back(item);
        return OK;
    }
    if (it == list.end())
        return {VfStatus::bad_request, "removing a filter the VF does not have"};
    if (post(FilterOpcode::remove) != Status::success)
        return {VfStatus::failure, "the firmware refused to remove the filter"};
    list.erase(it);
    return OK;
}

Verdict ucast_filter(Request& r)
{
    hsi::iov::UcastFilterRequest req{};
    if (!r.read(TlvType::ucast_filter, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (Verdict v = iov::check_ucast_filter(req, vf.grant, vf.admin.policy); !v.ok())
        return v;
    if (!vf.vport_started)
        return {VfStatus::failure, "its vport is not started"};
    const auto op = static_cast<hsi::iov::FilterOp>(req.op);
    if (static_cast<hsi::iov::FilterKind>(req.kind) == hsi::iov::FilterKind::vlan) {
        if (op == hsi::iov::FilterOp::flush)
            return remove_all(r.hwfn, vf, vf.vlans) == Status::success
                       ? OK
                       : Verdict{VfStatus::failure, "the firmware refused to remove a filter"};
        return own_filter(r, vf.vlans, vf.grant.vlan_filters, op, req.vlan);
    }
    if (op == hsi::iov::FilterOp::flush)
        return remove_all(r.hwfn, vf, vf.macs) == Status::success
                   ? OK
                   : Verdict{VfStatus::failure, "the firmware refused to remove a filter"};
    Mac mac;
    std::copy(std::begin(req.mac), std::end(req.mac), mac.begin());
    /* The forced MAC is the PF's filter: the VF neither adds nor removes it. */
    if (vf.admin.policy.mac_forced && mac == vf.admin.policy.forced_mac)
        return OK;
    return own_filter(r, vf.macs, vf.grant.mac_filters, op, mac);
}

Verdict update_mtu(Request& r)
{
    hsi::iov::UpdateMtuRequest req{};
    if (!r.read(TlvType::update_mtu, &req))
        return SHORT;
    if (Verdict v = iov::check_mtu(req.mtu, r.vf.admin.policy); !v.ok())
        return v;
    if (!r.vf.vport_started)
        return {VfStatus::failure, "its vport is not started"};
    VportUpdateRamrodData data{};
    data.update_flags = vport_update::UPDATE_MTU;
    data.mtu = req.mtu;
    return vport_update(r.hwfn, r.vf, data) == Status::success
               ? OK
               : Verdict{VfStatus::failure, "the firmware refused the MTU"};
}

/* Checked and accepted, with nothing to program: the adapter's CAU writes
 * every status block once per engine pass, whatever a queue asks for. */
Verdict coalesce_update(Request& r)
{
    hsi::iov::CoalesceUpdateRequest req{};
    if (!r.read(TlvType::coalesce_update, &req))
        return SHORT;
    const IovVf& vf = r.vf;
    if (req.queue >= vf.grant.rx_queues && req.queue >= vf.grant.tx_queues)
        return {VfStatus::bad_request, "a queue beyond the VF's grant"};
    return OK;
}

/* A status block outside the vport's, programmed now (its RDMA's EQ and
 * CNQ): the vport may stop and start under it. */
Verdict sb_setup(Request& r)
{
    hsi::iov::SbSetupRequest req{};
    if (!r.read(TlvType::sb_setup, &req))
        return SHORT;
    IovVf& vf = r.vf;
    if (Verdict v = iov::check_sb_setup(req, vf.grant, vf.sbs); !v.ok())
        return v;
    wr(r.hwfn, r.ptt, reg::IOV_VF_SELECT, vf.id);
    cau_set(r.hwfn, r.ptt, req.sb, req.sb_addr);
    if (req.sb_addr != 0)
        vf.own_sbs |= static_cast<uint8_t>(1u << req.sb);
    else
        vf.own_sbs &= static_cast<uint8_t>(~(1u << req.sb));
    return OK;
}

/* The VF's status blocks keep no state in the PF beyond their CAU
 * addresses, which its vport's teardown, sb_setup and close clear: nothing
 * to clean. */
Verdict int_cleanup(Request&) { return OK; }

Verdict close(Request& r)
{
    iov_vf_close(r.hwfn, r.ptt, r.vf);
    return OK;
}

Verdict release(Request& r)
{
    iov_vf_close(r.hwfn, r.ptt, r.vf);
    r.vf.acquired = false;
    r.vf.grant = {};
    r.vf.bulletin_address = 0;
    DP_INFO(r.hwfn, "VF %u released", r.vf.id);
    return OK;
}

using Handler = Verdict (*)(Request&);

Handler handler_of(TlvType type)
{
    switch (type) {
    case TlvType::acquire: return acquire;
    case TlvType::release: return release;
    case TlvType::close: return close;
    case TlvType::int_cleanup: return int_cleanup;
    case TlvType::vport_start: return vport_start;
    case TlvType::vport_update: return vport_update_request;
    case TlvType::vport_teardown: return vport_teardown;
    case TlvType::start_rxq: return start_rxq;
    case TlvType::start_txq: return start_txq;
    case TlvType::stop_rxqs: return [](Request& r) { return stop_queues(r, true); };
    case TlvType::stop_txqs: return [](Request& r) { return stop_queues(r, false); };
    case TlvType::ucast_filter: return ucast_filter;
    case TlvType::update_mtu: return update_mtu;
    case TlvType::coalesce_update: return coalesce_update;
    case TlvType::sb_setup: return sb_setup;
    default: return nullptr;
    }
}

} // namespace

Verdict iov_handle_request(Hwfn& hwfn, Ptt& ptt, IovVf& vf, const iov::TlvReader& request, VfReply* reply)
{
    const TlvType type = request.first_type();
    const Handler handler = handler_of(type);
    Verdict verdict;
    if (handler == nullptr)
        verdict = {VfStatus::not_supported, "not a request this PF handles"};
    else if (type != TlvType::acquire && !vf.acquired)
        verdict = {VfStatus::not_acquired, "a request before acquire"};
    else {
        Request r{hwfn, ptt, vf, request, *reply};
        verdict = handler(r);
    }
    const char* name = iov::tlv_name(type) ? iov::tlv_name(type) : "unknown request";
    if (verdict.ok())
        DP_VERBOSE(hwfn, osal::dp_module::L2, "VF %u: %s done", vf.id, name);
    else
        DP_NOTICE(hwfn, "VF %u: %s (type %u) refused, %s: %s", vf.id, name, static_cast<uint32_t>(type),
                  iov::status_name(verdict.status), verdict.reason);
    return verdict;
}

void iov_vf_close(Hwfn& hwfn, Ptt& ptt, IovVf& vf)
{
    close_vport(hwfn, ptt, vf);
    cau_clear(hwfn, ptt, vf, true);
}

void iov_vf_forget(IovVf& vf)
{
    forget_vport(vf);
    vf.own_sbs = 0;
}

namespace {

void close_vport(Hwfn& hwfn, Ptt& ptt, IovVf& vf)
{
    if (vf.vport_started) {
        VportUpdateRamrodData inactive{};
        inactive.update_flags = vport_update::UPDATE_ACTIVE_RX | vport_update::UPDATE_ACTIVE_TX;
        vport_update(hwfn, vf, inactive);
    }
    for (uint8_t q = 0; q < hsi::iov::MAX_VF_QUEUES; q++) {
        if (vf.rx_started & (1u << q))
            queue_stop(hwfn, vf, true, q);
        if (vf.tx_started & (1u << q))
            queue_stop(hwfn, vf, false, q);
    }
    if (vf.vport_started) {
        VportStopRamrodData data{};
        data.vport_id = vport_of(vf);
        if (post_vf(hwfn, EthCmd::vport_stop, data) != Status::success)
            DP_ERR(hwfn, "VF %u: its vport could not be stopped; forgotten anyway", vf.id);
    }
    cau_clear(hwfn, ptt, vf);
    forget_vport(vf);
}

void forget_vport(IovVf& vf)
{
    vf.vport_started = false;
    vf.sbs = 0;
    vf.rx_started = vf.tx_started = 0;
    vf.rx_accept = 0;
    vf.forced_filter = false;
    vf.macs.clear();
    vf.vlans.clear();
    vf.mcast.clear();
}

} // namespace

Status iov_vf_apply_forced_mac(Hwfn& hwfn, IovVf& vf)
{
    if (!vf.vport_started)
        return Status::success;
    const iov::VfPolicy& policy = vf.admin.policy;
    if (vf.forced_filter && policy.mac_forced && vf.forced_filter_mac == policy.forced_mac)
        return Status::success;
    Status rc = Status::success;
    if (vf.forced_filter) {
        if (policy.mac_forced || vf.macs.size() >= vf.grant.mac_filters) {
            rc = filter(hwfn, vf, FilterOpcode::remove, &vf.forced_filter_mac);
        } else {
            /* The force lifted: the MAC stays, the VF's own now (it learns
             * from its bulletin and may change it). */
            vf.macs.push_back(vf.forced_filter_mac);
        }
        vf.forced_filter = false;
    }
    if (!policy.mac_forced)
        return rc;
    /* The VF may use no other MAC. */
    if (Status r = remove_all(hwfn, vf, vf.macs); rc == Status::success)
        rc = r;
    Status added = filter(hwfn, vf, FilterOpcode::add, &policy.forced_mac);
    if (added == Status::success) {
        vf.forced_filter = true;
        vf.forced_filter_mac = policy.forced_mac;
    }
    return rc == Status::success ? added : rc;
}

Status iov_vf_apply_vport_policy(Hwfn& hwfn, IovVf& vf, uint32_t update_flags)
{
    if (!vf.vport_started)
        return Status::success;
    const iov::VfPolicy& policy = vf.admin.policy;
    Status rc = Status::success;
    /* Under a port VLAN the VF filters no VLAN of its own. */
    if ((update_flags & vport_update::UPDATE_PORT_VLAN) && policy.port_vlan != 0)
        rc = remove_all(hwfn, vf, vf.vlans);
    VportUpdateRamrodData data{};
    data.update_flags = update_flags;
    data.anti_spoof = vf.admin.spoofchk;
    data.port_vlan = policy.port_vlan;
    data.tx_rate_mbps = vf.admin.tx_rate_mbps;
    data.link_down = vf.admin.link_state == VfLinkState::down;
    const Status updated = vport_update(hwfn, vf, data);
    return rc == Status::success ? updated : rc;
}

Status iov_vf_apply_trust(Hwfn& hwfn, IovVf& vf)
{
    constexpr uint16_t UNMATCHED = accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED;
    if (!vf.vport_started || vf.admin.policy.trusted || (vf.rx_accept & UNMATCHED) == 0)
        return Status::success;
    /* Trust withdrawn: no more promiscuous or all-multicast. */
    VportUpdateRamrodData data{};
    data.update_flags = vport_update::UPDATE_RX_MODE;
    data.rx_accept = vf.rx_accept & ~UNMATCHED;
    const Status rc = vport_update(hwfn, vf, data);
    if (rc == Status::success)
        vf.rx_accept = data.rx_accept;
    return rc;
}

} // namespace cna::ecore
