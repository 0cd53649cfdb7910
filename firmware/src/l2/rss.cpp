/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/rss.h"

#include <cstring>

namespace cna::fw {

using namespace hsi::eth;

namespace {

RssHashType pick_type(uint16_t enabled, const FrameLayout& layout)
{
    bool tcp = layout.l4 == L4::tcp && !layout.fragment;
    bool udp = layout.l4 == L4::udp && !layout.fragment;
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

} // namespace

RssResult rss_hash(const Rss& rss, const uint8_t* frame, const FrameLayout& layout)
{
    RssResult result;
    result.type = pick_type(rss.hash_types, layout);
    if (result.type == RssHashType::none || !rss.toeplitz)
        return result;
    /* Input: source and destination address, then the ports for L4 types. */
    uint8_t input[Toeplitz::MAX_HASH_INPUT];
    const uint8_t* ip = frame + layout.l2_len;
    uint32_t addr_bytes = layout.l3 == L3::ipv4 ? 8 : 32;
    std::memcpy(input, ip + (layout.l3 == L3::ipv4 ? 12 : 8), addr_bytes);
    uint32_t len = addr_bytes;
    bool with_ports = result.type != RssHashType::ipv4 && result.type != RssHashType::ipv6;
    if (with_ports) {
        std::memcpy(input + len, frame + layout.l4_off, 4);
        len += 4;
    }
    result.hash = rss.toeplitz->hash(input, len);
    return result;
}

} // namespace cna::fw
