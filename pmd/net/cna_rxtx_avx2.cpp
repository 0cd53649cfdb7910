/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna AVX2 fastpath (compiled with -mavx2; select_fastpath calls it only
 * on a CPU with AVX2).
 *
 * Rx: four CQEs per iteration, two per 256-bit register (a CQE is 16 bytes). Packet type and checksum flags come from
 * pshufb lookups into byte tables derived from the scalar parse table; each
 * mbuf gets its rearm word, ol_flags and rx_descriptor_fields1 in one 32-byte
 * store. A group holding a stripped VLAN tag, a flow mark or a multi-buffer
 * frame is handled frame by frame like the scalar path. Buffers are posted
 * four BDs per store, straight from the pool into the software ring.
 * Tx: four packets per iteration, two BDs per store; a packet with several
 * segments or Tx offload flags goes the scalar way. With MBUF_FAST_FREE
 * completed mbufs go back to their pool straight from the software ring.
 */
#include <immintrin.h>

#include "cna_rxtx_common.h"

namespace cna::net {
namespace {

/* rte_mbuf fields the 32-byte Rx store and the Tx loads cover. */
static_assert(offsetof(rte_mbuf, buf_iova) == 8 && offsetof(rte_mbuf, rearm_data) == 16 &&
              offsetof(rte_mbuf, ol_flags) == 24 && offsetof(rte_mbuf, packet_type) == 32 &&
              offsetof(rte_mbuf, pkt_len) == 36 && offsetof(rte_mbuf, data_len) == 40 &&
              offsetof(rte_mbuf, vlan_tci) == 42 && offsetof(rte_mbuf, hash) == 44);
static_assert(offsetof(RxCqe, pkt_len) == 2 && offsetof(RxCqe, vlan_tag) == 6 && offsetof(RxCqe, rss_hash) == 8 &&
              offsetof(RxCqe, placement_offset) == 13 && offsetof(RxCqe, pars_flags) == 14);
static_assert(offsetof(RxCqe, bd_num) == 1);

/* The parse table split by nibble for pshufb: the packet type depends on the
 * L3/L4 nibble only and fits 16 bits; the checksum flags depend on the
 * checksum nibble only and, halved, fit a byte (bit 0 is left for the RSS
 * flag, also halved). */
constexpr bool parse_table_splits()
{
    for (unsigned i = 0; i < 256; i++) {
        const RxParseResult& r = parse_table.entry[i];
        if (r.packet_type > 0xffff || r.packet_type != parse_table.entry[i & 0xf].packet_type ||
            r.ol_flags > 0x1ff || (r.ol_flags & 1) || r.ol_flags != parse_table.entry[i & 0xf0].ol_flags)
            return false;
    }
    return parse_table.entry[0].ol_flags == 0;
}
static_assert(parse_table_splits());
static_assert(RTE_MBUF_F_RX_RSS_HASH == 2 && pars::RSS_HASH_VALID == 1u << 10 && pars::IP_CSUM_CHECKED == 1u << 6 &&
              pars::L4_CSUM_BAD == 1u << 9);

struct ByteTables {
    uint8_t ptype_lo[16]; /* by pars_flags 3..0 */
    uint8_t ptype_hi[16];
    uint8_t csum[16];     /* ol_flags >> 1, by pars_flags 9..6 */
};

constexpr ByteTables byte_tables = [] {
    ByteTables t{};
    for (unsigned i = 0; i < 16; i++) {
        t.ptype_lo[i] = static_cast<uint8_t>(parse_table.entry[i].packet_type);
        t.ptype_hi[i] = static_cast<uint8_t>(parse_table.entry[i].packet_type >> 8);
        t.csum[i] = static_cast<uint8_t>(parse_table.entry[i << 4].ol_flags >> 1);
    }
    return t;
}();

inline __m256i both_lanes(const uint8_t (&table)[16])
{
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table)));
}

/* CQEs c[0] and c[1], one per 128-bit lane: one load, as a CQE is 16 bytes. */
inline __m256i load_cqe_pair(const RxCqe* c)
{
    static_assert(sizeof(RxCqe) == 16);
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
}

