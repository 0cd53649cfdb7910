/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow transfer rules: the port switch's rules (doc/hsi.md section 13),
 * made on the PF or any of its representors while the switch is in
 * switchdev mode (representor=), all in the PF's table.
 *
 * Where a frame comes from: a REPRESENTED_PORT item (the wire for the PF,
 * the VF for a representor), a PORT_REPRESENTOR item (what that ethdev
 * sends), or without either, what the ethdev the rule is made on
 * represents (Open vSwitch's rules name no port). Then the pattern of
 * cna_flow_pattern.h. Actions: one fate (REPRESENTED_PORT, PORT_ID as
 * Open vSwitch's output, PORT_REPRESENTOR or DROP), COUNT, and header
 * changes (OF_POP_VLAN, OF_PUSH_VLAN, OF_SET_VLAN_VID/PCP, SET_MAC_*,
 * SET_IPV4_*, SET_TP_*, SET_TTL, DEC_TTL), which the adapter makes in a
 * fixed order: rules whose list asks for another are refused. Everything is
 * checked at validate; only a full table is found at create.
 */
#include <algorithm>
#include <cerrno>
#include <memory>

#include <rte_byteorder.h>
#include <rte_flow_driver.h>

#include "cna_ethdev_ops.h"
#include "cna_flow_pattern.h"
#include "cna_log.h"
#include "ecore_switch_api.h"

namespace cna::net {

using hsi::eswitch::Fate;
namespace endpoint = hsi::eswitch::endpoint;
namespace action = hsi::eswitch::action;
namespace flow_hdr = hsi::eth::flow_hdr;

namespace {

/* The PF of dev's switch domain: itself, or its representor's. */
EthPort* pf_of(const rte_eth_dev* dev) { return is_representor(dev) ? representor_of(dev)->pf : port_of(dev); }

} // namespace

EthPort* switch_manager(const rte_eth_dev* dev)
{
    EthPort* pf = pf_of(dev);
    return ecore::switchdev_enabled(pf->edev.hwfn) ? pf : nullptr;
}

namespace {

/* The endpoint an ethdev of pf's switch domain stands for: what it
 * represents (the wire, a VF), or its own Tx and Rx (a vport of the PF).
 * A representor is found among the PF's under the switch's lock (another
 * thread may be closing it), never through a port id's private data. */
int endpoint_of(EthPort* pf, uint16_t port_id, bool represented, uint16_t* out)
{
    if (port_id == pf->eth_dev->data->port_id) {
        *out = represented ? endpoint::WIRE : endpoint::vport(VPORT_ID);
        return 0;
    }
    std::lock_guard guard(pf->switch_lock);
    for (const rte_eth_dev* dev : pf->representors) {
        if (dev->data->port_id != port_id)
            continue;
        const Representor* rep = representor_of(dev);
        *out = represented ? endpoint::vf(rep->vf) : endpoint::vport(rep->vport_id);
        return 0;
    }
    return -EXDEV;
}

int port_error(rte_flow_error* error, rte_flow_error_type type, const void* cause, uint16_t port_id)
{
    return flow_error(error, type, cause, "port %u is not in this switch domain (the PF and its representors)",
                      port_id);
}

/* The leading port item, if any; *rest: the first item after it. */
int parse_source(rte_eth_dev* dev, EthPort* pf, const rte_flow_item* items, ecore::SwitchRuleParams& r,
                 const rte_flow_item** rest, rte_flow_error* error)
{
    const rte_flow_item* item = items;
    while (item != nullptr && item->type == RTE_FLOW_ITEM_TYPE_VOID)
        item++;
    *rest = item;
    const bool represented = item != nullptr && item->type == RTE_FLOW_ITEM_TYPE_REPRESENTED_PORT;
    if (item == nullptr || (!represented && item->type != RTE_FLOW_ITEM_TYPE_PORT_REPRESENTOR)) {
        /* No port item: what the ethdev the rule is made on represents. */
        if (endpoint_of(pf, dev->data->port_id, true, &r.source) != 0)
            return port_error(error, RTE_FLOW_ERROR_TYPE_ITEM, items, dev->data->port_id);
        return 0;
    }
    if (item->spec == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_SPEC, item, "a port item needs a spec: the port");
    if (item->last != nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_LAST, item, "port item: ranges (last) are not supported");
    if (item->mask != nullptr && static_cast<const rte_flow_item_ethdev*>(item->mask)->port_id != UINT16_MAX)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ITEM_MASK, item, "a port item matches one port: mask 0xffff");
    const uint16_t port_id = static_cast<const rte_flow_item_ethdev*>(item->spec)->port_id;
    if (endpoint_of(pf, port_id, represented, &r.source) != 0)
        return port_error(error, RTE_FLOW_ERROR_TYPE_ITEM_SPEC, item, port_id);
    *rest = item + 1;
    return 0;
}

struct ActionState {
    bool fate = false;
    bool pushed = false;     /* OF_PUSH_VLAN seen */
    bool vlan_set = false;   /* OF_SET_VLAN_VID or _PCP seen */
    const rte_flow_action* changes = nullptr; /* the first header change */
};

const char* change_name(uint16_t bit)
{
    switch (bit) {
    case action::POP_VLAN: return "OF_POP_VLAN";
    case action::PUSH_VLAN: return "OF_PUSH_VLAN";
    case action::SET_VLAN_VID: return "OF_SET_VLAN_VID";
    case action::SET_VLAN_PCP: return "OF_SET_VLAN_PCP";
    case action::SET_MAC_SRC: return "SET_MAC_SRC";
    case action::SET_MAC_DST: return "SET_MAC_DST";
    case action::SET_IPV4_SRC: return "SET_IPV4_SRC";
    case action::SET_IPV4_DST: return "SET_IPV4_DST";
    case action::SET_TP_SRC: return "SET_TP_SRC";
    case action::SET_TP_DST: return "SET_TP_DST";
    case action::SET_TTL: return "SET_TTL";
    default: return "DEC_TTL";
    }
}

/* The headers a change needs the pattern to promise. */
int check_headers(const rte_flow_action* a, uint16_t bit, uint16_t headers, rte_flow_error* error)
{
    const uint16_t ip = flow_hdr::IPV4 | flow_hdr::IPV6;
    if ((bit & (action::SET_IPV4_SRC | action::SET_IPV4_DST)) && !(headers & flow_hdr::IPV4))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a, "%s needs an IPV4 item in the pattern",
                          change_name(bit));
    if ((bit & (action::SET_TTL | action::DEC_TTL)) && !(headers & ip))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a, "%s needs an IPV4 or IPV6 item in the pattern",
                          change_name(bit));
    if ((bit & (action::SET_TP_SRC | action::SET_TP_DST)) && !(headers & (flow_hdr::TCP | flow_hdr::UDP)))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a, "%s needs a TCP or UDP item in the pattern",
                          change_name(bit));
    return 0;
}

