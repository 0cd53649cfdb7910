/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/tx.h"

#include <algorithm>
#include <cstring>

#include "base/clock.h"
#include "l2/stats.h"
#include "frame/checksum.h"
#include "frame/frame.h"
#include "frame/lso.h"
#include "function/function.h"
#include "l2/function_firmware.h"
#include "ptp/ptp_message.h"
#include "base/bytes.h"
#include "wire/port.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;

bool TxEngine::fetch_bds(FunctionFirmware& pf, TxQueue& q, uint16_t index, uint32_t count)
{
    Dma& dma = pf.hw().dma(rx_.slot());
    uint32_t first = index & q.bd_mask;
    uint32_t run = std::min(count, uint32_t{q.bd_mask} + 1 - first);
    return dma.read(q.bds, first * sizeof(TxBd), bds_, run * sizeof(TxBd)) &&
           (run == count || dma.read(q.bds, 0, bds_ + run, (count - run) * sizeof(TxBd)));
}

[[gnu::flatten]] uint32_t TxEngine::poll_queue(FunctionFirmware& pf, TxQueue& q, uint16_t prod, Port& port)
{
    sender_ = &pf;
    sender_vport_ = q.vport;
    const uint16_t start = q.bd_cons;
    if (prod == start)
        return 0;
    if (static_cast<uint16_t>(prod - start) > q.bd_mask + 1u) [[unlikely]] {
        refuse_doorbell(pf, q, prod);
        return 0;
    }
    Vport& vport = pf.l2().vports[q.vport];
    TxRateLimit& rate = vport.tx_rate;
    if (rate.limited() && !rate.refill(monotonic_ns())) [[unlikely]]
        return 0; /* the BDs wait on the ring for credit */
    Dma& dma = pf.hw().dma(rx_.slot());
    /* The consumer in a register, published once (a glance from another
     * pass, TxEngine::poll, reads it without the queue's gate). */
    uint16_t cons = start;
    auto skip = [&](uint32_t nbds, QueueError why) {
        refuse(pf, vport.stats->tx_error_pkts, q, why);
        cons = static_cast<uint16_t>(cons + nbds);
    };
    while (cons != prod && static_cast<uint16_t>(cons - start) < BD_BUDGET && rate.may_send()) {
        uint32_t produced = static_cast<uint16_t>(prod - cons);
        uint32_t count = std::min(produced, BD_BATCH);
        if (!fetch_bds(pf, q, cons, count)) {
            /* The ring itself does not translate: PGLUE raised the fault. */
            drop(vport.stats->tx_error_pkts, q);
            cons = static_cast<uint16_t>(cons + produced);
            break;
        }
        for (uint32_t i = 0; i < count && rate.may_send();) {
            uint32_t plain_end = transmit_plain(vport, q, dma, i, count, port);
            cons = static_cast<uint16_t>(cons + (plain_end - i));
            if ((i = plain_end) == count)
                break;
            const TxBd& bd = bds_[i];
            if (!(bd.flags & txbd::START)) {
                skip(1, QueueError::first_bd_without_start);
                i++;
            } else if (uint32_t{bd.nbds} - 1 >= MAX_BDS_PER_PACKET) {
                skip(1, QueueError::illegal_nbds);
                i++;
            } else if (i + bd.nbds <= count) [[likely]] {
                transmit_packet(pf, vport, q, &bds_[i], port);
                cons = static_cast<uint16_t>(cons + bd.nbds);
                i += bd.nbds;
            } else if (bd.nbds > produced - i) {
                skip(produced - i, QueueError::insufficient_bds);
                i = count;
            } else {
                break; /* continues past this batch (never at i == 0): fetch again */
            }
        }
    }
    /* Delivered before the consumer moves: the burst points at host buffers. */
    flush(port);
    QueueTally sent = vport_tally_.total();
    vport_tally_.flush_tx(*vport.stats);
    sent.flush(*q.stats);
    if (cons == start)
        return 0;
    std::atomic_ref<uint16_t>(q.bd_cons).store(cons, std::memory_order_relaxed);
    pf.update_sb_index(q.sb_id, q.sb_pi, cons);
    return static_cast<uint16_t>(cons - start);
}

void TxEngine::drop(uint64_t& vport_counter, TxQueue& q)
{
    counter_add(vport_counter, 1);
    counter_add(q.stats->drops, 1);
}

void TxEngine::refuse(FunctionFirmware& pf, uint64_t& vport_counter, TxQueue& q, QueueError why)
{
    drop(vport_counter, q);
    pf.queue_error(QueueKind::tx, static_cast<uint32_t>(&q - pf.l2().txqs.data()), why);
}

void TxEngine::refuse_doorbell(FunctionFirmware& pf, TxQueue& q, uint16_t prod)
{
    if (q.refused_prod == prod)
        return;
    q.refused_prod = prod;
    pf.queue_error(QueueKind::tx, static_cast<uint32_t>(&q - pf.l2().txqs.data()), QueueError::prod_past_ring);
}

