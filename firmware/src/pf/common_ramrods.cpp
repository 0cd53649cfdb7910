/* SPDX-License-Identifier: BSD-3-Clause
 * Common ramrods: PF_START creates the PF's event queue, PF_STOP retires it.
 */
#include <bit>

#include "function/function.h"
#include "pf/pf_firmware.h"
#include "slowpath/storm_ram.h"
#include "iov/pf_iov.h"
#include "slowpath/storms.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi;

void PfFirmware::pf_start(const SlowPathElement& elem)
{
    if (started_) {
        post_eqe(elem.hdr, FwReturn::bad_state);
        return;
    }
    PfStartRamrodData d;
    if (!read_data(from_regpair(elem.data_ptr), &d, sizeof(d)))
        return; /* DMA fault raised; there is no EQ to complete on */
    uint32_t size = d.event_ring_size;
    uint64_t base = from_regpair(d.event_ring_base);
    bool ring_ok = std::has_single_bit(size) && size >= eth::MIN_RING_SIZE && size <= eth::MAX_RING_SIZE &&
                   d.event_ring_sb_id == SP_SB_ID && d.event_ring_sb_pi < PIS_PER_SB;
    if (!ring_ok) {
        log(LogLevel::err, "storm: pf%u PF_START with an unusable EQ (size %u, sb %u/%u)", pf_, size,
            d.event_ring_sb_id, d.event_ring_sb_pi);
        raise_fw_assert(fw_assert::BAD_PF_START);
        return;
    }
    if (hw_.dma().map(base, size * sizeof(EventRingElement)) == nullptr)
        return; /* DMA fault raised */

    /* Both ends of the EQ and of every Rx producer restart at 0: values a
     * previous load left in storm RAM must not be taken for new ones. */
    ram_.write32(iro::eq_cons(pf_), 0);
    for (uint32_t q = 0; q < MAX_QUEUES_PER_PF; q++)
        ram_.write32(iro::rx_prod(pf_, q), 0);
    eq_ = EventQueue{base, static_cast<uint16_t>(size - 1), 0, d.event_ring_sb_pi};
    started_ = true;

    if (d.hsi_major != HSI_VERSION_MAJOR) {
        log(LogLevel::err, "storm: pf%u PF_START for HSI %u, firmware speaks %u", pf_, d.hsi_major,
            HSI_VERSION_MAJOR);
        post_eqe(elem.hdr, FwReturn::invalid_param);
        started_ = false;
        return;
    }
    for (uint32_t v = 0; v < MAX_VPORTS_PER_PF; v++)
        ram_.zero(iro::vport_stats(pf_, v), iro::VPORT_STATS_SIZE);
    ram_.zero(iro::rx_queue_stats(pf_, 0), MAX_QUEUES_PER_PF * 2 * iro::QUEUE_STATS_SIZE);
    ram_.zero(iro::roce_stats(pf_), iro::ROCE_STATS_SIZE);
    for (Vport& vport : l2_.vports)
        vport.filters.reserve(grant_.num_mac_filters + grant_.num_vlan_filters);

    if (CID_SPQ < regs_.ilt_cids) {
        ConnContext ctx{};
        ctx.cid = CID_SPQ;
        ctx.type = static_cast<uint8_t>(ConnType::spq);
        ctx.active = 1;
        ctx.ring_base = make_regpair(uint64_t{regs_.spq_base_hi} << 32 | regs_.spq_base_lo);
        ctx.ring_size = regs_.spq_size;
        ctx.sb_id = static_cast<uint16_t>(SP_SB_ID);
        ctx.sb_pi = d.event_ring_sb_pi;
        write_conn_context(ctx);
    }
    log(LogLevel::info, "storm: pf%u started, EQ of %u elements", pf_, size);
    post_eqe(elem.hdr, FwReturn::ok);
}

FwReturn PfFirmware::pf_stop()
{
    for (const Vport& vport : l2_.vports)
        if (vport.started)
            return FwReturn::bad_state;
    if (roce_.active())
        return FwReturn::bad_state;
    log(LogLevel::info, "storm: pf%u stopped", pf_);
    return FwReturn::ok;
}

FwReturn PfFirmware::common_ramrod(uint8_t cmd, uint64_t data_ptr)
{
    switch (static_cast<CommonCmd>(cmd)) {
    case CommonCmd::pf_stop: return pf_stop();
    case CommonCmd::empty: return FwReturn::ok;
    case CommonCmd::vf_cleanup: {
        VfCleanupRamrodData d;
        if (!read_data(data_ptr, &d, sizeof(d)))
            return FwReturn::dma_error;
        return iov_ != nullptr ? iov_->final_cleanup(d.vf) : FwReturn::invalid_param;
    }
    case CommonCmd::pf_start: break; /* handled before an EQ exists */
    }
    return FwReturn::invalid_command;
}

bool PfFirmware::write_conn_context(const ConnContext& ctx)
{
    uint64_t ilt = uint64_t{regs_.ilt_base_hi} << 32 | regs_.ilt_base_lo;
    return hw_.dma().write(ilt + uint64_t{ctx.cid} * CONN_CONTEXT_SIZE, &ctx, sizeof(ctx));
}

} // namespace cna::fw
