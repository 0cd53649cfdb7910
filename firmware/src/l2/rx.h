/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' Rx: every frame of a burst the wire delivers is classified
 * by every active vport of the PFs on the port, looked up in the PF's flow
 * rules, steered to a queue (the rule's, RSS or the vport's first queue),
 * DMA-written into the queue's posted buffers and completed with an RxCqe.
 * Statistics and the SB index of each queue that received frames are
 * updated once per burst; the SB reaches the host at the next CAU flush.
 * Engine thread only; no locks, no allocation.
 */
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "hsi_common.h"
#include "l2/frame.h"
#include "l2/frame_burst.h"
#include "l2/stats.h"

namespace cna::fw {

class Dma;
class PfStorm;
struct FlowRule;
struct RxQueue;
struct Vport;

class RxEngine {
public:
    void receive(std::span<PfStorm* const> pfs, const FrameBurst& burst);

private:
    /* Where a frame goes and what its CQE says about why. */
    struct Steering {
        uint32_t hash = 0;
        uint8_t hash_type = 0;
        bool marked = false;
        uint32_t mark = 0;
    };

    /* One vport's share of a burst, and its statistics and SB updates. */
    void receive_vport(PfStorm& pf, uint32_t vport_id, const FrameBurst& burst);
    void deliver(PfStorm& pf, Vport& vport, uint32_t vport_id, const WireFrame& f);
    RxQueue* steer(PfStorm& pf, const Vport& vport, uint32_t vport_id, const FlowRule* rule, const WireFrame& f,
                   Steering& s);
    bool place(PfStorm& pf, Vport& vport, RxQueue& q, uint32_t queue_id, const WireFrame& f, const Steering& s);
    /* The frame into the queue's next posted buffer(s), from bd_cons on;
     * false on a DMA fault. One buffer is the case to make fast. */
    static bool write_buffer(Dma& dma, const uint8_t* bd, const uint8_t* frame, uint32_t len);
    static bool write_buffers(Dma& dma, RxQueue& q, const uint8_t* frame, uint32_t len, uint32_t nbds);
    static uint16_t parsing_flags(const uint8_t* frame, const FrameLayout& layout);

    /* A queue as the burst being delivered sees it, opened at the queue's
     * first frame: the host's producers read once (again only when they
     * look exhausted), the rings translated once, the statistics tallied. */
    struct RxCursor {
        uint32_t bds_posted; /* posted buffers beyond bd_cons */
        uint32_t cqes_free;  /* CQEs that may be written before the ring is full */
        uint8_t* bds;        /* the rings' host addresses; nullptr: per access */
        uint8_t* cqes;
        QueueTally tally;
    };
    RxCursor& cursor(PfStorm& pf, RxQueue& q, uint32_t queue_id);
    static void read_producers(PfStorm& pf, const RxQueue& q, uint32_t queue_id, RxCursor& c);
    /* Statistics and SB index of every queue the burst opened. */
    void close_cursors(PfStorm& pf);

    /* What the vport being served received. */
    DestinationTally vport_tally_;
    std::array<RxCursor, hsi::MAX_QUEUES_PER_PF> cursors_{};
    uint32_t open_queues_ = 0;
    static_assert(hsi::MAX_QUEUES_PER_PF <= 32, "open_queues_ has a bit per queue");
    /* A frame with its VLAN tag stripped, as placed in host memory. */
    alignas(64) uint8_t stripped_[16384];
};

} // namespace cna::fw
