/* SPDX-License-Identifier: BSD-3-Clause
 * The ethdev ops table of net_cna, device information and MTU.
 */
#include "cna_ethdev_ops.h"

#include <cerrno>

#include "cna_log.h"
#include "cna_rxtx.h"
#include "ecore_l2_api.h"
#include "hsi_mfw.h"

namespace cna::pmd {
namespace {

namespace mfw = hsi::mfw;

uint32_t ethdev_speed_capa(uint32_t mfw_caps)
{
    struct {
        mfw::LinkSpeed mfw;
        uint32_t ethdev;
    } constexpr map[] = {
        {mfw::LinkSpeed::s1g, RTE_ETH_LINK_SPEED_1G},   {mfw::LinkSpeed::s10g, RTE_ETH_LINK_SPEED_10G},
        {mfw::LinkSpeed::s25g, RTE_ETH_LINK_SPEED_25G}, {mfw::LinkSpeed::s40g, RTE_ETH_LINK_SPEED_40G},
        {mfw::LinkSpeed::s50g, RTE_ETH_LINK_SPEED_50G}, {mfw::LinkSpeed::s100g, RTE_ETH_LINK_SPEED_100G},
    };
    uint32_t capa = 0;
    for (const auto& m : map)
        if (mfw_caps & mfw::speed_cap(m.mfw))
            capa |= m.ethdev;
    return capa;
}

int dev_infos_get(rte_eth_dev* dev, rte_eth_dev_info* info)
{
    const ecore::HwInfo& hw = port_of(dev)->edev.hwfn.hw_info;
    const uint32_t max_queues = RTE_MIN(hw.resc.num_sbs, RTE_MIN(hw.resc.num_rx_queues, hw.resc.num_tx_queues));
    info->max_rx_queues = static_cast<uint16_t>(max_queues);
    info->max_tx_queues = static_cast<uint16_t>(max_queues);
    info->max_mac_addrs = 1;
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
    info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER;
    info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    info->speed_capa = ethdev_speed_capa(hw.speed_capabilities);
    info->dev_capa = 0;
    return 0;
}

int mtu_set(rte_eth_dev* dev, uint16_t mtu)
{
    Port* port = port_of(dev);
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
    p.vport_id = 0;
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
    ops.dev_set_link_up = dev_set_link_up;
    ops.dev_set_link_down = dev_set_link_down;
    ops.dev_infos_get = dev_infos_get;
    ops.link_update = link_update;
    ops.promiscuous_enable = promiscuous_enable;
    ops.promiscuous_disable = promiscuous_disable;
    ops.allmulticast_enable = allmulticast_enable;
    ops.allmulticast_disable = allmulticast_disable;
    ops.mac_addr_set = mac_addr_set;
    ops.mtu_set = mtu_set;
    ops.stats_get = stats_get;
    ops.stats_reset = stats_reset;
    ops.rx_queue_setup = rx_queue_setup;
    ops.rx_queue_release = rx_queue_release;
    ops.tx_queue_setup = tx_queue_setup;
    ops.tx_queue_release = tx_queue_release;
    return ops;
}

} // namespace

const eth_dev_ops cna_dev_ops = make_ops();

} // namespace cna::pmd
