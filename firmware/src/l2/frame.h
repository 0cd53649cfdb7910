/* SPDX-License-Identifier: BSD-3-Clause
 * Where the headers of an Ethernet frame are: the parser both the Tx
 * offloads and the Rx path (classification, RSS, CQE parsing flags) use.
 */
#pragma once

#include <algorithm>
#include <cstdint>

#include "util/bytes.h"

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
};

struct VlanTags {
    uint8_t count;
    uint16_t outer_tci;
    uint32_t type_off; /* where the ethertype after them is */
};
/* The 802.1Q/802.1ad tags after the MAC addresses (at most two are
 * counted; the frame's ethertype at offset 12 is known to be one of them).
 * Out of line: tagged frames are the exception. */
VlanTags parse_vlan_tags(const uint8_t* frame, uint32_t len);

inline void parse_l4(const uint8_t* frame, uint8_t proto, FrameLayout& layout)
{
    uint32_t avail = layout.l3_end - layout.l4_off;
    layout.l4 = L4::other;
    if (layout.fragment)
        return;
    if (proto == IPPROTO_UDP_ && avail >= 8) {
        layout.l4 = L4::udp;
        layout.l4_len = 8;
    } else if (proto == IPPROTO_TCP_ && avail >= 20) {
        uint32_t doff = (frame[layout.l4_off + 12] >> 4) * 4u;
        if (doff >= 20 && doff <= avail) {
            layout.l4 = L4::tcp;
            layout.l4_len = static_cast<uint16_t>(doff);
        }
    }
}

/* false for a runt (shorter than a MAC header); unknown protocols just stop
 * the parse at the deepest layer understood. The IP length field bounds the
 * packet unless ip_length_from_frame (LSO: the field describes nothing yet).
 * Inline: the storms' Tx parses every frame it sends. The parse is built in
 * a local and stored once: stores through layout would make every later
 * read of the frame's bytes wait for them (a byte pointer may alias). */
inline bool parse_frame(const uint8_t* frame, uint32_t len, FrameLayout& out, bool ip_length_from_frame = false)
{
    FrameLayout layout{};
    if (len < ETH_HLEN) [[unlikely]] {
        out = layout;
        return false;
    }
    uint32_t type_off = 12;
    uint16_t type = load_be16(frame + type_off);
    if (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) [[unlikely]] {
        VlanTags tags = parse_vlan_tags(frame, len);
        layout.vlan_tags = tags.count;
        layout.vlan_tci = tags.outer_tci;
        type_off = tags.type_off;
        type = load_be16(frame + type_off);
    }
    layout.l2_len = static_cast<uint16_t>(type_off + 2);
    const uint8_t* ip = frame + layout.l2_len;
    uint32_t avail = len - layout.l2_len;

    if (type == ETHERTYPE_IPV4 && avail >= 20 && (ip[0] >> 4) == 4) {
        uint32_t ihl = (ip[0] & 0xf) * 4u;
        uint32_t total = ip_length_from_frame ? avail : load_be16(ip + 2);
        if (ihl >= 20 && ihl <= avail && total >= ihl) [[likely]] {
            layout.l3 = L3::ipv4;
            layout.l3_len = static_cast<uint16_t>(ihl);
            layout.l3_end = layout.l2_len + std::min(total, avail);
            layout.fragment = (load_be16(ip + 6) & 0x3fff) != 0;
            layout.l4_off = static_cast<uint16_t>(layout.l2_len + ihl);
            parse_l4(frame, ip[9], layout);
        }
    } else if (type == ETHERTYPE_IPV6 && avail >= 40 && (ip[0] >> 4) == 6) {
        layout.l3 = L3::ipv6;
        layout.l3_len = 40;
        uint32_t total = ip_length_from_frame ? avail : 40u + load_be16(ip + 4);
        layout.l3_end = layout.l2_len + std::min(total, avail);
        layout.fragment = ip[6] == IPPROTO_IPV6_FRAG;
        layout.l4_off = static_cast<uint16_t>(layout.l2_len + 40);
        parse_l4(frame, ip[6], layout);
    }
    out = layout;
    return true;
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
