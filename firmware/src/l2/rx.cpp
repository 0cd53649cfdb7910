/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/rx.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>

#include "base/backoff.h"
#include "base/bytes.h"
#include "base/clock.h"
#include "l2/classify.h"
#include "l2/function_firmware.h"
#include "l2/rss.h"
#include "l2/stats.h"
#include "frame/checksum.h"
#include "frame/flow_key.h"
#include "function/function.h"
#include "slowpath/storm_ram.h"
#include "slowpath/storms.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;

void RxEngine::receive(std::span<FunctionFirmware* const> functions, const FrameBurst& burst,
                       const FunctionFirmware* except)
{
    for (FunctionFirmware* pf : functions) {
        if (pf == except || !pf->started())
            continue;
        for (uint32_t vports = pf->l2().active_rx_vports; vports != 0; vports &= vports - 1)
            receive_vport(*pf, std::countr_zero(vports), burst);
        for (uint32_t vports = pf->l2().link_down_vports; vports != 0; vports &= vports - 1) [[unlikely]]
            count_link_down(pf->l2().vports[std::countr_zero(vports)], burst);
    }
}

void RxEngine::count_link_down(Vport& vport, const FrameBurst& burst)
{
    for (uint32_t i = 0; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        if (f.parsed && classify(vport, f.data, f.len, f.layout, destination(f.data)) == RxVerdict::accept)
            counter_add(vport.stats->rx_link_down_pkts, 1);
    }
}

/* Flattened: the per-frame steps inline into one loop, the price of a call
 * and its argument shuffling being a good part of a frame's cost. */
[[gnu::flatten]] void RxEngine::receive_vport(FunctionFirmware& pf, uint32_t vport_id, const FrameBurst& burst)
{
    Vport& vport = pf.l2().vports[vport_id];
    const bool lane = takes_lane(pf, vport, vport_id);
    Arrival arrival(burst, pf.ptp().clock());
    for (uint32_t i = 0; i < burst.count;) {
        if (lane && (i = deliver_lane(pf, vport, vport_id, burst, i, arrival)) == burst.count)
            break;
        const WireFrame& f = burst.frames[i++];
        if (f.parsed)
            deliver(pf, vport, vport_id, f, arrival);
        else
            counter_add(vport.stats->rx_error_pkts, 1); /* runt */
    }
    vport_tally_.flush_rx(*vport.stats);
    close_cursors(pf);
}

bool RxEngine::takes_lane(FunctionFirmware& pf, const Vport& vport, uint32_t vport_id)
{
    /* What the lane leaves out of classify() and steer(): PTP stamping, flow rules,
     * a port VLAN (no untagged frame is the VF's), several MAC filters
     * when only matched or only unmatched frames are accepted (with no
     * filter at all none matches: no 48-bit address equals WALK_FILTERS). */
    const uint16_t ucast = vport.rx_accept & (accept::UCAST_MATCHED | accept::UCAST_UNMATCHED);
    const bool either = ucast == (accept::UCAST_MATCHED | accept::UCAST_UNMATCHED);
    return pf.flows().empty(vport_id) && vport.port_vlan == 0 && ucast != 0 &&
           (pf.ptp().ctrl() & hsi::ptp::ctrl::RX_ALL) == 0 &&
           (either || vport.sole_mac != Vport::WALK_FILTERS || vport.filters.empty()) &&
           (vport.rss.enabled || vport.rx_queues != 0);
}

RxEngine::RxCursor* RxEngine::lane_cursor(FunctionFirmware& pf, uint32_t vport_id, uint32_t queue_id)
{
    const uint32_t bit = 1u << queue_id;
    if (lane_queues_ & bit) [[likely]]
        return &cursors_[queue_id];
    if (receiving(pf, vport_id, queue_id) == NO_QUEUE)
        return nullptr;
    RxCursor& c = cursor(pf, queue_id);
    if (c.bds == nullptr || c.cqes == nullptr || (c.q->stamped() && c.stamps == nullptr))
        return nullptr;
    lane_queues_ |= bit;
    return &c;
}