/* A header change's configuration into the rule. */
int take_change(const rte_flow_action* a, uint16_t bit, ecore::SwitchRuleParams& r, rte_flow_error* error)
{
    if (a->conf == nullptr && bit != action::POP_VLAN && bit != action::DEC_TTL)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "%s needs a configuration", change_name(bit));
    switch (bit) {
    case action::PUSH_VLAN: {
        const uint16_t tpid = rte_be_to_cpu_16(static_cast<const rte_flow_action_of_push_vlan*>(a->conf)->ethertype);
        if (tpid != 0x8100 && tpid != 0x88a8)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a,
                              "OF_PUSH_VLAN ethertype 0x%04x: 0x8100 or 0x88a8", tpid);
        r.vlan_tpid = tpid;
        return 0;
    }
    case action::SET_VLAN_VID: {
        const uint16_t vid = rte_be_to_cpu_16(static_cast<const rte_flow_action_of_set_vlan_vid*>(a->conf)->vlan_vid);
        if (vid > 0x0fff)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "OF_SET_VLAN_VID %u: 0 to 4095", vid);
        r.vlan_tci = static_cast<uint16_t>((r.vlan_tci & 0xf000) | vid);
        return 0;
    }
    case action::SET_VLAN_PCP: {
        const uint8_t pcp = static_cast<const rte_flow_action_of_set_vlan_pcp*>(a->conf)->vlan_pcp;
        if (pcp > 7)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "OF_SET_VLAN_PCP %u: 0 to 7", pcp);
        r.vlan_tci = static_cast<uint16_t>((r.vlan_tci & 0x0fff) | pcp << 13);
        return 0;
    }
    case action::SET_MAC_SRC:
    case action::SET_MAC_DST: {
        const auto* mac = static_cast<const rte_flow_action_set_mac*>(a->conf)->mac_addr;
        std::copy(mac, mac + RTE_ETHER_ADDR_LEN, bit == action::SET_MAC_SRC ? r.mac_src : r.mac_dst);
        return 0;
    }
    case action::SET_IPV4_SRC:
    case action::SET_IPV4_DST: {
        const rte_be32_t addr = static_cast<const rte_flow_action_set_ipv4*>(a->conf)->ipv4_addr;
        std::memcpy(bit == action::SET_IPV4_SRC ? r.ipv4_src : r.ipv4_dst, &addr, 4);
        return 0;
    }
    case action::SET_TP_SRC:
    case action::SET_TP_DST:
        (bit == action::SET_TP_SRC ? r.tp_src : r.tp_dst) =
            rte_be_to_cpu_16(static_cast<const rte_flow_action_set_tp*>(a->conf)->port);
        return 0;
    case action::SET_TTL: r.ttl = static_cast<const rte_flow_action_set_ttl*>(a->conf)->ttl_value; return 0;
    default: return 0;
    }
}

