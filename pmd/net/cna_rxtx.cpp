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
#include "cna_rxtx.h"

#include <array>
#include <cerrno>

#include <ethdev_driver.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "cna_ethdev.h"
#include "cna_log.h"

namespace cna::pmd {
namespace {

using hsi::eth::RxBd;
using hsi::eth::RxCqe;
using hsi::eth::TxBd;
namespace pars = hsi::eth::pars;
namespace txbd = hsi::eth::txbd;

/* What the mbuf gets for the CQE's parse results: packet type and checksum
 * flags, looked up by the L3/L4 bits (pars_flags 3..0) and the checksum bits
 * (pars_flags 9..6) together. */
struct RxParseResult {
    uint64_t ol_flags;
    uint32_t packet_type;
};

constexpr unsigned parse_index(uint16_t pars_flags)
{
    return (pars_flags & 0xfu) | ((pars_flags >> 2) & 0xf0u);
}

constexpr std::array<RxParseResult, 256> parse_table = [] {
    std::array<RxParseResult, 256> t{};
    const uint32_t l3[4] = {0, RTE_PTYPE_L3_IPV4_EXT_UNKNOWN, RTE_PTYPE_L3_IPV6_EXT_UNKNOWN, 0};
    const uint32_t l4[4] = {0, RTE_PTYPE_L4_TCP, RTE_PTYPE_L4_UDP, RTE_PTYPE_L4_NONFRAG};
    for (uint32_t layers = 0; layers < 16; layers++) {
        for (uint32_t csum = 0; csum < 16; csum++) {
            const uint16_t f = static_cast<uint16_t>(layers | csum << 6);
            const uint32_t l3_type = l3[f & pars::L3_MASK];
            uint64_t ol = 0;
            if (f & pars::IP_CSUM_CHECKED)
                ol |= (f & pars::IP_CSUM_BAD) ? RTE_MBUF_F_RX_IP_CKSUM_BAD : RTE_MBUF_F_RX_IP_CKSUM_GOOD;
            if (f & pars::L4_CSUM_CHECKED)
                ol |= (f & pars::L4_CSUM_BAD) ? RTE_MBUF_F_RX_L4_CKSUM_BAD : RTE_MBUF_F_RX_L4_CKSUM_GOOD;
            t[parse_index(f)] = RxParseResult{
                ol, RTE_PTYPE_L2_ETHER | l3_type | (l3_type ? l4[(f & pars::L4_MASK) >> pars::L4_SHIFT] : 0)};
        }
    }
    return t;
}();

/* data_off, refcnt, nb_segs and port: the 8 bytes at the rearm_data
 * marker, set with one store. (The marker is a zero-length array: going
 * through an integer keeps the compiler's bounds checks out of it.) */
inline uint64_t* rearm_word(rte_mbuf* m)
{
    return reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(&m->rearm_data));
}

inline void rearm(rte_mbuf* m, uint64_t initializer)
{
    *rearm_word(m) = initializer;
}

/* The rest of a frame spread over several buffers. Returns the new BD consumer. */
uint16_t rx_chain_segments(RxQueue* rxq, rte_mbuf* head, const RxCqe& cqe, uint16_t bd_cons)
{
    head->data_len = cqe.len_on_first_bd;
    head->nb_segs = cqe.bd_num;
    uint32_t left = cqe.pkt_len - cqe.len_on_first_bd;
    rte_mbuf* prev = head;
    for (uint8_t i = 1; i < cqe.bd_num; i++) {
        rte_mbuf* seg = rxq->sw_ring[bd_cons++ & rxq->mask];
        rearm(seg, rxq->mbuf_initializer);
        seg->data_len = static_cast<uint16_t>(RTE_MIN(left, uint32_t{rxq->buf_size}));
        left -= seg->data_len;
        prev->next = seg;
        prev = seg;
    }
    prev->next = nullptr;
    return bd_cons;
}

/* Posts buffers on free BDs in bulks, then publishes BD producer and CQE
 * consumer in one store. */
inline void rx_refill(RxQueue* rxq)
{
    uint16_t bd_prod = rxq->bd_prod;
    uint16_t free = static_cast<uint16_t>(rxq->mask - static_cast<uint16_t>(bd_prod - rxq->bd_cons));
    while (free >= RX_REFILL_BULK) {
        rte_mbuf* bufs[RX_REFILL_BULK];
        if (unlikely(rte_mempool_get_bulk(rxq->mp, reinterpret_cast<void**>(bufs), RX_REFILL_BULK) != 0)) {
            rxq->alloc_failures += RX_REFILL_BULK;
            break;
        }
        for (rte_mbuf* m : bufs) {
            const uint16_t slot = bd_prod++ & rxq->mask;
            rxq->sw_ring[slot] = m;
            rxq->bd_ring[slot].addr = hsi::make_regpair(rte_mbuf_data_iova_default(m));
        }
        free -= RX_REFILL_BULK;
    }
    rxq->bd_prod = bd_prod;
    ecore::eth_rx_prod_update(rxq->rx_prod_addr, bd_prod, rxq->cqe_cons);
}

/* Returns the segments of every BD the adapter has consumed to their pools:
 * consecutive segments of one pool go back with a single bulk put. */
inline void tx_reclaim(TxQueue* txq)
{
    const uint16_t hw_cons = __atomic_load_n(txq->hw_bd_cons, __ATOMIC_ACQUIRE);
    uint16_t bd_cons = txq->bd_cons;
    void* bulk[TX_FREE_BULK];
    unsigned n = 0;
    rte_mempool* pool = nullptr;
    while (bd_cons != hw_cons) {
        rte_mbuf* m = rte_pktmbuf_prefree_seg(txq->sw_ring[bd_cons++ & txq->mask]);
        if (m == nullptr)
            continue; /* still referenced elsewhere */
        if (unlikely(m->pool != pool || n == TX_FREE_BULK)) {
            if (n != 0)
                rte_mempool_put_bulk(pool, bulk, n);
            pool = m->pool;
            n = 0;
        }
        bulk[n++] = m;
    }
    if (n != 0)
        rte_mempool_put_bulk(pool, bulk, n);
    txq->bd_cons = bd_cons;
}

inline uint8_t tx_offload_flags(uint64_t ol)
{
    uint8_t flags = txbd::START;
    if (ol & RTE_MBUF_F_TX_IP_CKSUM)
        flags |= txbd::IP_CSUM;
    if (ol & (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG))
        flags |= txbd::L4_CSUM;
    if (ol & RTE_MBUF_F_TX_VLAN)
        flags |= txbd::VLAN_INSERT;
    if (ol & RTE_MBUF_F_TX_TCP_SEG)
        flags |= txbd::LSO;
    return flags;
}

/* A BD is two quadwords: the buffer address, then length, BD count, flags,
 * VLAN tag and MSS; each is written with one store. */
inline void write_tx_bd(TxBd* bd, const rte_mbuf* seg, uint64_t first_bd_fields)
{
    static_assert(offsetof(TxBd, nbytes) == 8 && offsetof(TxBd, nbds) == 10 && offsetof(TxBd, flags) == 11 &&
                  offsetof(TxBd, vlan) == 12 && offsetof(TxBd, mss) == 14);
    auto* q = reinterpret_cast<uint64_t*>(bd);
    q[0] = rte_mbuf_data_iova(seg);
    q[1] = seg->data_len | first_bd_fields;
}

/* nbds, flags, VLAN tag and MSS of a packet's first BD, in place. */
inline uint64_t first_bd_fields(const rte_mbuf* m)
{
    constexpr uint64_t OFFLOADS = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG |
                                  RTE_MBUF_F_TX_VLAN;
    uint64_t fields = uint64_t{m->nb_segs} << 16;
    if (likely((m->ol_flags & OFFLOADS) == 0))
        return fields | uint64_t{txbd::START} << 24;
    return fields | uint64_t{tx_offload_flags(m->ol_flags)} << 24 | uint64_t{m->vlan_tci} << 32 |
           uint64_t{m->tso_segsz} << 48;
}

} // namespace

