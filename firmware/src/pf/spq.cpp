/* SPDX-License-Identifier: BSD-3-Clause
 * The slowpath queue and the event queue of a PF: the storm takes SPQ
 * elements up to the producer rung on CID_SPQ, executes each ramrod and
 * completes it on the EQ, never overwriting an EQE ecore has not consumed.
 */
#include <bit>
#include <iterator>

#include "function/function.h"
#include "pf/pf_firmware.h"
#include "slowpath/storm_ram.h"
#include "slowpath/storms.h"
#include "iov/pf_iov.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi;

PfFirmware::PfFirmware(FunctionHw& hw, StormRam& ram, Storms& storms, const Grant& grant)
    : FunctionFirmware(hw, ram, hw.pf_id(), grant, ram.at(iro::rx_prod(hw.pf_id(), 0))), storms_(storms),
      roce_(hw, grant_, ram.roce_stats(hw.pf_id()))
{
}

eth::VportStats& PfFirmware::vport_stats(uint32_t vport) { return ram_.vport_stats(pf_, vport); }
eth::QueueStats& PfFirmware::rx_queue_stats(uint32_t queue) { return ram_.rx_queue_stats(pf_, queue); }
eth::QueueStats& PfFirmware::tx_queue_stats(uint32_t queue) { return ram_.tx_queue_stats(pf_, queue); }

bool PfFirmware::read(uint32_t addr, uint32_t& value) const
{
    switch (addr) {
    case reg::STORM_SPQ_BASE_LO: value = regs_.spq_base_lo; return true;
    case reg::STORM_SPQ_BASE_HI: value = regs_.spq_base_hi; return true;
    case reg::STORM_SPQ_SIZE: value = regs_.spq_size; return true;
    case reg::STORM_ILT_BASE_LO: value = regs_.ilt_base_lo; return true;
    case reg::STORM_ILT_BASE_HI: value = regs_.ilt_base_hi; return true;
    case reg::STORM_ILT_CIDS: value = regs_.ilt_cids; return true;
    case reg::STORM_PF_ENABLE: value = regs_.pf_enable; return true;
    case reg::STORM_PF_QUEUE_ERROR: value = last_queue_error_.load(); return true;
    case reg::STORM_PF_QUEUE_ERROR_COUNT: value = queue_errors_.load(); return true;
    default: return false;
    }
}

bool PfFirmware::write(uint32_t addr, uint32_t value)
{
    switch (addr) {
    case reg::STORM_SPQ_BASE_LO: regs_.spq_base_lo = value; return true;
    case reg::STORM_SPQ_BASE_HI: regs_.spq_base_hi = value; return true;
    case reg::STORM_SPQ_SIZE: regs_.spq_size = value; return true;
    case reg::STORM_ILT_BASE_LO: regs_.ilt_base_lo = value; return true;
    case reg::STORM_ILT_BASE_HI: regs_.ilt_base_hi = value; return true;
    case reg::STORM_ILT_CIDS: regs_.ilt_cids = value; return true;
    case reg::STORM_PF_ENABLE: regs_.pf_enable = value & 1; return true;
    case reg::STORM_PF_QUEUE_ERROR:
    case reg::STORM_PF_QUEUE_ERROR_COUNT: return true; /* read-only: dropped */
    default: return false;
    }
}

bool PfFirmware::eq_full() const
{
    return static_cast<uint16_t>(eq_.prod - ram_.eq_cons(pf_)) >= eq_.mask;
}

bool PfFirmware::spq_can_take() const
{
    return !(started_ && eq_full()) && storms_.running();
}

void PfFirmware::poll_spq()
{
    /* Until the PF phase enables the storm for this PF and PGLUE lets it
     * master the bus, the doorbell just stays rung. */
    if (!storms_.running() || !regs_.pf_enable || !hw_.pglue().master_enabled())
        return;
    uint32_t size = regs_.spq_size;
    if (!std::has_single_bit(size) || size > 0x10000)
        return;
    uint64_t base = uint64_t{regs_.spq_base_hi} << 32 | regs_.spq_base_lo;
    uint16_t prod = hw_.doorbell_prod(CID_SPQ);
    if (prod == spq_refused_prod_)
        return;
    if (static_cast<uint16_t>(prod - spq_cons_) > size) {
        spq_refused_prod_ = prod;
        queue_error(QueueKind::spq, 0, QueueError::prod_past_ring);
        return;
    }
    spq_refused_prod_ = NONE_REFUSED;
    while (spq_cons_ != prod && storms_.running()) {
        if (started_ && eq_full())
            break;
        SlowPathElement elem;
        uint64_t addr = base + uint64_t{spq_cons_ & (size - 1)} * sizeof(elem);
        spq_cons_++;
        if (!hw_.dma().read(addr, &elem, sizeof(elem)))
            continue; /* DMA fault raised; nothing identifies the ramrod */
        if (storms_.take_lost_ramrod()) {
            log(LogLevel::notice, "storm: pf%u ramrod %u/%u echo %u lost (fault injection)", pf_,
                elem.hdr.protocol_id, elem.hdr.cmd_id, elem.hdr.echo);
            continue;
        }
        execute(elem);
    }
}

