/* SPDX-License-Identifier: BSD-3-Clause
 * What the scalar and the vector burst functions share: the CQE parse table,
 * the per-frame Rx and per-packet Tx handling the vector path falls back to,
 * refill and reclaim.
 *
 * cna_rxtx_avx2.cpp includes this with -mavx2: everything here has internal
 * linkage (unnamed namespace), so the linker can never merge an AVX2-compiled
 * copy into the scalar path that must run on any x86-64.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include "cna_rxtx.h"

namespace cna::net {
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

/* A plain array (no std::array member functions): see the file comment. */
struct ParseTable {
    RxParseResult entry[256];
};

constexpr ParseTable parse_table = [] {
    ParseTable t{};
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
            t.entry[parse_index(f)] = RxParseResult{
                ol, RTE_PTYPE_L2_ETHER | l3_type | (l3_type ? l4[(f & pars::L4_MASK) >> pars::L4_SHIFT] : 0)};
        }
    }
    return t;
}();

/* The packet type depends on the L3/L4 bits (pars_flags 3..0) only. */
constexpr bool ptype_from_low_nibble()
{
    for (unsigned i = 0; i < 256; i++)
        if (parse_table.entry[i].packet_type != parse_table.entry[i & 0xf].packet_type)
            return false;
    return true;
}
static_assert(ptype_from_low_nibble());

/* A PTP event message, which the adapter looks for while timesync is on:
 * RX_IEEE1588_PTP, and RX_IEEE1588_TMST with the latch that holds its
 * stamp (the timesync_read_rx_timestamp flags) when one did. */
inline uint64_t rx_ptp(rte_mbuf* m, uint16_t flags)
{
    const unsigned latch = (flags & pars::PTP_LATCH_MASK) >> pars::PTP_LATCH_SHIFT;
    if ((flags & pars::L3_MASK) == 0)
        m->packet_type = RTE_PTYPE_L2_ETHER_TIMESYNC;
    if (latch == 0)
        return RTE_MBUF_F_RX_IEEE1588_PTP;
    m->timesync = static_cast<uint16_t>(latch - 1);
    return RTE_MBUF_F_RX_IEEE1588_PTP | RTE_MBUF_F_RX_IEEE1588_TMST;
}

/* The mbuf's Rx timestamp field, registered at offset `field`. */
inline rte_mbuf_timestamp_t* timestamp_field(rte_mbuf* m, intptr_t field)
{
    return RTE_MBUF_DYNFIELD(m, field, rte_mbuf_timestamp_t*);
}

/* The adapter's stamp of a frame (the stamp ring's entry of its CQE) into
 * its mbuf's Rx timestamp field: nanoseconds of the port's clock,
 * read_clock's. */
inline void rx_timestamp(rte_mbuf* m, uint64_t stamp, intptr_t field) { *timestamp_field(m, field) = stamp; }

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
inline uint16_t rx_chain_segments(RxQueue* rxq, rte_mbuf* head, const RxCqe& cqe, uint16_t bd_cons)
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

/* Fills the mbuf m (the buffer of the frame's first BD, bd_cons - 1) from its
 * CQE. Returns the new BD consumer. Checksum flags and the RSS hash are
 * reported only with OFFLOAD_RESULTS (the port enabled a checksum offload
 * or RSS_HASH): without them their ol_flags stay 0, "unknown". The Rx
 * timestamp only with TIMESTAMP. */
