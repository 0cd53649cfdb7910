/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/rss.h"

namespace cna::fw {

using namespace hsi::eth;

RssHashType rss_hash_type(uint16_t enabled, const FrameLayout& layout)
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

} // namespace cna::fw