uint16_t change_bit(rte_flow_action_type type)
{
    switch (type) {
    case RTE_FLOW_ACTION_TYPE_OF_POP_VLAN: return action::POP_VLAN;
    case RTE_FLOW_ACTION_TYPE_OF_PUSH_VLAN: return action::PUSH_VLAN;
    case RTE_FLOW_ACTION_TYPE_OF_SET_VLAN_VID: return action::SET_VLAN_VID;
    case RTE_FLOW_ACTION_TYPE_OF_SET_VLAN_PCP: return action::SET_VLAN_PCP;
    case RTE_FLOW_ACTION_TYPE_SET_MAC_SRC: return action::SET_MAC_SRC;
    case RTE_FLOW_ACTION_TYPE_SET_MAC_DST: return action::SET_MAC_DST;
    case RTE_FLOW_ACTION_TYPE_SET_IPV4_SRC: return action::SET_IPV4_SRC;
    case RTE_FLOW_ACTION_TYPE_SET_IPV4_DST: return action::SET_IPV4_DST;
    case RTE_FLOW_ACTION_TYPE_SET_TP_SRC: return action::SET_TP_SRC;
    case RTE_FLOW_ACTION_TYPE_SET_TP_DST: return action::SET_TP_DST;
    case RTE_FLOW_ACTION_TYPE_SET_TTL: return action::SET_TTL;
    case RTE_FLOW_ACTION_TYPE_DEC_TTL: return action::DEC_TTL;
    default: return 0;
    }
}

/* The adapter pops, then changes fields, then pushes, then sets the outer
 * tag: a list in another order means something else. */
int check_order(const rte_flow_action* a, uint16_t bit, ActionState& st, rte_flow_error* error)
{
    if (bit == action::POP_VLAN && (st.pushed || st.vlan_set))
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a,
                          "OF_POP_VLAN after a VLAN push or set: the switch pops first");
    if (bit == action::PUSH_VLAN && st.vlan_set)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a,
                          "OF_PUSH_VLAN after OF_SET_VLAN_VID/PCP: the switch sets the pushed tag's");
    st.pushed |= bit == action::PUSH_VLAN;
    st.vlan_set |= bit == action::SET_VLAN_VID || bit == action::SET_VLAN_PCP;
    if (st.changes == nullptr)
        st.changes = a;
    return 0;
}

int parse_fate(EthPort* pf, const rte_flow_action* a, ecore::SwitchRuleParams& r, ActionState& st,
               rte_flow_error* error)
{
    if (st.fate)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a,
                          "one fate per rule: the switch sends a frame to one port, or drops it");
    st.fate = true;
    if (a->type == RTE_FLOW_ACTION_TYPE_DROP) {
        r.fate = static_cast<uint8_t>(Fate::drop);
        return 0;
    }
    if (a->conf == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "the action needs a port");
    uint16_t port_id;
    bool represented = true;
    if (a->type == RTE_FLOW_ACTION_TYPE_PORT_ID) {
        const auto* conf = static_cast<const rte_flow_action_port_id*>(a->conf);
        if (conf->original)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "PORT_ID original is not supported");
        if (conf->id > UINT16_MAX)
            return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "PORT_ID %u is no port", conf->id);
        port_id = static_cast<uint16_t>(conf->id);
    } else {
        represented = a->type == RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT;
        port_id = static_cast<const rte_flow_action_ethdev*>(a->conf)->port_id;
    }
    r.fate = static_cast<uint8_t>(Fate::forward);
    if (endpoint_of(pf, port_id, represented, &r.destination) != 0)
        return port_error(error, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, port_id);
    return 0;
}

