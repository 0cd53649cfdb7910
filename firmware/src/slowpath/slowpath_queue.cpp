/* SPDX-License-Identifier: BSD-3-Clause */
#include "slowpath/slowpath_queue.h"

#include <atomic>
#include <bit>
#include <utility>

#include "base/log.h"
#include "hsi_eth.h"
#include "slowpath/storms.h"

namespace cna::fw {

using namespace hsi;

SlowpathQueue::SlowpathQueue(FunctionHw& hw, Storms& storms, Storm& storm, bool (*eq_sb_ok)(uint32_t sb),
                             uint8_t* eq_cons, std::string name)
    : hw_(hw), storms_(storms), storm_(storm), eq_sb_ok_(eq_sb_ok), eq_cons_(eq_cons), name_(std::move(name))
{
}

bool SlowpathQueue::read(uint32_t reg, uint32_t& value) const
{
    switch (reg + reg::STORM_PF_BASE) {
    case reg::STORM_SPQ_BASE_LO: value = regs_.spq_base_lo; return true;
    case reg::STORM_SPQ_BASE_HI: value = regs_.spq_base_hi; return true;
    case reg::STORM_SPQ_SIZE: value = regs_.spq_size; return true;
    case reg::STORM_ILT_BASE_LO: value = regs_.ilt_base_lo; return true;
    case reg::STORM_ILT_BASE_HI: value = regs_.ilt_base_hi; return true;
    case reg::STORM_ILT_CIDS: value = regs_.ilt_cids; return true;
    case reg::STORM_PF_ENABLE: value = regs_.enable; return true;
    default: return false;
    }
}

bool SlowpathQueue::write(uint32_t reg, uint32_t value)
{
    switch (reg + reg::STORM_PF_BASE) {
    case reg::STORM_SPQ_BASE_LO: regs_.spq_base_lo = value; return true;
    case reg::STORM_SPQ_BASE_HI: regs_.spq_base_hi = value; return true;
    case reg::STORM_SPQ_SIZE: regs_.spq_size = value; return true;
    case reg::STORM_ILT_BASE_LO: regs_.ilt_base_lo = value; return true;
    case reg::STORM_ILT_BASE_HI: regs_.ilt_base_hi = value; return true;
    case reg::STORM_ILT_CIDS: regs_.ilt_cids = value; return true;
    case reg::STORM_PF_ENABLE: regs_.enable = value & 1; return true;
    default: return false;
    }
}

uint16_t SlowpathQueue::eq_cons() const
{
    return static_cast<uint16_t>(
        std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(eq_cons_)).load(std::memory_order_acquire));
}

bool SlowpathQueue::eq_full() const
{
    return static_cast<uint16_t>(eq_.prod - eq_cons()) >= eq_.mask;
}

bool SlowpathQueue::can_take() const
{
    return !(started_ && eq_full()) && storms_.running();
}

void SlowpathQueue::poll()
{
    /* Until the driver enables the storm for the function and PGLUE lets
     * it master the bus, the doorbell just stays rung. */
    if (!storms_.running() || !regs_.enable || halted_ || !hw_.pglue().master_enabled())
        return;
    const uint32_t size = regs_.spq_size;
    if (!std::has_single_bit(size) || size > 0x10000)
        return;
    const uint64_t base = uint64_t{regs_.spq_base_hi} << 32 | regs_.spq_base_lo;
    const uint16_t prod = hw_.doorbell_prod(CID_SPQ);
    if (prod == refused_prod_)
        return;
    if (static_cast<uint16_t>(prod - cons_) > size) {
        refused_prod_ = prod;
        storm_.queue_error(QueueKind::spq, 0, QueueError::prod_past_ring);
        return;
    }
    refused_prod_ = NONE_REFUSED;
    while (cons_ != prod && storms_.running() && !halted_) {
        if (started_ && eq_full())
            break;
        SlowPathElement elem;
        const uint64_t addr = base + uint64_t{cons_ & (size - 1)} * sizeof(elem);
        cons_++;
        if (!hw_.dma().read(addr, &elem, sizeof(elem)))
            continue; /* DMA fault raised; nothing identifies the ramrod */
        if (storms_.take_lost_ramrod()) {
            log(LogLevel::notice, "storm: %s ramrod %u/%u echo %u lost (fault injection)", name_.c_str(),
                elem.hdr.protocol_id, elem.hdr.cmd_id, elem.hdr.echo);
            continue;
        }
        execute(elem);
    }
}

