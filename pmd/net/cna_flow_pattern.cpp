/* SPDX-License-Identifier: BSD-3-Clause */
#include "cna_flow_pattern.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

#include <rte_byteorder.h>

namespace cna::net {

namespace flow_hdr = hsi::eth::flow_hdr;

int flow_error(rte_flow_error* error, rte_flow_error_type type, const void* cause, const char* fmt, ...)
{
    static thread_local char message[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    return rte_flow_error_set(error, EINVAL, type, cause, message);
}

int parse_group_and_priority(const rte_flow_attr* attr, uint16_t* priority, rte_flow_error* error)
{
    if (attr->group != 0)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_GROUP, attr, "group %u: only group 0 is supported",
                          attr->group);
    if (attr->priority > UINT16_MAX)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_PRIORITY, attr, "priority %u is beyond the lowest, %u",
                          attr->priority, UINT16_MAX);
    *priority = static_cast<uint16_t>(attr->priority);
    return 0;
}

namespace {

constexpr uint16_t TPID_VLAN = 0x8100;
constexpr uint16_t TPID_QINQ = 0x88a8;
constexpr uint16_t IPV4_FRAGMENT_BITS = 0x3fff; /* MF and the offset */

/* A header field the adapter cannot match on. */
struct Unsupported {
    std::size_t offset;
    std::size_t size;
    const char* name;
};

template <class Item, std::size_t N>
int refuse_masked(const rte_flow_item* item, const Item& mask, const char* proto, const Unsupported (&fields)[N],
                  rte_flow_error* error)
{
    const auto* bytes = reinterpret_cast<const uint8_t*>(&mask);
    for (const Unsupported& f : fields)
        if (std::any_of(bytes + f.offset, bytes + f.offset + f.size, [](uint8_t b) { return b != 0; }))
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item, "%s mask on %s is not supported", proto,
                              f.name);
    return 0;
}

/* Pattern position: items come in this order, each at most once. */
enum Stage { START, ETH, VLAN, L3, L4 };

struct PatternState {
    bool transfer = false;
    Stage stage = START;
    /* ETH's type, resolved once the pattern is known: a TPID means "tagged",
     * anything else the ethertype after the tags. */
    bool eth_type_masked = false;
};

const char* item_name(rte_flow_item_type type)
{
    switch (type) {
    case RTE_FLOW_ITEM_TYPE_ETH: return "ETH";
    case RTE_FLOW_ITEM_TYPE_VLAN: return "VLAN";
    case RTE_FLOW_ITEM_TYPE_IPV4: return "IPV4";
    case RTE_FLOW_ITEM_TYPE_IPV6: return "IPV6";
    case RTE_FLOW_ITEM_TYPE_TCP: return "TCP";
    case RTE_FLOW_ITEM_TYPE_UDP: return "UDP";
    case RTE_FLOW_ITEM_TYPE_ICMP: return "ICMP";
    default: return "?";
    }
}

/* spec and mask of an item (mask: the given one or the default); false
 * when the item matches any such header (no spec). */
template <class Item> bool item_spec(const rte_flow_item* item, const Item& default_mask, Item& spec, Item& mask)
{
    if (item->spec == nullptr)
        return false;
    std::memcpy(&spec, item->spec, sizeof(spec));
    std::memcpy(&mask, item->mask != nullptr ? item->mask : &default_mask, sizeof(mask));
    return true;
}

void set_u16(uint16_t& spec_field, uint16_t& mask_field, rte_be16_t spec, rte_be16_t mask)
{
    spec_field = rte_be_to_cpu_16(spec);
    mask_field = rte_be_to_cpu_16(mask);
}