namespace {

/* The copy into host memory is the cost of a long frame, and its source
 * reaches the cache line by line as the copy asks for it (the Tx parse
 * brought in only the headers): asked for while the previous frame is
 * copied, the lines come in parallel. (Asked for earlier, the copies'
 * own writes evict them again.) */
constexpr uint32_t CACHE_LINE = 64;

void prefetch_body(const WireFrame& f)
{
    for (uint32_t off = CACHE_LINE; off < f.len; off += CACHE_LINE)
        __builtin_prefetch(f.data + off);
}

/* The frame into its buffer. Inline for the frames of one or two lines,
 * most of a small-packet burst: two overlapping fixed-size copies instead
 * of a call. */
void copy_frame(uint8_t* dst, const uint8_t* src, uint32_t len)
{
    constexpr uint32_t HALF = 32;
    if (len >= HALF && len <= 2 * HALF) {
        std::memcpy(dst, src, HALF);
        std::memcpy(dst + len - HALF, src + len - HALF, HALF);
    } else {
        std::memcpy(dst, src, len);
    }
}

/* From this length on, a frame whose TCP/UDP checksum is validated has
 * the checksum's run summed as it is copied: one pass over its bytes where
 * the copy and the validation took two (half the engine's time for a
 * 1518-byte frame). */
constexpr uint32_t SUM_WHILE_COPYING = 256;

/* copy_frame(), and the native sum of the frame's L4 checksum run when
 * the copy could take it on the way (else nullopt: the validation sums
 * the frame itself). */
std::optional<uint64_t> copy_frame_summing(uint8_t* dst, const WireFrame& f, bool validate_checksums)
{
    const FrameLayout& l = f.layout;
    const SumRun run = l4_sum_run(l);
    if (!validate_checksums || f.len < SUM_WHILE_COPYING || run.end == 0 || (l.l4 != L4::tcp && l.l4 != L4::udp)) {
        copy_frame(dst, f.data, f.len);
        return std::nullopt;
    }
    std::memcpy(dst, f.data, run.begin);
    uint64_t sum = copy_native_sum(dst + run.begin, f.data + run.begin, run.end - run.begin);
    std::memcpy(dst + run.end, f.data + run.end, f.len - run.end);
    return sum;
}

/* RSS over a burst's frames, the last TCP or UDP over IPv4 flow's result
 * remembered: a burst is most often a few flows' frames back to back, and
 * the hash is the costliest step of steering one. The flow is the 12 bytes
 * of addresses and ports, one run after a 20-byte IPv4 header. */
class BurstRss {
public:
    explicit BurstRss(const Rss& rss) : rss_(rss) {}

    RssResult operator()(const WireFrame& f)
    {
        const FrameLayout& l = f.layout;
        if (l.l3 != L3::ipv4 || l.l4_off != l.l2_len + 20 || (l.l4 != L4::udp && l.l4 != L4::tcp) || l.fragment)
            return rss_hash(rss_, f.data, l);
        Flow flow{.tcp = l.l4 == L4::tcp};
        std::memcpy(&flow.addresses, f.data + l.l2_len + 12, 8);
        std::memcpy(&flow.ports, f.data + l.l4_off, 4);
        if (!(known_ && flow == last_)) {
            last_ = flow;
            known_ = true;
            result_ = rss_hash(rss_, f.data, l);
        }
        return result_;
    }

private:
    struct Flow {
        uint64_t addresses = 0;
        uint32_t ports = 0;
        bool tcp = false;
        bool operator==(const Flow&) const = default;
    };
    const Rss& rss_;
    bool known_ = false;
    Flow last_;
    RssResult result_;
};

} // namespace

