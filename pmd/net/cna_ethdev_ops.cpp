/* SPDX-License-Identifier: BSD-3-Clause
 * The ethdev ops table of net_cna, device information and MTU.
 */
#include "cna_ethdev_ops.h"

#include <cerrno>
#include <cstdio>

#include "cna_log.h"
#include "cna_rxtx.h"
#include "ecore_l2_api.h"

namespace cna::net {
namespace {

constexpr uint64_t RX_OFFLOADS = RTE_ETH_RX_OFFLOAD_SCATTER | RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
                                 RTE_ETH_RX_OFFLOAD_UDP_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
                                 RTE_ETH_RX_OFFLOAD_VLAN_STRIP | RTE_ETH_RX_OFFLOAD_VLAN_FILTER |
                                 RTE_ETH_RX_OFFLOAD_RSS_HASH | RTE_ETH_RX_OFFLOAD_TIMESTAMP;
constexpr uint64_t TX_OFFLOADS = RTE_ETH_TX_OFFLOAD_MULTI_SEGS | RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
                                 RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_VLAN_INSERT |
                                 RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;

int dev_infos_get(rte_eth_dev* dev, rte_eth_dev_info* info)
{
    const EthPort* port = port_of(dev);
    const ecore::HwInfo& hw = port->edev.hwfn.hw_info;
    port_limits(info);
    const uint32_t max_queues = max_queue_pairs(port);
    info->max_rx_queues = static_cast<uint16_t>(max_queues);
    info->max_tx_queues = static_cast<uint16_t>(max_queues);
    info->max_mac_addrs = max_unicast_macs(port);
    info->rx_offload_capa = RX_OFFLOADS;
    info->tx_offload_capa = TX_OFFLOADS;
    info->reta_size = hsi::eth::rss::RETA_SIZE;
    info->hash_key_size = hsi::eth::rss::KEY_DWORDS * 4;
    info->flow_type_rss_offloads = rss_offloads_supported();
    info->speed_capa = ethdev_speed_capa(hw.speed_capabilities);
    info->dev_capa = RTE_ETH_DEV_CAPA_RUNTIME_RX_QUEUE_SETUP | RTE_ETH_DEV_CAPA_RUNTIME_TX_QUEUE_SETUP;
    if (port->switch_domain != RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID) {
        info->switch_info.name = port->switch_name.c_str();
        info->switch_info.domain_id = port->switch_domain;
        info->switch_info.port_id = is_vf(port) ? switch_port_of_vf(port->devargs.vf) : UPLINK_SWITCH_PORT;
    }
    return 0;
}

} // namespace

void port_limits(rte_eth_dev_info* info)
{
    info->min_mtu = hsi::eth::MIN_MTU;
    info->max_mtu = hsi::eth::MAX_MTU;
    info->min_rx_bufsize = 64;
    info->max_rx_pktlen = max_frame_len(hsi::eth::MAX_MTU);
    info->rx_desc_lim.nb_max = hsi::eth::MAX_RING_SIZE;
    info->rx_desc_lim.nb_min = hsi::eth::MIN_RING_SIZE;
    info->rx_desc_lim.nb_align = 1;
    info->tx_desc_lim = info->rx_desc_lim;
    info->tx_desc_lim.nb_seg_max = hsi::eth::MAX_BDS_PER_PACKET;
    info->tx_desc_lim.nb_mtu_seg_max = hsi::eth::MAX_BDS_PER_PACKET;
    info->default_rxportconf.ring_size = 1024;
    info->default_txportconf.ring_size = 1024;
    info->default_rxportconf.burst_size = 32;
    info->default_txportconf.burst_size = 32;
    info->default_rxportconf.nb_queues = 1;
    info->default_txportconf.nb_queues = 1;
    info->rx_queue_offload_capa = 0;
    info->tx_queue_offload_capa = 0;
}

namespace {

int fw_version_get(rte_eth_dev* dev, char* fw_version, size_t size)
{
    const ecore::HwInfo& hw = port_of(dev)->edev.hwfn.hw_info;
    auto v = [](uint32_t packed, int shift) { return (packed >> shift) & 0xff; };
    const int len = snprintf(fw_version, size, "fw %u.%u.%u.%u mfw %u.%u.%u.%u", v(hw.fw_version, 24),
                             v(hw.fw_version, 16), v(hw.fw_version, 8), v(hw.fw_version, 0), v(hw.mfw_version, 24),
                             v(hw.mfw_version, 16), v(hw.mfw_version, 8), v(hw.mfw_version, 0));
    /* ethdev's contract: the size needed, terminator included, when too small */
    return len + 1 > static_cast<int>(size) ? len + 1 : 0;
}

const uint32_t* supported_ptypes_get(rte_eth_dev*)
{
    static const uint32_t ptypes[] = {
        RTE_PTYPE_L2_ETHER,     RTE_PTYPE_L3_IPV4_EXT_UNKNOWN, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN,
        RTE_PTYPE_L4_TCP,       RTE_PTYPE_L4_UDP,              RTE_PTYPE_L4_FRAG,
        RTE_PTYPE_L4_NONFRAG,   RTE_PTYPE_UNKNOWN,
    };
    return ptypes;
}

int rx_burst_mode_get(rte_eth_dev* dev, uint16_t, rte_eth_burst_mode* mode)
{
    snprintf(mode->info, sizeof(mode->info), "%s", rx_burst_mode_name(dev));
    return 0;
}

int tx_burst_mode_get(rte_eth_dev* dev, uint16_t, rte_eth_burst_mode* mode)
{
    snprintf(mode->info, sizeof(mode->info), "%s", tx_burst_mode_name(dev));
    return 0;
}

int mtu_set(rte_eth_dev* dev, uint16_t mtu)
{
    EthPort* port = port_of(dev);
    rte_eth_dev_data* data = dev->data;
    const bool scatter = data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER;
    for (uint16_t q = 0; q < data->nb_rx_queues; q++) {
        const auto* rxq = static_cast<const RxQueue*>(data->rx_queues[q]);
        if (rxq != nullptr && !scatter && max_frame_len(mtu) > rxq->buf_size) {
            PMD_LOG(ERR, port, "MTU %u needs %u-byte Rx buffers, queue %u has %u; enable scattered Rx", mtu,
                    max_frame_len(mtu), q, rxq->buf_size);
            return -EINVAL;
        }
    }
    if (!port->vport_started)
        return 0; /* dev_start passes data->mtu to the vport */
    ecore::SpVportUpdateParams p;
    p.vport_id = VPORT_ID;
    p.update_mtu = true;
    p.mtu = mtu;
    return ecore::status_to_errno(ecore::sp_vport_update(port->edev.hwfn, p));
}

eth_dev_ops make_ops()
{
    eth_dev_ops ops{};
    ops.dev_configure = dev_configure;
    ops.dev_start = dev_start;
    ops.dev_stop = dev_stop;
    ops.dev_close = dev_close;
    ops.dev_reset = dev_reset;
    ops.dev_set_link_up = dev_set_link_up;
    ops.dev_set_link_down = dev_set_link_down;
    ops.dev_infos_get = dev_infos_get;
    ops.link_update = link_update;
    ops.promiscuous_enable = promiscuous_enable;
    ops.promiscuous_disable = promiscuous_disable;
    ops.allmulticast_enable = allmulticast_enable;
    ops.allmulticast_disable = allmulticast_disable;
    ops.mac_addr_set = mac_addr_set;
    ops.mac_addr_add = mac_addr_add;
    ops.mac_addr_remove = mac_addr_remove;
    ops.set_mc_addr_list = set_mc_addr_list;
    ops.vlan_filter_set = vlan_filter_set;
    ops.vlan_offload_set = vlan_offload_set;
    ops.reta_update = reta_update;
    ops.reta_query = reta_query;
    ops.rss_hash_update = rss_hash_update;
    ops.rss_hash_conf_get = rss_hash_conf_get;
    ops.flow_ctrl_get = flow_ctrl_get;
    ops.flow_ctrl_set = flow_ctrl_set;
    ops.fw_version_get = fw_version_get;
    ops.dev_supported_ptypes_get = supported_ptypes_get;
    ops.rx_burst_mode_get = rx_burst_mode_get;
    ops.tx_burst_mode_get = tx_burst_mode_get;
    ops.rx_queue_start = rx_queue_start;
    ops.rx_queue_stop = rx_queue_stop;
    ops.tx_queue_start = tx_queue_start;
    ops.tx_queue_stop = tx_queue_stop;
    ops.rx_queue_intr_enable = rx_queue_intr_enable;
    ops.rx_queue_intr_disable = rx_queue_intr_disable;
    ops.rxq_info_get = rxq_info_get;
    ops.txq_info_get = txq_info_get;
    ops.xstats_get = xstats_get;
    ops.xstats_get_names = xstats_get_names;
    ops.xstats_reset = stats_reset;
    ops.mtu_set = mtu_set;
    ops.stats_get = stats_get;
    ops.stats_reset = stats_reset;
    ops.rx_queue_setup = rx_queue_setup;
    ops.rx_queue_release = rx_queue_release;
    ops.tx_queue_setup = tx_queue_setup;
    ops.tx_queue_release = tx_queue_release;
    ops.flow_ops_get = flow_ops_get;
    ops.representor_info_get = representor_info_get;
    timesync_ops(ops);
    return ops;
}

} // namespace

const eth_dev_ops cna_dev_ops = make_ops();

} // namespace cna::net