uint16_t recv_pkts(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    auto* rxq = static_cast<RxQueue*>(rx_queue);
    const uint16_t hw_prod = __atomic_load_n(rxq->hw_cqe_prod, __ATOMIC_ACQUIRE);
    /* Locals, so the stores into mbufs cannot make the compiler reload them. */
    const RxCqe* const cqe_ring = rxq->cqe_ring;
    rte_mbuf* const* const sw_ring = rxq->sw_ring;
    const uint16_t mask = rxq->mask;
    const uint64_t initializer = rxq->mbuf_initializer;
    uint16_t cqe_cons = rxq->cqe_cons;
    uint16_t bd_cons = rxq->bd_cons;
    uint16_t nb_rx = 0;

    while (cqe_cons != hw_prod && nb_rx < nb_pkts) {
        const RxCqe& cqe = cqe_ring[cqe_cons++ & mask];
        rte_mbuf* m = sw_ring[bd_cons++ & mask];
        const uint16_t flags = cqe.pars_flags;
        const RxParseResult& parsed = parse_table[parse_index(flags)];

        /* data_off is the low half-word of the rearm word: the placement
         * offset adds to it in the same store. */
        rearm(m, initializer + cqe.placement_offset);
        m->pkt_len = cqe.pkt_len;
        m->data_len = cqe.pkt_len;
        if (unlikely(cqe.bd_num > 1))
            bd_cons = rx_chain_segments(rxq, m, cqe, bd_cons);
        m->packet_type = parsed.packet_type;
        uint64_t ol_flags = parsed.ol_flags;
        if (flags & pars::VLAN_STRIPPED) {
            ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
            m->vlan_tci = cqe.vlan_tag;
        }
        if (flags & pars::RSS_HASH_VALID) {
            ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
            m->hash.rss = cqe.rss_hash;
        }
        if (unlikely(flags & pars::FLOW_MARK)) {
            ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
            m->hash.fdir.hi = cqe.flow_mark;
        }
        m->ol_flags = ol_flags;
        rx_pkts[nb_rx++] = m;
    }
    if (nb_rx == 0)
        return 0;
    rxq->cqe_cons = cqe_cons;
    rxq->bd_cons = bd_cons;
    rx_refill(rxq);
    return nb_rx;
}