uint32_t TxEngine::transmit_plain(Vport& vport, TxQueue& q, Dma& dma, uint32_t i, uint32_t count, Port& port)
{
    if (!vport.active_tx || vport.tx_policy)
        return i;
    const uint32_t max_len = max_frame_len(vport.mtu, 0);
    DestinationTally tally;
    for (; i < count; i++) {
        const TxBd& bd = bds_[i];
        if (bd.nbds != 1 || bd.flags != txbd::START)
            break;
        /* The headers of a frame a few BDs on asked for while this one is
         * parsed: the host's buffers are seldom in cache (or its TLB). */
        if (i + PREFETCH_AHEAD < count)
            dma.prefetch(from_regpair(bds_[i + PREFETCH_AHEAD].addr), false);
        uint32_t len = bd.nbytes;
        const uint8_t* frame = dma.map(from_regpair(bd.addr), len);
        if (frame == nullptr) [[unlikely]] {
            drop(vport.stats->tx_error_pkts, q); /* DMA fault raised */
            continue;
        }
        if (!parse_udp_tcp_ipv4(frame, len, burst_.next_layout()) || len > max_len)
            break;
        tally.add(destination(frame), len);
        burst_.join(frame, len);
        if (burst_.full())
            flush(port);
    }
    vport_tally_.merge(tally);
    return i;
}

void TxEngine::transmit_packet(FunctionFirmware& pf, Vport& vport, TxQueue& q, const TxBd* bds, Port& port)
{
    const TxBd& first = bds[0];
    if (!zero_copy(first) || (first.flags & txbd::LSO)) [[unlikely]]
        return transmit_offloaded(pf, vport, q, bds, port);
    /* One buffer no offload writes into, which transmit_plain() left (not
     * the common frame, too long, or an inactive vport): the frame goes on
     * the wire from the host buffer, parsed where the burst keeps it, by
     * the full parse (the shortcut already said no). */
    uint32_t len = first.nbytes;
    if (len < ETH_HLEN)
        return refuse(pf, vport.stats->tx_error_pkts, q,
                      len == 0 ? QueueError::zero_size_bd : QueueError::packet_too_small);
    const uint8_t* frame = pf.hw().dma(rx_.slot()).map(from_regpair(first.addr), len);
    if (frame == nullptr)
        return drop(vport.stats->tx_error_pkts, q); /* PGLUE raised the fault */
    FrameLayout& layout = burst_.next_layout();
    parse_any_frame(frame, len, layout);
    if (len > max_frame_len(vport.mtu, layout.vlan_tags))
        return refuse(pf, vport.stats->tx_oversize_pkts, q, QueueError::mtu_violation);
    send_packet(pf, first, vport, frame, len, layout, true, false, port);
}

void TxEngine::transmit_offloaded(FunctionFirmware& pf, Vport& vport, TxQueue& q, const TxBd* bds, Port& port)
{
    const TxBd& first = bds[0];
    uint32_t len = 0;
    QueueError why = QueueError::none;
    uint8_t* frame = gather(pf.hw().dma(rx_.slot()), bds, len, why);
    if (frame == nullptr && why == QueueError::none)
        return drop(vport.stats->tx_error_pkts, q); /* PGLUE raised the fault */
    if (frame != nullptr && len < ETH_HLEN)
        why = QueueError::packet_too_small;
    if (why != QueueError::none)
        return refuse(pf, vport.stats->tx_error_pkts, q, why);
    if (first.flags & txbd::VLAN_INSERT) {
        frame -= VLAN_HLEN;
        std::memmove(frame, frame + VLAN_HLEN, 12);
        store_be16(frame + 12, ETHERTYPE_VLAN);
        store_be16(frame + 14, first.vlan);
        len += VLAN_HLEN;
    }

    /* Parsed where the burst keeps it: no copy when it joins. */
    FrameLayout& layout = burst_.next_layout();
    bool lso = first.flags & txbd::LSO;
    parse_frame(frame, len, layout, lso);
    if (lso) {
        if (layout.l4 != L4::tcp || first.mss == 0 ||
            uint32_t{layout.l4_off} + layout.l4_len + first.mss > max_frame_len(vport.mtu, layout.vlan_tags))
            return refuse(pf, vport.stats->tx_error_pkts, q, QueueError::illegal_lso);
        /* The segmenter copies the layout: segments joining the burst
         * overwrite it. */
        LsoSegmenter segmenter(frame, len, layout, first.mss);
        while (uint32_t seg_len = segmenter.next(segment_))
            send(vport, segment_, seg_len, false, true, port);
        return;
    }
    if (len > max_frame_len(vport.mtu, layout.vlan_tags))
        return refuse(pf, vport.stats->tx_oversize_pkts, q, QueueError::mtu_violation);
    if ((first.flags & txbd::IP_CSUM) && layout.l3 == L3::ipv4)
        ipv4_insert_checksum(frame, layout);
    if ((first.flags & txbd::L4_CSUM) && (layout.l4 == L4::tcp || layout.l4 == L4::udp))
        l4_insert_checksum(frame, layout);
    send_packet(pf, first, vport, frame, len, layout, true, !zero_copy(first), port);
}

