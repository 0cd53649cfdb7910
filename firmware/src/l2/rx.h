/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' Rx: every frame of a burst the wire delivers is classified
 * by every active vport of the PFs on the port, looked up in the PF's flow
 * rules, steered to a queue (the rule's, RSS or the vport's first queue),
 * DMA-written into the queue's posted buffers and completed with an RxCqe.
 * Statistics and the SB index of each queue that received frames are
 * updated once per burst; the SB reaches the host at the next CAU flush.
 * No allocation. An engine serves one pass at a time; where passes run at
 * once (engine=inline) each has its own engine, and each claims the Rx
 * queues it writes for as long as it has them open.
 */
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "hsi_common.h"
#include "hsi_eth.h"
#include "l2/stats.h"
#include "frame/frame.h"
#include "frame/frame_burst.h"
#include "wire/port.h"

namespace cna::fw {

class Dma;
class FunctionFirmware;
class FunctionList;
class Storms;
struct FlowRule;
struct RxQueue;
struct Vport;

class RxEngine {
public:
    /* slot: the pass slot whose DMA views it uses (FunctionHw::dma);
     * concurrent: whether passes run at once, so that queues are claimed. */
    RxEngine(uint32_t slot, bool concurrent) : slot_(slot), concurrent_(concurrent) {}
    uint32_t slot() const { return slot_; }
    bool concurrent() const { return concurrent_; }

    /* Every function's active vports take the burst, but except's (the
     * sender of frames the port switched locally). */
    void receive(std::span<FunctionFirmware* const> functions, const FrameBurst& burst,
                 const FunctionFirmware* except = nullptr);
    /* One active vport of a function takes the burst (the port's switch
     * sends it there). */
    void receive_at(FunctionFirmware& fn, uint32_t vport_id, const FrameBurst& burst)
    {
        receive_vport(fn, vport_id, burst);
    }

private:
    /* Where a frame goes and what its CQE says about why. */
    struct Steering {
        uint32_t hash = 0;
        uint8_t hash_type = 0;
        bool marked = false;
        uint32_t mark = 0;
    };

    /* When the burst's frames came off the wire, on the port's clock: read
     * at the first frame that needs it, and shared by the burst's frames
     * (the engine takes a burst from the wire at once). */
    class Arrival {
    public:
        Arrival(const FrameBurst& burst, const PtpClock& clock) : wire_time_(burst.wire_time), clock_(clock) {}
        uint64_t operator()()
        {
            if (!known_) {
                time_ = wire_time_ != 0 ? clock_.at(wire_time_) : clock_.now();
                known_ = true;
            }
            return time_;
        }

    private:
        const uint64_t wire_time_;
        const PtpClock& clock_;
        bool known_ = false;
        uint64_t time_ = 0;
    };

    /* A queue as the burst being delivered sees it, opened at the queue's
     * first frame: the host's producers read once (again only when they
     * look exhausted), the rings translated once, the ring indices worked
     * on here and written back with the statistics when the burst is done. */
    struct RxCursor {
        RxQueue* q;
        uint32_t id;
        uint8_t* bds; /* the rings' host addresses; nullptr: per access */
        uint8_t* cqes;
        uint8_t* stamps; /* the stamp ring's (RxQueue::stamped()), nullptr: per access */
        uint16_t bd_cons, cqe_prod;
        uint16_t bd_mask, cqe_mask, bd_max_bytes;
        uint32_t bds_posted; /* posted buffers beyond bd_cons */
        uint32_t cqes_free;  /* CQEs that may be written before the ring is full */
        QueueTally tally;
    };
    static constexpr uint32_t NO_QUEUE = UINT32_MAX;

