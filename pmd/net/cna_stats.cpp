/* SPDX-License-Identifier: BSD-3-Clause
 * Statistics: the adapter's vport and queue counters, read through a PTT.
 * They cannot be cleared in the device, so a reset records a baseline.
 */
#include <cerrno>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rxtx.h"
#include "ecore_l2_api.h"

namespace cna::pmd {
namespace {

using hsi::eth::VportStats;

int read_vport_stats(Port* port, VportStats* vs)
{
    ecore::Hwfn& hwfn = port->edev.hwfn;
    ecore::PttGuard ptt(hwfn);
    if (!ptt)
        return -EBUSY;
    return ecore::status_to_errno(ecore::get_vport_stats(hwfn, *ptt, 0, vs));
}

} // namespace

int stats_get(rte_eth_dev* dev, rte_eth_stats* stats)
{
    Port* port = port_of(dev);
    VportStats now;
    if (int rc = read_vport_stats(port, &now); rc != 0)
        return rc;
    const VportStats& b = port->stats_base;
    stats->ipackets = (now.rx_ucast_pkts + now.rx_mcast_pkts + now.rx_bcast_pkts) -
                      (b.rx_ucast_pkts + b.rx_mcast_pkts + b.rx_bcast_pkts);
    stats->ibytes = (now.rx_ucast_bytes + now.rx_mcast_bytes + now.rx_bcast_bytes) -
                    (b.rx_ucast_bytes + b.rx_mcast_bytes + b.rx_bcast_bytes);
    stats->imissed = now.rx_no_buffer_pkts - b.rx_no_buffer_pkts;
    stats->ierrors = (now.rx_error_pkts + now.rx_oversize_pkts) - (b.rx_error_pkts + b.rx_oversize_pkts);
    stats->opackets = (now.tx_ucast_pkts + now.tx_mcast_pkts + now.tx_bcast_pkts) -
                      (b.tx_ucast_pkts + b.tx_mcast_pkts + b.tx_bcast_pkts);
    stats->obytes = (now.tx_ucast_bytes + now.tx_mcast_bytes + now.tx_bcast_bytes) -
                    (b.tx_ucast_bytes + b.tx_mcast_bytes + b.tx_bcast_bytes);
    stats->oerrors = (now.tx_error_pkts + now.tx_oversize_pkts) - (b.tx_error_pkts + b.tx_oversize_pkts);
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++) {
        if (auto* rxq = static_cast<const RxQueue*>(dev->data->rx_queues[q]))
            stats->rx_nombuf += rxq->alloc_failures;
    }
    return 0;
}

int stats_reset(rte_eth_dev* dev)
{
    Port* port = port_of(dev);
    return read_vport_stats(port, &port->stats_base);
}

} // namespace cna::pmd
