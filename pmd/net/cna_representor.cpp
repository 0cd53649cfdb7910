/* SPDX-License-Identifier: BSD-3-Clause
 * VF representors (representor=): with them the PF puts its port's switch
 * in switchdev mode (ecore_switch_api.h), and each representor is an ethdev
 * of the PF's process on a vport of the PF that represents its VF. What
 * the VF sends and no transfer rule takes arrives on the representor; what
 * the representor sends reaches the VF. Its one queue pair is the PF's
 * (the top of L2's share), its statistics are its VF's, its link its PF's.
 * Transfer rules made on it are the PF's (cna_flow_transfer.cpp).
 */
#include <cerrno>
#include <cstdio>
#include <new>

#include <rte_malloc.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rdma_port.h"
#include "cna_rxtx.h"
#include "ecore_iov_api.h"
#include "ecore_l2_api.h"
#include "ecore_switch_api.h"

namespace cna::net {
namespace {

/* Every frame the switch sends a representor is for it. */
constexpr uint16_t ACCEPT_ALL = hsi::eth::accept::UCAST_MATCHED | hsi::eth::accept::UCAST_UNMATCHED |
                                hsi::eth::accept::MCAST_MATCHED | hsi::eth::accept::MCAST_UNMATCHED |
                                hsi::eth::accept::BCAST;

ecore::Hwfn& pf_hwfn(const Representor* rep) { return rep->pf->edev.hwfn; }

QueueSite site_of(Representor* rep) { return {pf_hwfn(rep), rep->vport_id, rep->queue_id, rep->sb}; }

int rep_configure(rte_eth_dev* dev)
{
    const rte_eth_dev_data* data = dev->data;
    if (data->nb_rx_queues > 1 || data->nb_tx_queues > 1) {
        PMD_DEV_LOG(ERR, dev, "%u Rx / %u Tx queues requested: a representor has one queue pair",
                    data->nb_rx_queues, data->nb_tx_queues);
        return -EINVAL;
    }
    return 0;
}

int rep_infos_get(rte_eth_dev* dev, rte_eth_dev_info* info)
{
    const Representor* rep = representor_of(dev);
    port_limits(info);
    info->max_rx_queues = info->max_tx_queues = 1;
    info->max_mac_addrs = 1;
    info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER | RTE_ETH_RX_OFFLOAD_CHECKSUM;
    info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    info->switch_info.name = rep->pf->switch_name.c_str();
    info->switch_info.domain_id = rep->pf->switch_domain;
    info->switch_info.port_id = switch_port_of_representor(rep->vf);
    return 0;
}

void vport_teardown(rte_eth_dev* dev)
{
    Representor* rep = representor_of(dev);
    if (!rep->vport_started)
        return;
    const bool asked = !removed(rep->pf);
    ecore::SpVportUpdateParams inactive;
    inactive.vport_id = rep->vport_id;
    inactive.update_vport_active_rx_flg = inactive.update_vport_active_tx_flg = true;
    if (ecore::Status st = asked ? ecore::sp_vport_update(pf_hwfn(rep), inactive) : ecore::Status::success;
        st != ecore::Status::success)
        PMD_DEV_LOG(WARNING, dev, "vport deactivation: %s", ecore::status_name(st));
    if (auto* txq = static_cast<TxQueue*>(dev->data->tx_queues[0]))
        stop_tx_queue_at(dev, txq, rep->pf);
    if (auto* rxq = static_cast<RxQueue*>(dev->data->rx_queues[0]))
        stop_rx_queue_at(dev, rxq, rep->pf);
    if (ecore::Status st = asked ? ecore::sp_vport_stop(pf_hwfn(rep), rep->vport_id) : ecore::Status::success;
        st != ecore::Status::success)
        PMD_DEV_LOG(WARNING, dev, "vport stop: %s", ecore::status_name(st));
    rep->vport_started = false;
}

int rep_start(rte_eth_dev* dev)
{
    Representor* rep = representor_of(dev);
    rte_eth_dev_data* data = dev->data;
    auto* rxq = data->nb_rx_queues == 1 ? static_cast<RxQueue*>(data->rx_queues[0]) : nullptr;
    auto* txq = data->nb_tx_queues == 1 ? static_cast<TxQueue*>(data->tx_queues[0]) : nullptr;
    if (rxq == nullptr || txq == nullptr || rxq->deferred_start || txq->deferred_start) {
        PMD_DEV_LOG(ERR, dev, "a representor starts with its queue pair set up, neither queue deferred");
        return -EINVAL;
    }
    ecore::SpVportStartParams vp;
    vp.vport_id = rep->vport_id;
    vp.mtu = data->mtu;
    vp.max_bds_per_packet =
        (data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER) ? hsi::eth::MAX_BDS_PER_PACKET : 1;
    vp.rx_csum = data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_CHECKSUM;
    vp.represented_vf = static_cast<uint8_t>(rep->vf);
    if (ecore::Status st = ecore::sp_vport_start(pf_hwfn(rep), vp); st != ecore::Status::success) {
        PMD_DEV_LOG(ERR, dev, "vport %u for VF %u: %s", rep->vport_id, rep->vf, ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    rep->vport_started = true;
    int rc = start_rx_queue_at(dev, rxq, site_of(rep));
    if (rc == 0)
        rc = start_tx_queue_at(dev, txq, site_of(rep));
    if (rc == 0) {
        ecore::SpVportUpdateParams active;
        active.vport_id = rep->vport_id;
        active.update_vport_active_rx_flg = active.vport_active_rx_flg = true;
        active.update_vport_active_tx_flg = active.vport_active_tx_flg = true;
        active.update_accept_flags = true;
        active.rx_accept = ACCEPT_ALL;
        rc = ecore::status_to_errno(ecore::sp_vport_update(pf_hwfn(rep), active));
    }
    if (rc != 0) {
        PMD_DEV_LOG(ERR, dev, "start failed: %s", strerror(-rc));
        vport_teardown(dev);
        return rc;
    }
    osal::PciFunction* adapter = inline_adapter(rep->pf);
    rxq->inline_adapter = adapter;
    txq->inline_adapter = adapter;
    select_fastpath(dev, adapter != nullptr);
    return 0;
}

int rep_stop(rte_eth_dev* dev)
{
    dev->data->dev_started = 0;
    vport_teardown(dev);
    return 0;
}

void release_sb(Representor* rep)
{
    if (!rep->sb.mem)
        return;
    PortPtt ptt(rep->pf);
    if (ptt)
        ecore::int_sb_release(pf_hwfn(rep), *ptt, rep->sb.info);
    rep->sb.mem.release();
}

int rep_close(rte_eth_dev* dev)
{
    if (rte_eal_process_type() != RTE_PROC_PRIMARY)
        return 0;
    Representor* rep = representor_of(dev);
    vport_teardown(dev);
    if (dev->data->nb_rx_queues != 0)
        rx_queue_release(dev, 0);
    if (dev->data->nb_tx_queues != 0)
        tx_queue_release(dev, 0);
    dev->data->nb_rx_queues = dev->data->nb_tx_queues = 0;
    rte_flow_error error{};
    if (transfer_flows_flush(dev, &error) != 0)
        PMD_DEV_LOG(WARNING, dev, "its transfer rules: %s", error.message ? error.message : "not all deleted");
    release_sb(rep);
    EthPort* pf = rep->pf;
    bool last;
    {
        std::lock_guard guard(pf->switch_lock);
        std::erase(pf->representors, dev);
        last = pf->representors.empty();
    }
    PMD_DEV_LOG(INFO, dev, "closed");
    rep->~Representor();
    if (last)
        leave_switchdev(pf);
    return 0;
}

int rep_link_update(rte_eth_dev* dev, int)
{
    rte_eth_link link{};
    rte_eth_linkstatus_get(representor_of(dev)->pf->eth_dev, &link);
    return rte_eth_linkstatus_set(dev, &link);
}

int takes_every_frame(rte_eth_dev*) { return 0; }

int refuse_filtering(rte_eth_dev* dev)
{
    PMD_DEV_LOG(DEBUG, dev, "a representor takes every frame the switch sends it: no Rx filtering");
    return -ENOTSUP;
}

int rep_mtu_set(rte_eth_dev* dev, uint16_t mtu)
{
    Representor* rep = representor_of(dev);
    if (!rep->vport_started)
        return 0; /* rep_start passes data->mtu to the vport */
    ecore::SpVportUpdateParams p;
    p.vport_id = rep->vport_id;
    p.update_mtu = true;
    p.mtu = mtu;
    return ecore::status_to_errno(ecore::sp_vport_update(pf_hwfn(rep), p));
}

eth_dev_ops make_ops()
{
    eth_dev_ops ops{};
    ops.dev_configure = rep_configure;
    ops.dev_start = rep_start;
    ops.dev_stop = rep_stop;
    ops.dev_close = rep_close;
    ops.dev_infos_get = rep_infos_get;
    ops.link_update = rep_link_update;
    ops.promiscuous_enable = takes_every_frame;
    ops.promiscuous_disable = refuse_filtering;
    ops.allmulticast_enable = takes_every_frame;
    ops.allmulticast_disable = refuse_filtering;
    ops.stats_get = representor_stats_get;
    ops.stats_reset = representor_stats_reset;
    ops.xstats_get = representor_xstats_get;
    ops.xstats_get_names = representor_xstats_get_names;
    ops.xstats_reset = representor_stats_reset;
    ops.mtu_set = rep_mtu_set;
    ops.rx_queue_setup = rx_queue_setup;
    ops.rx_queue_release = rx_queue_release;
    ops.tx_queue_setup = tx_queue_setup;
    ops.tx_queue_release = tx_queue_release;
    ops.rxq_info_get = rxq_info_get;
    ops.txq_info_get = txq_info_get;
    ops.flow_ops_get = flow_ops_get;
    return ops;
}

struct RepresentorParams {
    EthPort* pf;
    uint16_t vf;
    uint8_t vport_id;
    uint16_t queue_id;
};

int rep_init(rte_eth_dev* dev, void* arg)
{
    const auto* p = static_cast<const RepresentorParams*>(arg);
    auto* rep = new (dev->data->dev_private) Representor{};
    rep->pf = p->pf;
    rep->vf = p->vf;
    rep->vport_id = p->vport_id;
    rep->queue_id = p->queue_id;
    dev->data->mac_addrs = static_cast<rte_ether_addr*>(rte_zmalloc(dev->data->name, sizeof(rte_ether_addr), 0));
    PortPtt ptt(p->pf);
    int rc = dev->data->mac_addrs == nullptr ? -ENOMEM : !ptt ? -EBUSY : rep->sb.mem.alloc(sizeof(hsi::StatusBlock), "rep_sb");
    if (rc == 0)
        rc = ecore::status_to_errno(
            ecore::int_sb_init(pf_hwfn(rep), *ptt, rep->sb.info, rep->sb.mem.va(), rep->sb.mem.iova(), rep->queue_id));
    if (rc != 0) {
        rep->~Representor();
        return rc;
    }
    /* A locally administered address of its own, for the VF it represents. */
    rte_ether_addr& mac = dev->data->mac_addrs[0];
    mac = p->pf->eth_dev->data->mac_addrs[0];
    mac.addr_bytes[0] |= RTE_ETHER_LOCAL_ADMIN_ADDR;
    mac.addr_bytes[5] = static_cast<uint8_t>(mac.addr_bytes[5] + 1 + p->vf);
    dev->data->dev_flags |= RTE_ETH_DEV_REPRESENTOR;
    dev->data->representor_id = p->vf;
    dev->data->backer_port_id = p->pf->eth_dev->data->port_id;
    dev->data->mtu = RTE_ETHER_MTU;
    dev->dev_ops = &cna_representor_ops;
    set_fastpath_ops(dev);
    return 0;
}

} // namespace

const eth_dev_ops cna_representor_ops = make_ops();

int create_representors(EthPort* pf)
{
    const std::vector<uint16_t>& vfs = pf->devargs.representors;
    if (vfs.empty())
        return 0;
    ecore::Hwfn& hwfn = pf->edev.hwfn;
    if (max_queue_pairs(pf) == 0 || vfs.size() + 1 > hwfn.hw_info.resc.num_vports) {
        PMD_LOG(ERR, pf, "%zu representor(s) take a queue pair and a vport each, the port one of each too: the "
                         "PF has %u queue pairs and %u vports",
                vfs.size(), l2_queue_pairs(pf), hwfn.hw_info.resc.num_vports);
        return -ENOSPC;
    }
    if (ecore::Status st = ecore::switchdev_enable(hwfn, pf->devargs.switch_rules); st != ecore::Status::success) {
        PMD_LOG(ERR, pf, "the port switch refused switchdev mode: %s", ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    for (std::size_t i = 0; i < vfs.size(); i++) {
        const std::string name = pf->name + "_representor_vf" + std::to_string(vfs[i]);
        RepresentorParams params{pf, vfs[i], static_cast<uint8_t>(VPORT_ID + 1 + i),
                                 static_cast<uint16_t>(max_queue_pairs(pf) + i)};
        const int rc = rte_eth_dev_create(pf->eth_dev->device, name.c_str(), sizeof(Representor), nullptr, nullptr,
                                          rep_init, &params);
        if (rc != 0) {
            PMD_LOG(ERR, pf, "representor of VF %u: %s", vfs[i], strerror(-rc));
            close_representors(pf);
            return rc;
        }
        std::lock_guard guard(pf->switch_lock);
        pf->representors.push_back(rte_eth_dev_allocated(name.c_str()));
    }
    PMD_LOG(INFO, pf, "port switch in switchdev mode, %zu representor(s)", vfs.size());
    return 0;
}

void leave_switchdev(EthPort* pf)
{
    std::lock_guard guard(pf->switch_lock);
    if (!ecore::switchdev_enabled(pf->edev.hwfn))
        return;
    /* Legacy mode takes the adapter's rules with it; their handles stay
     * the application's. */
    pf->orphaned_flows.merge(pf->transfer_flows);
    const ecore::Status st = removed(pf) ? ecore::Status::success : ecore::switchdev_disable(pf->edev.hwfn);
    if (st != ecore::Status::success)
        PMD_LOG(WARNING, pf, "the port switch back to legacy mode: %s", ecore::status_name(st));
    else
        PMD_LOG(INFO, pf, "the port switch is back in legacy mode: its last representor closed");
}

void close_representors(EthPort* pf)
{
    for (;;) {
        rte_eth_dev* dev = nullptr;
        {
            std::lock_guard guard(pf->switch_lock);
            if (!pf->representors.empty())
                dev = pf->representors.back();
        }
        if (dev == nullptr)
            break;
        const uint16_t port_id = dev->data->port_id;
        if (dev->data->dev_started)
            rte_eth_dev_stop(port_id);
        rte_eth_dev_close(port_id);
    }
    leave_switchdev(pf); /* a PF whose representors all failed to come */
}

int representor_info_get(rte_eth_dev* dev, rte_eth_representor_info* info)
{
    const uint32_t vfs = port_of(dev)->devargs.vfs;
    if (vfs == 0)
        return 0;
    if (info == nullptr)
        return 1;
    info->controller = 0;
    info->pf = 0;
    if (info->nb_ranges_alloc < 1)
        return 1;
    rte_eth_representor_range& r = info->ranges[0];
    r.type = RTE_ETH_REPRESENTOR_VF;
    r.controller = 0;
    r.pf = 0;
    r.vf = 0;
    r.id_base = 0;
    r.id_end = vfs - 1;
    snprintf(r.name, sizeof(r.name), "pf0vf[0-%u]", vfs - 1);
    info->nb_ranges = 1;
    return 1;
}

} // namespace cna::net
