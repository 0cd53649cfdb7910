/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/flow_key.h"

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
    }
    const uint8_t* ip = frame + layout.l2_len;
    if (layout.l3 == L3::ipv4) {
        headers |= flow_hdr::IPV4;
        m.ip_tos = ip[1];
        m.ip_proto = ip[9];
        std::memcpy(m.src_ip, ip + 12, 4);
        std::memcpy(m.dst_ip, ip + 16, 4);
    } else if (layout.l3 == L3::ipv6) {
        headers |= flow_hdr::IPV6;
        m.ip_proto = ip[6];
        std::memcpy(m.src_ip, ip + 8, 16);
        std::memcpy(m.dst_ip, ip + 24, 16);
    }
    /* The parser calls a fragment's L4 "other": ports are only matched on
     * whole TCP/UDP packets. */
    if (layout.l4 == L4::tcp || layout.l4 == L4::udp) {
        headers |= layout.l4 == L4::tcp ? flow_hdr::TCP : flow_hdr::UDP;
        m.src_port = load_be16(frame + layout.l4_off);
        m.dst_port = load_be16(frame + layout.l4_off + 2);
    }
    FlowKey key;
    std::memcpy(key.fields.data(), &m, sizeof(m));
    key.headers = headers;
    return key;
}

} // namespace cna::fw
