/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow: patterns and actions translated into the adapter's flow rules
 * (doc/hsi.md section 7). The adapter evaluates them on frames the vport
 * accepted, before RSS; first match in (priority, age) order wins.
 *
 * Pattern: ETH, VLAN, IPV4 or IPV6, TCP or UDP, in that order, each at most
 * once and each optional, with spec and mask (no last). Actions: QUEUE, RSS,
 * DROP (one of them, or none: the vport's own steering), MARK, COUNT.
 * Anything the adapter cannot do exactly is refused with the offending
 * attribute, item or action and a message saying what.
 */
#include "cna_flow.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>

#include <rte_byteorder.h>
#include <rte_flow_driver.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"

namespace cna::net {
namespace {

using ecore::FlowRuleParams;
using hsi::eth::FlowMatch;
namespace flow_hdr = hsi::eth::flow_hdr;
namespace flow_action = hsi::eth::flow_action;

constexpr uint16_t TPID_VLAN = 0x8100;
constexpr uint16_t TPID_QINQ = 0x88a8;

/* rte_flow_error keeps a pointer to the message: formatted ones live here
 * until the next error of this thread. */
int flow_error(rte_flow_error* error, rte_flow_error_type type, const void* cause, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
int flow_error(rte_flow_error* error, rte_flow_error_type type, const void* cause, const char* fmt, ...)
{
    static thread_local char message[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    return rte_flow_error_set(error, EINVAL, type, cause, message);
}

/* ---- attributes ------------------------------------------------------------ */

int parse_attr(const rte_flow_attr* attr, FlowRuleParams& p, rte_flow_error* error)
{
    if (attr == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR, nullptr, "flow attributes are missing");
    if (attr->egress)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_EGRESS, attr, "egress rules are not supported");
    if (attr->transfer)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr, "transfer rules are not supported");
    if (!attr->ingress)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_INGRESS, attr, "rules must be ingress");
    if (attr->group != 0)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_GROUP, attr, "group %u: only group 0 is supported",
                          attr->group);
    if (attr->priority > UINT16_MAX)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_PRIORITY, attr,
                          "priority %u is beyond the adapter's lowest, %u", attr->priority, UINT16_MAX);
    p.vport_id = VPORT_ID;
    p.priority = static_cast<uint16_t>(attr->priority);
    return 0;
}

/* ---- pattern ----------------------------------------------------------------- */

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

int parse_eth(const rte_flow_item* item, FlowRuleParams& p, PatternState& st, rte_flow_error* error)
{
    rte_flow_item_eth default_mask{};
    std::memset(&default_mask.hdr.dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
    std::memset(&default_mask.hdr.src_addr, 0xff, RTE_ETHER_ADDR_LEN);
    rte_flow_item_eth spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    if (mask.has_vlan)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item,
                          "ETH has_vlan is not supported: use a VLAN item (or ETH type 0x8100)");
    for (int i = 0; i < RTE_ETHER_ADDR_LEN; i++) {
        p.spec.dst_mac[i] = spec.hdr.dst_addr.addr_bytes[i];
        p.mask.dst_mac[i] = mask.hdr.dst_addr.addr_bytes[i];
        p.spec.src_mac[i] = spec.hdr.src_addr.addr_bytes[i];
        p.mask.src_mac[i] = mask.hdr.src_addr.addr_bytes[i];
    }
    if (mask.hdr.ether_type == 0)
        return 0;
    const uint16_t type = rte_be_to_cpu_16(spec.hdr.ether_type);
    if ((type == TPID_VLAN || type == TPID_QINQ) && mask.hdr.ether_type == RTE_BE16(0xffff)) {
        p.headers |= flow_hdr::VLAN;
        return 0;
    }
    set_u16(p.spec.ethertype, p.mask.ethertype, spec.hdr.ether_type, mask.hdr.ether_type);
    st.eth_type_masked = true;
    return 0;
}

int parse_vlan(const rte_flow_item* item, FlowRuleParams& p, PatternState& st, rte_flow_error* error)
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

