/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 packets out: each frame of a burst built in its own transmit
 * buffer (the encapsulation along a path, the BTH, room for the extended
 * headers and the payload, the pad), then finished (the ICRC) and joined
 * to the burst. A frame begun and not ended never goes out, so an engine
 * that fails half-way through a packet just leaves it.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "hsi_rdma.h"
#include "frame/frame_burst.h"
#include "roce/transport.h"

namespace cna::fw::roce {

class PacketWriter {
public:
    /* One buffer a frame of a burst, this large. */
    static constexpr uint32_t FRAME_BUFFER = 4096 + 128;

    /* stats: the PF's counters in storm RAM. */
    explicit PacketWriter(hsi::rdma::RoceStats& stats) : stats_(stats) {}

    /* Headers for a packet along `path` of `payload` bytes (plus pad and
     * ICRC) after `ext` bytes of extended headers; returns where the BTH
     * goes. */
    uint8_t* begin_packet(const hsi::rdma::RocePath& path, FrameBurst& out, const Bth& bth, uint32_t ext,
                          uint32_t payload);
    void end_packet(FrameBurst& out);

    /* The buffers, for frames other than packets (the neighbours'). */
    uint8_t* buffers() { return tx_buffers_.data(); }

private:
    uint8_t* frame_buffer(FrameBurst& out);

    hsi::rdma::RoceStats& stats_;
    std::vector<uint8_t> tx_buffers_ = std::vector<uint8_t>(FrameBurst::MAX * FRAME_BUFFER);
    FrameLayout building_;     /* the frame begin_packet() laid out */
};

} // namespace cna::fw::roce
