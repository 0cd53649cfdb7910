/* SPDX-License-Identifier: BSD-3-Clause
 * Frames travelling together from the storms' Tx (or a TAP) over a wire to
 * the storms' Rx. The engine moves frames in bursts so that everything paid
 * per hop (link and enable checks, port counters, the receiver's lookups of
 * vports and rings, statistics and SB updates) is paid once per burst
 * rather than once per frame.
 *
 * The bytes are not copied: a frame points at its sender's buffer (a host Tx
 * buffer, or the Tx engine's scratch), which must stay unchanged until the
 * burst has been delivered.
 */
#pragma once

#include <array>
#include <cstdint>

#include "frame/frame.h"

namespace cna::fw {

struct WireFrame {
    const uint8_t* data;
    uint32_t len;
    /* false for a runt: layout then describes nothing. */
    bool parsed;
    FrameLayout layout;
    /* Where the frame's ICRC is still to be written (nullptr: nowhere).
     * The adapter's own RoCE engine builds its frames without it
     * (join_roce): a RoCE engine of the adapter receiving one over a cable
     * or loopback takes the bytes as they were built, and anywhere else a
     * frame goes (an L2 queue, a TAP) its ICRC is written first
     * (roce::write_pending_icrc). Frames from the host's queues, a TAP or
     * anywhere else have none pending and their ICRC is checked. */
    uint8_t* pending_icrc = nullptr;
};

struct FrameBurst {
    /* The Rx side's unit of work; a Tx queue fills one per 32 frames. */
    static constexpr uint32_t MAX = 32;

    bool full() const { return count == MAX; }
    /* Where the sender parses the next frame (the storms' Tx parse once,
     * in place) before it joins the burst. */
    FrameLayout& next_layout() { return frames[count].layout; }
    /* The next frame joins, its parse in next_layout(); parsed false for a
     * runt. */
    void join(const uint8_t* data, uint32_t len, bool parsed = true)
    {
        WireFrame& f = frames[count++];
        f.data = data;
        f.len = len;
        f.parsed = parsed;
        f.pending_icrc = nullptr;
        bytes += len;
    }
    /* A RoCE frame the adapter built, its ICRC pending (WireFrame::pending_icrc). */
    void join_roce(uint8_t* data, uint32_t len, uint8_t* icrc)
    {
        join(data, len);
        frames[count - 1].pending_icrc = icrc;
        icrcs_pending = true;
    }
    /* A frame of another burst, as it was parsed there. */
    void push(const WireFrame& f)
    {
        frames[count++] = f;
        bytes += f.len;
        icrcs_pending |= f.pending_icrc != nullptr;
    }
    /* A frame nobody has parsed yet (from a TAP, or an LSO segment). */
    void add(const uint8_t* data, uint32_t len) { join(data, len, parse_frame(data, len, next_layout())); }
    void clear()
    {
        count = 0;
        bytes = 0;
        icrcs_pending = false;
        wire_time = 0;
    }

    uint32_t count = 0;
    uint64_t bytes = 0;
    /* When the frames crossed the wire, on the raw clock (PtpClock::raw_now):
     * set by a sender that stamped one of them going out, and by a cable's
     * delay line for when they came out of it, so that the receiver's
     * stamps are of that instant. 0: as they are taken. */
    uint64_t wire_time = 0;
    /* Whether a frame of the burst may have its ICRC pending: an L2 burst
     * never has, and is not walked for one. */
    bool icrcs_pending = false;
    std::array<WireFrame, MAX> frames;
};

} // namespace cna::fw