int parse_ipv4(const rte_flow_item* item, FlowRuleParams& p, rte_flow_error* error)
{
    p.headers |= flow_hdr::IPV4;
    rte_flow_item_ipv4 default_mask{};
    default_mask.hdr.src_addr = default_mask.hdr.dst_addr = RTE_BE32(0xffffffff);
    rte_flow_item_ipv4 spec{}, mask{};
    if (!item_spec(item, default_mask, spec, mask))
        return 0;
    using H = rte_ipv4_hdr;
    static constexpr Unsupported unsupported[] = {
        {offsetof(H, version_ihl), 1, "version/IHL"},       {offsetof(H, total_length), 2, "total length"},
        {offsetof(H, packet_id), 2, "packet id"},           {offsetof(H, fragment_offset), 2, "fragment offset"},
        {offsetof(H, time_to_live), 1, "TTL"},               {offsetof(H, hdr_checksum), 2, "header checksum"},
    };
    if (int rc = refuse_masked(item, mask, "IPv4", unsupported, error); rc != 0)
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

int parse_ipv6(const rte_flow_item* item, FlowRuleParams& p, rte_flow_error* error)
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
        {offsetof(H, hop_limits), 1, "hop limit"},
        {sizeof(H), sizeof(rte_flow_item_ipv6) - sizeof(H), "extension headers"},
    };
    if (int rc = refuse_masked(item, mask, "IPv6", unsupported, error); rc != 0)
        return rc;
    p.spec.ip_proto = spec.hdr.proto;
    p.mask.ip_proto = mask.hdr.proto;
    std::memcpy(p.spec.src_ip, spec.hdr.src_addr, 16);
    std::memcpy(p.mask.src_ip, mask.hdr.src_addr, 16);
    std::memcpy(p.spec.dst_ip, spec.hdr.dst_addr, 16);
    std::memcpy(p.mask.dst_ip, mask.hdr.dst_addr, 16);
    return 0;
}

void set_ports(FlowRuleParams& p, rte_be16_t src, rte_be16_t src_mask, rte_be16_t dst, rte_be16_t dst_mask)
{
    set_u16(p.spec.src_port, p.mask.src_port, src, src_mask);
    set_u16(p.spec.dst_port, p.mask.dst_port, dst, dst_mask);
}

int parse_tcp(const rte_flow_item* item, FlowRuleParams& p, rte_flow_error* error)
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
        {offsetof(H, data_off), 1, "data offset"},     {offsetof(H, tcp_flags), 1, "flags"},
        {offsetof(H, rx_win), 2, "window"},            {offsetof(H, cksum), 2, "checksum"},
        {offsetof(H, tcp_urp), 2, "urgent pointer"},
    };
    if (int rc = refuse_masked(item, mask, "TCP", unsupported, error); rc != 0)
        return rc;
    set_ports(p, spec.hdr.src_port, mask.hdr.src_port, spec.hdr.dst_port, mask.hdr.dst_port);
    return 0;
}

int parse_udp(const rte_flow_item* item, FlowRuleParams& p, rte_flow_error* error)
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

