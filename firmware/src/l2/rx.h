/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' Rx: a frame delivered by the wire is classified by every
 * active vport of the PFs on the port, looked up in the PF's flow rules,
 * steered to a queue (the rule's, RSS or the vport's first queue), DMA-written into the queue's posted buffers and
 * completed with an RxCqe; the queue's SB index is updated at the next CAU
 * flush. Engine thread only; no locks, no allocation.
 */
#pragma once

#include <cstdint>
#include <span>

#include "l2/frame.h"

namespace cna::fw {

class PfStorm;
struct FlowRule;
struct RxQueue;
struct Vport;

class RxEngine {
public:
    /* layout: the frame's parse if the sender made one, else nullptr. */
    void receive(std::span<PfStorm* const> pfs, const uint8_t* frame, uint32_t len, const FrameLayout* layout);

private:
    /* Where a frame goes and what its CQE says about why. */
    struct Steering {
        uint32_t hash = 0;
        uint8_t hash_type = 0;
        bool marked = false;
        uint32_t mark = 0;
    };

    void deliver(PfStorm& pf, uint32_t vport_id, const uint8_t* frame, uint32_t len, const FrameLayout& layout);
    RxQueue* steer(PfStorm& pf, uint32_t vport_id, const FlowRule* rule, const uint8_t* frame,
                   const FrameLayout& layout, Steering& s);
    bool place(PfStorm& pf, Vport& vport, RxQueue& q, uint32_t queue_id, const uint8_t* frame, uint32_t len,
               const FrameLayout& layout, const Steering& s);
    static uint16_t parsing_flags(const uint8_t* frame, const FrameLayout& layout);

    /* A frame with its VLAN tag stripped, as placed in host memory. */
    alignas(64) uint8_t stripped_[16384];
};

} // namespace cna::fw