template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
inline uint16_t rx_complete(RxQueue* rxq, const RxCqe& cqe, rte_mbuf* m, uint16_t bd_cons, uint64_t initializer)
{
    /* Read once: the build allows any store to alias, and the mbuf stores
     * below would otherwise reload the CQE. */
    const uint16_t flags = cqe.pars_flags;
    const uint16_t pkt_len = cqe.pkt_len;
    const uint8_t bd_num = cqe.bd_num;
    /* The stamp beside the CQE: the ring behind the CQEs, at its index. */
    const uint64_t stamp = TIMESTAMP ? rxq->stamps[&cqe - rxq->cqe_ring] : 0;

    /* data_off is the low half-word of the rearm word: the placement
     * offset adds to it in the same store. */
    rearm(m, initializer + cqe.placement_offset);
    m->pkt_len = pkt_len;
    m->data_len = pkt_len;
    if (unlikely(bd_num > 1))
        bd_cons = rx_chain_segments(rxq, m, cqe, bd_cons);
    uint64_t ol_flags = 0;
    if constexpr (TIMESTAMP) {
        rx_timestamp(m, stamp, rxq->timestamp_offset);
        ol_flags = rxq->timestamp_flag;
    }
    if constexpr (OFFLOAD_RESULTS) {
        const RxParseResult& parsed = parse_table.entry[parse_index(flags)];
        m->packet_type = parsed.packet_type;
        ol_flags |= parsed.ol_flags;
        if (flags & pars::RSS_HASH_VALID) {
            ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
            m->hash.rss = cqe.rss_hash;
        }
    } else {
        /* the packet type depends on the L3/L4 bits alone */
        m->packet_type = parse_table.entry[flags & 0xfu].packet_type;
    }
    if (unlikely(flags & pars::VLAN_STRIPPED)) {
        ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
        m->vlan_tci = cqe.vlan_tag;
    }
    if (unlikely(flags & pars::FLOW_MARK)) {
        ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
        m->hash.fdir.hi = cqe.flow_mark;
    }
    if (unlikely(flags & pars::PTP))
        ol_flags |= rx_ptp(m, flags);
    m->ol_flags = ol_flags;
    return bd_cons;
}

/* Where an Rx burst is in the CQE and BD rings. */
struct RxCursor {
    uint16_t cqe_cons;
    uint16_t bd_cons;
};

/* n frames from `at`, one by one, into rx_pkts. Returns where they end. */
template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
inline RxCursor rx_frames(RxQueue* rxq, rte_mbuf** rx_pkts, uint16_t n, RxCursor at)
{
    /* Locals, so the stores into mbufs cannot make the compiler reload them. */
    const RxCqe* const cqe_ring = rxq->cqe_ring;
    rte_mbuf* const* const sw_ring = rxq->sw_ring;
    const uint16_t mask = rxq->mask;
    const uint64_t initializer = rxq->mbuf_initializer;
    uint16_t cqe_cons = at.cqe_cons, bd_cons = at.bd_cons;
    for (uint16_t k = 0; k < n; k++) {
        const RxCqe& cqe = cqe_ring[cqe_cons++ & mask];
        rte_mbuf* m = sw_ring[bd_cons++ & mask];
        bd_cons = rx_complete<OFFLOAD_RESULTS, TIMESTAMP>(rxq, cqe, m, bd_cons, initializer);
        rx_pkts[k] = m;
    }
    return {cqe_cons, bd_cons};
}

/* ---- mbufs straight from and to the lcore's mempool cache ---------------- */

/* The calling lcore's cache of mp; null on a non-EAL thread or for a pool
 * without caches. (rte_lcore_id() is a TLS read: the PMD is built with TLS
 * descriptors, so it costs a few instructions, not a __tls_get_addr call.) */
inline rte_mempool_cache* lcore_cache(rte_mempool* mp)
{
    return rte_mempool_default_cache(mp, rte_lcore_id());
}

/* Takes the n most recently freed objects off the lcore's cache: returns
 * where they are (valid until the next cache operation), or null if the
 * cache holds fewer; the caller then goes through rte_mempool_get_bulk,
 * which refills the cache from the pool. */
inline void* const* cache_take(rte_mempool* mp, unsigned n)
{
    rte_mempool_cache* cache = lcore_cache(mp);
    if (unlikely(cache == nullptr || cache->len < n))
        return nullptr;
    cache->len -= n;
    return &cache->objs[cache->len];
}