int parse_pattern(const rte_flow_item* items, FlowRuleParams& p, rte_flow_error* error)
{
    if (items == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_NUM, nullptr, "the pattern is missing");
    PatternState st;
    for (const rte_flow_item* item = items; item->type != RTE_FLOW_ITEM_TYPE_END; item++) {
        switch (item->type) {
        case RTE_FLOW_ITEM_TYPE_VOID: continue;
        case RTE_FLOW_ITEM_TYPE_ETH:
        case RTE_FLOW_ITEM_TYPE_VLAN:
        case RTE_FLOW_ITEM_TYPE_IPV4:
        case RTE_FLOW_ITEM_TYPE_IPV6:
        case RTE_FLOW_ITEM_TYPE_TCP:
        case RTE_FLOW_ITEM_TYPE_UDP: break;
        default:
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item, "pattern item type %d is not supported",
                              item->type);
        }
        const Stage stage = stage_of(item->type);
        if (stage <= st.stage)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM, item,
                              "%s item out of place: the order is ETH, VLAN, IPV4/IPV6, TCP/UDP, each at most once",
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
        case RTE_FLOW_ITEM_TYPE_ETH: rc = parse_eth(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_VLAN: rc = parse_vlan(item, p, st, error); break;
        case RTE_FLOW_ITEM_TYPE_IPV4: rc = parse_ipv4(item, p, error); break;
        case RTE_FLOW_ITEM_TYPE_IPV6: rc = parse_ipv6(item, p, error); break;
        case RTE_FLOW_ITEM_TYPE_TCP: rc = parse_tcp(item, p, error); break;
        default: rc = parse_udp(item, p, error); break;
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- actions ------------------------------------------------------------------ */

int check_queue(const rte_eth_dev* dev, const rte_flow_action* action, uint32_t queue, rte_flow_error* error)
{
    if (queue < dev->data->nb_rx_queues)
        return 0;
    return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action, "queue %u does not exist (%u Rx queues)", queue,
                      dev->data->nb_rx_queues);
}

int parse_rss(const rte_eth_dev* dev, const rte_flow_action* action, FlowRuleParams& p, rte_flow_error* error)
{
    const auto* rss = static_cast<const rte_flow_action_rss*>(action->conf);
    const EthPort* port = port_of(dev);
    if (rss->func != RTE_ETH_HASH_FUNCTION_DEFAULT && rss->func != RTE_ETH_HASH_FUNCTION_TOEPLITZ)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
                          "RSS hash function %d is not supported (Toeplitz only)", rss->func);
    if (rss->level > 1)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
                          "RSS level %u: inner headers are not supported", rss->level);
    if (rss->key_len != 0 && rss->key_len != port->rss.key.size())
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action, "RSS key of %u bytes: the adapter takes %zu",
                          rss->key_len, port->rss.key.size());
    if (rss->queue_num == 0 || rss->queue_num > hsi::eth::FLOW_MAX_RSS_QUEUES)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action, "RSS over %u queues: need 1 to %u",
                          rss->queue_num, hsi::eth::FLOW_MAX_RSS_QUEUES);
    /* Types the adapter cannot hash on (e.g. IPv6 extension headers) are
     * left out, as ethdev's RSS configuration does; none at all is refused. */
    const uint64_t types = rss->types != 0 ? rss->types : (port->rss.rss_hf != 0 ? port->rss.rss_hf : RTE_ETH_RSS_IP);
    p.rss_hash_types = rss_hash_types(types);
    if (p.rss_hash_types == 0)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action,
                          "RSS types 0x%" PRIx64 ": none of them can be hashed by the adapter", types);
    for (uint32_t i = 0; i < rss->queue_num; i++) {
        if (int rc = check_queue(dev, action, rss->queue[i], error); rc != 0)
            return rc;
        p.rss_queues[i] = static_cast<uint8_t>(rss->queue[i]);
    }
    p.rss_queue_count = static_cast<uint8_t>(rss->queue_num);
    const uint8_t* key = rss->key_len != 0 ? rss->key : port->rss.key.data();
    std::memcpy(p.rss_key.data(), key, port->rss.key.size());
    return 0;
}