void parse_eth(const rte_flow_item* item, FlowPattern& p, PatternState& st)
{
    rte_flow_item_eth default_mask{};
    std::memset(&default_mask.hdr.dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
    std::memset(&default_mask.hdr.src_addr, 0xff, RTE_ETHER_ADDR_LEN);
    rte_flow_item_eth spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return;
    if (mask.has_vlan)
        p.headers |= spec.has_vlan ? flow_hdr::VLAN : flow_hdr::UNTAGGED;
    for (int i = 0; i < RTE_ETHER_ADDR_LEN; i++) {
        p.spec.dst_mac[i] = spec.hdr.dst_addr.addr_bytes[i];
        p.mask.dst_mac[i] = mask.hdr.dst_addr.addr_bytes[i];
        p.spec.src_mac[i] = spec.hdr.src_addr.addr_bytes[i];
        p.mask.src_mac[i] = mask.hdr.src_addr.addr_bytes[i];
    }
    if (mask.hdr.ether_type == 0)
        return;
    const uint16_t type = rte_be_to_cpu_16(spec.hdr.ether_type);
    if ((type == TPID_VLAN || type == TPID_QINQ) && mask.hdr.ether_type == RTE_BE16(0xffff)) {
        p.headers |= flow_hdr::VLAN;
        return;
    }
    set_u16(p.spec.ethertype, p.mask.ethertype, spec.hdr.ether_type, mask.hdr.ether_type);
    st.eth_type_masked = true;
}

int parse_vlan(const rte_flow_item* item, FlowPattern& p, PatternState& st, rte_flow_error* error)
{
    p.headers |= flow_hdr::VLAN;
    rte_flow_item_vlan default_mask{};
    default_mask.hdr.vlan_tci = RTE_BE16(0x0fff);
    rte_flow_item_vlan spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    if (mask.has_more_vlan)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item, "VLAN has_more_vlan is not supported");
    set_u16(p.spec.vlan_tci, p.mask.vlan_tci, spec.hdr.vlan_tci, mask.hdr.vlan_tci);
    if (mask.hdr.eth_proto != 0) {
        if (st.eth_type_masked)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item,
                              "ETH type and VLAN inner type both name the ethertype: give one");
        set_u16(p.spec.ethertype, p.mask.ethertype, spec.hdr.eth_proto, mask.hdr.eth_proto);
    }
    return 0;
}

/* A TTL (or hop limit) match: transfer rules only. */
int match_ttl(const rte_flow_item* item, FlowPattern& p, const PatternState& st, uint8_t spec, uint8_t mask,
              const char* field, rte_flow_error* error)
{
    if (mask == 0)
        return 0;
    if (!st.transfer)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item,
                          "%s is not supported (transfer rules match it)", field);
    p.ip_ttl = spec & mask;
    p.ip_ttl_mask = mask;
    return 0;
}

int parse_ipv4(const rte_flow_item* item, FlowPattern& p, const PatternState& st, rte_flow_error* error)
{
    p.headers |= flow_hdr::IPV4;
    rte_flow_item_ipv4 default_mask{};
    default_mask.hdr.src_addr = default_mask.hdr.dst_addr = RTE_BE32(0xffffffff);
    rte_flow_item_ipv4 spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_ipv4_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, version_ihl), 1, "version/IHL"},
        {offsetof(H, total_length), 2, "total length"},
        {offsetof(H, packet_id), 2, "packet id"},
        {offsetof(H, hdr_checksum), 2, "header checksum"},
    };
    if (int rc = refuse_masked(item, mask, "IPv4", unsupported, error); rc != 0)
        return rc;
    /* Whole packets only, what OVS asks of a flow that is no fragment. */
    const uint16_t fragment_mask = rte_be_to_cpu_16(mask.hdr.fragment_offset);
    if (fragment_mask != 0) {
        if (fragment_mask != IPV4_FRAGMENT_BITS || spec.hdr.fragment_offset != 0)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item,
                              "IPv4 fragment offset: only \"no fragment\" (spec 0, mask 0x3fff)");
        p.headers |= flow_hdr::WHOLE_IP;
    }
    if (int rc = match_ttl(item, p, st, spec.hdr.time_to_live, mask.hdr.time_to_live, "IPv4 mask on TTL", error); rc != 0)
        return rc;
    p.spec.ip_tos = spec.hdr.type_of_service;
    p.mask.ip_tos = mask.hdr.type_of_service;
    p.spec.ip_proto = spec.hdr.next_proto_id;
    p.mask.ip_proto = mask.hdr.next_proto_id;
    std::memcpy(p.spec.src_ip, &spec.hdr.src_addr, 4);
    std::memcpy(p.mask.src_ip, &mask.hdr.src_addr, 4);
    std::memcpy(p.spec.dst_ip, &spec.hdr.dst_addr, 4);
    std::memcpy(p.mask.dst_ip, &mask.hdr.dst_addr, 4);
    return 0;
}