/* Returns n mbufs (refcnt 1, direct, one segment, all of mp: what
 * MBUF_FAST_FREE promises) to mp: onto the lcore's cache as they are while
 * it stays under its flush threshold, else through rte_mempool_put_bulk. */
inline void cache_put(rte_mempool* mp, rte_mbuf* const* mbufs, unsigned n)
{
    rte_mempool_cache* cache = lcore_cache(mp);
    if (unlikely(cache == nullptr || cache->len + n > cache->flushthresh)) {
        rte_mempool_put_bulk(mp, reinterpret_cast<void* const*>(mbufs), n);
        return;
    }
    std::memcpy(&cache->objs[cache->len], mbufs, n * sizeof(void*));
    cache->len += n;
}

/* ---- Rx refill ------------------------------------------------------------- */

/* The BD address of a posted mbuf: its data at the default headroom. With
 * IOVA as VA and plain pktmbufs (rxq->va_to_bd set) that is a fixed offset
 * from the mbuf itself, so the mbuf need not be read at all. */
inline uint64_t rx_bd_addr(const RxQueue* rxq, const rte_mbuf* m)
{
    return rxq->va_to_bd != 0 ? reinterpret_cast<uintptr_t>(m) + rxq->va_to_bd : rte_mbuf_data_iova_default(m);
}

/* Posts buffers on free BDs in bulks of RX_REFILL_BULK, then publishes BD
 * producer and CQE consumer in one store. A bulk stops at the ring's end:
 * the rings' sizes are multiples of the bulk, so from then on every bulk
 * starts at a multiple of it and stays contiguous (the vector refill relies
 * on that). */
[[gnu::noinline]] inline void rx_refill(RxQueue* rxq)
{
    uint16_t bd_prod = rxq->bd_prod;
    uint16_t free = static_cast<uint16_t>(rxq->mask - static_cast<uint16_t>(bd_prod - rxq->bd_cons));
    while (free >= RX_REFILL_BULK) {
        const uint16_t slot = bd_prod & rxq->mask;
        const uint16_t n = static_cast<uint16_t>(RTE_MIN(unsigned{RX_REFILL_BULK}, rxq->mask + 1u - slot));
        rte_mbuf** bufs = &rxq->sw_ring[slot];
        if (void* const* cached = cache_take(rxq->mp, n)) {
            std::memcpy(bufs, cached, n * sizeof(void*));
        } else if (unlikely(rte_mempool_get_bulk(rxq->mp, reinterpret_cast<void**>(bufs), n) != 0)) {
            std::atomic_ref(rxq->alloc_failures).fetch_add(n, std::memory_order_relaxed); /* read by stats */
            break;
        }
        for (uint16_t i = 0; i < n; i++)
            rxq->bd_ring[slot + i].addr = hsi::make_regpair(rx_bd_addr(rxq, bufs[i]));
        bd_prod = static_cast<uint16_t>(bd_prod + n);
        free = static_cast<uint16_t>(free - n);
    }
    rxq->bd_prod = bd_prod;
    ecore::eth_rx_prod_update(rxq->rx_prod_addr, bd_prod, rxq->cqe_cons);
}

/* ---- Tx completion ------------------------------------------------------- */

/* Returns the segments of every BD the adapter has consumed to their pools:
 * consecutive segments of one pool go back with a single bulk put. */
