/* SPDX-License-Identifier: BSD-3-Clause
 * TCP segmentation (LSO): cuts one large TCP packet into wire frames of at
 * most mss payload bytes. Every segment carries a copy of the headers with
 * its own IP length (and IPv4 id + i), TCP sequence number and flags (FIN
 * and PSH on the last segment only, CWR on the first only) and freshly
 * computed IP and TCP checksums.
 */
#pragma once

#include <cstdint>

#include "frame/frame.h"

namespace cna::fw {

class LsoSegmenter {
public:
    /* frame/layout: the packet as gathered (a TCP packet, layout.l4 == tcp). */
    LsoSegmenter(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint16_t mss);

    /* Writes the next segment into out (room for headers + mss bytes);
     * returns its length, 0 when done. */
    uint32_t next(uint8_t* out);

private:
    const uint8_t* frame_;
    FrameLayout layout_;
    uint32_t header_len_;
    uint32_t payload_len_;
    uint32_t mss_;
    uint32_t offset_ = 0;
    uint32_t index_ = 0;
    bool done_;
};

} // namespace cna::fw