int parse_actions(const rte_eth_dev* dev, const rte_flow_action* actions, FlowRuleParams& p, rte_flow_error* error)
{
    if (actions == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_NUM, nullptr, "the actions are missing");
    constexpr uint8_t FATE = flow_action::QUEUE | flow_action::RSS | flow_action::DROP;
    for (const rte_flow_action* action = actions; action->type != RTE_FLOW_ACTION_TYPE_END; action++) {
        uint8_t bit;
        switch (action->type) {
        case RTE_FLOW_ACTION_TYPE_VOID: continue;
        case RTE_FLOW_ACTION_TYPE_QUEUE: bit = flow_action::QUEUE; break;
        case RTE_FLOW_ACTION_TYPE_RSS: bit = flow_action::RSS; break;
        case RTE_FLOW_ACTION_TYPE_DROP: bit = flow_action::DROP; break;
        case RTE_FLOW_ACTION_TYPE_MARK: bit = flow_action::MARK; break;
        case RTE_FLOW_ACTION_TYPE_COUNT: bit = flow_action::COUNT; break;
        default:
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, action, "action type %d is not supported",
                              action->type);
        }
        if (p.actions & bit)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, action, "an action may appear only once per rule");
        if ((bit & FATE) && (p.actions & FATE))
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, action,
                              "only one of QUEUE, RSS and DROP per rule");
        if ((bit == flow_action::DROP && (p.actions & flow_action::MARK)) ||
            (bit == flow_action::MARK && (p.actions & flow_action::DROP)))
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, action, "MARK cannot go with DROP");
        if (action->conf == nullptr && (bit == flow_action::QUEUE || bit == flow_action::RSS || bit == flow_action::MARK))
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, action, "the action needs a configuration");
        p.actions |= bit;
        int rc = 0;
        if (bit == flow_action::QUEUE) {
            const uint16_t queue = static_cast<const rte_flow_action_queue*>(action->conf)->index;
            rc = check_queue(dev, action, queue, error);
            p.queue = queue;
        } else if (bit == flow_action::RSS) {
            rc = parse_rss(dev, action, p, error);
        } else if (bit == flow_action::MARK) {
            p.mark = static_cast<const rte_flow_action_mark*>(action->conf)->id;
        }
        if (rc != 0)
            return rc;
    }
    if (p.actions == 0)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_NUM, actions, "a rule needs at least one action");
    return 0;
}

int parse(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern, const rte_flow_action* actions,
          FlowRuleParams& p, rte_flow_error* error)
{
    if (int rc = parse_attr(attr, p, error); rc != 0)
        return rc;
    if (int rc = parse_pattern(pattern, p, error); rc != 0)
        return rc;
    return parse_actions(dev, actions, p, error);
}

/* ---- the adapter's table ---------------------------------------------------------- */

int program(EthPort* port, rte_flow* flow, rte_flow_error* error)
{
    const ecore::Status st = ecore::sp_flow_rule_add(port->edev.hwfn, flow->params, &flow->hw_id);
    if (st == ecore::Status::nospc)
        return rte_flow_error_set(error, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, nullptr,
                                  "the adapter's flow rule table is full");
    if (st != ecore::Status::success) {
        PMD_LOG(ERR, port, "flow rule not added: %s", ecore::status_name(st));
        return rte_flow_error_set(error, -ecore::status_to_errno(st), RTE_FLOW_ERROR_TYPE_HANDLE, nullptr,
                                  "the adapter refused the rule");
    }
    flow->programmed = flow->hw_counters = true;
    return 0;
}

int unprogram(EthPort* port, rte_flow* flow, rte_flow_error* error)
{
    /* Stopping the vport already took the rule out of the adapter. */
    if (!flow->programmed || !port->vport_started)
        return 0;
    const ecore::Status st = ecore::sp_flow_rule_del(port->edev.hwfn, VPORT_ID, flow->hw_id);
    if (st != ecore::Status::success)
        return rte_flow_error_set(error, -ecore::status_to_errno(st), RTE_FLOW_ERROR_TYPE_HANDLE, flow,
                                  "the adapter could not delete the rule");
    flow->programmed = false;
    return 0;
}

/* The adapter's counts of the rule (its current id's counters) plus the offset. */
int read_counts(EthPort* port, const rte_flow* flow, hsi::eth::FlowCounters* counts)
{
    hsi::eth::FlowCounters hw{};
    if (flow->hw_counters) {
        ecore::PttGuard ptt(port->edev.hwfn);
        if (!ptt)
            return -EBUSY;
        if (ecore::Status st = ecore::get_flow_counters(port->edev.hwfn, *ptt, flow->hw_id, &hw);
            st != ecore::Status::success)
            return ecore::status_to_errno(st);
    }
    counts->hits = flow->offset.hits + hw.hits;
    counts->bytes = flow->offset.bytes + hw.bytes;
    return 0;
}

