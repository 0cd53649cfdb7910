/* SPDX-License-Identifier: BSD-3-Clause
 * A PF's storms behind its slowpath queue: its registers in the GRC's
 * STORM_PF block, PF_START's resets, the ramrods of every protocol, and the
 * asynchronous events it posts on its EQ.
 */
#include <iterator>

#include "function/function.h"
#include "pf/pf_firmware.h"
#include "slowpath/storm_ram.h"
#include "slowpath/storms.h"
#include "iov/pf_iov.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi;

PfFirmware::PfFirmware(FunctionHw& hw, StormRam& ram, Storms& storms, const Grant& grant, PtpClock& clock)
    : FunctionFirmware(hw, ram, hw.pf_id(), grant, ram.at(iro::rx_prod(hw.pf_id(), 0)), clock), storms_(storms),
      spq_(hw, storms, *this, [](uint32_t sb) { return sb == SP_SB_ID; }, ram.at(iro::eq_cons(hw.pf_id())),
           hw.name()),
      roce_(hw, grant_, ram.roce_stats(hw.pf_id()))
{
}

eth::VportStats& PfFirmware::vport_stats(uint32_t vport) { return ram_.vport_stats(pf_, vport); }
eth::QueueStats& PfFirmware::rx_queue_stats(uint32_t queue) { return ram_.rx_queue_stats(pf_, queue); }
eth::QueueStats& PfFirmware::tx_queue_stats(uint32_t queue) { return ram_.tx_queue_stats(pf_, queue); }

bool PfFirmware::read(uint32_t addr, uint32_t& value) const
{
    switch (addr) {
    case reg::STORM_PF_QUEUE_ERROR: value = last_queue_error_.load(); return true;
    case reg::STORM_PF_QUEUE_ERROR_COUNT: value = queue_errors_.load(); return true;
    default: return spq_.read(addr - reg::STORM_PF_BASE, value);
    }
}

bool PfFirmware::write(uint32_t addr, uint32_t value)
{
    switch (addr) {
    case reg::STORM_PF_QUEUE_ERROR:
    case reg::STORM_PF_QUEUE_ERROR_COUNT: return true; /* read-only: dropped */
    default: return spq_.write(addr - reg::STORM_PF_BASE, value);
    }
}

bool PfFirmware::read_data(uint64_t data_ptr, void* data, std::size_t len)
{
    return hw_.dma().read(data_ptr, data, len);
}

FwReturn PfFirmware::start(const PfStartRamrodData&)
{
    /* While another PF manages the port's switch in switchdev mode, the
     * port's wire is that switch's. */
    if (eswitch_ != nullptr && eswitch_->switchdev() && &eswitch_->manager() != this)
        return FwReturn::bad_state;
    /* Every Rx producer and statistic restarts at 0: values a previous
     * load left in storm RAM must not be taken for new ones. */
    for (uint32_t q = 0; q < MAX_QUEUES_PER_PF; q++)
        ram_.write32(iro::rx_prod(pf_, q), 0);
    for (uint32_t v = 0; v < MAX_VPORTS_PER_PF; v++)
        ram_.zero(iro::vport_stats(pf_, v), iro::VPORT_STATS_SIZE);
    ram_.zero(iro::rx_queue_stats(pf_, 0), MAX_QUEUES_PER_PF * 2 * iro::QUEUE_STATS_SIZE);
    ram_.zero(iro::roce_stats(pf_), iro::ROCE_STATS_SIZE);
    for (Vport& vport : l2_.vports)
        vport.filters.reserve(grant_.num_mac_filters + grant_.num_vlan_filters);
    started_ = true;
    return FwReturn::ok;
}

FwReturn PfFirmware::execute(const SlowPathElement& elem, uint64_t& data)
{
    completion_data_ = 0;
    FwReturn rc = FwReturn::invalid_command;
    switch (static_cast<ProtocolId>(elem.hdr.protocol_id)) {
    case ProtocolId::common: rc = common_ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr)); break;
    case ProtocolId::eth: rc = eth_ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr)); break;
    case ProtocolId::roce:
        rc = roce_.ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr), roce::Ilt{spq_.ilt_base(), spq_.ilt_cids()},
                          completion_data_);
        break;
    default: break;
    }
    data = completion_data_;
    return rc;
}

void PfFirmware::post_async_events()
{
    roce_.post_events(spq_);
    if (iov_ != nullptr)
        iov_->take_events([&](iov::IovEvent event, uint32_t vf, uint64_t data) {
            return spq_.post_async(ProtocolId::iov, static_cast<uint8_t>(event), static_cast<uint16_t>(vf), data);
        });
}

void PfFirmware::raise_fw_assert(uint32_t code)
{
    hw_.attention().set_fw_assert_code(code);
    hw_.attention().raise(attn::FW_ASSERT);
}

void PfFirmware::queue_error(QueueKind kind, uint32_t queue, QueueError why)
{
    static constexpr const char* KINDS[] = {"Tx queue", "Rx queue", "SPQ"};
    static constexpr const char* WHYS[] = {
        "no error", "first BD without START", "BD count 0 or past the limit", "chain past the producer",
        "zero-size BD", "packet shorter than an Ethernet header", "packet longer than the MTU allows",
        "chain longer than the storms gather", "LSO without TCP, MSS or room", "producer more than a ring ahead",
        "completion consumer ahead of the producer"};
    static_assert(std::size(WHYS) == static_cast<std::size_t>(QueueError::cons_past_prod) + 1);
    last_queue_error_.store(hsi::queue_error(kind, queue, why), std::memory_order_relaxed);
    const uint32_t count = queue_errors_.fetch_add(1, std::memory_order_relaxed) + 1;
    if ((count & (count - 1)) == 0)
        log(LogLevel::err, "storm: pf%u %s %u: %s, refused (%u so far)", pf_, KINDS[static_cast<uint32_t>(kind)],
            queue, WHYS[static_cast<uint32_t>(why)], count);
    hw_.attention().raise(attn::QUEUE_ERROR);
}

void PfFirmware::reset()
{
    reset_l2();
    ptp_.reset();
    if (eswitch_ != nullptr)
        eswitch_->release(*this);
    roce_.reset();
    spq_.reset();
    started_ = false;
    hw_.clear_doorbells();
}

} // namespace cna::fw