constexpr char Z = static_cast<char>(0x80); /* pshufb: zero this byte */

/* Everything the Rx loop keeps in registers. */
struct RxConsts {
    /* CQE -> packet_type (left 0), pkt_len, data_len, vlan_tci, hash.rss */
    __m256i desc = _mm256_setr_epi8(Z, Z, Z, Z, 2, 3, Z, Z, 2, 3, 6, 7, 8, 9, 10, 11,
                                    Z, Z, Z, Z, 2, 3, Z, Z, 2, 3, 6, 7, 8, 9, 10, 11);
    /* pars_flags' low byte to byte 0 */
    __m256i flags_lo = _mm256_setr_epi8(14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z,
                                        14, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z);
    /* placement_offset to byte 0 */
    __m256i offset = _mm256_setr_epi8(13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z,
                                      13, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z, Z);
    __m256i nibble0 = _mm256_setr_epi64x(0xf, 0, 0xf, 0);
    __m256i ptype_lo = both_lanes(byte_tables.ptype_lo);
    __m256i ptype_hi = both_lanes(byte_tables.ptype_hi);
    __m256i initializer;
    /* what makes a group of CQEs go the scalar way: bd_num above 1, a
     * stripped tag, a mark, a PTP event message (tested on the OR of the
     * group's CQEs) */
    static constexpr int64_t RARE_FLAGS = pars::VLAN_STRIPPED | pars::FLOW_MARK | pars::PTP;
    __m256i rare = _mm256_setr_epi64x(0xfe00, RARE_FLAGS << 48, 0xfe00, RARE_FLAGS << 48);
    /* checksum flags and RSS bit (recv_pkts_avx2_offload only) */
    __m256i nibble14 = _mm256_setr_epi64x(0, 0xfLL << 48, 0, 0xfLL << 48);
    __m256i bit0_of_14 = _mm256_setr_epi64x(0, 1LL << 48, 0, 1LL << 48);
    __m256i csum = both_lanes(byte_tables.csum);

    /* ol_flags: what every mbuf of the burst gets (the timestamp's flag),
     * added to what the CQE gives, whose bits it never shares */
    RxConsts(uint64_t init, uint64_t ol_flags)
        : initializer(_mm256_setr_epi64x(static_cast<int64_t>(init), static_cast<int64_t>(ol_flags),
                                         static_cast<int64_t>(init), static_cast<int64_t>(ol_flags)))
    {
    }
};

/* Two CQEs (one per 128-bit lane) into their mbufs. */
template <bool OFFLOAD_RESULTS>
inline void rx_pair(const RxConsts& k, __m256i cqes, rte_mbuf* m0, rte_mbuf* m1)
{
    /* bytes 32..47 of the mbuf: packet_type, pkt_len, data_len, vlan_tci, hash */
    const __m256i pidx = _mm256_and_si256(_mm256_shuffle_epi8(cqes, k.flags_lo), k.nibble0);
    const __m256i ptype =
        _mm256_unpacklo_epi8(_mm256_shuffle_epi8(k.ptype_lo, pidx), _mm256_shuffle_epi8(k.ptype_hi, pidx));
    const __m256i desc = _mm256_blend_epi16(_mm256_shuffle_epi8(cqes, k.desc), ptype, 0x01);

    /* bytes 16..31: the rearm word (placement offset added to data_off) and
     * ol_flags */
    __m256i rearm = _mm256_shuffle_epi8(cqes, k.offset);
    if constexpr (OFFLOAD_RESULTS) {
        /* the checksum byte and the RSS bit meet in byte 14, are doubled
         * into place and moved to bytes 8..9 */
        const __m256i f6 = _mm256_srli_epi16(cqes, 6);
        const __m256i csum = _mm256_shuffle_epi8(k.csum, _mm256_and_si256(f6, k.nibble14));
        const __m256i rss = _mm256_and_si256(_mm256_srli_epi16(f6, 4), k.bit0_of_14);
        rearm = _mm256_or_si256(rearm, _mm256_srli_si256(_mm256_slli_epi16(_mm256_or_si256(csum, rss), 1), 6));
    }
    rearm = _mm256_add_epi64(rearm, k.initializer);

    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rearm_word(m0)), _mm256_permute2x128_si256(rearm, desc, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rearm_word(m1)), _mm256_permute2x128_si256(rearm, desc, 0x31));
}

