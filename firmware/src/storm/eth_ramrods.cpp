/* SPDX-License-Identifier: BSD-3-Clause
 * L2 ramrods: vports, Rx/Tx queues and classification filters. Every field
 * is validated before anything changes: ids past the chip's limits are
 * invalid_param, ids past the PF's grant no_resource, objects in the wrong
 * state bad_state.
 */
#include <array>
#include <bit>
#include <cstring>

#include "pci/function.h"
#include "storm/pf_storm.h"
#include "storm/storm_ram.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;

namespace {

bool valid_ring_size(uint32_t size)
{
    return std::has_single_bit(size) && size >= MIN_RING_SIZE && size <= MAX_RING_SIZE;
}

bool valid_mtu(uint32_t mtu) { return mtu >= MIN_MTU && mtu <= MAX_MTU; }

FwReturn check_id(uint32_t id, uint32_t chip_limit, uint32_t granted)
{
    if (id >= chip_limit)
        return FwReturn::invalid_param;
    return id < granted ? FwReturn::ok : FwReturn::no_resource;
}

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

/* Reads the ramrod's data from host memory and runs its handler. */
template <typename Data> FwReturn PfStorm::run_eth(uint64_t ptr, FwReturn (PfStorm::*handler)(const Data&))
{
    Data data;
    if (!read_data(ptr, &data, sizeof(data)))
        return FwReturn::dma_error;
    return (this->*handler)(data);
}

FwReturn PfStorm::eth_ramrod(uint8_t cmd, uint64_t ptr)
{
    switch (static_cast<EthCmd>(cmd)) {
    case EthCmd::vport_start: return run_eth(ptr, &PfStorm::vport_start);
    case EthCmd::vport_update: return run_eth(ptr, &PfStorm::vport_update);
    case EthCmd::vport_stop: return run_eth(ptr, &PfStorm::vport_stop);
    case EthCmd::rx_queue_start: return run_eth(ptr, &PfStorm::rx_queue_start);
    case EthCmd::rx_queue_stop: return run_eth(ptr, &PfStorm::rx_queue_stop);
    case EthCmd::tx_queue_start: return run_eth(ptr, &PfStorm::tx_queue_start);
    case EthCmd::tx_queue_stop: return run_eth(ptr, &PfStorm::tx_queue_stop);
    case EthCmd::filters_update: return run_eth(ptr, &PfStorm::filters_update);
    case EthCmd::flow_rule_add: return run_eth(ptr, &PfStorm::flow_rule_add);
    case EthCmd::flow_rule_del: return run_eth(ptr, &PfStorm::flow_rule_del);
    }
    return FwReturn::invalid_command;
}

FwReturn PfStorm::check_vport(uint8_t vport, bool want_started) const
{
    FwReturn rc = check_id(vport, MAX_VPORTS_PER_PF, grant_.num_vports);
    if (rc != FwReturn::ok)
        return rc;
    return l2_.vports[vport].started == want_started ? FwReturn::ok : FwReturn::bad_state;
}

FwReturn PfStorm::check_sb(uint16_t sb, uint8_t pi) const
{
    if (pi >= PIS_PER_SB)
        return FwReturn::invalid_param;
    return check_id(sb, MAX_SB_PER_PF, grant_.num_sbs);
}

FwReturn PfStorm::vport_start(const VportStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, false); rc != FwReturn::ok)
        return rc;
    if (!valid_mtu(d.mtu) || d.max_bds_per_packet > MAX_BDS_PER_PACKET)
        return FwReturn::invalid_param;
    Vport& v = l2_.vports[d.vport_id];
    v.started = true;
    v.active_rx = v.active_tx = false;
    v.rx_accept = accept::NONE;
    v.mtu = d.mtu;
    v.vlan_strip = d.vlan_strip_en != 0;
    v.rx_csum = d.rx_csum_en != 0;
    v.max_bds_per_packet = d.max_bds_per_packet ? d.max_bds_per_packet : 1;
    v.rss = Rss{};
    v.stats = &ram_.vport_stats(pf_, d.vport_id);
    return FwReturn::ok;
}

FwReturn PfStorm::vport_update(const VportUpdateRamrodData& d)
{
    using namespace vport_update;
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if ((d.update_flags & UPDATE_MTU) && !valid_mtu(d.mtu))
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
        v.vlan_strip = d.vlan_strip_en != 0;
    if (d.update_flags & UPDATE_RSS) {
        v.rss.enabled = rss_on;
        v.rss.hash_types = d.rss_hash_types;
        std::memcpy(v.rss.reta.data(), d.rss_reta, sizeof(d.rss_reta));
        uint8_t key[Toeplitz::KEY_BYTES];
        std::memcpy(key, d.rss_key, sizeof(key));
        v.rss.toeplitz = rss_on ? std::make_unique<Toeplitz>(key) : nullptr;
    }
    uint32_t bit = 1u << d.vport_id;
    l2_.active_rx_vports = v.active_rx ? l2_.active_rx_vports | bit : l2_.active_rx_vports & ~bit;
    return FwReturn::ok;
}

FwReturn PfStorm::vport_stop(const VportStopRamrodData& d)
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
    return FwReturn::ok;
}