void SlowpathQueue::execute(const SlowPathElement& elem)
{
    const auto protocol = static_cast<ProtocolId>(elem.hdr.protocol_id);
    const bool common = protocol == ProtocolId::common;
    if (common && elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::pf_start))
        return start(elem);
    if (!started_) {
        log(LogLevel::err, "storm: %s ramrod %u/%u before PF_START", name_.c_str(), elem.hdr.protocol_id,
            elem.hdr.cmd_id);
        storm_.fw_assert(fw_assert::RAMROD_BEFORE_PF_START);
        return;
    }
    uint64_t data = 0;
    const FwReturn rc = storm_.execute(elem, data);
    post_eqe(elem.hdr, rc, data);
    if (common && elem.hdr.cmd_id == static_cast<uint8_t>(CommonCmd::pf_stop) && rc == FwReturn::ok) {
        started_ = false; /* the PF_STOP completion is the last EQE */
        storm_.stopped();
    }
}

void SlowpathQueue::start(const SlowPathElement& elem)
{
    if (started_) {
        post_eqe(elem.hdr, FwReturn::bad_state);
        return;
    }
    PfStartRamrodData d;
    if (!hw_.dma().read(from_regpair(elem.data_ptr), &d, sizeof(d)))
        return; /* DMA fault raised; there is no EQ to complete on */
    const uint32_t size = d.event_ring_size;
    const uint64_t base = from_regpair(d.event_ring_base);
    const bool ring_ok = std::has_single_bit(size) && size >= eth::MIN_RING_SIZE && size <= eth::MAX_RING_SIZE &&
                         eq_sb_ok_(d.event_ring_sb_id) && d.event_ring_sb_pi < PIS_PER_SB;
    if (!ring_ok) {
        log(LogLevel::err, "storm: %s PF_START with an unusable EQ (size %u, sb %u/%u)", name_.c_str(), size,
            d.event_ring_sb_id, d.event_ring_sb_pi);
        storm_.fw_assert(fw_assert::BAD_PF_START);
        return;
    }
    if (hw_.dma().map(base, size * sizeof(EventRingElement)) == nullptr)
        return; /* DMA fault raised */

    /* Both ends of the EQ restart at 0: a consumer a previous load left
     * must not be taken for a new one. */
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(eq_cons_)).store(0, std::memory_order_release);
    eq_ = EventQueue{base, static_cast<uint16_t>(size - 1), 0, d.event_ring_sb_id, d.event_ring_sb_pi};
    started_ = true;

    FwReturn rc = FwReturn::ok;
    if (d.hsi_major != HSI_VERSION_MAJOR) {
        log(LogLevel::err, "storm: %s PF_START for HSI %u, firmware speaks %u", name_.c_str(), d.hsi_major,
            HSI_VERSION_MAJOR);
        rc = FwReturn::invalid_param;
    } else {
        rc = storm_.start(d);
    }
    if (rc != FwReturn::ok) {
        post_eqe(elem.hdr, rc);
        started_ = false;
        return;
    }
    if (CID_SPQ < regs_.ilt_cids) {
        ConnContext ctx{};
        ctx.cid = CID_SPQ;
        ctx.type = static_cast<uint8_t>(ConnType::spq);
        ctx.active = 1;
        ctx.ring_base = make_regpair(uint64_t{regs_.spq_base_hi} << 32 | regs_.spq_base_lo);
        ctx.ring_size = regs_.spq_size;
        ctx.sb_id = d.event_ring_sb_id;
        ctx.sb_pi = d.event_ring_sb_pi;
        write_conn_context(ctx);
    }
    log(LogLevel::info, "storm: %s started, EQ of %u elements", name_.c_str(), size);
    post_eqe(elem.hdr, FwReturn::ok);
}

bool SlowpathQueue::write_conn_context(const ConnContext& ctx)
{
    return hw_.dma().write(ilt_base() + uint64_t{ctx.cid} * CONN_CONTEXT_SIZE, &ctx, sizeof(ctx));
}

bool SlowpathQueue::post_eqe(const RamrodHeader& hdr, FwReturn rc, uint64_t data, uint8_t flags)
{
    if (!started_ || eq_full())
        return false;
    EventRingElement eqe{};
    eqe.data = data;
    eqe.opcode = hdr.cmd_id;
    eqe.protocol_id = hdr.protocol_id;
    eqe.fw_return_code = static_cast<uint8_t>(rc);
    eqe.flags = flags;
    eqe.echo = hdr.echo;
    const uint64_t addr = eq_.base + uint64_t{static_cast<uint16_t>(eq_.prod & eq_.mask)} * sizeof(eqe);
    if (!hw_.dma().write(addr, &eqe, sizeof(eqe)))
        return false;
    eq_.prod++;
    hw_.cau().set_pi(eq_.sb, eq_.sb_pi, eq_.prod);
    if (rc != FwReturn::ok)
        log(LogLevel::info, "storm: %s ramrod %u/%u echo %u completed with %u", name_.c_str(), hdr.protocol_id,
            hdr.cmd_id, hdr.echo, eqe.fw_return_code);
    return true;
}

void SlowpathQueue::reset()
{
    regs_ = Registers{};
    eq_ = EventQueue{};
    started_ = false;
    halted_ = false;
    cons_ = 0;
    refused_prod_ = NONE_REFUSED;
}

} // namespace cna::fw