/* Four stamps, one per 64-bit lane, into their mbufs' Rx timestamp
 * fields: each stored straight from its lane. */
inline void rx_timestamps(__m256i stamps, intptr_t field, rte_mbuf* m0, rte_mbuf* m1, rte_mbuf* m2, rte_mbuf* m3)
{
    auto at = [field](rte_mbuf* m) { return reinterpret_cast<__m128i*>(timestamp_field(m, field)); };
    const __m128i high = _mm256_extracti128_si256(stamps, 1);
    _mm_storel_epi64(at(m2), high);
    *reinterpret_cast<uint64_t*>(at(m3)) = static_cast<uint64_t>(_mm_extract_epi64(high, 1));
    const __m128i low = _mm256_castsi256_si128(stamps);
    _mm_storel_epi64(at(m0), low);
    *reinterpret_cast<uint64_t*>(at(m1)) = static_cast<uint64_t>(_mm_extract_epi64(low, 1));
}

/* rx_refill for the common case: whole bulks taken straight off the lcore's
 * mempool cache, contiguous in the rings, BD addresses computed from the
 * mbuf pointers (IOVA as VA). Anything else goes to rx_refill. */
[[gnu::always_inline]] inline void rx_refill_avx2(RxQueue* rxq)
{
    static_assert(sizeof(RxBd) == 8 && RX_REFILL_BULK % 4 == 0);
    const uint16_t mask = rxq->mask;
    uint16_t bd_prod = rxq->bd_prod;
    uint16_t free = static_cast<uint16_t>(mask - static_cast<uint16_t>(bd_prod - rxq->bd_cons));
    if (free >= RX_REFILL_BULK) {
        rte_mempool_cache* cache = lcore_cache(rxq->mp);
        const __m256i to_bd = _mm256_set1_epi64x(rxq->va_to_bd);
        do {
            const uint16_t slot = bd_prod & mask;
            if (unlikely(slot + unsigned{RX_REFILL_BULK} > mask + 1u || rxq->va_to_bd == 0 || cache == nullptr ||
                         cache->len < RX_REFILL_BULK)) {
                rxq->bd_prod = bd_prod;
                rx_refill(rxq);
                return;
            }
            cache->len -= RX_REFILL_BULK;
            void* const* src = &cache->objs[cache->len];
            rte_mbuf** sw = &rxq->sw_ring[slot];
            RxBd* bd = &rxq->bd_ring[slot];
            for (unsigned i = 0; i < RX_REFILL_BULK; i += 4) {
                const __m256i p = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&src[i]));
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(&sw[i]), p);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(&bd[i]), _mm256_add_epi64(p, to_bd));
            }
            bd_prod = static_cast<uint16_t>(bd_prod + RX_REFILL_BULK);
            free = static_cast<uint16_t>(free - RX_REFILL_BULK);
        } while (free >= RX_REFILL_BULK);
        rxq->bd_prod = bd_prod;
    }
    ecore::eth_rx_prod_update(rxq->rx_prod_addr, bd_prod, rxq->cqe_cons);
}

/* rx_frames for a group's, or the burst's odd frames at either end: out of
 * line, so the vector loop keeps its registers. */
template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
[[gnu::noinline]] RxCursor rx_general(RxQueue* rxq, rte_mbuf** rx_pkts, uint16_t n, RxCursor at)
{
    return rx_frames<OFFLOAD_RESULTS, TIMESTAMP>(rxq, rx_pkts, n, at);
}

