/* SPDX-License-Identifier: BSD-3-Clause
 * Statistics: the adapter's vport and queue counters, read through a PTT,
 * plus the driver's own (Rx buffer allocation failures). The device counters
 * cannot be cleared, so a reset records a baseline that later reads subtract.
 *
 * xstats names are stable: the vport counters first, then per Rx queue and
 * per Tx queue, in queue order, then (rdma=1) the port's RoCE counters,
 * then (representor=) its port switch's.
 */
#include <atomic>
#include <cerrno>
#include <cstdio>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rxtx.h"
#include "ecore_l2_api.h"
#include "ecore_iov_api.h"
#include "ecore_rdma_api.h"
#include "ecore_switch_api.h"

namespace cna::net {
namespace {

using hsi::eth::QueueStats;
using hsi::eth::VportStats;
using hsi::eswitch::SwitchStats;
using hsi::rdma::RoceStats;

struct VportXstat {
    const char* name;
    uint64_t VportStats::*counter;
};
constexpr VportXstat VPORT_XSTATS[] = {
    {"rx_unicast_packets", &VportStats::rx_ucast_pkts},
    {"rx_multicast_packets", &VportStats::rx_mcast_pkts},
    {"rx_broadcast_packets", &VportStats::rx_bcast_pkts},
    {"rx_unicast_bytes", &VportStats::rx_ucast_bytes},
    {"rx_multicast_bytes", &VportStats::rx_mcast_bytes},
    {"rx_broadcast_bytes", &VportStats::rx_bcast_bytes},
    {"rx_filtered_packets", &VportStats::rx_filtered_pkts},
    {"rx_no_buffer_packets", &VportStats::rx_no_buffer_pkts},
    {"rx_oversize_packets", &VportStats::rx_oversize_pkts},
    {"rx_error_packets", &VportStats::rx_error_pkts},
    {"rx_flow_drop_packets", &VportStats::rx_flow_drop_pkts},
    {"tx_unicast_packets", &VportStats::tx_ucast_pkts},
    {"tx_multicast_packets", &VportStats::tx_mcast_pkts},
    {"tx_broadcast_packets", &VportStats::tx_bcast_pkts},
    {"tx_unicast_bytes", &VportStats::tx_ucast_bytes},
    {"tx_multicast_bytes", &VportStats::tx_mcast_bytes},
    {"tx_broadcast_bytes", &VportStats::tx_bcast_bytes},
    {"tx_error_packets", &VportStats::tx_error_pkts},
    {"tx_oversize_packets", &VportStats::tx_oversize_pkts},
    {"tx_spoofed_packets", &VportStats::tx_spoofed_pkts},
    {"tx_link_down_packets", &VportStats::tx_link_down_pkts},
    {"rx_link_down_packets", &VportStats::rx_link_down_pkts},
};

struct QueueXstat {
    const char* name;
    uint64_t QueueStats::*counter;
};
constexpr QueueXstat RXQ_XSTATS[] = {
    {"packets", &QueueStats::pkts}, {"bytes", &QueueStats::bytes}, {"no_buffer_drops", &QueueStats::drops}};
constexpr QueueXstat TXQ_XSTATS[] = {
    {"packets", &QueueStats::pkts}, {"bytes", &QueueStats::bytes}, {"errors", &QueueStats::drops}};
/* The RoCE engine's, when the port has RDMA: L2 and RoCE share the port. */
struct RoceXstat {
    const char* name;
    uint64_t RoceStats::*counter;
};
constexpr RoceXstat ROCE_XSTATS[] = {
    {"roce_rx_packets", &RoceStats::rx_packets},
    {"roce_tx_packets", &RoceStats::tx_packets},
    {"roce_rx_bytes", &RoceStats::rx_bytes},
    {"roce_tx_bytes", &RoceStats::tx_bytes},
    {"roce_icrc_errors", &RoceStats::icrc_errors},
    {"roce_bad_packets", &RoceStats::bad_packets},
    {"roce_retransmitted_packets", &RoceStats::retransmitted},
    {"roce_ack_timeouts", &RoceStats::timeouts},
    {"roce_naks_sent", &RoceStats::naks_sent},
    {"roce_naks_received", &RoceStats::naks_received},
    {"roce_rnr_naks_sent", &RoceStats::rnr_naks_sent},
    {"roce_rnr_naks_received", &RoceStats::rnr_naks_received},
    {"roce_duplicate_requests", &RoceStats::duplicates},
    {"roce_out_of_sequence_requests", &RoceStats::out_of_sequence},
    {"roce_qkey_violations", &RoceStats::qkey_violations},
    {"roce_ud_dropped", &RoceStats::ud_dropped},
    {"roce_mads_dropped", &RoceStats::mads_dropped},
    {"roce_pkey_violations", &RoceStats::pkey_violations},
};

/* The port switch's, when the PF manages it in switchdev mode. */
struct SwitchXstat {
    const char* name;
    uint64_t SwitchStats::*counter;
};
constexpr SwitchXstat SWITCH_XSTATS[] = {
    {"switch_rule_hits", &SwitchStats::rule_hits},
    {"switch_misses", &SwitchStats::misses},
    {"switch_drop_packets", &SwitchStats::drop_pkts},
    {"switch_unreachable_packets", &SwitchStats::unreachable_pkts},
    {"switch_no_representor_packets", &SwitchStats::no_representor_pkts},
    {"switch_exception_packets", &SwitchStats::exception_pkts},
};

bool has_switch(const EthPort* port) { return !port->devargs.representors.empty(); }

struct PtpXstat {
    const char* name;
    uint64_t ecore::PtpStats::*counter;
};
constexpr PtpXstat PTP_XSTATS[] = {
    {"rx_ptp_unstamped_packets", &ecore::PtpStats::rx_unstamped},
    {"tx_ptp_unstamped_packets", &ecore::PtpStats::tx_unstamped},
};

/* Driver counter per Rx queue, after the adapter's. */
constexpr const char* RXQ_ALLOC_FAILURES = "mbuf_alloc_failures";
constexpr unsigned RXQ_XSTATS_COUNT = RTE_DIM(RXQ_XSTATS) + 1;

/* Current adapter counters, baselines subtracted. */
struct Snapshot {
    VportStats vport;
    std::array<QueueStats, hsi::MAX_QUEUES_PER_PF> rxq;
    std::array<QueueStats, hsi::MAX_QUEUES_PER_PF> txq;
    RoceStats roce;
    SwitchStats eswitch;
    ecore::PtpStats ptp;
};

int read_raw(EthPort* port, Snapshot* s, uint16_t nb_rxq, uint16_t nb_txq)
{
    ecore::Hwfn& hwfn = port->edev.hwfn;
    PortPtt ptt(port);
    if (!ptt)
        return -EBUSY;
    ecore::Status st = ecore::get_vport_stats(hwfn, *ptt, VPORT_ID, &s->vport);
    for (uint16_t q = 0; q < nb_rxq && st == ecore::Status::success; q++)
        st = ecore::get_rx_queue_stats(hwfn, *ptt, q, &s->rxq[q]);
    for (uint16_t q = 0; q < nb_txq && st == ecore::Status::success; q++)
        st = ecore::get_tx_queue_stats(hwfn, *ptt, q, &s->txq[q]);
    if (st == ecore::Status::success && port->devargs.rdma)
        st = ecore::rdma_get_stats(hwfn, *ptt, &s->roce);
    if (st == ecore::Status::success && has_switch(port))
        ecore::get_switch_stats(hwfn, *ptt, &s->eswitch);
    if (st == ecore::Status::success)
        st = ecore::ptp_get_stats(hwfn, *ptt, &s->ptp);
    /* Counters read from a device that went meanwhile are all ones: never
     * reported as counts. */
    return removed(port) ? -ENODEV : ecore::status_to_errno(st);
}

/* Under the port's stats lock. */
int read_snapshot(rte_eth_dev* dev, Snapshot* s)
{
    EthPort* port = port_of(dev);
    const uint16_t nb_rxq = dev->data->nb_rx_queues, nb_txq = dev->data->nb_tx_queues;
    if (int rc = read_raw(port, s, nb_rxq, nb_txq); rc != 0)
        return rc;
    subtract_counters(&s->vport, port->stats_base);
    for (uint16_t q = 0; q < nb_rxq; q++)
        subtract_counters(&s->rxq[q], port->rxq_stats_base[q]);
    for (uint16_t q = 0; q < nb_txq; q++)
        subtract_counters(&s->txq[q], port->txq_stats_base[q]);
    if (port->devargs.rdma)
        subtract_counters(&s->roce, port->roce_stats_base);
    if (has_switch(port))
        subtract_counters(&s->eswitch, port->switch_stats_base);
    subtract_counters(&s->ptp, port->ptp_stats_base);
    return 0;
}

/* The Rx lcore counts while the reader runs: a relaxed load of its counter. */
uint64_t alloc_failures_raw(RxQueue& rxq)
{
    return std::atomic_ref(rxq.alloc_failures).load(std::memory_order_relaxed);
}

/* Under the port's stats lock. */
uint64_t alloc_failures(const rte_eth_dev* dev, uint16_t q)
{
    auto* rxq = static_cast<RxQueue*>(dev->data->rx_queues[q]);
    return rxq != nullptr ? alloc_failures_raw(*rxq) - rxq->alloc_failures_base : 0;
}

unsigned xstats_count(const rte_eth_dev* dev)
{
    return RTE_DIM(VPORT_XSTATS) + dev->data->nb_rx_queues * RXQ_XSTATS_COUNT +
           dev->data->nb_tx_queues * RTE_DIM(TXQ_XSTATS) + (port_of(dev)->devargs.rdma ? RTE_DIM(ROCE_XSTATS) : 0) +
           (has_switch(port_of(dev)) ? RTE_DIM(SWITCH_XSTATS) : 0) + RTE_DIM(PTP_XSTATS);
}

} // namespace

void vport_eth_stats(const VportStats& v, rte_eth_stats* stats)
{
    stats->ipackets = v.rx_ucast_pkts + v.rx_mcast_pkts + v.rx_bcast_pkts;
    stats->ibytes = v.rx_ucast_bytes + v.rx_mcast_bytes + v.rx_bcast_bytes;
    stats->imissed = v.rx_no_buffer_pkts + v.rx_link_down_pkts;
    stats->ierrors = v.rx_error_pkts + v.rx_oversize_pkts;
    stats->opackets = v.tx_ucast_pkts + v.tx_mcast_pkts + v.tx_bcast_pkts;
    stats->obytes = v.tx_ucast_bytes + v.tx_mcast_bytes + v.tx_bcast_bytes;
    stats->oerrors = v.tx_error_pkts + v.tx_oversize_pkts + v.tx_spoofed_pkts + v.tx_link_down_pkts;
}

int stats_get(rte_eth_dev* dev, rte_eth_stats* stats)
{
    std::lock_guard lock(port_of(dev)->stats_lock);
    Snapshot s;
    if (int rc = read_snapshot(dev, &s); rc != 0)
        return rc;
    vport_eth_stats(s.vport, stats);
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++) {
        stats->rx_nombuf += alloc_failures(dev, q);
        if (q < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
            stats->q_ipackets[q] = s.rxq[q].pkts;
            stats->q_ibytes[q] = s.rxq[q].bytes;
            stats->q_errors[q] = s.rxq[q].drops;
        }
    }
    for (uint16_t q = 0; q < RTE_MIN(dev->data->nb_tx_queues, uint16_t{RTE_ETHDEV_QUEUE_STAT_CNTRS}); q++) {
        stats->q_opackets[q] = s.txq[q].pkts;
        stats->q_obytes[q] = s.txq[q].bytes;
    }
    return 0;
}