void TxEngine::send_packet(FunctionFirmware& pf, const TxBd& first, Vport& vport, const uint8_t* frame, uint32_t len,
                           const FrameLayout& layout, bool parsed, bool scratch, Port& port)
{
    PtpBlock& ptp = pf.ptp();
    if (!(first.flags & txbd::PTP_TIMESTAMP) || !(ptp.ctrl() & hsi::ptp::ctrl::TX)) [[likely]] {
        send(vport, frame, len, parsed, scratch, port);
        return;
    }
    /* The frame leaves at once (a scratch frame flushes its burst), the
     * burst carrying the stamp's instant: what the receivers stamp is that
     * instant on their clocks, plus a cable's delay. */
    const PtpMessage message = ptp_message(frame, len, layout, hsi::ptp::ctrl::RX_ALL);
    const uint64_t raw = PtpClock::raw_now();
    burst_.wire_time = raw;
    const bool sent = send(vport, frame, len, parsed, true, port);
    burst_.wire_time = 0; /* not sent: the frames that join next carry no instant */
    if (sent)
        ptp.latch_tx(ptp.clock().at(raw), message);
}

uint8_t* TxEngine::gather(Dma& dma, const TxBd* bds, uint32_t& len, QueueError& why)
{
    const TxBd& first = bds[0];
    for (uint32_t i = 0; i < first.nbds; i++) {
        if (bds[i].nbytes == 0) {
            why = QueueError::zero_size_bd;
            return nullptr;
        }
        if ((len += bds[i].nbytes) > MAX_PACKET) {
            why = QueueError::packet_too_long;
            return nullptr;
        }
    }
    if (zero_copy(first)) {
        static_assert(UINT16_MAX <= MAX_PACKET, "one BD never exceeds MAX_PACKET");
        return dma.map(from_regpair(first.addr), len);
    }
    uint8_t* frame = packet_ + HEADROOM;
    for (uint32_t i = 0, off = 0; i < first.nbds; off += bds[i++].nbytes)
        if (!dma.read(from_regpair(bds[i].addr), frame + off, bds[i].nbytes))
            return nullptr;
    return frame;
}

bool TxEngine::send(Vport& vport, const uint8_t* frame, uint32_t len, bool parsed, bool scratch, Port& port)
{
    /* An inactive vport consumes its BDs without sending: its queues drain. */
    if (!vport.active_tx)
        return false;
    if (vport.tx_policy) [[unlikely]] {
        if (vport.link_down) {
            counter_add(vport.stats->tx_link_down_pkts, 1);
            return false;
        }
        if (vport.anti_spoof && spoofed(vport, frame, len)) {
            counter_add(vport.stats->tx_spoofed_pkts, 1);
            return false;
        }
        if (vport.port_vlan != 0) {
            /* The VF's frame goes out tagged with its port VLAN, the tag
             * inserted after the MAC addresses. */
            std::memcpy(tagged_, frame, 12);
            const uint8_t tag[4] = {0x81, 0x00, static_cast<uint8_t>(vport.port_vlan >> 8),
                                    static_cast<uint8_t>(vport.port_vlan)};
            std::memcpy(tagged_ + 12, tag, sizeof tag);
            std::memcpy(tagged_ + 16, frame + 12, len - 12);
            frame = tagged_;
            len += 4;
            parsed = false;
            scratch = true;
        }
        if (vport.tx_rate.limited())
            vport.tx_rate.spend(len);
    }
    vport_tally_.add(destination(frame), len);
    if (parsed)
        burst_.join(frame, len);
    else
        burst_.add(frame, len);
    if (scratch || burst_.full())
        flush(port);
    return true;
}

bool TxEngine::spoofed(const Vport& vport, const uint8_t* frame, uint32_t len)
{
    if (!mac_filter_match(vport, frame + 6, false, 0))
        return true;
    const uint16_t ethertype = static_cast<uint16_t>(frame[12] << 8 | frame[13]);
    if (len < ETH_HLEN + VLAN_HLEN || (ethertype != 0x8100 && ethertype != 0x88a8))
        return false;
    /* A tag of its own: never under a port VLAN, else one of its VLANs. */
    const uint16_t vid = static_cast<uint16_t>((frame[14] << 8 | frame[15]) & 0x0fff);
    return vport.port_vlan != 0 || (vport.vlan_filters != 0 && !vlan_filter_match(vport, vid));
}

void TxEngine::flush(Port& port)
{
    if (burst_.count == 0)
        return;
    port.transmit(burst_, rx_, sender_, sender_vport_);
    burst_.clear();
}

} // namespace cna::fw
