/* SPDX-License-Identifier: BSD-3-Clause
 * What a received frame offers to the flow rules: its header fields laid
 * out as hsi::eth::FlowMatch (so a rule is a masked compare of a few words)
 * and the headers it carries.
 */
#pragma once

#include <array>
#include <cstdint>

#include "hsi_eth.h"
#include "frame/frame.h"

namespace cna::fw {

inline constexpr uint32_t FLOW_MATCH_WORDS = sizeof(hsi::eth::FlowMatch) / 8;
static_assert(sizeof(hsi::eth::FlowMatch) % 8 == 0);
using FlowWords = std::array<uint64_t, FLOW_MATCH_WORDS>;

struct FlowKey {
    FlowWords fields{};
    uint16_t headers = 0; /* hsi::eth::flow_hdr::* */
    /* What only the switch's rules match (hsi_switch.h). */
    uint8_t ip_ttl = 0;
    uint8_t tcp_flags = 0;
};

FlowKey flow_key(const uint8_t* frame, const FrameLayout& layout);

/* Whether a frame can carry every header a rule requires: known ones,
 * tagged or not, one IP version, one of TCP, UDP and ICMP, whole IP only
 * with IP. */
bool flow_headers_consistent(uint16_t headers);
/* Whether a rule's mask covers only fields of headers it requires: a field
 * of an absent header would silently compare against zero. */
bool flow_mask_fits_headers(const hsi::eth::FlowMatch& mask, uint16_t headers);

/* A FlowMatch as the words a FlowKey's fields are. */
FlowWords flow_words(const hsi::eth::FlowMatch& m);

} // namespace cna::fw