int parse_actions(EthPort* pf, const rte_flow_action* actions, ecore::SwitchRuleParams& r, rte_flow_error* error)
{
    if (actions == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_NUM, nullptr, "the actions are missing");
    ActionState st;
    for (const rte_flow_action* a = actions; a->type != RTE_FLOW_ACTION_TYPE_END; a++) {
        int rc = 0;
        switch (a->type) {
        case RTE_FLOW_ACTION_TYPE_VOID: break;
        case RTE_FLOW_ACTION_TYPE_COUNT:
            if (r.actions & action::COUNT)
                return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a, "COUNT may appear only once per rule");
            r.actions |= action::COUNT;
            break;
        case RTE_FLOW_ACTION_TYPE_DROP:
        case RTE_FLOW_ACTION_TYPE_PORT_ID:
        case RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT:
        case RTE_FLOW_ACTION_TYPE_PORT_REPRESENTOR: rc = parse_fate(pf, a, r, st, error); break;
        default: {
            const uint16_t bit = change_bit(a->type);
            if (bit == 0)
                return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a,
                                  "action type %d is not supported in a transfer rule", a->type);
            if (r.actions & bit)
                return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, a, "%s may appear only once per rule",
                                  change_name(bit));
            rc = check_headers(a, bit, r.headers, error);
            rc = rc ?: check_order(a, bit, st, error);
            rc = rc ?: take_change(a, bit, r, error);
            r.actions |= bit;
            break;
        }
        }
        if (rc != 0)
            return rc;
    }
    if (!st.fate)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION_NUM, actions,
                          "a transfer rule needs a fate: REPRESENTED_PORT, PORT_ID, PORT_REPRESENTOR or DROP");
    if (r.fate == static_cast<uint8_t>(Fate::drop) && st.changes != nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, st.changes, "a dropped frame takes no header changes");
    if (r.fate == static_cast<uint8_t>(Fate::forward) && r.source == r.destination && r.source == endpoint::WIRE)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ACTION, actions,
                          "frames from the wire cannot go back out of it");
    return 0;
}

int parse(rte_eth_dev* dev, EthPort* pf, const rte_flow_attr* attr, const rte_flow_item* pattern,
          const rte_flow_action* actions, ecore::SwitchRuleParams& r, rte_flow_error* error)
{
    if (pf == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr,
                          "transfer rules need the port switch in switchdev mode: probe the PF with representor=");
    if (int rc = parse_group_and_priority(attr, &r.priority, error); rc != 0)
        return rc;
    const rte_flow_item* rest = nullptr;
    if (int rc = parse_source(dev, pf, pattern, r, &rest, error); rc != 0)
        return rc;
    FlowPattern matched;
    if (int rc = parse_pattern(rest, true, matched, error); rc != 0)
        return rc;
    r.headers = matched.headers;
    r.spec = matched.spec;
    r.mask = matched.mask;
    r.ip_ttl = matched.ip_ttl;
    r.ip_ttl_mask = matched.ip_ttl_mask;
    r.tcp_flags = matched.tcp_flags;
    r.tcp_flags_mask = matched.tcp_flags_mask;
    return parse_actions(pf, actions, r, error);
}

int rule_error(rte_flow_error* error, ecore::Status st, const rte_flow* flow, const char* what)
{
    return rte_flow_error_set(error, -ecore::status_to_errno(st), RTE_FLOW_ERROR_TYPE_HANDLE, flow, what);
}

} // namespace

int transfer_flow_validate(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                           const rte_flow_action* actions, rte_flow_error* error)
{
    ecore::SwitchRuleParams r{};
    return parse(dev, switch_manager(dev), attr, pattern, actions, r, error);
}