/* Everything the Tx loop keeps in registers. */
struct TxConsts {
    /* after the unpack: data_off of both packets (low lane), pkt_len's low
     * half (high lane), each zero-extended to 64 bits */
    __m256i lengths = _mm256_setr_epi8(0, 1, Z, Z, Z, Z, Z, Z, 8, 9, Z, Z, Z, Z, Z, Z,
                                       4, 5, Z, Z, Z, Z, Z, Z, 12, 13, Z, Z, Z, Z, Z, Z);
    /* nbds 1 and START: the second quadword of a single-BD packet's BD */
    __m256i bd_fields = _mm256_set1_epi64x(int64_t{1} << 16 | int64_t{txbd::START} << 24);
    /* on the OR of four packets' bytes 8..39 (buf_iova, rearm word, ol_flags,
     * packet_type and pkt_len): nb_segs other than 1 (it is never 0) and
     * offload flags send the group the scalar way */
    __m256i odd = _mm256_setr_epi64x(0, int64_t{0xfffe} << 32, static_cast<int64_t>(TX_BD_OFFLOADS), 0);
};

/* The burst's frames from `out` to `end` one by one, then its end: where
 * the rings stand, the BDs taken refilled. */
template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
inline uint16_t rx_burst_finish(RxQueue* rxq, rte_mbuf** out, rte_mbuf** end, RxCursor at, uint16_t nb)
{
    if (out != end)
        at = rx_general<OFFLOAD_RESULTS, TIMESTAMP>(rxq, out, static_cast<uint16_t>(end - out), at);
    rxq->cqe_cons = at.cqe_cons;
    rxq->bd_cons = at.bd_cons;
    rx_refill_avx2(rxq);
    return nb;
}

template <bool OFFLOAD_RESULTS, bool TIMESTAMP>
inline uint16_t recv_burst(RxQueue* rxq, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    const uint16_t hw_prod = osal::observe(rxq->hw_cqe_prod);
    RxCursor at{rxq->cqe_cons, rxq->bd_cons};
    const uint16_t nb = RTE_MIN(static_cast<uint16_t>(hw_prod - at.cqe_cons), nb_pkts);
    if (nb == 0)
        return 0;

    /* Groups of four start at a multiple of four, so they never straddle
     * the rings' end; without scattered Rx every frame has one buffer, and
     * BD and CQE consumers stay equal. Past the loop only rxq, nb and the
     * burst's end are live: the fewer values it holds, the fewer its
     * registers spill around it. */
    rte_mbuf** out = rx_pkts;
    rte_mbuf** const end = rx_pkts + nb;
    const uint16_t head = RTE_MIN(nb, static_cast<uint16_t>(-at.cqe_cons & 3));
    if (head != 0) {
        at = rx_general<OFFLOAD_RESULTS, TIMESTAMP>(rxq, out, head, at);
        out += head;
    }
    if (likely(at.bd_cons == at.cqe_cons)) {
        const RxCqe* const cqe_ring = rxq->cqe_ring;
        rte_mbuf* const* const sw_ring = rxq->sw_ring;
        const uint16_t mask = rxq->mask;
        const RxConsts k(rxq->mbuf_initializer, TIMESTAMP ? rxq->timestamp_flag : 0);
        /* Read once: the build lets the mbuf stores alias them. */
        const uint64_t* const stamps = rxq->stamps;
        const intptr_t field = rxq->timestamp_offset;
        uint16_t cons = at.cqe_cons;
        rte_mbuf** const groups_end = out + ((end - out) & ~3);
        while (out != groups_end) {
            const uint16_t slot = cons & mask;
            const RxCqe* c = &cqe_ring[slot];
            const __m256i c01 = load_cqe_pair(c);
            const __m256i c23 = load_cqe_pair(c + 2);
            if (unlikely(!_mm256_testz_si256(_mm256_or_si256(c01, c23), k.rare))) {
                at = rx_general<OFFLOAD_RESULTS, TIMESTAMP>(rxq, out, 4, {cons, cons});
                out += 4;
                if (unlikely(at.bd_cons != at.cqe_cons)) {
                    /* a chained frame: the rest one by one */
                    return rx_burst_finish<OFFLOAD_RESULTS, TIMESTAMP>(rxq, out, end, at, nb);
                }
                cons = at.cqe_cons;
                continue;
            }
            rte_mbuf* const* m = &sw_ring[slot];
            /* In registers: the mbuf stores may alias the ring for the compiler. */
            rte_mbuf* const m0 = m[0], *const m1 = m[1], *const m2 = m[2], *const m3 = m[3];
            rx_pair<OFFLOAD_RESULTS>(k, c01, m0, m1);
            rx_pair<OFFLOAD_RESULTS>(k, c23, m2, m3);
            if constexpr (TIMESTAMP)
                rx_timestamps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(stamps + slot)), field, m0, m1,
                              m2, m3);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m)));
            cons = static_cast<uint16_t>(cons + 4);
            out += 4;
        }
        at = {cons, cons};
    }
    return rx_burst_finish<OFFLOAD_RESULTS, TIMESTAMP>(rxq, out, end, at, nb);
}

} // namespace

