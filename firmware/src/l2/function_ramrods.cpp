/* SPDX-License-Identifier: BSD-3-Clause
 * L2 ramrods on one function's objects: vports, Rx/Tx queues and
 * classification filters. Every field
 * is validated before anything changes: ids past the chip's limits are
 * invalid_param, ids past the PF's grant no_resource, objects in the wrong
 * state bad_state.
 */
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "base/clock.h"
#include "function/function.h"
#include "l2/function_firmware.h"
#include "hsi_switch.h"
#include "slowpath/storm_ram.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;
namespace iov = hsi::iov;

namespace {

bool valid_ring_size(uint32_t size)
{
    return std::has_single_bit(size) && size >= MIN_RING_SIZE && size <= MAX_RING_SIZE;
}

bool valid_mtu(uint32_t mtu) { return mtu >= MIN_MTU && mtu <= MAX_MTU; }

/* The started queue of `queues` a QUEUE_STOP names, in *queue; otherwise why
 * the ramrod fails. Rx and Tx queues are stopped under the same rules. */
template <class Queue, std::size_t N>
FwReturn queue_to_stop(std::array<Queue, N>& queues, const QueueStopRamrodData& d, uint32_t granted, Queue** queue)
{
    if (FwReturn rc = check_id(d.queue_id, N, granted); rc != FwReturn::ok)
        return rc;
    Queue& q = queues[d.queue_id];
    if (!q.started)
        return FwReturn::bad_state;
    if (q.vport != d.vport_id)
        return FwReturn::invalid_param;
    *queue = &q;
    return FwReturn::ok;
}

} // namespace

FwReturn check_id(uint32_t id, uint32_t chip_limit, uint32_t granted)
{
    if (id >= chip_limit)
        return FwReturn::invalid_param;
    return id < granted ? FwReturn::ok : FwReturn::no_resource;
}

FunctionFirmware::FunctionFirmware(FunctionHw& hw, StormRam& ram, uint32_t pf, const Grant& grant, uint8_t* rx_prods,
                                   PtpClock& clock)
    : hw_(hw), ram_(ram), pf_(pf), grant_(grant), rx_prods_(rx_prods), flows_(ram, pf), ptp_(clock, !hw.is_vf())
{
}

FwReturn FunctionFirmware::check_vport(uint8_t vport, bool want_started) const
{
    FwReturn rc = check_id(vport, MAX_VPORTS_PER_PF, grant_.num_vports);
    if (rc != FwReturn::ok)
        return rc;
    return l2_.vports[vport].started == want_started ? FwReturn::ok : FwReturn::bad_state;
}

FwReturn FunctionFirmware::check_sb(uint16_t sb, uint8_t pi) const
{
    if (pi >= PIS_PER_SB)
        return FwReturn::invalid_param;
    return check_id(sb, MAX_SB_PER_PF, grant_.num_sbs);
}

