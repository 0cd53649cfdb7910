/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/encap.h"

#include <cstring>

#include "frame/checksum.h"
#include "roce/transport.h"

namespace cna::fw::roce {

using hsi::rdma::RocePath;

namespace {

constexpr uint32_t IPV4_HLEN = 20;
constexpr uint32_t IPV6_HLEN = 40;
constexpr uint16_t IPV4_DONT_FRAGMENT = 0x4000;

bool tagged(const RocePath& path) { return path.vlan_tci != hsi::rdma::NO_VLAN; }
bool over_ipv6(const RocePath& path) { return path.ip_version == hsi::rdma::IP_VERSION_6; }

} // namespace

uint32_t encap_len(const RocePath& path)
{
    return ETH_HLEN + (tagged(path) ? VLAN_HLEN : 0) + (over_ipv6(path) ? IPV6_HLEN : IPV4_HLEN) + UDP_HLEN;
}

FrameLayout write_encap(uint8_t* frame, const RocePath& path, uint32_t roce_len)
{
    FrameLayout layout;
    std::memcpy(frame, path.dst_mac, 6);
    std::memcpy(frame + 6, path.src_mac, 6);
    uint8_t* p = frame + 12;
    if (tagged(path)) {
        store_be16(p, ETHERTYPE_VLAN);
        store_be16(p + 2, path.vlan_tci);
        p += VLAN_HLEN;
        layout.vlan_tags = 1;
        layout.vlan_tci = path.vlan_tci;
    }
    const uint32_t udp_len = UDP_HLEN + roce_len;
    if (over_ipv6(path)) {
        store_be16(p, ETHERTYPE_IPV6);
        uint8_t* ip = p + 2;
        store_be32(ip, 6u << 28 | uint32_t{path.traffic_class} << 20 | (path.flow_label & 0xfffff));
        store_be16(ip + 4, static_cast<uint16_t>(udp_len));
        ip[6] = IPPROTO_UDP_;
        ip[7] = path.hop_limit;
        std::memcpy(ip + 8, path.src_ip, 16);
        std::memcpy(ip + 24, path.dst_ip, 16);
        layout.l3 = L3::ipv6;
        layout.l3_len = IPV6_HLEN;
    } else {
        store_be16(p, ETHERTYPE_IPV4);
        uint8_t* ip = p + 2;
        ip[0] = 0x45;
        ip[1] = path.traffic_class;
        store_be16(ip + 2, static_cast<uint16_t>(IPV4_HLEN + udp_len));
        store_be16(ip + 4, 0);
        store_be16(ip + 6, IPV4_DONT_FRAGMENT);
        ip[8] = path.hop_limit;
        ip[9] = IPPROTO_UDP_;
        store_be16(ip + 10, 0);
        std::memcpy(ip + 12, path.src_ip + 12, 4);
        std::memcpy(ip + 16, path.dst_ip + 12, 4);
        layout.l3 = L3::ipv4;
        layout.l3_len = IPV4_HLEN;
    }
    layout.l2_len = static_cast<uint16_t>(p + 2 - frame);
    layout.l4 = L4::udp;
    layout.l4_off = static_cast<uint16_t>(layout.l2_len + layout.l3_len);
    layout.l4_len = UDP_HLEN;
    layout.l3_end = layout.l4_off + udp_len;
    uint8_t* udp = frame + layout.l4_off;
    store_be16(udp, path.udp_src_port);
    store_be16(udp + 2, UDP_PORT);
    store_be16(udp + 4, static_cast<uint16_t>(udp_len));
    store_be16(udp + 6, 0);
    if (layout.l3 == L3::ipv4)
        ipv4_insert_checksum(frame, layout);
    return layout;
}

bool is_roce(const uint8_t* frame, const FrameLayout& layout)
{
    return layout.l4 == L4::udp && !layout.fragment && load_be16(frame + layout.l4_off + 2) == UDP_PORT &&
           (layout.l3 == L3::ipv6 || layout.l3_len == IPV4_HLEN) &&
           layout.l3_end >= layout.l4_off + UDP_HLEN + BTH_LEN + ICRC_LEN;
}

} // namespace cna::fw::roce
