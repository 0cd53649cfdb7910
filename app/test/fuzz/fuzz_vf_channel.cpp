/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: what a PF reads from a VF and a VF from its PF over the SR-IOV
 * channel: a TLV list (a request as the PF copied it, at most
 * CHANNEL_REQUEST_MAX bytes) and a bulletin board. Whatever the bytes, the
 * reader either names what is malformed or hands out TLVs that lie within
 * the message; what the PF's checks accept lies within the VF's grant and
 * policy; a board is taken only when its CRC holds.
 */
#include <cstdlib>
#include <vector>

#include "ecore_iov_checks.h"
#include "ecore_iov_tlv.h"
#include "osal_util.h"

using namespace cna::hsi::iov;
using namespace cna::ecore::iov;

namespace {

template <typename T>
void find_each(const TlvReader& r, TlvType type)
{
    T value;
    const TlvReader::Find f = r.find(type, &value);
    if (r.error() != nullptr && f != TlvReader::Find::absent)
        std::abort(); /* a malformed list hands out nothing */
    TlvHeader h; /* every TLV struct starts with its header */
    std::memcpy(&h, &value, sizeof h);
    if (f == TlvReader::Find::found && h.type != static_cast<uint16_t>(type))
        std::abort();
}

void check_requests(const TlvReader& r)
{
    VfGrant grant;
    grant.rx_queues = grant.tx_queues = grant.sbs = 2;
    grant.mac_filters = 1;
    grant.mcast_filters = 4;
    VfPolicy untrusted;
    untrusted.mac_forced = true;
    untrusted.forced_mac = {0x02, 0, 0, 0, 0, 1};
    untrusted.port_vlan = 5;
    AcquireRequest acq;
    VfGrant granted;
    if (r.find(TlvType::acquire, &acq) == TlvReader::Find::found && grant_acquire(acq, VfShare{}, &granted).ok() &&
        (granted.rx_queues == 0 || granted.rx_queues > MAX_VF_QUEUES || granted.bulletin_size > sizeof(Bulletin)))
        std::abort();
    StartRxqRequest rxq;
    if (r.find(TlvType::start_rxq, &rxq) == TlvReader::Find::found && check_start_rxq(rxq, grant).ok() &&
        (rxq.queue >= grant.rx_queues || rxq.sb >= grant.sbs))
        std::abort();
    StopQueuesRequest stop;
    if (r.find(TlvType::stop_rxqs, &stop) == TlvReader::Find::found && check_stop_queues(stop, 2).ok() &&
        stop.first + stop.count > 2)
        std::abort();
    SbSetupRequest sb;
    if (r.find(TlvType::sb_setup, &sb) == TlvReader::Find::found && check_sb_setup(sb, grant, 1).ok() &&
        (sb.sb == 0 || sb.sb >= grant.sbs || sb.sb_addr % 8 != 0))
        std::abort(); /* SB 0 is the started vport's */
    if (r.first_type() == TlvType::vport_update && check_vport_update(r, grant, untrusted).ok()) {
        VportRxModeTlv mode;
        if (r.find(TlvType::vport_rx_mode, &mode) == TlvReader::Find::found &&
            (mode.unicast_accept_all || mode.multicast_accept_all))
            std::abort();
    }
    UcastFilterRequest filter;
    if (r.find(TlvType::ucast_filter, &filter) == TlvReader::Find::found &&
        check_ucast_filter(filter, grant, untrusted).ok() && filter.op == 0 &&
        (filter.kind == 1 || filter.mac[5] != 1))
        std::abort(); /* added a VLAN under a port VLAN, or a MAC not the forced one */
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > CHANNEL_REQUEST_MAX)
        return 0;
    /* A copy of exactly the bytes given: reading past them is an ASan error. */
    const std::vector<uint8_t> message(data, data + size);
    const TlvReader r(message);
    if ((r.error() == nullptr) == (r.first_type() == TlvType::none))
        std::abort();
    find_each<AcquireRequest>(r, TlvType::acquire);
    find_each<VportStartRequest>(r, TlvType::vport_start);
    find_each<StartRxqRequest>(r, TlvType::start_rxq);
    find_each<StartTxqRequest>(r, TlvType::start_txq);
    find_each<StopQueuesRequest>(r, TlvType::stop_rxqs);
    find_each<UcastFilterRequest>(r, TlvType::ucast_filter);
    find_each<UpdateMtuRequest>(r, TlvType::update_mtu);
    find_each<CoalesceUpdateRequest>(r, TlvType::coalesce_update);
    find_each<SbSetupRequest>(r, TlvType::sb_setup);
    find_each<VportActivateTlv>(r, TlvType::vport_activate);
    find_each<VportRxModeTlv>(r, TlvType::vport_rx_mode);
    find_each<VportRssTlv>(r, TlvType::vport_rss);
    find_each<VportVlanStripTlv>(r, TlvType::vport_vlan_strip);
    find_each<VportMcastTlv>(r, TlvType::vport_mcast);
    find_each<AcquireReply>(r, TlvType::reply);
    check_requests(r);

    Bulletin board;
    if (cna::ecore::iov::bulletin_read(message, &board) &&
        (board.version == 0 || board.size > size ||
         cna::osal::crc32(message.data() + BULLETIN_CRC_OFFSET, board.size - BULLETIN_CRC_OFFSET) != board.crc))
        std::abort();
    return 0;
}
