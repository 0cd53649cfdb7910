/* SPDX-License-Identifier: BSD-3-Clause
 * L2 ramrods: vports, queues, classification; and the storms' statistics.
 */
#include "ecore_l2.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "ecore_log.h"
#include "ecore_spq.h"
#include "ecore_vf.h"
#include "hsi_switch.h"

namespace cna::ecore {

using namespace hsi::eth;

bool check_vport(Hwfn& hwfn, uint8_t vport_id)
{
    if (vport_id < hwfn.hw_info.resc.num_vports)
        return true;
    DP_ERR(hwfn, "vport %u is beyond the %u granted to this function", vport_id, hwfn.hw_info.resc.num_vports);
    return false;
}

namespace {

Status post_eth(Hwfn& hwfn, EthCmd cmd, const void* data, std::size_t len, uint32_t cid = hsi::CID_SPQ)
{
    return spq_post(hwfn, SpqRequest{hsi::ProtocolId::eth, static_cast<uint8_t>(cmd), cid, data, len});
}

bool check_ring(Hwfn& hwfn, const char* what, uint32_t size)
{
    if (size >= MIN_RING_SIZE && size <= MAX_RING_SIZE && (size & (size - 1)) == 0)
        return true;
    DP_ERR(hwfn, "%s of %u elements: need a power of two in [%u, %u]", what, size, MIN_RING_SIZE, MAX_RING_SIZE);
    return false;
}

Status check_queue(Hwfn& hwfn, const QueueStartParams& q, bool rx)
{
    const Resources& resc = hwfn.hw_info.resc;
    const uint32_t max_queues = rx ? resc.num_rx_queues : resc.num_tx_queues;
    if (!check_vport(hwfn, q.vport_id))
        return Status::inval;
    if (q.queue_id >= max_queues) {
        DP_ERR(hwfn, "%s queue %u is beyond the %u granted to this function", rx ? "Rx" : "Tx", q.queue_id, max_queues);
        return Status::inval;
    }
    if (q.sb_id >= resc.num_sbs) {
        DP_ERR(hwfn, "status block %u is beyond the %u granted to this function", q.sb_id, resc.num_sbs);
        return Status::inval;
    }
    return Status::success;
}

/* Forgets a stopped queue; false if the handle is not one of ours. */
bool remove_queue(Hwfn& hwfn, QueueHandle handle)
{
    L2Info& l2 = *hwfn.l2;
    std::lock_guard guard(l2.lock);
    return std::erase_if(l2.queues, [&](const auto& q) { return q.get() == handle; }) > 0;
}

bool known_queue(Hwfn& hwfn, QueueHandle handle, bool rx)
{
    L2Info& l2 = *hwfn.l2;
    std::lock_guard guard(l2.lock);
    return std::any_of(l2.queues.begin(), l2.queues.end(),
                       [&](const auto& q) { return q.get() == handle && q->rx == rx; });
}

Status queue_stop(Hwfn& hwfn, QueueHandle handle, bool rx)
{
    if (!hwfn.l2 || !known_queue(hwfn, handle, rx)) {
        DP_ERR(hwfn, "%s queue handle %p is not a started queue", rx ? "Rx" : "Tx", static_cast<void*>(handle));
        return Status::inval;
    }
    QueueStopRamrodData data{};
    data.vport_id = handle->vport_id;
    data.queue_id = handle->queue_id;
    Status rc = is_vf(hwfn) ? vf_queue_stop(hwfn, handle->queue_id, rx)
                            : post_eth(hwfn, rx ? EthCmd::rx_queue_stop : EthCmd::tx_queue_stop, &data, sizeof(data),
                                       handle->cid);
    if (rc == Status::success)
        remove_queue(hwfn, handle);
    return rc;
}

Status get_queue_stats(Hwfn& hwfn, Ptt& ptt, uint16_t queue_id, bool rx, QueueStats* stats)
{
    const uint32_t max_queues = rx ? hwfn.hw_info.resc.num_rx_queues : hwfn.hw_info.resc.num_tx_queues;
    if (queue_id >= max_queues) {
        DP_ERR(hwfn, "%s queue %u is beyond the %u granted to this function", rx ? "Rx" : "Tx", queue_id, max_queues);
        return Status::inval;
    }
    if (is_vf(hwfn)) {
        vf_get_queue_stats(hwfn, queue_id, rx, stats);
        return Status::success;
    }
    const uint32_t pf = hwfn.hw_info.pf_id;
    read_storm_stats(hwfn, ptt, rx ? hsi::iro::rx_queue_stats(pf, queue_id) : hsi::iro::tx_queue_stats(pf, queue_id),
                     stats);
    return Status::success;
}

} // namespace

Status l2_alloc(Hwfn& hwfn)
{
    hwfn.l2 = std::make_unique<L2Info>();
    return Status::success;
}

void l2_free(Hwfn& hwfn) { hwfn.l2.reset(); }

QueueHandle add_queue(Hwfn& hwfn, bool rx, const QueueStartParams& q, uint32_t cid)
{
    L2Info& l2 = *hwfn.l2;
    auto queue = std::make_unique<QueueCid>(QueueCid{rx, q.vport_id, q.queue_id, cid});
    std::lock_guard guard(l2.lock);
    l2.queues.push_back(std::move(queue));
    return l2.queues.back().get();
}

Status sp_vport_start(Hwfn& hwfn, const SpVportStartParams& p)
{
    if (!check_vport(hwfn, p.vport_id))
        return Status::inval;
    if (is_vf(hwfn))
        return vf_vport_start(hwfn, p);
    VportStartRamrodData data{};
    data.vport_id = p.vport_id;
    data.vlan_strip = p.vlan_strip;
    data.max_bds_per_packet = p.max_bds_per_packet;
    data.mtu = p.mtu;
    data.rx_csum_en = p.rx_csum;
    if (p.represented_vf) {
        data.flags = hsi::eswitch::vport_flags::REPRESENTOR;
        data.represented_vf = *p.represented_vf;
    }
    DP_VERBOSE(hwfn, osal::dp_module::L2, "vport %u, MTU %u", p.vport_id, p.mtu);
    return post_eth(hwfn, EthCmd::vport_start, &data, sizeof(data));
}

Status sp_vport_update(Hwfn& hwfn, const SpVportUpdateParams& p)
{
    if (!check_vport(hwfn, p.vport_id))
        return Status::inval;
    if (is_vf(hwfn))
        return vf_vport_update(hwfn, p);
    VportUpdateRamrodData data{};
    data.vport_id = p.vport_id;
    if (p.update_vport_active_rx_flg) {
        data.update_flags |= vport_update::UPDATE_ACTIVE_RX;
        data.active_rx = p.vport_active_rx_flg;
    }
    if (p.update_vport_active_tx_flg) {
        data.update_flags |= vport_update::UPDATE_ACTIVE_TX;
        data.active_tx = p.vport_active_tx_flg;
    }
    if (p.update_accept_flags) {
        data.update_flags |= vport_update::UPDATE_RX_MODE;
        data.rx_accept = p.rx_accept;
    }
    if (p.update_mtu) {
        data.update_flags |= vport_update::UPDATE_MTU;
        data.mtu = p.mtu;
    }
    if (p.update_vlan_strip) {
        data.update_flags |= vport_update::UPDATE_VLAN_STRIP;
        data.vlan_strip = p.vlan_strip;
    }
    if (p.rss_params != nullptr) {
        const RssParams& rss = *p.rss_params;
        data.update_flags |= vport_update::UPDATE_RSS;
        data.rss_enable = rss.enable;
        data.rss_hash_types = rss.hash_types;
        std::copy(rss.key.begin(), rss.key.end(), data.rss_key);
        std::copy(rss.reta.begin(), rss.reta.end(), data.rss_reta);
    }
    DP_VERBOSE(hwfn, osal::dp_module::L2, "vport %u, update flags 0x%x", p.vport_id, data.update_flags);
    return post_eth(hwfn, EthCmd::vport_update, &data, sizeof(data));
}

Status filter_accept_cmd(Hwfn& hwfn, uint8_t vport_id, uint16_t rx_accept)
{
    SpVportUpdateParams p;
    p.vport_id = vport_id;
    p.update_accept_flags = true;
    p.rx_accept = rx_accept;
    return sp_vport_update(hwfn, p);
}

Status sp_vport_stop(Hwfn& hwfn, uint8_t vport_id)
{
    if (!check_vport(hwfn, vport_id))
        return Status::inval;
    if (is_vf(hwfn))
        return vf_vport_stop(hwfn);
    VportStopRamrodData data{};
    data.vport_id = vport_id;
    return post_eth(hwfn, EthCmd::vport_stop, &data, sizeof(data));
}

Status eth_rx_queue_start(Hwfn& hwfn, const RxQueueStartParams& p, RxQueueStartRet* ret)
{
    Status rc = check_queue(hwfn, p.queue, true);
    if (rc != Status::success)
        return rc;
    if (!check_ring(hwfn, "Rx BD ring", p.bd_ring_size) || !check_ring(hwfn, "Rx CQE ring", p.cqe_ring_size))
        return Status::inval;
    if (is_vf(hwfn)) {
        rc = vf_rx_queue_start(hwfn, p, ret);
        if (rc == Status::success)
            ret->handle = add_queue(hwfn, true, p.queue, hsi::CID_SPQ);
        return rc;
    }

    /* The storm restarts the queue at 0: so must the producers it reads. */
    auto* prod = reinterpret_cast<volatile uint32_t*>(hwfn.dev->pci->gtt() + hsi::iro::gtt::rx_prod(p.queue.queue_id));
    osal::publish(prod, uint32_t{0});

    RxQueueStartRamrodData data{};
    data.vport_id = p.queue.vport_id;
    data.sb_pi = p.queue.sb_idx;
    data.queue_id = p.queue.queue_id;
    data.sb_id = p.queue.sb_id;
    data.bd_max_bytes = p.bd_max_bytes;
    data.bd_base = hsi::make_regpair(p.bd_ring_iova);
    data.cqe_base = hsi::make_regpair(p.cqe_ring_iova);
    data.bd_ring_size = p.bd_ring_size;
    data.cqe_ring_size = p.cqe_ring_size;
    data.flags = p.timestamp ? hsi::eth::rxq_flags::TIMESTAMP : 0;
    rc = post_eth(hwfn, EthCmd::rx_queue_start, &data, sizeof(data));
    if (rc != Status::success)
        return rc;
    ret->rx_prod_addr = prod;
    ret->handle = add_queue(hwfn, true, p.queue, hsi::CID_SPQ);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "Rx queue %u on vport %u, SB %u", p.queue.queue_id, p.queue.vport_id,
               p.queue.sb_id);
    return Status::success;
}

