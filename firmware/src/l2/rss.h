/* SPDX-License-Identifier: BSD-3-Clause
 * RSS: the hash type a frame qualifies for among those the vport enabled,
 * and its Toeplitz hash over addresses (and ports).
 */
#pragma once

#include <cstdint>

#include "hsi_eth.h"
#include "frame/frame.h"
#include "l2/l2_state.h"

namespace cna::fw {

struct RssResult {
    hsi::eth::RssHashType type = hsi::eth::RssHashType::none;
    uint32_t hash = 0;
};

RssResult rss_hash(const Rss& rss, const uint8_t* frame, const FrameLayout& layout);

} // namespace cna::fw
