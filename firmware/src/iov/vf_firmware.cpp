/* SPDX-License-Identifier: BSD-3-Clause */
#include "iov/vf_firmware.h"

#include <utility>

namespace cna::fw {

using namespace hsi;
namespace page = hsi::iov::vf_page;

VfFirmware::VfFirmware(FunctionHw& hw, StormRam& ram, Malicious on_malicious)
    : FunctionFirmware(hw, ram, hw.pf_id(), VF_GRANT, const_cast<uint8_t*>(hw.gtt_memory()) + page::rx_prod(0)),
      on_malicious_(std::move(on_malicious))
{
    /* A VF's objects exist only while its PF has it enabled: whatever
     * there is, the engines serve. */
    started_ = true;
}

void VfFirmware::queue_error(QueueKind kind, uint32_t queue, QueueError why)
{
    /* Its own engine thread: nothing of the VF is served from now on, and
     * the slowpath forgets its objects once the PF has been told. */
    l2_.active_rx_vports = 0;
    l2_.link_down_vports = 0;
    l2_.started_txqs = 0;
    on_malicious_(vf(), kind, queue, why);
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