uint16_t recv_pkts_avx2(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<false, false>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_avx2_offload(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<true, false>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_avx2_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<false, true>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t recv_pkts_avx2_offload_timestamp(void* rx_queue, rte_mbuf** rx_pkts, uint16_t nb_pkts)
{
    return recv_burst<true, true>(static_cast<RxQueue*>(rx_queue), rx_pkts, nb_pkts);
}

uint16_t xmit_pkts_avx2(void* tx_queue, rte_mbuf** tx_pkts, uint16_t nb_pkts)
{
    auto* txq = static_cast<TxQueue*>(tx_queue);
    if (tx_gone(txq)) [[unlikely]]
        return 0;
    tx_complete(txq);

    const uint16_t mask = txq->mask;
    TxBd* const bd_ring = txq->bd_ring;
    rte_mbuf** const sw_ring = txq->sw_ring;
    uint16_t bd_prod = txq->bd_prod;
    uint16_t free = tx_free_bds(txq, bd_prod);
    uint16_t i = 0;
    auto one = [&] {
        if (!tx_one(txq, tx_pkts[i], bd_prod, free))
            return false;
        i++;
        return true;
    };

    /* Groups of four BDs start at a multiple of four: they never straddle
     * the ring's end. */
    while (i < nb_pkts && (bd_prod & 3) != 0)
        if (!one())
            goto done;
    {
        const TxConsts k;
        const uint16_t groups_end = static_cast<uint16_t>(i + (RTE_MIN(nb_pkts - i, int{free}) & ~3));
        while (i != groups_end) {
            rte_mbuf* const* m = &tx_pkts[i];
            auto load = [](const rte_mbuf* p) {
                /* buf_iova, rearm word, ol_flags, packet_type and pkt_len */
                return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&p->buf_iova));
            };
            const __m256i v0 = load(m[0]), v1 = load(m[1]), v2 = load(m[2]), v3 = load(m[3]);
            if (unlikely(!_mm256_testz_si256(_mm256_or_si256(_mm256_or_si256(v0, v1), _mm256_or_si256(v2, v3)),
                                             k.odd)))
                break;
            /* [iova0, iova1 | ol_flags0, ol_flags1], [rearm0, rearm1 | len0, len1]; a
             * single segment's pkt_len is its data_len */
            auto bd_pair = [&](__m256i a, __m256i b) {
                const __m256i u = _mm256_unpacklo_epi64(a, b), w = _mm256_unpackhi_epi64(a, b);
                const __m256i r =
                    _mm256_add_epi64(_mm256_blend_epi32(u, k.bd_fields, 0xf0), _mm256_shuffle_epi8(w, k.lengths));
                return _mm256_permute4x64_epi64(r, _MM_SHUFFLE(3, 1, 2, 0));
            };
            const uint16_t slot = bd_prod & mask;
            auto* bd = reinterpret_cast<__m256i*>(&bd_ring[slot]);
            _mm256_storeu_si256(bd, bd_pair(v0, v1));
            _mm256_storeu_si256(bd + 1, bd_pair(v2, v3));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(&sw_ring[slot]),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(m)));
            bd_prod = static_cast<uint16_t>(bd_prod + 4);
            free = static_cast<uint16_t>(free - 4);
            i = static_cast<uint16_t>(i + 4);
        }
    }
    while (i < nb_pkts)
        if (!one())
            break;
done:
    tx_publish(txq, bd_prod, i);
    return i;
}

} // namespace cna::net
