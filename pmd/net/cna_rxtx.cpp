/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna fastpath and queue set-up.
 *
 * Rx: the adapter reports its CQE producer in the queue's status block; each
 * CQE describes one frame already placed in the buffers of the next BDs.
 * Consumed BDs are refilled in bulks and published, together with the CQE
 * consumer, by one store to the GTT-mapped producer.
 * Tx: one BD per segment, the first carrying the offloads; one doorbell per
 * burst with the absolute BD producer. The adapter reports its BD consumer
 * in the status block, and the segments behind it are freed on the next burst.
 */
/* DPDK 22.11's rte_vect.h declares its functions without C linkage, and
 * rte_mbuf.h includes it: it comes first, wrapped. */
extern "C" {
#include <rte_vect.h>
}

#include "cna_rxtx.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <iterator>

#include <ethdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_cpuflags.h>
#include <rte_malloc.h>

#include "cna_eth_port.h"
#include "cna_log.h"
#include "cna_rxtx_common.h"

namespace cna::net {

namespace {

template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
inline uint16_t recv_burst(RxQueue* rxq, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    const uint16_t hw_prod = osal::observe(rxq->hw_cqe_prod);
    const uint16_t nb = RTE_MIN(static_cast<uint16_t>(hw_prod - rxq->cqe_cons), nb_pkts);
    if (nb == 0)
        return 0;
    const RxCursor at = rx_frames<OFFLOAD_RESULTS, TIMESTAMP>(rxq, rx_pkts, nb, {rxq->cqe_cons, rxq->bd_cons});
    rxq->cqe_cons = at.cqe_cons;
    rxq->bd_cons = at.bd_cons;
    rx_refill(rxq);
    return nb;
}

} // namespace

uint16_t recv_pkts(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<false, false>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_offload(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<true, false>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<false, true>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_offload_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<true, true>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t xmit_pkts(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    auto* txq = static_cast<TxQueue*>(tx_queue);
    if (tx_gone(txq)) [[unlikely]]
        return 0;
    tx_complete(txq);

    uint16_t bd_prod = txq->bd_prod;
    uint16_t free = tx_free_bds(txq, bd_prod);
    uint16_t nb_tx = 0;
    while (nb_tx < nb_pkts && tx_one(txq, tx_pkts[nb_tx], bd_prod, free))
        nb_tx++;
    tx_publish(txq, bd_prod, nb_tx);
    return nb_tx;
}

/* ---- burst function choice ---------------------------------------------- */

namespace {

/* The scalar Rx functions, by [offload results][timestamps]. */
constexpr Burst SCALAR_RX[2][2] = {{recv_pkts, recv_pkts_timestamp}, {recv_pkts_offload, recv_pkts_offload_timestamp}};

/* The vector functions exist where the build has them, run where the CPU has
 * AVX2 and EAL allows 256-bit vectors (--force-max-simd-bitwidth=64 forces
 * the scalar path). */
bool avx2_usable()
{
#ifdef CNA_HAVE_AVX2
    return rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0 && rte_vect_get_max_simd_bitwidth() >= RTE_VECT_SIMD_256;
#else
    return false;
#endif
}

} // namespace

void set_fastpath_ops(rte_eth_dev* dev)
{
    dev->rx_pkt_burst = recv_pkts;
    dev->tx_pkt_burst = xmit_pkts;
    dev->tx_pkt_prepare = prep_pkts;
    dev->rx_queue_count = rx_queue_count;
    dev->rx_descriptor_status = rx_descriptor_status;
    dev->tx_descriptor_status = tx_descriptor_status;
}

void publish_fastpath(rte_eth_dev* dev)
{
    struct rte_eth_fp_ops& fp = rte_eth_fp_ops[dev->data->port_id];
    fp.rxq.data = dev->data->rx_queues;
    fp.txq.data = dev->data->tx_queues;
    fp.tx_pkt_prepare = dev->tx_pkt_prepare;
    fp.rx_queue_count = dev->rx_queue_count;
    fp.rx_descriptor_status = dev->rx_descriptor_status;
    fp.tx_descriptor_status = dev->tx_descriptor_status;
    /* The queue pointers before the bursts that use them. */
    std::atomic_ref(fp.rx_pkt_burst).store(dev->rx_pkt_burst, std::memory_order_release);
    std::atomic_ref(fp.tx_pkt_burst).store(dev->tx_pkt_burst, std::memory_order_release);
}

void stop_fastpath(rte_eth_dev* dev)
{
    dev->rx_pkt_burst = rte_eth_pkt_burst_dummy;
    dev->tx_pkt_burst = rte_eth_pkt_burst_dummy;
    publish_fastpath(dev);
}

void select_fastpath(rte_eth_dev* dev, bool inline_engine)
{
    const rte_eth_conf& conf = dev->data->dev_conf;
    const bool vector = avx2_usable();
    /* Scattered frames need chaining, Tx offloads the general BD: the vector
     * functions would hand nearly every packet to the scalar handling. */
    const bool rx_vector = vector && !(conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER);
    const bool tx_vector = vector && !(conf.txmode.offloads & ~uint64_t{RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE});
    /* Checksum flags, the RSS hash and timestamps only when asked for
     * (per-queue offloads are never more than the port's: the queue
     * capabilities are 0). */
    const bool results = conf.rxmode.offloads & (RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH);
    const bool stamps = conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    dev->rx_pkt_burst = SCALAR_RX[results][stamps];
    dev->tx_pkt_burst = xmit_pkts;
#ifdef CNA_HAVE_AVX2
    static constexpr Burst AVX2[2][2] = {{recv_pkts_avx2, recv_pkts_avx2_timestamp},
                                         {recv_pkts_avx2_offload, recv_pkts_avx2_offload_timestamp}};
    if (rx_vector)
        dev->rx_pkt_burst = AVX2[results][stamps];
    if (tx_vector)
        dev->tx_pkt_burst = xmit_pkts_avx2;
#else
    (void)rx_vector;
    (void)tx_vector;
#endif
    if (inline_engine) {
        dev->rx_pkt_burst = inline_burst(dev->rx_pkt_burst);
        dev->tx_pkt_burst = inline_burst(dev->tx_pkt_burst);
    }
    PMD_DEV_LOG(INFO, dev, "Rx burst: %s, Tx burst: %s", rx_burst_mode_name(dev), tx_burst_mode_name(dev));
}

namespace {

const char* burst_mode_name(bool scalar, bool inline_engine)
{
    static constexpr const char* NAMES[2][2] = {{"Vector AVX2", "Vector AVX2, inline engine"},
                                                {"Scalar", "Scalar, inline engine"}};
    return NAMES[scalar][inline_engine];
}

} // namespace

const char* rx_burst_mode_name(const rte_eth_dev* dev)
{
    const Burst plain = plain_burst(dev->rx_pkt_burst);
    const bool scalar = std::ranges::any_of(SCALAR_RX, [plain](const Burst(&by_stamps)[2]) {
        return std::ranges::find(by_stamps, plain) != std::end(by_stamps);
    });
    return burst_mode_name(scalar, plain != dev->rx_pkt_burst);
}

const char* tx_burst_mode_name(const rte_eth_dev* dev)
{
    const Burst plain = plain_burst(dev->tx_pkt_burst);
    return burst_mode_name(plain == xmit_pkts, plain != dev->tx_pkt_burst);
}

/* Checks what the adapter cannot do for a packet before tx_burst sees it. */
uint16_t prep_pkts(void* /* tx_queue */, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    constexpr uint64_t SUPPORTED = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG |
                                   RTE_MBUF_F_TX_VLAN | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 |
                                   RTE_MBUF_F_TX_IEEE1588_TMST;
    for (uint16_t i = 0; i < nb_pkts; i++) {
        const rte_mbuf* m = tx_pkts[i];
        const uint64_t ol = m->ol_flags;
        if (m->nb_segs > hsi::eth::MAX_BDS_PER_PACKET || (ol & RTE_MBUF_F_TX_OFFLOAD_MASK & ~SUPPORTED)) {
            rte_errno = ENOTSUP;
            return i;
        }
        if ((ol & RTE_MBUF_F_TX_TCP_SEG) && (m->tso_segsz == 0 || m->l2_len == 0 || m->l3_len == 0 ||
                                             m->l4_len == 0)) {
            rte_errno = EINVAL;
            return i;
        }
        if (!(ol & RTE_MBUF_F_TX_TCP_SEG) && m->pkt_len > max_frame_len(hsi::eth::MAX_MTU)) {
            rte_errno = EINVAL;
            return i;
        }
    }
    return nb_pkts;
}

/* ---- descriptor status -------------------------------------------------- */

uint32_t rx_queue_count(void* rx_queue)
{
    const auto* rxq = static_cast<const RxQueue*>(rx_queue);
    if (!rxq->started)
        return 0;
    return static_cast<uint16_t>(osal::observe(rxq->hw_cqe_prod) - rxq->cqe_cons);
}

int rx_descriptor_status(void* rx_queue, uint16_t offset)
{
    const auto* rxq = static_cast<const RxQueue*>(rx_queue);
    if (offset >= rxq->mask)
        return -EINVAL;
    if (offset < rx_queue_count(rx_queue))
        return RTE_ETH_RX_DESC_DONE;
    if (offset < static_cast<uint16_t>(rxq->bd_prod - rxq->bd_cons))
        return RTE_ETH_RX_DESC_AVAIL;
    return RTE_ETH_RX_DESC_UNAVAIL;
}

int tx_descriptor_status(void* tx_queue, uint16_t offset)
{
    const auto* txq = static_cast<const TxQueue*>(tx_queue);
    if (offset >= txq->mask)
        return -EINVAL;
    if (!txq->started)
        return RTE_ETH_TX_DESC_DONE;
    const uint16_t in_flight =
        static_cast<uint16_t>(txq->bd_prod - osal::observe(txq->hw_bd_cons));
    return offset < in_flight ? RTE_ETH_TX_DESC_FULL : RTE_ETH_TX_DESC_DONE;
}

/* ---- slowpath: queue set-up ------------------------------------------- */

namespace {

uint16_t ring_size_for(uint16_t nb_desc)
{
    return static_cast<uint16_t>(rte_align32pow2(RTE_MAX(uint32_t{nb_desc}, hsi::eth::MIN_RING_SIZE)));
}

/* With IOVA as VA, a pktmbuf's buffer starts right after the mbuf and its
 * private area, unless the pool has pinned external buffers: the BD
 * address of a posted mbuf is then the mbuf's address plus a constant
 * (rx_queue_fill checks it on every buffer it posts). 0: read buf_iova. */
uint32_t va_to_bd_for(rte_mempool* mp)
{
    if (rte_eal_iova_mode() != RTE_IOVA_VA || (rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF))
        return 0;
    return static_cast<uint32_t>(sizeof(rte_mbuf) + rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM);
}

uint64_t mbuf_initializer_for(uint16_t port_id)
{
    rte_mbuf m{};
    m.data_off = RTE_PKTMBUF_HEADROOM;
    m.nb_segs = 1;
    m.port = port_id;
    rte_mbuf_refcnt_set(&m, 1);
    return *rearm_word(&m);
}

template <class Q> void free_queue(Q* q)
{
    if (q == nullptr)
        return;
    q->bd_chain.free();
    if constexpr (requires { q->cqe_chain; })
        q->cqe_chain.free();
    rte_free(q->sw_ring);
    q->~Q();
    rte_free(q);
}

} // namespace

int rx_queue_setup(rte_eth_dev* dev, uint16_t queue_id, uint16_t nb_desc, unsigned socket_id,
                   const rte_eth_rxconf* conf, rte_mempool* mp)
{
    rx_queue_release(dev, queue_id);

    const uint16_t size = ring_size_for(nb_desc);
    const uint32_t data_room = rte_pktmbuf_data_room_size(mp);
    if (data_room <= RTE_PKTMBUF_HEADROOM + 64) {
        PMD_DEV_LOG(ERR, dev, "Rx queue %u: mempool %s has mbufs of %u bytes, too small for frames", queue_id,
                mp->name, data_room);
        return -EINVAL;
    }
    const uint64_t offloads = conf->offloads | dev->data->dev_conf.rxmode.offloads;
    const uint16_t buf_size = static_cast<uint16_t>(RTE_MIN(data_room - RTE_PKTMBUF_HEADROOM, 0xffffu));
    const bool stamps = offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    dev->data->scattered_rx = (offloads & RTE_ETH_RX_OFFLOAD_SCATTER) != 0;
    if (max_frame_len(dev->data->mtu) > buf_size && !(offloads & RTE_ETH_RX_OFFLOAD_SCATTER)) {
        PMD_DEV_LOG(ERR, dev, "Rx queue %u: MTU %u needs %u-byte buffers (mbufs have %u); enable scattered Rx",
                queue_id, dev->data->mtu, max_frame_len(dev->data->mtu), buf_size);
        return -EINVAL;
    }
    int timestamp_offset = -1;
    uint64_t timestamp_flag = 0;
    if (stamps && rte_mbuf_dyn_rx_timestamp_register(&timestamp_offset, &timestamp_flag) != 0) {
        PMD_DEV_LOG(ERR, dev, "Rx queue %u: the mbuf's Rx timestamp field cannot be registered: %s", queue_id,
                    rte_strerror(rte_errno));
        return -rte_errno;
    }

    auto* rxq = static_cast<RxQueue*>(rte_zmalloc_socket("cna_rxq", sizeof(RxQueue), RTE_CACHE_LINE_SIZE,
                                                         static_cast<int>(socket_id)));
    if (rxq == nullptr)
        return -ENOMEM;
    new (rxq) RxQueue{};
    rxq->sw_ring = static_cast<rte_mbuf**>(rte_zmalloc_socket("cna_rx_sw_ring", sizeof(rte_mbuf*) * size,
                                                              RTE_CACHE_LINE_SIZE, static_cast<int>(socket_id)));
    if (rxq->sw_ring == nullptr ||
        rxq->bd_chain.alloc(size, sizeof(RxBd), "rx_bd") != ecore::Status::success ||
        rxq->cqe_chain.alloc(size, sizeof(RxCqe), "rx_cqe", stamps ? size * hsi::eth::RX_TIMESTAMP_BYTES : 0) !=
            ecore::Status::success) {
        free_queue(rxq);
        return -ENOMEM;
    }
    rxq->bd_ring = static_cast<RxBd*>(rxq->bd_chain.va());
    rxq->cqe_ring = static_cast<RxCqe*>(rxq->cqe_chain.va());
    rxq->mask = static_cast<uint16_t>(size - 1);
    rxq->mp = mp;
    rxq->port_id = dev->data->port_id;
    rxq->buf_size = buf_size;
    rxq->stamps = stamps ? static_cast<const uint64_t*>(rxq->cqe_chain.tail()) : nullptr;
    rxq->timestamp_offset = timestamp_offset;
    rxq->timestamp_flag = timestamp_flag;
    rxq->mbuf_initializer = mbuf_initializer_for(dev->data->port_id);
    rxq->va_to_bd = va_to_bd_for(mp);
    rxq->queue_id = queue_id;
    rxq->nb_desc = size;
    rxq->deferred_start = conf->rx_deferred_start;
    dev->data->rx_queues[queue_id] = rxq;
    PMD_DEV_LOG(DEBUG, dev, "Rx queue %u: %u descriptors, %u-byte buffers", queue_id, size, buf_size);
    return 0;
}

void rxq_info_get(rte_eth_dev* dev, uint16_t queue_id, rte_eth_rxq_info* info)
{
    const auto* rxq = static_cast<const RxQueue*>(dev->data->rx_queues[queue_id]);
    info->mp = rxq->mp;
    info->nb_desc = rxq->nb_desc;
    info->scattered_rx = dev->data->scattered_rx;
    info->rx_buf_size = rxq->buf_size;
    info->conf.rx_deferred_start = rxq->deferred_start;
    info->conf.rx_free_thresh = RX_REFILL_BULK;
}

void txq_info_get(rte_eth_dev* dev, uint16_t queue_id, rte_eth_txq_info* info)
{
    const auto* txq = static_cast<const TxQueue*>(dev->data->tx_queues[queue_id]);
    info->nb_desc = txq->nb_desc;
    info->conf.tx_deferred_start = txq->deferred_start;
}

void rx_queue_release(rte_eth_dev* dev, uint16_t queue_id)
{
    auto* rxq = static_cast<RxQueue*>(dev->data->rx_queues[queue_id]);
    if (rxq == nullptr)
        return;
    rx_queue_drain(rxq);
    free_queue(rxq);
    dev->data->rx_queues[queue_id] = nullptr;
}

int tx_queue_setup(rte_eth_dev* dev, uint16_t queue_id, uint16_t nb_desc, unsigned socket_id,
                   const rte_eth_txconf* conf)
{
    tx_queue_release(dev, queue_id);
    const uint16_t size = ring_size_for(nb_desc);
    auto* txq = static_cast<TxQueue*>(rte_zmalloc_socket("cna_txq", sizeof(TxQueue), RTE_CACHE_LINE_SIZE,
                                                         static_cast<int>(socket_id)));
    if (txq == nullptr)
        return -ENOMEM;
    new (txq) TxQueue{};
    txq->sw_ring = static_cast<rte_mbuf**>(rte_zmalloc_socket("cna_tx_sw_ring", sizeof(rte_mbuf*) * size,
                                                              RTE_CACHE_LINE_SIZE, static_cast<int>(socket_id)));
    if (txq->sw_ring == nullptr || txq->bd_chain.alloc(size, sizeof(TxBd), "tx_bd") != ecore::Status::success) {
        free_queue(txq);
        return -ENOMEM;
    }
    txq->bd_ring = static_cast<TxBd*>(txq->bd_chain.va());
    txq->mask = static_cast<uint16_t>(size - 1);
    txq->queue_id = queue_id;
    txq->nb_desc = size;
    txq->deferred_start = conf->tx_deferred_start;
    txq->fast_free = (conf->offloads | dev->data->dev_conf.txmode.offloads) & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    txq->gone = removal_flag(dev);
    dev->data->tx_queues[queue_id] = txq;
    PMD_DEV_LOG(DEBUG, dev, "Tx queue %u: %u descriptors", queue_id, size);
    return 0;
}

void tx_queue_release(rte_eth_dev* dev, uint16_t queue_id)
{
    auto* txq = static_cast<TxQueue*>(dev->data->tx_queues[queue_id]);
    if (txq == nullptr)
        return;
    tx_queue_drain(txq);
    free_queue(txq);
    dev->data->tx_queues[queue_id] = nullptr;
}

int rx_queue_fill(RxQueue* rxq)
{
    rxq->bd_prod = rxq->bd_cons = rxq->cqe_cons = 0;
    const uint16_t count = rxq->mask; /* one slot stays empty: full != empty */
    if (rte_mempool_get_bulk(rxq->mp, reinterpret_cast<void**>(rxq->sw_ring), count) != 0)
        return -ENOMEM;
    for (uint16_t i = 0; i < count; i++) {
        const rte_mbuf* m = rxq->sw_ring[i];
        if (rxq->va_to_bd != 0 && reinterpret_cast<uintptr_t>(m) + rxq->va_to_bd != rte_mbuf_data_iova_default(m))
            rxq->va_to_bd = 0; /* not the layout rte_pktmbuf_init makes: read buf_iova */
        rxq->bd_ring[i].addr = hsi::make_regpair(rte_mbuf_data_iova_default(m));
    }
    rxq->bd_prod = count;
    return 0;
}

void rx_queue_drain(RxQueue* rxq)
{
    /* Posted buffers are raw (never handed out): they go back as they came. */
    for (uint16_t i = rxq->bd_cons; i != rxq->bd_prod; i++)
        rte_mempool_put(rxq->mp, rxq->sw_ring[i & rxq->mask]);
    rxq->bd_prod = rxq->bd_cons = rxq->cqe_cons = 0;
}

void tx_queue_drain(TxQueue* txq)
{
    for (uint16_t i = txq->bd_cons; i != txq->bd_prod; i++)
        rte_pktmbuf_free_seg(txq->sw_ring[i & txq->mask]);
    txq->bd_prod = txq->bd_cons = 0;
}

} // namespace cna::net