rte_flow* transfer_flow_create(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                               const rte_flow_action* actions, rte_flow_error* error)
{
    EthPort* pf = switch_manager(dev);
    auto flow = std::make_unique<rte_flow>();
    flow->creator = dev->data->port_id;
    if (parse(dev, pf, attr, pattern, actions, flow->rule, error) != 0)
        return nullptr;
    std::lock_guard guard(pf->switch_lock);
    if (!ecore::switchdev_enabled(pf->edev.hwfn)) {
        flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr, "the port switch has just left switchdev mode");
        return nullptr;
    }
    const ecore::Status st = ecore::sp_switch_rule_add(pf->edev.hwfn, flow->rule, &flow->rule_id);
    if (st == ecore::Status::nospc) {
        rte_flow_error_set(error, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, nullptr,
                           "the port switch's rule table is full");
        return nullptr;
    }
    if (st != ecore::Status::success) {
        rule_error(error, st, nullptr, "the port switch refused the rule");
        return nullptr;
    }
    rte_flow* made = flow.get();
    pf->transfer_flows.emplace(made, std::move(flow));
    return made;
}

int transfer_flow_destroy(rte_eth_dev* dev, rte_flow* flow, rte_flow_error* error)
{
    EthPort* pf = pf_of(dev);
    const uint16_t port = dev->data->port_id;
    std::lock_guard guard(pf->switch_lock);
    if (auto orphan = pf->orphaned_flows.find(flow); orphan != pf->orphaned_flows.end() && flow->creator == port) {
        pf->orphaned_flows.erase(orphan);
        return 0;
    }
    auto it = pf->transfer_flows.find(flow);
    if (it == pf->transfer_flows.end() || flow->creator != port)
        return rte_flow_error_set(error, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "no such flow rule on this port");
    const ecore::Status st =
        removed(pf) ? ecore::Status::success : ecore::sp_switch_rule_del(pf->edev.hwfn, flow->rule_id);
    if (st != ecore::Status::success)
        return rule_error(error, st, flow, "the port switch could not delete the rule");
    pf->transfer_flows.erase(it);
    return 0;
}

int transfer_flows_flush(rte_eth_dev* dev, rte_flow_error* error)
{
    EthPort* pf = pf_of(dev);
    const uint16_t port = dev->data->port_id;
    std::lock_guard guard(pf->switch_lock);
    std::erase_if(pf->orphaned_flows, [port](const auto& entry) { return entry.second->creator == port; });
    for (auto it = pf->transfer_flows.begin(); it != pf->transfer_flows.end();) {
        const rte_flow* flow = it->second.get();
        if (flow->creator != port) {
            ++it;
            continue;
        }
        const ecore::Status st =
            removed(pf) ? ecore::Status::success : ecore::sp_switch_rule_del(pf->edev.hwfn, flow->rule_id);
        if (st != ecore::Status::success)
            return rule_error(error, st, flow, "the port switch could not delete the rule");
        it = pf->transfer_flows.erase(it);
    }
    return 0;
}

int transfer_flow_query(rte_eth_dev* dev, rte_flow* flow, const rte_flow_action* action, void* data,
                        rte_flow_error* error)
{
    EthPort* pf = switch_manager(dev);
    if (pf == nullptr)
        return rte_flow_error_set(error, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "no such flow rule on this port");
    std::lock_guard guard(pf->switch_lock);
    if (!pf->transfer_flows.contains(flow) || flow->creator != dev->data->port_id)
        return rte_flow_error_set(error, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "no such flow rule on this port");
    if (action->type != RTE_FLOW_ACTION_TYPE_COUNT)
        return rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION, action, "only COUNT can be queried");
    if (!(flow->rule.actions & action::COUNT))
        return rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION, action, "the rule has no COUNT action");
    const hsi::eswitch::SwitchCounters now = ecore::switch_rule_counters(pf->edev.hwfn, flow->rule_id);
    auto* out = static_cast<rte_flow_query_count*>(data);
    out->hits_set = out->bytes_set = 1;
    out->hits = now.hits - flow->queried.hits;
    out->bytes = now.bytes - flow->queried.bytes;
    if (out->reset)
        flow->queried = now;
    return 0;
}

} // namespace cna::net
