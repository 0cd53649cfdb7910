/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' Tx: for every started Tx queue of a PF, take the BDs up to
 * the producer rung on the queue's doorbell, gather each packet by DMA,
 * apply its first BD's offloads (VLAN insert, IPv4 header and TCP/UDP
 * checksums, LSO), put it on the port's wire in bursts and report the BD
 * consumer in the queue's SB index once the burst is delivered (the host
 * may then reuse the buffers it points at). A vport under a rate limit
 * sends while it has credit (l2/tx_rate.h). No allocation; one pass at a
 * time per engine, and where passes run at once each Tx queue is one's
 * (FunctionFirmware::tx_gate).
 */
#pragma once

#include <bit>
#include <cstdint>

#include "hsi_eth.h"
#include "l2/stats.h"
#include "frame/frame_burst.h"
#include "l2/function_firmware.h"
#include "l2/rx.h"

namespace cna::fw {

class Dma;
class Port;
struct FrameLayout;

class TxEngine {
public:
    /* What it sends is delivered on rx, the Rx engine of the same passes. */
    explicit TxEngine(RxEngine& rx) : rx_(rx) {}

    /* Returns the number of BDs consumed. Inline: every engine pass walks
     * the started queues, and most passes find no doorbell rung. Where
     * passes run at once, a queue whose own pass runs is left to it. */
    uint32_t poll(FunctionFirmware& pf, Port& port)
    {
        uint32_t consumed = 0;
        for (uint32_t queues = pf.l2().started_txqs; queues != 0; queues &= queues - 1) {
            const uint32_t index = std::countr_zero(queues);
            TxQueue& q = pf.l2().txqs[index];
            const uint16_t prod = pf.hw().doorbell_prod(q.cid);
            if (prod == std::atomic_ref<uint16_t>(q.bd_cons).load(std::memory_order_relaxed))
                continue;
            if (!rx_.concurrent()) {
                consumed += poll_queue(pf, q, prod, port);
            } else if (HostPassGate& gate = pf.tx_gate(index); gate.enter_if_free()) {
                /* The doorbell read again: another pass may have moved on. */
                do
                    consumed += poll_queue(pf, q, pf.hw().doorbell_prod(q.cid), port);
                while (!gate.done());
            }
        }
        return consumed;
    }
    /* A queue pass (engine=inline's Tx doorbell, beside the port group's
     * pass): the queue's BDs up to its doorbell, on the calling thread, or
     * left to its pass running on another. Returns the BDs consumed. */
    uint32_t serve(FunctionFirmware& pf, uint32_t index, Port& port)
    {
        HostPassGate& gate = pf.tx_gate(index);
        if (!gate.enter())
            return 0;
        TxQueue& q = pf.l2().txqs[index];
        uint32_t consumed = 0;
        do
            for (uint32_t n = 1; n != 0; consumed += n)
                n = poll_queue(pf, q, pf.hw().doorbell_prod(q.cid), port);
        while (!gate.done());
        return consumed;
    }

private:
    /* BDs fetched per DMA read, and the most a queue sends per poll so
     * that one busy queue cannot starve the others. */
    static constexpr uint32_t BD_BATCH = 64;
    static constexpr uint32_t BD_BUDGET = 512;
    /* How far ahead the lane asks for a frame's headers. */
    static constexpr uint32_t PREFETCH_AHEAD = 4;
    /* Room in front of a gathered packet for an inserted VLAN tag. */
    static constexpr uint32_t HEADROOM = 4;
    static constexpr uint32_t MAX_PACKET = 256 * 1024;
    static constexpr uint32_t MAX_SEGMENT = hsi::eth::MAX_MTU + 64;

