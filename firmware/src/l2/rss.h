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

/* The hash type the frame qualifies for among the enabled ones. */
inline hsi::eth::RssHashType rss_hash_type(uint16_t enabled, const FrameLayout& layout)
{
    using namespace hsi::eth;
    const bool tcp = layout.l4 == L4::tcp && !layout.fragment;
    const bool udp = layout.l4 == L4::udp && !layout.fragment;
    if (layout.l3 == L3::ipv4) {
        if (tcp && (enabled & rss::TCP_IPV4))
            return RssHashType::tcp_ipv4;
        if (udp && (enabled & rss::UDP_IPV4))
            return RssHashType::udp_ipv4;
        if (enabled & rss::IPV4)
            return RssHashType::ipv4;
    } else if (layout.l3 == L3::ipv6) {
        if (tcp && (enabled & rss::TCP_IPV6))
            return RssHashType::tcp_ipv6;
        if (udp && (enabled & rss::UDP_IPV6))
            return RssHashType::udp_ipv6;
        if (enabled & rss::IPV6)
            return RssHashType::ipv6;
    }
    return RssHashType::none;
}

/* Inline: every frame of an RSS vport is hashed. The input is the source
 * and destination addresses, then the ports for the L4 types, read where
 * the frame has them. */
inline RssResult rss_hash(const Rss& rss, const uint8_t* frame, const FrameLayout& layout)
{
    using hsi::eth::RssHashType;
    RssResult result;
    result.type = rss_hash_type(rss.hash_types, layout);
    if (result.type == RssHashType::none || !rss.toeplitz)
        return result;
    const uint8_t* ip = frame + layout.l2_len;
    const Toeplitz& t = *rss.toeplitz;
    constexpr std::size_t V4 = 8, V6 = 32; /* address bytes */
    bool v4 = layout.l3 == L3::ipv4;
    result.hash = v4 ? t.hash_at(0, ip + 12, V4) : t.hash_at(0, ip + 8, V6);
    if (result.type != RssHashType::ipv4 && result.type != RssHashType::ipv6)
        result.hash ^= t.hash_at(v4 ? V4 : V6, frame + layout.l4_off, 4);
    return result;
}

} // namespace cna::fw