/* ---- rte_flow_ops ---------------------------------------------------------------------- */

int flow_validate(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                  const rte_flow_action* actions, rte_flow_error* error)
{
    FlowRuleParams p;
    return parse(dev, attr, pattern, actions, p, error);
}

rte_flow* flow_create(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                      const rte_flow_action* actions, rte_flow_error* error)
{
    EthPort* port = port_of(dev);
    auto flow = std::make_unique<rte_flow>();
    if (parse(dev, attr, pattern, actions, flow->params, error) != 0)
        return nullptr;
    if (port->flows.size() >= hsi::eth::FLOW_MAX_RULES) {
        rte_flow_error_set(error, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, nullptr,
                           "the adapter's flow rule table is full");
        return nullptr;
    }
    /* A stopped port has no vport: the rule goes in at the next start. */
    if (port->vport_started && program(port, flow.get(), error) != 0)
        return nullptr;
    port->flows.push_back(std::move(flow));
    return port->flows.back().get();
}

int flow_destroy(rte_eth_dev* dev, rte_flow* flow, rte_flow_error* error)
{
    EthPort* port = port_of(dev);
    auto it = std::find_if(port->flows.begin(), port->flows.end(), [&](const auto& f) { return f.get() == flow; });
    if (it == port->flows.end())
        return rte_flow_error_set(error, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "no such flow rule on this port");
    if (int rc = unprogram(port, flow, error); rc != 0)
        return rc;
    port->flows.erase(it);
    return 0;
}

int flow_flush(rte_eth_dev* dev, rte_flow_error* error)
{
    EthPort* port = port_of(dev);
    while (!port->flows.empty())
        if (int rc = flow_destroy(dev, port->flows.back().get(), error); rc != 0)
            return rc;
    return 0;
}

int flow_query(rte_eth_dev* dev, rte_flow* flow, const rte_flow_action* action, void* data, rte_flow_error* error)
{
    EthPort* port = port_of(dev);
    if (action->type != RTE_FLOW_ACTION_TYPE_COUNT)
        return rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION, action, "only COUNT can be queried");
    if (!(flow->params.actions & flow_action::COUNT))
        return rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION, action, "the rule has no COUNT action");
    hsi::eth::FlowCounters counts{};
    if (int rc = read_counts(port, flow, &counts); rc != 0)
        return rte_flow_error_set(error, -rc, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "cannot read the rule's counters");
    auto* out = static_cast<rte_flow_query_count*>(data);
    out->hits_set = out->bytes_set = 1;
    out->hits = counts.hits;
    out->bytes = counts.bytes;
    if (out->reset) {
        flow->offset.hits -= counts.hits;
        flow->offset.bytes -= counts.bytes;
    }
    return 0;
}

const rte_flow_ops cna_flow_ops = [] {
    rte_flow_ops ops{};
    ops.validate = flow_validate;
    ops.create = flow_create;
    ops.destroy = flow_destroy;
    ops.flush = flow_flush;
    ops.query = flow_query;
    return ops;
}();

} // namespace

int flow_ops_get(rte_eth_dev*, const rte_flow_ops** ops)
{
    *ops = &cna_flow_ops;
    return 0;
}

int restore_flows(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    /* The stopped vport took the rules with it; their counters stay in the
     * adapter until an id is reused, so all are collected before any add. */
    for (auto& flow : port->flows) {
        if (flow->hw_counters)
            if (int rc = read_counts(port, flow.get(), &flow->offset); rc != 0)
                return rc;
        flow->programmed = flow->hw_counters = false;
    }
    for (auto& flow : port->flows) {
        rte_flow_error error{};
        if (int rc = program(port, flow.get(), &error); rc != 0) {
            PMD_LOG(ERR, port, "flow rule not restored: %s", error.message);
            return rc;
        }
    }
    return 0;
}

} // namespace cna::net
