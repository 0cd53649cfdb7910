/* SPDX-License-Identifier: BSD-3-Clause
 * Where the headers of an Ethernet frame are: the parser both the Tx
 * offloads and the Rx path (classification, RSS, CQE parsing flags) use.
 */
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/bytes.h"

namespace cna::fw {

inline constexpr uint32_t ETH_HLEN = 14;
inline constexpr uint32_t VLAN_HLEN = 4;
inline constexpr uint16_t ETHERTYPE_IPV4 = 0x0800;
inline constexpr uint16_t ETHERTYPE_IPV6 = 0x86dd;
inline constexpr uint16_t ETHERTYPE_VLAN = 0x8100;
inline constexpr uint16_t ETHERTYPE_QINQ = 0x88a8;
inline constexpr uint8_t IPPROTO_TCP_ = 6;
inline constexpr uint8_t IPPROTO_UDP_ = 17;
inline constexpr uint8_t IPPROTO_IPV6_FRAG = 44;
inline constexpr uint8_t IPPROTO_ICMP_ = 1;
inline constexpr uint8_t IPPROTO_ICMPV6_ = 58;

enum class L3 : uint8_t { none, ipv4, ipv6 };
enum class L4 : uint8_t { none, tcp, udp, other };

struct FrameLayout {
    uint8_t vlan_tags = 0;   /* 802.1Q / 802.1ad tags after the MAC addresses */
    uint16_t vlan_tci = 0;   /* outer tag */
    uint16_t l2_len = 0;     /* MAC header, tags and ethertype */
    L3 l3 = L3::none;
    L4 l4 = L4::none;
    bool fragment = false;
    uint16_t l3_len = 0;     /* IP header */
    uint16_t l4_off = 0;
    uint16_t l4_len = 0;     /* TCP/UDP header */
    uint32_t l3_end = 0;     /* end of the IP packet (its length field, clipped to the frame) */

    bool operator==(const FrameLayout&) const = default;
};

/* Any frame, header by header. false for a runt (shorter than a MAC
 * header); unknown protocols just stop the parse at the deepest layer
 * understood. The IP length field bounds the packet unless
 * ip_length_from_frame (LSO: the field describes nothing yet). */
bool parse_any_frame(const uint8_t* frame, uint32_t len, FrameLayout& layout, bool ip_length_from_frame = false);

/* The frame most traffic is made of: untagged IPv4 with a 20-byte header,
 * not a fragment, carrying UDP or TCP. Recognised by a few loads and
 * compares (the ethertype and the version/IHL byte 0x45 in one); false for
 * anything else (parse_any_frame then decides), never a different layout
 * than parse_any_frame's. */
inline bool parse_udp_tcp_ipv4(const uint8_t* frame, uint32_t len, FrameLayout& layout)
{
    constexpr uint32_t L4_OFF = ETH_HLEN + 20;
    constexpr uint32_t MIN_TCP = 20;
    if (len < L4_OFF + MIN_TCP || (load_be32(frame + 12) & 0xffffff00u) != (uint32_t{ETHERTYPE_IPV4} << 16 | 0x4500u))
        return false;
    uint32_t total = load_be16(frame + ETH_HLEN + 2);
    uint8_t proto = frame[ETH_HLEN + 9];
    if (total < L4_OFF - ETH_HLEN + 8 || (load_be16(frame + ETH_HLEN + 6) & 0x3fff) != 0)
        return false;
    uint32_t l3_end = ETH_HLEN + std::min(total, len - ETH_HLEN);
    uint32_t l4_avail = l3_end - L4_OFF;
    uint32_t l4_len;
    L4 l4;
    if (proto == IPPROTO_UDP_) {
        l4 = L4::udp;
        l4_len = 8;
    } else {
        l4_len = (frame[L4_OFF + 12] >> 4) * 4u;
        if (proto != IPPROTO_TCP_ || l4_len < MIN_TCP || l4_len > l4_avail)
            return false;
        l4 = L4::tcp;
    }
    /* Field by field into place: built on the stack and copied, the
     * narrow stores would stall the copy's wide load. */
    layout = FrameLayout{.l2_len = ETH_HLEN,
                         .l3 = L3::ipv4,
                         .l4 = l4,
                         .l3_len = 20,
                         .l4_off = L4_OFF,
                         .l4_len = static_cast<uint16_t>(l4_len),
                         .l3_end = l3_end};
    return true;
}

/* Whatever the frame: false for a runt, as parse_any_frame. */
inline bool parse_frame(const uint8_t* frame, uint32_t len, FrameLayout& layout, bool ip_length_from_frame = false)
{
    return (!ip_length_from_frame && parse_udp_tcp_ipv4(frame, len, layout)) ||
           parse_any_frame(frame, len, layout, ip_length_from_frame);
}

} // namespace cna::fw

namespace cna::fw {

enum class Destination { unicast, multicast, broadcast };

inline Destination destination(const uint8_t* frame)
{
    static constexpr uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    if (frame[0] & 1)
        return __builtin_memcmp(frame, broadcast, 6) == 0 ? Destination::broadcast : Destination::multicast;
    return Destination::unicast;
}

/* Longest frame a vport with this MTU may send or receive. */
inline uint32_t max_frame_len(uint32_t mtu, uint32_t vlan_tags) { return mtu + ETH_HLEN + VLAN_HLEN * vlan_tags; }

} // namespace cna::fw
