/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' Rx: a frame delivered by the wire is classified by every
 * active vport of the PFs on the port, steered to a queue (RSS or the
 * vport's first queue), DMA-written into the queue's posted buffers and
 * completed with an RxCqe; the queue's SB index is updated at the next CAU
 * flush. Engine thread only; no locks, no allocation.
 */
#pragma once

#include <cstdint>
#include <span>

#include "l2/frame.h"

namespace cna::fw {

class PfStorm;
struct RxQueue;
struct Vport;

class RxEngine {
public:
    void receive(std::span<PfStorm* const> pfs, const uint8_t* frame, uint32_t len);

private:
    void deliver(PfStorm& pf, uint32_t vport_id, const uint8_t* frame, uint32_t len, const FrameLayout& layout);
    RxQueue* steer(PfStorm& pf, uint32_t vport_id, const uint8_t* frame, const FrameLayout& layout,
                   uint32_t& hash, uint8_t& hash_type);
    bool place(PfStorm& pf, Vport& vport, RxQueue& q, uint32_t queue_id, const uint8_t* frame, uint32_t len,
               const FrameLayout& layout, uint32_t hash, uint8_t hash_type);
    static uint16_t parsing_flags(const uint8_t* frame, const FrameLayout& layout);

    /* A frame with its VLAN tag stripped, as placed in host memory. */
    alignas(64) uint8_t stripped_[16384];
};

} // namespace cna::fw