bool PfFirmware::read_data(uint64_t data_ptr, void* data, std::size_t len)
{
    return hw_.dma().read(data_ptr, data, len);
}

void PfFirmware::execute(const SlowPathElement& elem)
{
    auto protocol = static_cast<ProtocolId>(elem.hdr.protocol_id);
    bool is_pf_start = protocol == ProtocolId::common && elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::pf_start);
    if (is_pf_start) {
        pf_start(elem);
        return;
    }
    if (!started_) {
        log(LogLevel::err, "storm: pf%u ramrod %u/%u before PF_START", pf_, elem.hdr.protocol_id, elem.hdr.cmd_id);
        raise_fw_assert(fw_assert::RAMROD_BEFORE_PF_START);
        return;
    }
    FwReturn rc = FwReturn::invalid_command;
    completion_data_ = 0;
    if (protocol == ProtocolId::common)
        rc = common_ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr));
    else if (protocol == ProtocolId::eth)
        rc = eth_ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr));
    else if (protocol == ProtocolId::roce)
        rc = roce_.ramrod(elem.hdr.cmd_id, from_regpair(elem.data_ptr),
                          roce::Ilt{uint64_t{regs_.ilt_base_hi} << 32 | regs_.ilt_base_lo, regs_.ilt_cids},
                          completion_data_);
    post_eqe(elem.hdr, rc, completion_data_);
    if (protocol == ProtocolId::common && elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::pf_stop) &&
        rc == FwReturn::ok)
        started_ = false; /* the PF_STOP completion is the last EQE */
}

bool PfFirmware::post_eqe(const RamrodHeader& hdr, FwReturn rc, uint64_t data, uint8_t flags)
{
    if (eq_full())
        return false;
    EventRingElement eqe{};
    eqe.data = data;
    eqe.opcode = hdr.cmd_id;
    eqe.protocol_id = hdr.protocol_id;
    eqe.fw_return_code = static_cast<uint8_t>(rc);
    eqe.flags = flags;
    eqe.echo = hdr.echo;
    uint64_t addr = eq_.base + uint64_t{static_cast<uint16_t>(eq_.prod & eq_.mask)} * sizeof(eqe);
    if (!hw_.dma().write(addr, &eqe, sizeof(eqe)))
        return false;
    eq_.prod++;
    update_sb_index(SP_SB_ID, eq_.sb_pi, eq_.prod);
    if (rc != FwReturn::ok)
        log(LogLevel::info, "storm: pf%u ramrod %u/%u echo %u completed with %u", pf_, hdr.protocol_id, hdr.cmd_id,
            hdr.echo, eqe.fw_return_code);
    return true;
}

void PfFirmware::post_async_events()
{
    if (!started_)
        return;
    roce_.take_events([&](hsi::rdma::RdmaEvent event, uint64_t data) {
        RamrodHeader hdr{};
        hdr.cmd_id = static_cast<uint8_t>(event);
        hdr.protocol_id = static_cast<uint8_t>(ProtocolId::roce);
        return post_eqe(hdr, FwReturn::ok, data, EQE_FLAG_ASYNC);
    });
    if (iov_ != nullptr)
        iov_->take_events([&](hsi::iov::IovEvent event, uint32_t vf, uint64_t data) {
            RamrodHeader hdr{};
            hdr.cmd_id = static_cast<uint8_t>(event);
            hdr.protocol_id = static_cast<uint8_t>(ProtocolId::iov);
            hdr.echo = static_cast<uint16_t>(vf);
            return post_eqe(hdr, FwReturn::ok, data, EQE_FLAG_ASYNC);
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
    roce_.reset();
    regs_ = Registers{};
    eq_ = EventQueue{};
    started_ = false;
    spq_cons_ = 0;
    spq_refused_prod_ = NONE_REFUSED;
    hw_.clear_doorbells();
}

} // namespace cna::fw
