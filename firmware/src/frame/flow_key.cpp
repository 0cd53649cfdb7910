/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/flow_key.h"

#include <algorithm>
#include <cstring>

#include "base/bytes.h"

namespace cna::fw {

using namespace hsi::eth;

FlowKey flow_key(const uint8_t* frame, const FrameLayout& layout)
{
    FlowMatch m{};
    std::memcpy(m.dst_mac, frame, 6);
    std::memcpy(m.src_mac, frame + 6, 6);
    m.ethertype = load_be16(frame + layout.l2_len - 2);
    uint16_t headers = 0;
    if (layout.vlan_tags != 0) {
        headers |= flow_hdr::VLAN;
        m.vlan_tci = layout.vlan_tci;
    } else {
        headers |= flow_hdr::UNTAGGED;
    }
    FlowKey key;
    const uint8_t* ip = frame + layout.l2_len;
    if (layout.l3 == L3::ipv4) {
        headers |= flow_hdr::IPV4;
        m.ip_tos = ip[1];
        key.ip_ttl = ip[8];
        m.ip_proto = ip[9];
        std::memcpy(m.src_ip, ip + 12, 4);
        std::memcpy(m.dst_ip, ip + 16, 4);
    } else if (layout.l3 == L3::ipv6) {
        headers |= flow_hdr::IPV6;
        m.ip_proto = ip[6];
        key.ip_ttl = ip[7];
        std::memcpy(m.src_ip, ip + 8, 16);
        std::memcpy(m.dst_ip, ip + 24, 16);
    }
    /* The parser calls a fragment's L4 "other": ports are only matched on
     * whole TCP/UDP packets. */
    if (layout.l4 == L4::tcp || layout.l4 == L4::udp) {
        headers |= layout.l4 == L4::tcp ? flow_hdr::TCP : flow_hdr::UDP;
        m.src_port = load_be16(frame + layout.l4_off);
        m.dst_port = load_be16(frame + layout.l4_off + 2);
        if (layout.l4 == L4::tcp)
            key.tcp_flags = frame[layout.l4_off + 13];
    }
    if (layout.l3 != L3::none && !layout.fragment)
        headers |= flow_hdr::WHOLE_IP;
    const uint8_t icmp_proto = layout.l3 == L3::ipv4 ? IPPROTO_ICMP_ : IPPROTO_ICMPV6_;
    if (layout.l4 == L4::other && !layout.fragment && m.ip_proto == icmp_proto &&
        layout.l3_end >= layout.l4_off + 4u) {
        headers |= flow_hdr::ICMP;
        m.icmp_type = frame[layout.l4_off];
        m.icmp_code = frame[layout.l4_off + 1];
    }
    std::memcpy(key.fields.data(), &m, sizeof(m));
    key.headers = headers;
    return key;
}

namespace {

bool any_set(const uint8_t* bytes, std::size_t len)
{
    return std::any_of(bytes, bytes + len, [](uint8_t b) { return b != 0; });
}

} // namespace

bool flow_headers_consistent(uint16_t headers)
{
    const uint16_t ip = headers & (flow_hdr::IPV4 | flow_hdr::IPV6);
    const uint16_t l4 = headers & (flow_hdr::TCP | flow_hdr::UDP | flow_hdr::ICMP);
    const uint16_t tagging = headers & (flow_hdr::VLAN | flow_hdr::UNTAGGED);
    return (headers & ~flow_hdr::ALL) == 0 && (ip & (ip - 1)) == 0 && (l4 & (l4 - 1)) == 0 &&
           (tagging & (tagging - 1)) == 0 && (ip != 0 || !(headers & flow_hdr::WHOLE_IP));
}

bool flow_mask_fits_headers(const FlowMatch& mask, uint16_t headers)
{
    const bool ip = headers & (flow_hdr::IPV4 | flow_hdr::IPV6);
    if (mask.vlan_tci != 0 && !(headers & flow_hdr::VLAN))
        return false;
    if ((mask.ip_proto != 0 || any_set(mask.src_ip, 16) || any_set(mask.dst_ip, 16)) && !ip)
        return false;
    if (mask.ip_tos != 0 && !(headers & flow_hdr::IPV4))
        return false;
    if ((headers & flow_hdr::IPV4) && (any_set(mask.src_ip + 4, 12) || any_set(mask.dst_ip + 4, 12)))
        return false;
    if ((mask.src_port != 0 || mask.dst_port != 0) && !(headers & (flow_hdr::TCP | flow_hdr::UDP)))
        return false;
    if ((mask.icmp_type != 0 || mask.icmp_code != 0) && !(headers & flow_hdr::ICMP))
        return false;
    return true;
}

FlowWords flow_words(const FlowMatch& m)
{
    FlowWords w;
    std::memcpy(w.data(), &m, sizeof(m));
    return w;
}

} // namespace cna::fw