[[gnu::noinline]] inline void tx_reclaim(TxQueue* txq, uint16_t hw_cons)
{
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

/* With MBUF_FAST_FREE the application promises one pool, refcnt 1 and
 * direct mbufs; a queue that ever sent a chain has fast_free cleared (the
 * head would go back with its next pointer set). The software ring then
 * goes back to the pool as it is, at most two runs (before and after the
 * ring's end). Otherwise segment by segment. */
/* The adapter went away under the port (cna_removal.cpp): a Tx burst sends
 * nothing more and rings no doorbell. Told by a flag rather than by new
 * burst functions, which only the application's lcores may change safely. */
inline bool tx_gone(const TxQueue* txq) { return txq->gone->load(std::memory_order_relaxed); }

inline void tx_complete(TxQueue* txq)
{
    const uint16_t hw_cons = osal::observe(txq->hw_bd_cons);
    if (!txq->fast_free) {
        tx_reclaim(txq, hw_cons);
        return;
    }
    uint16_t bd_cons = txq->bd_cons;
    while (bd_cons != hw_cons) {
        const uint16_t slot = bd_cons & txq->mask;
        const unsigned n = RTE_MIN(static_cast<uint16_t>(hw_cons - bd_cons), txq->mask + 1u - slot);
        rte_mbuf* const* run = &txq->sw_ring[slot];
        cache_put(run[0]->pool, run, n);
        bd_cons = static_cast<uint16_t>(bd_cons + n);
    }
    txq->bd_cons = bd_cons;
}

/* The mbuf Tx offloads a first BD carries. */
constexpr uint64_t TX_BD_OFFLOADS = RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG |
                                    RTE_MBUF_F_TX_VLAN | RTE_MBUF_F_TX_IEEE1588_TMST;

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
    if (ol & RTE_MBUF_F_TX_IEEE1588_TMST)
        flags |= txbd::PTP_TIMESTAMP;
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
    uint64_t fields = uint64_t{m->nb_segs} << 16;
    if (likely((m->ol_flags & TX_BD_OFFLOADS) == 0))
        return fields | uint64_t{txbd::START} << 24;
    return fields | uint64_t{tx_offload_flags(m->ol_flags)} << 24 | uint64_t{m->vlan_tci} << 32 |
           uint64_t{m->tso_segsz} << 48;
}

/* Writes the BDs of packet m from bd_prod on. Returns the new BD producer. */
inline uint16_t tx_packet(TxQueue* txq, rte_mbuf* m, uint16_t bd_prod)
{
    write_tx_bd(&txq->bd_ring[bd_prod & txq->mask], m, first_bd_fields(m));
    txq->sw_ring[bd_prod++ & txq->mask] = m;
    for (rte_mbuf* seg = m->next; unlikely(seg != nullptr); seg = seg->next) {
        write_tx_bd(&txq->bd_ring[bd_prod & txq->mask], seg, 0);
        txq->sw_ring[bd_prod++ & txq->mask] = seg;
    }
    return bd_prod;
}

/* The BDs a Tx burst has left, from the BD consumer tx_complete() saw. */
inline uint16_t tx_free_bds(const TxQueue* txq, uint16_t bd_prod)
{
    return static_cast<uint16_t>(txq->mask - static_cast<uint16_t>(bd_prod - txq->bd_cons));
}

/* Packet m the general way, advancing bd_prod and free; false, and nothing
 * written, when its BDs do not fit. */
inline bool tx_one(TxQueue* txq, rte_mbuf* m, uint16_t& bd_prod, uint16_t& free)
{
    if (unlikely(m->nb_segs > free))
        return false;
    /* A chain breaks the promise MBUF_FAST_FREE reclaim relies on (its
     * head's next): from now on this queue reclaims segment by segment. */
    if (unlikely(m->nb_segs > 1))
        txq->fast_free = false;
    free = static_cast<uint16_t>(free - m->nb_segs);
    bd_prod = tx_packet(txq, m, bd_prod);
    return true;
}

/* The end of a Tx burst of nb_tx packets: one doorbell for all their BDs. */
inline void tx_publish(TxQueue* txq, uint16_t bd_prod, uint16_t nb_tx)
{
    if (nb_tx != 0) {
        txq->bd_prod = bd_prod;
        ecore::doorbell(txq->doorbell_addr, bd_prod);
    }
}

} // namespace
} // namespace cna::net