int parse_ipv6(const rte_flow_item* item, FlowPattern& p, const PatternState& st, rte_flow_error* error)
{
    p.headers |= flow_hdr::IPV6;
    rte_flow_item_ipv6 default_mask{};
    std::memset(default_mask.hdr.src_addr, 0xff, 16);
    std::memset(default_mask.hdr.dst_addr, 0xff, 16);
    rte_flow_item_ipv6 spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_ipv6_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, vtc_flow), 4, "traffic class/flow label"},
        {offsetof(H, payload_len), 2, "payload length"},
    };
    if (int rc = refuse_masked(item, mask, "IPv6", unsupported, error); rc != 0)
        return rc;
    if (mask.has_frag_ext) {
        if (spec.has_frag_ext)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item, "IPv6 has_frag_ext: only \"no fragment\" (0)");
        p.headers |= flow_hdr::WHOLE_IP;
    }
    rte_flow_item_ipv6 others = mask;
    others.has_frag_ext = 0;
    static constexpr Unsupported extensions[] = {
        {sizeof(H), sizeof(rte_flow_item_ipv6) - sizeof(H), "extension headers"},
    };
    if (int rc = refuse_masked(item, others, "IPv6", extensions, error); rc != 0)
        return rc;
    if (int rc = match_ttl(item, p, st, spec.hdr.hop_limits, mask.hdr.hop_limits, "IPv6 mask on hop limit", error); rc != 0)
        return rc;
    p.spec.ip_proto = spec.hdr.proto;
    p.mask.ip_proto = mask.hdr.proto;
    std::memcpy(p.spec.src_ip, spec.hdr.src_addr, 16);
    std::memcpy(p.mask.src_ip, mask.hdr.src_addr, 16);
    std::memcpy(p.spec.dst_ip, spec.hdr.dst_addr, 16);
    std::memcpy(p.mask.dst_ip, mask.hdr.dst_addr, 16);
    return 0;
}

void set_ports(FlowPattern& p, rte_be16_t src, rte_be16_t src_mask, rte_be16_t dst, rte_be16_t dst_mask)
{
    set_u16(p.spec.src_port, p.mask.src_port, src, src_mask);
    set_u16(p.spec.dst_port, p.mask.dst_port, dst, dst_mask);
}

int parse_tcp(const rte_flow_item* item, FlowPattern& p, const PatternState& st, rte_flow_error* error)
{
    p.headers |= flow_hdr::TCP;
    rte_flow_item_tcp default_mask{};
    default_mask.hdr.src_port = default_mask.hdr.dst_port = RTE_BE16(0xffff);
    rte_flow_item_tcp spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_tcp_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, sent_seq), 4, "sequence number"}, {offsetof(H, recv_ack), 4, "acknowledgement number"},
        {offsetof(H, data_off), 1, "data offset"},     {offsetof(H, rx_win), 2, "window"},
        {offsetof(H, cksum), 2, "checksum"},           {offsetof(H, tcp_urp), 2, "urgent pointer"},
    };
    if (int rc = refuse_masked(item, mask, "TCP", unsupported, error); rc != 0)
        return rc;
    if (mask.hdr.tcp_flags != 0) {
        if (!st.transfer)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item,
                              "TCP mask on flags is not supported (transfer rules match them)");
        p.tcp_flags = spec.hdr.tcp_flags & mask.hdr.tcp_flags;
        p.tcp_flags_mask = mask.hdr.tcp_flags;
    }
    set_ports(p, spec.hdr.src_port, mask.hdr.src_port, spec.hdr.dst_port, mask.hdr.dst_port);
    return 0;
}

int parse_udp(const rte_flow_item* item, FlowPattern& p, rte_flow_error* error)
{
    p.headers |= flow_hdr::UDP;
    rte_flow_item_udp default_mask{};
    default_mask.hdr.src_port = default_mask.hdr.dst_port = RTE_BE16(0xffff);
    rte_flow_item_udp spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_udp_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, dgram_len), 2, "length"},
        {offsetof(H, dgram_cksum), 2, "checksum"},
    };
    if (int rc = refuse_masked(item, mask, "UDP", unsupported, error); rc != 0)
        return rc;
    set_ports(p, spec.hdr.src_port, mask.hdr.src_port, spec.hdr.dst_port, mask.hdr.dst_port);
    return 0;
}