    /* A vport whose link its PF forced down: the frames of the burst it
     * would have accepted, counted as dropped. */
    static void count_link_down(Vport& vport, const FrameBurst& burst);
    /* One vport's share of a burst, and its statistics and SB updates. */
    void receive_vport(FunctionFirmware& pf, uint32_t vport_id, const FrameBurst& burst);
    /* Whether the vport's frames may take the lane: no flow rules or port
     * VLAN, and its unicast acceptance decided by one compare. */
    static bool takes_lane(FunctionFirmware& pf, const Vport& vport, uint32_t vport_id);
    /* The frames most bursts are made of, from the burst's frame `first`
     * on: unicast, untagged, accepted, one buffer each, into the vport's
     * first queue or the one RSS picks while it has room. The outcome
     * deliver() would have, with what cannot change within a burst decided
     * once. Returns the index of the first frame deliver() must take (the
     * burst's count when none). */
    uint32_t deliver_lane(FunctionFirmware& pf, Vport& vport, uint32_t vport_id, const FrameBurst& burst,
                          uint32_t first, Arrival& arrival);
    /* The cursor of a queue the lane may fill (a started queue of the
     * vport, its rings mapped whole), opened at its first frame; nullptr
     * when deliver() must take the frame. */
    RxCursor* lane_cursor(FunctionFirmware& pf, uint32_t vport_id, uint32_t queue_id);
    void deliver(FunctionFirmware& pf, Vport& vport, uint32_t vport_id, const WireFrame& f, Arrival& arrival);
    /* queue_id if it is a started Rx queue of the vport, else NO_QUEUE. */
    static uint32_t receiving(FunctionFirmware& pf, uint32_t vport_id, uint32_t queue_id);
    /* The frame's Rx queue, NO_QUEUE when it has none. */
    static uint32_t steer(FunctionFirmware& pf, const Vport& vport, uint32_t vport_id, const FlowRule* rule,
                          const WireFrame& f, Steering& s);
    bool place(FunctionFirmware& pf, Vport& vport, RxCursor& c, const WireFrame& f, const Steering& s,
               Arrival& arrival);
    /* A stamped queue's frame's time, beside the CQE it is to have (at
     * cqe_prod); false on a DMA fault. */
    static bool write_stamp(Dma& dma, const RxCursor& c, Arrival& arrival);
    /* The frame into the queue's next posted buffer(s), from bd_cons on;
     * false on a DMA fault. One buffer is the case to make fast. */
    static bool write_buffer(Dma& dma, const uint8_t* bd, const uint8_t* frame, uint32_t len);
    /* The posted buffer bd names, mapped for len bytes; nullptr on a DMA fault. */
    static uint8_t* posted_buffer(Dma& dma, const uint8_t* bd, uint32_t len);
    /* The first line of the buffer `ahead` posted buffers on, asked for
     * (to be written) while this frame is placed: the host's buffers are
     * seldom in cache (or its TLB), and the line is read for ownership. */
    static constexpr uint32_t RX_PREFETCH_AHEAD = 4;
    static void prefetch_buffer(Dma& dma, const RxCursor& c, uint32_t ahead);
    static bool write_buffers(Dma& dma, RxCursor& c, const uint8_t* frame, uint32_t len, uint32_t nbds);
    /* The frame's protocols, and its checksums' results if the vport
     * validates them (a driver that reports none asks for none: the
     * common case pays nothing for them). l4_run_sum: the TCP/UDP
     * checksum run's sum where the copy took it (see l4_sum_run). */
    static uint16_t parsing_flags(const uint8_t* frame, const FrameLayout& layout, bool validate_checksums,
                                  std::optional<uint64_t> l4_run_sum = std::nullopt);
    /* The CQE of a frame placed as it is (steering and stripping add to
     * it), written field by field into cqe: where it is to go when nothing
     * is added. (Built elsewhere and copied, its narrow stores would stall
     * the copy's wide loads, once per frame.) */
    static void write_completion(hsi::eth::RxCqe& cqe, const uint8_t* frame, uint32_t len, const FrameLayout& layout,
                                 uint32_t nbds, uint32_t bd_max_bytes, bool validate_checksums,
                                 std::optional<uint64_t> l4_run_sum = std::nullopt);
    /* What steering adds to a frame's CQE: its flow mark or RSS hash. */
    static void stamp_steering(hsi::eth::RxCqe& cqe, const Steering& s);
    /* `frames` frames, `bytes` long in all, took nbds buffers and one CQE each. */
    static void consume(RxCursor& c, uint32_t nbds, uint32_t frames, uint64_t bytes);
    RxCursor& cursor(FunctionFirmware& pf, uint32_t queue_id);
    /* The queue's claim, waited for with none of the engine's own held (no
     * two passes wait for each other): what the burst placed in the queues
     * it has open is completed first. */
    void claim(FunctionFirmware& pf, uint32_t queue_id);
    static void read_producers(FunctionFirmware& pf, RxCursor& c);
    /* The malicious-driver check: BD producer more than the ring ahead, or
     * CQE consumer ahead of the producer. */
    static void refuse_producers(FunctionFirmware& pf, RxCursor& c, hsi::RxProdData prod, hsi::QueueError why);
    /* Ring indices, statistics and SB index of every queue the burst opened. */
    void close_cursors(FunctionFirmware& pf);

    const uint32_t slot_;
    const bool concurrent_;
    /* What the vport being served received. */
    DestinationTally vport_tally_;
    std::array<RxCursor, hsi::MAX_QUEUES_PER_PF> cursors_{};
    uint32_t open_queues_ = 0;
    uint32_t lane_queues_ = 0; /* the open queues lane_cursor() found fit */
    static_assert(hsi::MAX_QUEUES_PER_PF <= 32, "open_queues_ has a bit per queue");
    /* A frame with its VLAN tag stripped, as placed in host memory. */
    alignas(64) uint8_t stripped_[16384];
};

} // namespace cna::fw