FwReturn PfStorm::rx_queue_start(const RxQueueStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_id(d.queue_id, MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_sb(d.sb_id, d.sb_pi); rc != FwReturn::ok)
        return rc;
    if (!valid_ring_size(d.bd_ring_size) || !valid_ring_size(d.cqe_ring_size) || d.bd_max_bytes == 0)
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
                &ram_.rx_queue_stats(pf_, d.queue_id)};
    l2_.vports[d.vport_id].rx_queues |= 1u << d.queue_id;
    update_sb_index(d.sb_id, d.sb_pi, 0);
    return FwReturn::ok;
}

FwReturn PfStorm::rx_queue_stop(const QueueStopRamrodData& d)
{
    RxQueue* rxq = nullptr;
    if (FwReturn rc = queue_to_stop(l2_.rxqs, d, grant_.num_rx_queues, &rxq); rc != FwReturn::ok)
        return rc;
    RxQueue& q = *rxq;
    q.started = false;
    l2_.vports[q.vport].rx_queues &= ~(1u << d.queue_id);
    ram_.write32(iro::rx_prod(pf_, d.queue_id), 0);
    return FwReturn::ok;
}

FwReturn PfStorm::tx_queue_start(const TxQueueStartRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_id(d.queue_id, MAX_QUEUES_PER_PF, grant_.num_tx_queues); rc != FwReturn::ok)
        return rc;
    if (FwReturn rc = check_sb(d.sb_id, d.sb_pi); rc != FwReturn::ok)
        return rc;
    if (!valid_ring_size(d.bd_ring_size) || d.cid == CID_SPQ || d.cid >= MAX_CIDS_PER_PF)
        return FwReturn::invalid_param;
    if (d.cid >= regs_.ilt_cids)
        return FwReturn::no_resource;
    TxQueue& q = l2_.txqs[d.queue_id];
    if (q.started)
        return FwReturn::bad_state;
    for (const TxQueue& other : l2_.txqs)
        if (other.started && other.cid == d.cid)
            return FwReturn::invalid_param;

    ConnContext ctx{};
    ctx.cid = d.cid;
    ctx.type = static_cast<uint8_t>(ConnType::eth_tx);
    ctx.active = 1;
    ctx.queue_id = d.queue_id;
    ctx.ring_base = d.bd_base;
    ctx.ring_size = d.bd_ring_size;
    ctx.sb_id = d.sb_id;
    ctx.sb_pi = d.sb_pi;
    ctx.vport_id = d.vport_id;
    if (!write_conn_context(ctx))
        return FwReturn::dma_error;

    hw_.clear_doorbell(d.cid);
    q = TxQueue{true,     d.vport_id, d.sb_pi, d.sb_id, static_cast<uint16_t>(d.bd_ring_size - 1),
                0,        d.cid,      DmaRing{from_regpair(d.bd_base), uint64_t{d.bd_ring_size} * sizeof(TxBd)},
                &ram_.tx_queue_stats(pf_, d.queue_id)};
    l2_.vports[d.vport_id].tx_queues |= 1u << d.queue_id;
    l2_.started_txqs |= 1u << d.queue_id;
    update_sb_index(d.sb_id, d.sb_pi, 0);
    return FwReturn::ok;
}

FwReturn PfStorm::tx_queue_stop(const QueueStopRamrodData& d)
{
    TxQueue* txq = nullptr;
    if (FwReturn rc = queue_to_stop(l2_.txqs, d, grant_.num_tx_queues, &txq); rc != FwReturn::ok)
        return rc;
    TxQueue& q = *txq;
    ConnContext ctx{};
    ctx.cid = q.cid;
    ctx.type = static_cast<uint8_t>(ConnType::eth_tx);
    ctx.queue_id = d.queue_id;
    ctx.vport_id = q.vport;
    write_conn_context(ctx); /* best effort: the queue stops either way */
    q.started = false;
    l2_.vports[q.vport].tx_queues &= ~(1u << d.queue_id);
    l2_.started_txqs &= ~(1u << d.queue_id);
    return FwReturn::ok;
}

FwReturn PfStorm::filters_update(const FiltersUpdateRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (d.opcode == static_cast<uint8_t>(FilterOpcode::move))
        if (FwReturn rc = check_vport(d.dst_vport_id, true); rc != FwReturn::ok)
            return rc;
    return filters_.update(d);
}

FwReturn PfStorm::flow_rule_add(const FlowRuleAddRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (d.actions & flow_action::QUEUE)
        if (FwReturn rc = check_id(d.queue, MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
            return rc;
    if (d.actions & flow_action::RSS)
        for (uint32_t i = 0; i < d.rss_queue_count && i < FLOW_MAX_RSS_QUEUES; i++)
            if (FwReturn rc = check_id(d.rss_queues[i], MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
                return rc;
    uint32_t rule_id = 0;
    FwReturn rc = flows_.add(d, &rule_id);
    if (rc == FwReturn::ok)
        completion_data_ = rule_id;
    return rc;
}

FwReturn PfStorm::flow_rule_del(const FlowRuleDelRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    return flows_.remove(d);
}

} // namespace cna::fw
