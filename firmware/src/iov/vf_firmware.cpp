/* SPDX-License-Identifier: BSD-3-Clause */
#include "iov/vf_firmware.h"

#include "l2/filters.h"

#include <cstdio>
#include <cstring>
#include <utility>

namespace cna::fw {

using namespace hsi;
namespace page = hsi::iov::vf_page;

VfFirmware::VfFirmware(FunctionHw& hw, StormRam& ram, Storms& storms, PtpClock& clock, Malicious on_malicious)
    : FunctionFirmware(hw, ram, hw.pf_id(), VF_GRANT, const_cast<uint8_t*>(hw.gtt_memory()) + page::rx_prod(0),
                       clock),
      on_malicious_(std::move(on_malicious)),
      spq_(hw, storms, *this, [](uint32_t sb) { return sb < iov::MAX_VF_SBS; },
           const_cast<uint8_t*>(hw.gtt_memory()) + page::EQ_CONS,
           hw.name()),
      roce_(hw, grant_, in_page<rdma::RoceStats>(page::ROCE_STATS),
            /* Its RoCE speaks with an address its PF gave it (a MAC filter
             * of its vport), never another function's. */
            [this](const uint8_t* mac) { return mac_filter_match(l2_.vports[0], mac, false, 0); })
{
    /* A VF's L2 objects exist only while its PF has it enabled: whatever
     * there is, the engines serve. */
    started_ = true;
}

void VfFirmware::reset()
{
    reset_l2();
    ptp_.reset();
    roce_.reset();
    spq_.reset();
}

void VfFirmware::queue_error(QueueKind kind, uint32_t queue, QueueError why)
{
    static constexpr const char* KINDS[] = {"Tx queue", "Rx queue", "SPQ"};
    char what[64];
    std::snprintf(what, sizeof what, "its %s %u broke its protocol (%u)", KINDS[static_cast<uint32_t>(kind)], queue,
                  static_cast<uint32_t>(why));
    mark_malicious(what);
}

void VfFirmware::fw_assert(uint32_t code)
{
    char what[64];
    std::snprintf(what, sizeof what, "its SPQ broke its protocol (firmware assert %u)", code);
    mark_malicious(what);
}

void VfFirmware::mark_malicious(const char* what)
{
    /* Its own engine thread or the slowpath: nothing of the VF is served
     * from now on, and the slowpath forgets its objects once the PF has
     * been told. */
    l2_.active_rx_vports = 0;
    l2_.link_down_vports = 0;
    l2_.started_txqs = 0;
    spq_.halt();
    on_malicious_(vf(), what);
}

FwReturn VfFirmware::start(const PfStartRamrodData&)
{
    std::memset(&in_page<rdma::RoceStats>(page::ROCE_STATS), 0, sizeof(rdma::RoceStats));
    return FwReturn::ok;
}

FwReturn VfFirmware::execute(const SlowPathElement& elem, uint64_t& data)
{
    switch (static_cast<ProtocolId>(elem.hdr.protocol_id)) {
    case ProtocolId::roce:
        return roce_.ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr), roce::Ilt{spq_.ilt_base(), spq_.ilt_cids()},
                            data);
    case ProtocolId::common:
        if (elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::pf_stop))
            return roce_.active() ? FwReturn::bad_state : FwReturn::ok;
        if (elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::empty))
            return FwReturn::ok;
        return FwReturn::invalid_command;
    default:
        return FwReturn::invalid_command; /* its L2 is its PF's to make */
    }
}

eth::VportStats& VfFirmware::vport_stats(uint32_t) { return in_page<eth::VportStats>(page::VPORT_STATS); }
eth::QueueStats& VfFirmware::rx_queue_stats(uint32_t queue) { return in_page<eth::QueueStats>(page::rx_queue_stats(queue)); }
eth::QueueStats& VfFirmware::tx_queue_stats(uint32_t queue) { return in_page<eth::QueueStats>(page::tx_queue_stats(queue)); }

FwReturn VfFirmware::open_tx_connection(const eth::TxQueueStartRamrodData& d)
{
    /* A VF's connections are its queues' doorbells, in its page. */
    return d.cid == cid_tx_queue(d.queue_id) ? FwReturn::ok : FwReturn::invalid_param;
}

} // namespace cna::fw
