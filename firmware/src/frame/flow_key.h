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
};

FlowKey flow_key(const uint8_t* frame, const FrameLayout& layout);

} // namespace cna::fw