Status eth_tx_queue_start(Hwfn& hwfn, const TxQueueStartParams& p, TxQueueStartRet* ret)
{
    Status rc = check_queue(hwfn, p.queue, false);
    if (rc != Status::success)
        return rc;
    if (!check_ring(hwfn, "Tx BD ring", p.bd_ring_size))
        return Status::inval;
    if (is_vf(hwfn)) {
        rc = vf_tx_queue_start(hwfn, p, ret);
        if (rc == Status::success)
            ret->handle = add_queue(hwfn, false, p.queue, hsi::cid_tx_queue(p.queue.queue_id));
        return rc;
    }

    const uint32_t cid = hsi::cid_tx_queue(p.queue.queue_id);
    /* The storm restarts the queue at 0: so must the doorbell it polls. */
    volatile uint32_t* db = doorbell_addr(hwfn, cid);
    doorbell(db, 0);

    TxQueueStartRamrodData data{};
    data.vport_id = p.queue.vport_id;
    data.sb_pi = p.queue.sb_idx;
    data.queue_id = p.queue.queue_id;
    data.sb_id = p.queue.sb_id;
    data.bd_ring_size = p.bd_ring_size;
    data.bd_base = hsi::make_regpair(p.bd_ring_iova);
    data.cid = cid;
    rc = post_eth(hwfn, EthCmd::tx_queue_start, &data, sizeof(data), cid);
    if (rc != Status::success)
        return rc;
    ret->doorbell_addr = db;
    ret->handle = add_queue(hwfn, false, p.queue, cid);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "Tx queue %u on vport %u, cid %u, SB %u", p.queue.queue_id,
               p.queue.vport_id, cid, p.queue.sb_id);
    return Status::success;
}