    /* prod: the queue's doorbell (nothing to do when it is the consumer). */
    uint32_t poll_queue(FunctionFirmware& pf, TxQueue& q, uint16_t prod, Port& port);
    bool fetch_bds(FunctionFirmware& pf, TxQueue& q, uint16_t index, uint32_t count);
    /* The packets most bursts are made of, from bds_[i] on, up to count:
     * one BD, no offload, the common frame (parse_udp_tcp_ipv4) within the
     * MTU, from an active vport without a VF's Tx policy (anti-spoofing,
     * port VLAN, rate limit, link down). The outcome transmit_packet()
     * would have, with the vport's limits read once and the frames tallied
     * locally.
     * Returns the index of the first BD transmit_packet() must take (count
     * when none). */
    uint32_t transmit_plain(Vport& vport, TxQueue& q, Dma& dma, uint32_t i, uint32_t count, Port& port);
    void transmit_packet(FunctionFirmware& pf, Vport& vport, TxQueue& q, const hsi::eth::TxBd* bds, Port& port);
    /* Several BDs, or offloads that write into the frame or cut it (LSO). */
    void transmit_offloaded(FunctionFirmware& pf, Vport& vport, TxQueue& q, const hsi::eth::TxBd* bds, Port& port);
    /* A packet not sent: vport_counter says why, the queue counts a drop. */
    static void drop(uint64_t& vport_counter, TxQueue& q);
    /* A drop the malicious-driver checks made: also latched and raised as
     * a queue error (DMA faults have their own attention). */
    static void refuse(FunctionFirmware& pf, uint64_t& vport_counter, TxQueue& q, hsi::QueueError why);
    /* A doorbell producer more than the ring ahead of the consumer: not
     * acted on, reported once per value rung. */
    static void refuse_doorbell(FunctionFirmware& pf, TxQueue& q, uint16_t prod);
    /* Whether the packet goes on the wire from its one host buffer: no
     * offload writes into it (LSO reads it). Else it is gathered into
     * packet_. */
    static bool zero_copy(const hsi::eth::TxBd& first)
    {
        return first.nbds == 1 && !(first.flags & (hsi::eth::txbd::VLAN_INSERT | hsi::eth::txbd::IP_CSUM |
                                                     hsi::eth::txbd::L4_CSUM));
    }
    /* The packet's bytes, len long. nullptr when a BD breaks the queue's
     * protocol (why says how) or a buffer does not translate (DMA fault,
     * why stays none). */
    uint8_t* gather(Dma& dma, const hsi::eth::TxBd* bds, uint32_t& len, hsi::QueueError& why);
    /* Adds a frame to the burst. parsed: its parse is in the burst's next
     * layout already; scratch: its bytes are in packet_ or segment_, which
     * the next packet overwrites, so it leaves at once. */
    bool send(Vport& vport, const uint8_t* frame, uint32_t len, bool parsed, bool scratch, Port& port);
    /* send(); a frame the driver asked the wire time of (txbd::PTP_TIMESTAMP,
     * with its function's ctrl::TX) leaves at once, its time read before
     * the burst that carries it goes out and latched once it went. */
    void send_packet(FunctionFirmware& pf, const hsi::eth::TxBd& first, Vport& vport, const uint8_t* frame,
                     uint32_t len, const FrameLayout& layout, bool parsed, bool scratch, Port& port);
    void flush(Port& port);
    /* Anti-spoofing: the frame's source MAC is none of the vport's MAC
     * filters, or it carries a VLAN tag the VF may not use. */
    static bool spoofed(const Vport& vport, const uint8_t* frame, uint32_t len);

    RxEngine& rx_;
    hsi::eth::TxBd bds_[BD_BATCH];
    FrameBurst burst_;
    const FunctionFirmware* sender_ = nullptr; /* whose queue is being polled: the port may switch its frames */
    uint32_t sender_vport_ = 0;
    /* What the queue being polled sent, added to its and its vport's
     * statistics at the end. */
    DestinationTally vport_tally_;
    alignas(64) uint8_t packet_[HEADROOM + MAX_PACKET];
    alignas(64) uint8_t segment_[MAX_SEGMENT];
    alignas(64) uint8_t tagged_[MAX_SEGMENT + 4]; /* a frame with its port VLAN inserted */
};

} // namespace cna::fw