uint32_t RxEngine::deliver_lane(FunctionFirmware& pf, Vport& vport, uint32_t vport_id, const FrameBurst& burst,
                                uint32_t first, Arrival& arrival)
{
    /* classify() and steer() for the frames most bursts are made of, with
     * what a burst cannot change decided once: unicast, untagged (no VLAN
     * filter applies), within the MTU, one buffer, a queue with room. */
    const uint16_t ucast = vport.rx_accept & (accept::UCAST_MATCHED | accept::UCAST_UNMATCHED);
    const uint64_t mac = vport.sole_mac;
    const uint32_t max_len = max_frame_len(vport.mtu, 0);
    const bool rx_csum = vport.rx_csum;
    const Rss& rss = vport.rss;
    BurstRss hash(rss);
    const uint32_t first_queue = std::countr_zero(vport.rx_queues);
    Dma& dma = pf.hw().dma(slot_);

    uint64_t bytes = 0;
    uint32_t placed = 0;
    uint32_t i = first;
    for (; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        if (f.len > CACHE_LINE && i + 1 < burst.count) /* the next frame is most likely long too */
            prefetch_body(burst.frames[i + 1]);
        if (!f.parsed || f.len > max_len || f.layout.vlan_tags != 0 || (f.data[0] & 1) != 0 ||
            !(ucast & (mac_key(f.data) == mac ? accept::UCAST_MATCHED : accept::UCAST_UNMATCHED)))
            break;
        Steering s;
        uint32_t queue_id = first_queue;
        if (rss.enabled) {
            RssResult result = hash(f);
            s.hash = result.hash;
            s.hash_type = static_cast<uint8_t>(result.type);
            queue_id = rss.reta[result.hash % rss::RETA_SIZE];
        }
        RxCursor* c = lane_cursor(pf, vport_id, queue_id);
        if (c == nullptr || f.len > c->bd_max_bytes || c->bds_posted == 0 || c->cqes_free == 0)
            break;
        prefetch_buffer(dma, *c, RX_PREFETCH_AHEAD);
        uint8_t* buffer = posted_buffer(dma, c->bds + (c->bd_cons & c->bd_mask) * sizeof(RxBd), f.len);
        if (buffer == nullptr) [[unlikely]] {
            counter_add(vport.stats->rx_error_pkts, 1); /* DMA fault raised; the buffer stays posted */
            continue;
        }
        std::optional<uint64_t> l4_run_sum = copy_frame_summing(buffer, f, rx_csum);
        auto& cqe = *reinterpret_cast<RxCqe*>(c->cqes + (c->cqe_prod & c->cqe_mask) * sizeof(RxCqe));
        write_completion(cqe, f.data, f.len, f.layout, 1, c->bd_max_bytes, rx_csum, l4_run_sum);
        stamp_steering(cqe, s);
        if (c->stamps != nullptr) [[unlikely]] /* the lane's stamped queues have their ring mapped */
            write_stamp(dma, *c, arrival);
        consume(*c, 1, 1, f.len);
        bytes += f.len;
        placed++;
    }
    vport_tally_.add(Destination::unicast, bytes, placed);
    return i;
}

void RxEngine::deliver(FunctionFirmware& pf, Vport& vport, uint32_t vport_id, const WireFrame& f, Arrival& arrival)
{
    if (vport.port_vlan != 0 && (f.layout.vlan_tags == 0 || (f.layout.vlan_tci & 0x0fff) != vport.port_vlan)) {
        counter_add(vport.stats->rx_filtered_pkts, 1); /* not the VF's VLAN */
        return;
    }
    Destination dst = destination(f.data);
    switch (classify(vport, f.data, f.len, f.layout, dst)) {
    case RxVerdict::accept: break;
    case RxVerdict::filtered: counter_add(vport.stats->rx_filtered_pkts, 1); return;
    case RxVerdict::oversize: counter_add(vport.stats->rx_oversize_pkts, 1); return;
    }
    /* Flow rules see what the vport accepted, before RSS (hsi.md section 7). */
    const FlowRule* rule = nullptr;
    if (!pf.flows().empty(vport_id)) [[unlikely]] {
        rule = pf.flows().match(vport_id, flow_key(f.data, f.layout));
        if (rule != nullptr && (rule->actions & flow_action::COUNT))
            count_frame(rule->counters->hits, rule->counters->bytes, f.len);
        if (rule != nullptr && (rule->actions & flow_action::DROP)) {
            counter_add(vport.stats->rx_flow_drop_pkts, 1);
            return;
        }
    }
    Steering s;
    uint32_t queue_id = steer(pf, vport, vport_id, rule, f, s);
    if (queue_id == NO_QUEUE) {
        counter_add(vport.stats->rx_no_buffer_pkts, 1);
        return;
    }
    if (place(pf, vport, cursor(pf, queue_id), f, s, arrival))
        vport_tally_.add(dst, f.len);
}

uint32_t RxEngine::steer(FunctionFirmware& pf, const Vport& vport, uint32_t vport_id, const FlowRule* rule,
                         const WireFrame& f, Steering& s)
{
    /* A rule's QUEUE or RSS replaces the vport's steering; MARK rides along. */
    const Rss& rss = rule != nullptr && (rule->actions & flow_action::RSS) ? rule->rss : vport.rss;
    if (rule != nullptr && (rule->actions & flow_action::MARK)) {
        s.marked = true;
        s.mark = rule->mark;
    }
    uint32_t queue_id;
    if (rule != nullptr && (rule->actions & flow_action::QUEUE)) {
        queue_id = rule->queue;
    } else if (rss.enabled) {
        RssResult result = rss_hash(rss, f.data, f.layout);
        s.hash = result.hash;
        s.hash_type = static_cast<uint8_t>(result.type);
        queue_id = rss.reta[result.hash % rss::RETA_SIZE];
    } else {
        if (vport.rx_queues == 0)
            return NO_QUEUE;
        queue_id = std::countr_zero(vport.rx_queues);
    }
    return receiving(pf, vport_id, queue_id);
}

