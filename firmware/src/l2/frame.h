/* SPDX-License-Identifier: BSD-3-Clause
 * Where the headers of an Ethernet frame are: the parser both the Tx
 * offloads and the Rx path (classification, RSS, CQE parsing flags) use.
 */
#pragma once

#include <cstdint>

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

/* false for a runt (shorter than a MAC header); unknown protocols just stop
 * the parse at the deepest layer understood. The IP length field bounds the
 * packet unless ip_length_from_frame (LSO: the field describes nothing yet). */
bool parse_frame(const uint8_t* frame, uint32_t len, FrameLayout& layout, bool ip_length_from_frame = false);

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