int stats_reset(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    std::lock_guard lock(port->stats_lock);
    /* Every queue the PF holds, configured or not: a queue configured later
     * counts from this reset too. */
    const ecore::Resources& resc = port->edev.hwfn.hw_info.resc;
    Snapshot raw{};
    if (int rc = read_raw(port, &raw, resc.num_rx_queues, resc.num_tx_queues); rc != 0)
        return rc;
    port->stats_base = raw.vport;
    port->rxq_stats_base = raw.rxq;
    port->txq_stats_base = raw.txq;
    port->roce_stats_base = raw.roce;
    port->switch_stats_base = raw.eswitch;
    port->ptp_stats_base = raw.ptp;
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
        if (auto* rxq = static_cast<RxQueue*>(dev->data->rx_queues[q]))
            rxq->alloc_failures_base = alloc_failures_raw(*rxq);
    return 0;
}

int xstats_get_names(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size)
{
    const unsigned count = xstats_count(dev);
    if (names == nullptr || size < count)
        return static_cast<int>(count);
    unsigned n = 0;
    for (const VportXstat& x : VPORT_XSTATS)
        snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s", x.name);
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++) {
        for (const QueueXstat& x : RXQ_XSTATS)
            snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q, x.name);
        snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_q%u_%s", q, RXQ_ALLOC_FAILURES);
    }
    for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
        for (const QueueXstat& x : TXQ_XSTATS)
            snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "tx_q%u_%s", q, x.name);
    if (port_of(dev)->devargs.rdma)
        for (const RoceXstat& x : ROCE_XSTATS)
            snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s", x.name);
    if (has_switch(port_of(dev)))
        for (const SwitchXstat& x : SWITCH_XSTATS)
            snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s", x.name);
    for (const PtpXstat& x : PTP_XSTATS)
        snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s", x.name);
    return static_cast<int>(n);
}

int xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned size)
{
    const unsigned count = xstats_count(dev);
    if (xstats == nullptr || size < count)
        return static_cast<int>(count);
    std::lock_guard lock(port_of(dev)->stats_lock);
    Snapshot s;
    if (int rc = read_snapshot(dev, &s); rc != 0)
        return rc;
    unsigned n = 0;
    auto put = [&](uint64_t value) {
        xstats[n].id = n;
        xstats[n].value = value;
        n++;
    };
    for (const VportXstat& x : VPORT_XSTATS)
        put(s.vport.*x.counter);
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++) {
        for (const QueueXstat& x : RXQ_XSTATS)
            put(s.rxq[q].*x.counter);
        put(alloc_failures(dev, q));
    }
    for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
        for (const QueueXstat& x : TXQ_XSTATS)
            put(s.txq[q].*x.counter);
    if (port_of(dev)->devargs.rdma)
        for (const RoceXstat& x : ROCE_XSTATS)
            put(s.roce.*x.counter);
    if (has_switch(port_of(dev)))
        for (const SwitchXstat& x : SWITCH_XSTATS)
            put(s.eswitch.*x.counter);
    for (const PtpXstat& x : PTP_XSTATS)
        put(s.ptp.*x.counter);
    return static_cast<int>(n);
}