uint32_t RxEngine::receiving(FunctionFirmware& pf, uint32_t vport_id, uint32_t queue_id)
{
    const RxQueue& q = pf.l2().rxqs[queue_id];
    return q.started && q.vport == vport_id ? queue_id : NO_QUEUE;
}

/* The parse's protocol codes are the CQE's: the flags are built without a
 * branch per protocol. */
static_assert(static_cast<uint16_t>(L3::ipv4) == pars::L3_IPV4 && static_cast<uint16_t>(L3::ipv6) == pars::L3_IPV6);
static_assert((static_cast<uint16_t>(L4::tcp) << pars::L4_SHIFT) == pars::L4_TCP &&
              (static_cast<uint16_t>(L4::udp) << pars::L4_SHIFT) == pars::L4_UDP &&
              (static_cast<uint16_t>(L4::other) << pars::L4_SHIFT) == pars::L4_OTHER);

uint16_t RxEngine::parsing_flags(const uint8_t* frame, const FrameLayout& layout, bool validate_checksums,
                                 std::optional<uint64_t> l4_run_sum)
{
    uint16_t flags = static_cast<uint16_t>(static_cast<uint16_t>(layout.l3) |
                                           static_cast<uint16_t>(layout.l4) << pars::L4_SHIFT);
    if (layout.fragment)
        flags |= pars::IP_FRAGMENT;
    if (layout.vlan_tags != 0)
        flags |= pars::VLAN_PRESENT;
    if (!validate_checksums)
        return flags;
    if (layout.l3 == L3::ipv4)
        flags |= ipv4_checksum_ok(frame, layout) ? pars::IP_CSUM_CHECKED : pars::IP_CSUM_CHECKED | pars::IP_CSUM_BAD;
    if ((layout.l4 == L4::tcp || layout.l4 == L4::udp) && l4_checksum_present(frame, layout)) {
        uint16_t sum = l4_run_sum ? l4_native_sum_of_run(layout, *l4_run_sum) : l4_native_sum(frame, layout);
        flags |= sum == 0xffff ? pars::L4_CSUM_CHECKED : pars::L4_CSUM_CHECKED | pars::L4_CSUM_BAD;
    }
    return flags;
}

RxEngine::RxCursor& RxEngine::cursor(FunctionFirmware& pf, uint32_t queue_id)
{
    RxCursor& c = cursors_[queue_id];
    if (open_queues_ & (1u << queue_id))
        return c;
    if (concurrent_)
        claim(pf, queue_id);
    open_queues_ |= 1u << queue_id;
    RxQueue& q = pf.l2().rxqs[queue_id];
    Dma& dma = pf.hw().dma(slot_);
    c.q = &q;
    c.id = queue_id;
    c.bds = dma.map_ring(q.bds);
    c.cqes = dma.map_ring(q.cqes);
    c.stamps = q.stamped() ? dma.map_ring(q.stamps) : nullptr;
    c.bd_cons = q.bd_cons;
    c.cqe_prod = q.cqe_prod;
    c.bd_mask = q.bd_mask;
    c.cqe_mask = q.cqe_mask;
    c.bd_max_bytes = q.bd_max_bytes;
    read_producers(pf, c);
    return c;
}

void RxEngine::claim(FunctionFirmware& pf, uint32_t queue_id)
{
    std::atomic<bool>& claim = pf.rx_claim(queue_id);
    if (!claim.exchange(true, std::memory_order_acquire)) [[likely]]
        return;
    close_cursors(pf);
    do
        while (claim.load(std::memory_order_relaxed))
            cpu_relax();
    while (claim.exchange(true, std::memory_order_acquire));
}

void RxEngine::read_producers(FunctionFirmware& pf, RxCursor& c)
{
    RxProdData prod = pf.rx_prod(c.id);
    uint32_t posted = static_cast<uint16_t>(prod.bd_prod - c.bd_cons);
    /* One CQE stays unused: a full ring would look empty to the driver. */
    uint32_t cqes_pending = static_cast<uint16_t>(c.cqe_prod - prod.cqe_cons);
    if (posted > c.bd_mask + 1u || cqes_pending > c.cqe_mask) [[unlikely]] {
        refuse_producers(pf, c, prod, posted > c.bd_mask + 1u ? QueueError::prod_past_ring : QueueError::cons_past_prod);
        return;
    }
    c.bds_posted = static_cast<uint16_t>(posted);
    c.cqes_free = c.cqe_mask - cqes_pending;
}