FwReturn FunctionFirmware::vport_start(const VportStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, false); rc != FwReturn::ok)
        return rc;
    if (!valid_mtu(d.mtu) || d.max_bds_per_packet > MAX_BDS_PER_PACKET)
        return FwReturn::invalid_param;
    const bool representor = d.flags & eswitch::vport_flags::REPRESENTOR;
    if ((d.flags & ~eswitch::vport_flags::REPRESENTOR) ||
        (representor && (hw_.is_vf() || d.represented_vf >= iov::MAX_VFS_PER_PF)))
        return FwReturn::invalid_param;
    if (representor && std::any_of(l2_.vports.begin(), l2_.vports.end(), [&](const Vport& other) {
            return other.started && other.represented_vf == d.represented_vf;
        }))
        return FwReturn::bad_state; /* the VF has its representor */
    Vport& v = l2_.vports[d.vport_id];
    v.started = true;
    v.active_rx = v.active_tx = false;
    v.rx_accept = accept::NONE;
    v.mtu = d.mtu;
    v.vlan_strip = d.vlan_strip != 0;
    v.rx_csum = d.rx_csum_en != 0;
    v.max_bds_per_packet = d.max_bds_per_packet ? d.max_bds_per_packet : 1;
    v.rss = Rss{};
    v.anti_spoof = v.tx_policy = false;
    v.port_vlan = 0;
    v.tx_rate = TxRateLimit{};
    v.link_down = false;
    v.represented_vf = representor ? d.represented_vf : Vport::NO_VF;
    v.stats = &vport_stats(d.vport_id);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::vport_update(const VportUpdateRamrodData& d)
{
    using namespace vport_update;
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if ((d.update_flags & UPDATE_MTU) && !valid_mtu(d.mtu))
        return FwReturn::invalid_param;
    if ((d.update_flags & UPDATE_PORT_VLAN) && d.port_vlan > 4095)
        return FwReturn::invalid_param;
    if ((d.update_flags & UPDATE_TX_RATE) && d.tx_rate_mbps > MAX_TX_RATE_MBPS)
        return FwReturn::invalid_param;
    bool rss_on = (d.update_flags & UPDATE_RSS) && d.rss_enable;
    if (rss_on) {
        for (uint16_t queue : d.rss_reta)
            if (FwReturn rc = check_id(queue, MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
                return rc;
    }

    Vport& v = l2_.vports[d.vport_id];
    if (d.update_flags & UPDATE_ACTIVE_RX)
        v.active_rx = d.active_rx != 0;
    if (d.update_flags & UPDATE_ACTIVE_TX)
        v.active_tx = d.active_tx != 0;
    if (d.update_flags & UPDATE_RX_MODE)
        v.rx_accept = d.rx_accept;
    if (d.update_flags & UPDATE_MTU)
        v.mtu = d.mtu;
    if (d.update_flags & UPDATE_VLAN_STRIP)
        v.vlan_strip = d.vlan_strip != 0;
    if (d.update_flags & UPDATE_ANTI_SPOOF)
        v.anti_spoof = d.anti_spoof != 0;
    if (d.update_flags & UPDATE_PORT_VLAN)
        v.port_vlan = d.port_vlan;
    if (d.update_flags & UPDATE_TX_RATE)
        v.tx_rate.set(d.tx_rate_mbps, monotonic_ns());
    if (d.update_flags & UPDATE_LINK_DOWN)
        v.link_down = d.link_down != 0;
    v.tx_policy = v.anti_spoof || v.port_vlan != 0 || v.tx_rate.limited() || v.link_down;
    if (d.update_flags & UPDATE_RSS) {
        v.rss.enabled = rss_on;
        v.rss.hash_types = d.rss_hash_types;
        std::memcpy(v.rss.reta.data(), d.rss_reta, sizeof(d.rss_reta));
        uint8_t key[Toeplitz::KEY_BYTES];
        std::memcpy(key, d.rss_key, sizeof(key));
        v.rss.toeplitz = rss_on ? std::make_unique<Toeplitz>(key) : nullptr;
    }
    uint32_t bit = 1u << d.vport_id;
    const bool receives = v.active_rx && !v.link_down;
    l2_.active_rx_vports = receives ? l2_.active_rx_vports | bit : l2_.active_rx_vports & ~bit;
    const bool cut_off = v.active_rx && v.link_down;
    l2_.link_down_vports = cut_off ? l2_.link_down_vports | bit : l2_.link_down_vports & ~bit;
    return FwReturn::ok;
}

FwReturn FunctionFirmware::vport_stop(const VportStopRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    Vport& v = l2_.vports[d.vport_id];
    if (v.rx_queues != 0 || v.tx_queues != 0)
        return FwReturn::bad_state;
    filters_.clear(v);
    flows_.clear(d.vport_id);
    v.started = v.active_rx = v.active_tx = false;
    v.rss = Rss{};
    l2_.active_rx_vports &= ~(1u << d.vport_id);
    l2_.link_down_vports &= ~(1u << d.vport_id);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::rx_queue_start(const RxQueueStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_id(d.queue_id, MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_sb(d.sb_id, d.sb_pi); rc != FwReturn::ok)
        return rc;
    if (!valid_ring_size(d.bd_ring_size) || !valid_ring_size(d.cqe_ring_size) || d.bd_max_bytes == 0)
        return FwReturn::invalid_param;
    if ((d.flags & ~rxq_flags::ALL) != 0)
        return FwReturn::invalid_param;
    RxQueue& q = l2_.rxqs[d.queue_id];
    if (q.started)
        return FwReturn::bad_state;
    q = RxQueue{true,
                d.vport_id,
                d.sb_pi,
                d.sb_id,
                d.bd_max_bytes,
                static_cast<uint16_t>(d.bd_ring_size - 1),
                static_cast<uint16_t>(d.cqe_ring_size - 1),
                0,
                0,
                DmaRing{from_regpair(d.bd_base), uint64_t{d.bd_ring_size} * sizeof(RxBd)},
                DmaRing{from_regpair(d.cqe_base), uint64_t{d.cqe_ring_size} * sizeof(RxCqe)},
                &rx_queue_stats(d.queue_id)};
    if (d.flags & rxq_flags::TIMESTAMP)
        q.stamps = DmaRing{from_regpair(d.cqe_base) + q.cqes.bytes, uint64_t{d.cqe_ring_size} * RX_TIMESTAMP_BYTES};
    l2_.vports[d.vport_id].rx_queues |= 1u << d.queue_id;
    update_sb_index(d.sb_id, d.sb_pi, 0);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::rx_queue_stop(const QueueStopRamrodData& d)
{
    RxQueue* rxq = nullptr;
    if (FwReturn rc = queue_to_stop(l2_.rxqs, d, grant_.num_rx_queues, &rxq); rc != FwReturn::ok)
        return rc;
    RxQueue& q = *rxq;
    q.started = false;
    l2_.vports[q.vport].rx_queues &= ~(1u << d.queue_id);
    zero_rx_prod(d.queue_id);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::tx_queue_start(const TxQueueStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_id(d.queue_id, MAX_QUEUES_PER_PF, grant_.num_tx_queues); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_sb(d.sb_id, d.sb_pi); rc != FwReturn::ok)
        return rc;
    if (!valid_ring_size(d.bd_ring_size))
        return FwReturn::invalid_param;
    TxQueue& q = l2_.txqs[d.queue_id];
    if (q.started)
        return FwReturn::bad_state;
    for (const TxQueue& other : l2_.txqs)
        if (other.started && other.cid == d.cid)
            return FwReturn::invalid_param;
    if (FwReturn rc = open_tx_connection(d); rc != FwReturn::ok)
        return rc;

    hw_.clear_doorbell(d.cid);
    q = TxQueue{true,     d.vport_id, d.sb_pi, d.sb_id, static_cast<uint16_t>(d.bd_ring_size - 1),
                0,        d.cid,      DmaRing{from_regpair(d.bd_base), uint64_t{d.bd_ring_size} * sizeof(TxBd)},
                &tx_queue_stats(d.queue_id)};
    l2_.vports[d.vport_id].tx_queues |= 1u << d.queue_id;
    l2_.started_txqs |= 1u << d.queue_id;
    update_sb_index(d.sb_id, d.sb_pi, 0);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::tx_queue_stop(const QueueStopRamrodData& d)
{
    TxQueue* txq = nullptr;
    if (FwReturn rc = queue_to_stop(l2_.txqs, d, grant_.num_tx_queues, &txq); rc != FwReturn::ok)
        return rc;
    TxQueue& q = *txq;
    close_tx_connection(q, d.queue_id); /* best effort: the queue stops either way */
    q.started = false;
    l2_.vports[q.vport].tx_queues &= ~(1u << d.queue_id);
    l2_.started_txqs &= ~(1u << d.queue_id);
    return FwReturn::ok;
}

FwReturn FunctionFirmware::filters_update(const FiltersUpdateRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (d.opcode == static_cast<uint8_t>(FilterOpcode::move))
        if (FwReturn rc = check_vport(d.dst_vport_id, true); rc != FwReturn::ok)
            return rc;
    return filters_.update(d);
}

void FunctionFirmware::zero_rx_prod(uint32_t queue)
{
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(rx_prods_ + queue * iro::RX_PROD_STRIDE))
        .store(0, std::memory_order_release);
}

void FunctionFirmware::reset_l2()
{
    for (Vport& vport : l2_.vports)
        filters_.clear(vport);
    flows_.reset();
    l2_ = L2State{};
}

} // namespace cna::fw