/* ---- representors --------------------------------------------------------------- */

namespace {

struct RepresentorSnapshot {
    VportStats own; /* its vport's */
    VportStats vf;  /* its VF's */
};

int read_representor(Representor* rep, RepresentorSnapshot* s)
{
    ecore::Hwfn& hwfn = rep->pf->edev.hwfn;
    PortPtt ptt(rep->pf);
    if (!ptt)
        return -EBUSY;
    ecore::Status st = ecore::get_vport_stats(hwfn, *ptt, rep->vport_id, &s->own);
    if (st == ecore::Status::success)
        st = ecore::iov_get_vf_stats(hwfn, rep->vf, &s->vf);
    return removed(rep->pf) ? -ENODEV : ecore::status_to_errno(st);
}

/* Under the representor's stats lock. */
int representor_snapshot(Representor* rep, RepresentorSnapshot* s)
{
    if (int rc = read_representor(rep, s); rc != 0)
        return rc;
    subtract_counters(&s->own, rep->stats_base);
    subtract_counters(&s->vf, rep->vf_stats_base);
    return 0;
}

} // namespace

int representor_stats_get(rte_eth_dev* dev, rte_eth_stats* stats)
{
    Representor* rep = representor_of(dev);
    std::lock_guard guard(rep->stats_lock);
    RepresentorSnapshot s;
    if (int rc = representor_snapshot(rep, &s); rc != 0)
        return rc;
    vport_eth_stats(s.own, stats);
    return 0;
}

int representor_stats_reset(rte_eth_dev* dev)
{
    Representor* rep = representor_of(dev);
    std::lock_guard guard(rep->stats_lock);
    RepresentorSnapshot raw;
    if (int rc = read_representor(rep, &raw); rc != 0)
        return rc;
    rep->stats_base = raw.own;
    rep->vf_stats_base = raw.vf;
    return 0;
}

int representor_xstats_get_names(rte_eth_dev*, rte_eth_xstat_name* names, unsigned size)
{
    const unsigned count = 2 * RTE_DIM(VPORT_XSTATS);
    if (names == nullptr || size < count)
        return static_cast<int>(count);
    unsigned n = 0;
    for (const VportXstat& x : VPORT_XSTATS)
        snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "%s", x.name);
    for (const VportXstat& x : VPORT_XSTATS)
        snprintf(names[n++].name, RTE_ETH_XSTATS_NAME_SIZE, "vf_%s", x.name);
    return static_cast<int>(n);
}

int representor_xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned size)
{
    const unsigned count = 2 * RTE_DIM(VPORT_XSTATS);
    if (xstats == nullptr || size < count)
        return static_cast<int>(count);
    Representor* rep = representor_of(dev);
    std::lock_guard guard(rep->stats_lock);
    RepresentorSnapshot s;
    if (int rc = representor_snapshot(rep, &s); rc != 0)
        return rc;
    unsigned n = 0;
    for (const VportStats* v : {&s.own, &s.vf})
        for (const VportXstat& x : VPORT_XSTATS) {
            xstats[n].id = n;
            xstats[n].value = v->*x.counter;
            n++;
        }
    return static_cast<int>(n);
}

} // namespace cna::net