void RxEngine::refuse_producers(FunctionFirmware& pf, RxCursor& c, RxProdData prod, QueueError why)
{
    /* Nothing posted, no room: the queue's frames count as no-buffer drops
     * until the driver writes producers that make sense. */
    c.bds_posted = 0;
    c.cqes_free = 0;
    uint64_t word = prod.bd_prod | uint64_t{prod.cqe_cons} << 16;
    if (c.q->refused_producers == word)
        return;
    c.q->refused_producers = word;
    pf.queue_error(QueueKind::rx, c.id, why);
}

void RxEngine::close_cursors(FunctionFirmware& pf)
{
    lane_queues_ = 0;
    for (; open_queues_ != 0; open_queues_ &= open_queues_ - 1) {
        RxCursor& c = cursors_[std::countr_zero(open_queues_)];
        if (c.tally.pkts != 0) {
            c.q->bd_cons = c.bd_cons;
            c.q->cqe_prod = c.cqe_prod;
            c.tally.flush(*c.q->stats);
            pf.update_sb_index(c.q->sb_id, c.q->sb_pi, c.cqe_prod);
        }
        if (concurrent_)
            pf.rx_claim(c.id).store(false, std::memory_order_release);
    }
}

void RxEngine::prefetch_buffer(Dma& dma, const RxCursor& c, uint32_t ahead)
{
    if (c.bds_posted <= ahead)
        return;
    RxBd posted;
    std::memcpy(&posted, c.bds + ((c.bd_cons + ahead) & c.bd_mask) * sizeof(RxBd), sizeof(posted));
    dma.prefetch(from_regpair(posted.addr), true);
}

uint8_t* RxEngine::posted_buffer(Dma& dma, const uint8_t* bd, uint32_t len)
{
    RxBd posted;
    std::memcpy(&posted, bd, sizeof(posted)); /* read once: the host may rewrite it */
    return dma.map(from_regpair(posted.addr), len);
}

bool RxEngine::write_buffer(Dma& dma, const uint8_t* bd, const uint8_t* frame, uint32_t len)
{
    uint8_t* buffer = posted_buffer(dma, bd, len);
    if (buffer == nullptr)
        return false;
    copy_frame(buffer, frame, len);
    return true;
}

bool RxEngine::write_buffers(Dma& dma, RxCursor& c, const uint8_t* frame, uint32_t len, uint32_t nbds)
{
    RxBd bds[MAX_BDS_PER_PACKET];
    uint32_t first = c.bd_cons & c.bd_mask;
    uint32_t run = std::min(nbds, uint32_t{c.bd_mask} + 1 - first); /* up to the ring's end */
    bool ok = dma.read(c.q->bds, first * sizeof(RxBd), bds, run * sizeof(RxBd)) &&
              (run == nbds || dma.read(c.q->bds, 0, bds + run, (nbds - run) * sizeof(RxBd)));
    for (uint32_t i = 0, off = 0; ok && i < nbds; i++) {
        uint32_t chunk = std::min<uint32_t>(c.bd_max_bytes, len - off);
        ok = dma.write(from_regpair(bds[i].addr), frame + off, chunk);
        off += chunk;
    }
    return ok;
}