Status eth_rx_queue_stop(Hwfn& hwfn, QueueHandle handle) { return queue_stop(hwfn, handle, true); }

Status eth_tx_queue_stop(Hwfn& hwfn, QueueHandle handle) { return queue_stop(hwfn, handle, false); }

Status sp_eth_filter_ucast(Hwfn& hwfn, const FilterUcast& f)
{
    if (is_vf(hwfn)) {
        if (!check_vport(hwfn, f.opcode == FilterOpcode::remove ? f.vport_to_remove_from : f.vport_to_add_to))
            return Status::inval;
        return vf_filter_ucast(hwfn, f);
    }
    const bool from_source = f.opcode == FilterOpcode::remove || f.opcode == FilterOpcode::move;
    FiltersUpdateRamrodData data{};
    data.vport_id = from_source ? f.vport_to_remove_from : f.vport_to_add_to;
    data.opcode = static_cast<uint8_t>(f.opcode);
    data.type = static_cast<uint8_t>(f.type);
    data.dst_vport_id = f.vport_to_add_to;
    std::copy(f.mac.begin(), f.mac.end(), data.mac);
    data.vlan = f.vlan;
    if (!check_vport(hwfn, data.vport_id) || !check_vport(hwfn, data.dst_vport_id))
        return Status::inval;
    DP_VERBOSE(hwfn, osal::dp_module::L2, "vport %u: filter opcode %u type %u %02x:%02x:%02x:%02x:%02x:%02x vlan %u",
               data.vport_id, data.opcode, data.type, f.mac[0], f.mac[1], f.mac[2], f.mac[3], f.mac[4], f.mac[5],
               f.vlan);
    return post_eth(hwfn, EthCmd::filters_update, &data, sizeof(data));
}

Status get_vport_stats(Hwfn& hwfn, Ptt& ptt, uint8_t vport_id, VportStats* stats)
{
    if (!check_vport(hwfn, vport_id))
        return Status::inval;
    if (is_vf(hwfn)) {
        vf_get_vport_stats(hwfn, stats);
        return Status::success;
    }
    read_storm_stats(hwfn, ptt, hsi::iro::vport_stats(hwfn.hw_info.pf_id, vport_id), stats);
    return Status::success;
}

Status get_rx_queue_stats(Hwfn& hwfn, Ptt& ptt, uint16_t queue_id, QueueStats* stats)
{
    return get_queue_stats(hwfn, ptt, queue_id, true, stats);
}

Status get_tx_queue_stats(Hwfn& hwfn, Ptt& ptt, uint16_t queue_id, QueueStats* stats)
{
    return get_queue_stats(hwfn, ptt, queue_id, false, stats);
}

} // namespace cna::ecore