int parse_icmp(const rte_flow_item* item, FlowPattern& p, rte_flow_error* error)
{
    p.headers |= flow_hdr::ICMP;
    rte_flow_item_icmp default_mask{};
    default_mask.hdr.icmp_type = default_mask.hdr.icmp_code = 0xff;
    rte_flow_item_icmp spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_icmp_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, icmp_cksum), 2, "checksum"},
        {offsetof(H, icmp_ident), 2, "identifier"},
        {offsetof(H, icmp_seq_nb), 2, "sequence number"},
    };
    if (int rc = refuse_masked(item, mask, "ICMP", unsupported, error); rc != 0)
        return rc;
    p.spec.icmp_type = spec.hdr.icmp_type;
    p.mask.icmp_type = mask.hdr.icmp_type;
    p.spec.icmp_code = spec.hdr.icmp_code;
    p.mask.icmp_code = mask.hdr.icmp_code;
    return 0;
}

Stage stage_of(rte_flow_item_type type)
{
    switch (type) {
    case RTE_FLOW_ITEM_TYPE_ETH: return ETH;
    case RTE_FLOW_ITEM_TYPE_VLAN: return VLAN;
    case RTE_FLOW_ITEM_TYPE_IPV4:
    case RTE_FLOW_ITEM_TYPE_IPV6: return L3;
    default: return L4;
    }
}

} // namespace

int parse_pattern(const rte_flow_item* items, bool transfer, FlowPattern& p, rte_flow_error* error)
{
    if (items == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_NUM, nullptr, "the pattern is missing");
    PatternState st;
    st.transfer = transfer;
    for (const rte_flow_item* item = items; item->type != RTE_FLOW_ITEM_TYPE_END; item++) {
        switch (item->type) {
        case RTE_FLOW_ITEM_TYPE_VOID: continue;
        case RTE_FLOW_ITEM_TYPE_ETH:
        case RTE_FLOW_ITEM_TYPE_VLAN:
        case RTE_FLOW_ITEM_TYPE_IPV4:
        case RTE_FLOW_ITEM_TYPE_IPV6:
        case RTE_FLOW_ITEM_TYPE_TCP:
        case RTE_FLOW_ITEM_TYPE_UDP:
        case RTE_FLOW_ITEM_TYPE_ICMP: break;
        case RTE_FLOW_ITEM_TYPE_REPRESENTED_PORT:
        case RTE_FLOW_ITEM_TYPE_PORT_REPRESENTOR:
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item,
                              transfer ? "a port item comes first in a transfer pattern"
                                       : "port items are for transfer rules");
        default:
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item, "pattern item type %d is not supported",
                              item->type);
        }
        const Stage stage = stage_of(item->type);
        if (stage <= st.stage)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item,
                              "%s item out of place: the order is ETH, VLAN, IPV4/IPV6, TCP/UDP/ICMP, each at most "
                              "once",
                              item_name(item->type));
        if (stage == L4 && st.stage < L3)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item, "%s item needs an IPV4 or IPV6 item before it",
                              item_name(item->type));
        if (item->last != nullptr)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_LAST, item,
                              "%s item: ranges (last) are not supported", item_name(item->type));
        if (item->spec == nullptr && item->mask != nullptr)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_SPEC, item, "%s item: a mask without a spec",
                              item_name(item->type));
        st.stage = stage;
        int rc = 0;
        switch (item->type) {
        case RTE_FLOW_ITEM_TYPE_ETH: parse_eth(item, p, st); break;
        case RTE_FLOW_ITEM_TYPE_VLAN: rc = parse_vlan(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_IPV4: rc = parse_ipv4(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_IPV6: rc = parse_ipv6(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_TCP: rc = parse_tcp(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_ICMP: rc = parse_icmp(item, p, error); break;
        default: rc = parse_udp(item, p, error); break;
        }
        if (rc != 0)
            return rc;
    }
    if ((p.headers & flow_hdr::ICMP) && (p.headers & flow_hdr::IPV6))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, items, "ICMP over IPv6 is ICMPv6: no ICMP item for it");
    if ((p.headers & flow_hdr::VLAN) && (p.headers & flow_hdr::UNTAGGED))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, items, "ETH has_vlan 0 with a VLAN: no frame matches");
    return 0;
}

} // namespace cna::net