uint16_t xmit_pkts(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    auto* txq = static_cast<TxQueue*>(tx_queue);
    tx_reclaim(txq);

    uint16_t bd_prod = txq->bd_prod;
    uint16_t free = static_cast<uint16_t>(txq->mask - static_cast<uint16_t>(bd_prod - txq->bd_cons));
    uint16_t nb_tx = 0;
    for (; nb_tx < nb_pkts; nb_tx++) {
        rte_mbuf* m = tx_pkts[nb_tx];
        if (unlikely(m->nb_segs > free))
            break;
        free = static_cast<uint16_t>(free - m->nb_segs);

        write_tx_bd(&txq->bd_ring[bd_prod & txq->mask], m, first_bd_fields(m));
        txq->sw_ring[bd_prod++ & txq->mask] = m;
        for (rte_mbuf* seg = m->next; unlikely(seg != nullptr); seg = seg->next) {
            write_tx_bd(&txq->bd_ring[bd_prod & txq->mask], seg, 0);
            txq->sw_ring[bd_prod++ & txq->mask] = seg;
        }
    }
    if (nb_tx != 0) {
        txq->bd_prod = bd_prod;
        ecore::eth_tx_doorbell(txq->doorbell_addr, bd_prod);
    }
    return nb_tx;
}

/* Checks what the adapter cannot do for a packet before tx_burst sees it. */
uint16_t prep_pkts(void* /* tx_queue */, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    constexpr uint64_t SUPPORTED = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG |
                                   RTE_MBUF_F_TX_VLAN | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6;
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
    return static_cast<uint16_t>(__atomic_load_n(rxq->hw_cqe_prod, __ATOMIC_ACQUIRE) - rxq->cqe_cons);
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
        static_cast<uint16_t>(txq->bd_prod - __atomic_load_n(txq->hw_bd_cons, __ATOMIC_ACQUIRE));
    return offset < in_flight ? RTE_ETH_TX_DESC_FULL : RTE_ETH_TX_DESC_DONE;
}

/* ---- slowpath: queue set-up ------------------------------------------- */

namespace {

uint16_t ring_size_for(uint16_t nb_desc)
{
    return static_cast<uint16_t>(rte_align32pow2(RTE_MAX(uint32_t{nb_desc}, hsi::eth::MIN_RING_SIZE)));
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
    Port* port = port_of(dev);
    rx_queue_release(dev, queue_id);

    const uint16_t size = ring_size_for(nb_desc);
    const uint32_t data_room = rte_pktmbuf_data_room_size(mp);
    if (data_room <= RTE_PKTMBUF_HEADROOM + 64) {
        PMD_LOG(ERR, port, "Rx queue %u: mempool %s has mbufs of %u bytes, too small for frames", queue_id,
                mp->name, data_room);
        return -EINVAL;
    }
    const uint64_t offloads = conf->offloads | dev->data->dev_conf.rxmode.offloads;
    const uint16_t buf_size = static_cast<uint16_t>(RTE_MIN(data_room - RTE_PKTMBUF_HEADROOM, 0xffffu));
    dev->data->scattered_rx = (offloads & RTE_ETH_RX_OFFLOAD_SCATTER) != 0;
    if (max_frame_len(dev->data->mtu) > buf_size && !(offloads & RTE_ETH_RX_OFFLOAD_SCATTER)) {
        PMD_LOG(ERR, port, "Rx queue %u: MTU %u needs %u-byte buffers (mbufs have %u); enable scattered Rx",
                queue_id, dev->data->mtu, max_frame_len(dev->data->mtu), buf_size);
        return -EINVAL;
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
        rxq->cqe_chain.alloc(size, sizeof(RxCqe), "rx_cqe") != ecore::Status::success) {
        free_queue(rxq);
        return -ENOMEM;
    }
    rxq->bd_ring = static_cast<RxBd*>(rxq->bd_chain.va());
    rxq->cqe_ring = static_cast<RxCqe*>(rxq->cqe_chain.va());
    rxq->mask = static_cast<uint16_t>(size - 1);
    rxq->mp = mp;
    rxq->port_id = dev->data->port_id;
    rxq->buf_size = buf_size;
    rxq->mbuf_initializer = mbuf_initializer_for(dev->data->port_id);
    rxq->queue_id = queue_id;
    rxq->nb_desc = size;
    rxq->deferred_start = conf->rx_deferred_start;
    dev->data->rx_queues[queue_id] = rxq;
    PMD_LOG(DEBUG, port, "Rx queue %u: %u descriptors, %u-byte buffers", queue_id, size, buf_size);
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
    dev->data->tx_queues[queue_id] = txq;
    PMD_LOG(DEBUG, port_of(dev), "Tx queue %u: %u descriptors", queue_id, size);
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
    for (uint16_t i = 0; i < count; i++)
        rxq->bd_ring[i].addr = hsi::make_regpair(rte_mbuf_data_iova_default(rxq->sw_ring[i]));
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

} // namespace cna::pmd
