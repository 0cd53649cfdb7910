/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/frame.h"

#include <algorithm>

#include "base/bytes.h"

namespace cna::fw {
namespace {

void parse_l4(const uint8_t* frame, uint8_t proto, FrameLayout& layout)
{
    uint32_t avail = layout.l3_end - layout.l4_off;
    if (layout.fragment) {
        layout.l4 = L4::other;
    } else if (proto == IPPROTO_TCP_ && avail >= 20) {
        uint32_t doff = (frame[layout.l4_off + 12] >> 4) * 4u;
        layout.l4 = doff >= 20 && doff <= avail ? L4::tcp : L4::other;
        layout.l4_len = layout.l4 == L4::tcp ? static_cast<uint16_t>(doff) : 0;
    } else if (proto == IPPROTO_UDP_ && avail >= 8) {
        layout.l4 = L4::udp;
        layout.l4_len = 8;
    } else {
        layout.l4 = L4::other;
    }
}

} // namespace

bool parse_any_frame(const uint8_t* frame, uint32_t len, FrameLayout& layout, bool ip_length_from_frame)
{
    layout = FrameLayout{};
    if (len < ETH_HLEN)
        return false;
    uint32_t off = 12;
    uint16_t type = load_be16(frame + off);
    while ((type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) && layout.vlan_tags < 2 && off + 6 <= len) {
        if (layout.vlan_tags == 0)
            layout.vlan_tci = load_be16(frame + off + 2);
        layout.vlan_tags++;
        off += VLAN_HLEN;
        type = load_be16(frame + off);
    }
    layout.l2_len = static_cast<uint16_t>(off + 2);
    const uint8_t* ip = frame + layout.l2_len;
    uint32_t avail = len - layout.l2_len;

    if (type == ETHERTYPE_IPV4 && avail >= 20 && (ip[0] >> 4) == 4) {
        uint32_t ihl = (ip[0] & 0xf) * 4u;
        uint32_t total = ip_length_from_frame ? avail : load_be16(ip + 2);
        if (ihl < 20 || ihl > avail || total < ihl)
            return true;
        layout.l3 = L3::ipv4;
        layout.l3_len = static_cast<uint16_t>(ihl);
        layout.l3_end = layout.l2_len + std::min(total, avail);
        layout.fragment = (load_be16(ip + 6) & 0x3fff) != 0;
        layout.l4_off = static_cast<uint16_t>(layout.l2_len + ihl);
        parse_l4(frame, ip[9], layout);
    } else if (type == ETHERTYPE_IPV6 && avail >= 40 && (ip[0] >> 4) == 6) {
        layout.l3 = L3::ipv6;
        layout.l3_len = 40;
        uint32_t total = ip_length_from_frame ? avail : 40u + load_be16(ip + 4);
        layout.l3_end = layout.l2_len + std::min(total, avail);
        layout.fragment = ip[6] == IPPROTO_IPV6_FRAG;
        layout.l4_off = static_cast<uint16_t>(layout.l2_len + 40);
        parse_l4(frame, ip[6], layout);
    }
    return true;
}

} // namespace cna::fw