bool RxEngine::place(FunctionFirmware& pf, Vport& vport, RxCursor& c, const WireFrame& f, const Steering& s,
                     Arrival& arrival)
{
    const uint8_t* frame = f.data;
    uint32_t len = f.len;
    const FrameLayout& layout = f.layout;
    /* A port VLAN is the adapter's: stripped, and not told. */
    bool strip = (vport.vlan_strip || vport.port_vlan != 0) && layout.vlan_tags != 0;
    if (strip)
        len -= VLAN_HLEN;

    /* Most frames fit one buffer: no division for them. */
    uint32_t nbds = len <= c.bd_max_bytes ? 1 : (len + c.bd_max_bytes - 1) / c.bd_max_bytes;
    if (nbds > c.bds_posted || c.cqes_free == 0)
        read_producers(pf, c); /* the host may have posted since */
    if (nbds > vport.max_bds_per_packet || nbds > c.bds_posted || c.cqes_free == 0) {
        counter_add(vport.stats->rx_no_buffer_pkts, 1);
        counter_add(c.q->stats->drops, 1);
        return false;
    }

    if (strip) [[unlikely]] {
        /* The outer tag moves into the CQE: MAC addresses, then the rest. */
        std::memcpy(stripped_, frame, 12);
        std::memcpy(stripped_ + 12, frame + 12 + VLAN_HLEN, len - 12);
        frame = stripped_;
    }
    auto dma_fault = [&] {
        counter_add(vport.stats->rx_error_pkts, 1); /* DMA fault raised; buffers stay posted */
        return false;
    };
    Dma& dma = pf.hw().dma(slot_);
    bool ok = nbds == 1 && c.bds != nullptr
                  ? write_buffer(dma, c.bds + (c.bd_cons & c.bd_mask) * sizeof(RxBd), frame, len)
                  : write_buffers(dma, c, frame, len, nbds);
    if (!ok)
        return dma_fault();

    /* Written in its ring slot (beyond the producer, so the host does not
     * look at it yet) when the ring is mapped whole; else staged and
     * DMA-written. */
    uint64_t cqe_offset = uint64_t{static_cast<uint16_t>(c.cqe_prod & c.cqe_mask)} * sizeof(RxCqe);
    RxCqe staged;
    RxCqe& cqe = c.cqes != nullptr ? *reinterpret_cast<RxCqe*>(c.cqes + cqe_offset) : staged;
    /* The received frame: its layout says where its headers are. */
    write_completion(cqe, f.data, len, layout, nbds, c.bd_max_bytes, vport.rx_csum);
    if (strip && vport.port_vlan == 0) [[unlikely]] {
        cqe.vlan_tag = layout.vlan_tci;
        cqe.pars_flags |= pars::VLAN_STRIPPED;
    }
    stamp_steering(cqe, s);
    if (pf.ptp().ctrl() & hsi::ptp::ctrl::RX_ALL) [[unlikely]]
        cqe.pars_flags |= pf.ptp().stamp_rx(f.data, f.len, layout, arrival());
    if (c.cqes == nullptr && !dma.write(c.q->cqes, cqe_offset, &staged, sizeof(staged)))
        return dma_fault();
    if (c.q->stamped() && !write_stamp(dma, c, arrival)) [[unlikely]]
        return dma_fault();
    consume(c, nbds, 1, len);
    return true;
}

bool RxEngine::write_stamp(Dma& dma, const RxCursor& c, Arrival& arrival)
{
    const uint64_t offset = uint64_t{static_cast<uint16_t>(c.cqe_prod & c.cqe_mask)} * RX_TIMESTAMP_BYTES;
    if (c.stamps != nullptr) [[likely]] {
        store_le64(c.stamps + offset, arrival());
        return true;
    }
    uint8_t stamp[RX_TIMESTAMP_BYTES];
    store_le64(stamp, arrival());
    return dma.write(c.q->stamps, offset, stamp, sizeof stamp);
}

void RxEngine::write_completion(RxCqe& cqe, const uint8_t* frame, uint32_t len, const FrameLayout& layout,
                                uint32_t nbds, uint32_t bd_max_bytes, bool validate_checksums,
                                std::optional<uint64_t> l4_run_sum)
{
    cqe = RxCqe{};
    cqe.type = static_cast<uint8_t>(CqeType::regular);
    cqe.bd_num = static_cast<uint8_t>(nbds);
    cqe.pkt_len = static_cast<uint16_t>(len);
    cqe.len_on_first_bd = static_cast<uint16_t>(std::min(len, bd_max_bytes));
    cqe.pars_flags = parsing_flags(frame, layout, validate_checksums, l4_run_sum);
}

void RxEngine::stamp_steering(RxCqe& cqe, const Steering& s)
{
    if (s.marked) [[unlikely]] {
        cqe.flow_mark = s.mark; /* in the RSS hash's place */
        cqe.pars_flags |= pars::FLOW_MARK;
    } else if (s.hash_type != 0) {
        cqe.rss_hash = s.hash;
        cqe.rss_hash_type = s.hash_type;
        cqe.pars_flags |= pars::RSS_HASH_VALID;
    }
}

void RxEngine::consume(RxCursor& c, uint32_t nbds, uint32_t frames, uint64_t bytes)
{
    c.bd_cons = static_cast<uint16_t>(c.bd_cons + nbds);
    c.cqe_prod = static_cast<uint16_t>(c.cqe_prod + frames);
    c.bds_posted -= nbds;
    c.cqes_free -= frames;
    c.tally.pkts += frames;
    c.tally.bytes += bytes;
}

} // namespace cna::fw
