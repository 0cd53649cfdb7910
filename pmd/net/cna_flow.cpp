/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow: patterns and actions translated into the adapter's flow rules
 * (doc/hsi.md section 7). The adapter evaluates them on frames the vport
 * accepted, before RSS; first match in (priority, age) order wins.
 *
 * Pattern: cna_flow_pattern.h's (without TTLs or TCP flags). Actions: QUEUE, RSS,
 * DROP (one of them, or none: the vport's own steering), MARK, COUNT.
 * Anything the adapter cannot do exactly is refused with the offending
 * attribute, item or action and a message saying what.
 */
#include "cna_flow.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <memory>

#include <rte_byteorder.h>
#include <rte_flow_driver.h>

#include "cna_ethdev_ops.h"
#include "cna_flow_pattern.h"
#include "cna_log.h"

namespace cna::net {
namespace {

using ecore::FlowRuleParams;
namespace flow_action = hsi::eth::flow_action;

/* ---- attributes ------------------------------------------------------------ */

int parse_attr(const rte_flow_attr* attr, FlowRuleParams& p, rte_flow_error* error)
{
    if (attr == nullptr)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR, nullptr, "flow attributes are missing");
    if (attr->egress)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_EGRESS, attr, "egress rules are not supported");
    if (!attr->ingress)
        return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_INGRESS, attr, "rules must be ingress");
    if (int rc = parse_group_and_priority(attr, &p.priority, error); rc != 0)
        return rc;
    p.vport_id = VPORT_ID;
    return 0;
}

/* ---- pattern ----------------------------------------------------------------- */

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
    FlowPattern matched;
    if (int rc = parse_pattern(pattern, false, matched, error); rc != 0)
        return rc;
    p.headers = matched.headers;
    p.spec = matched.spec;
    p.mask = matched.mask;
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

/* A representor takes transfer rules alone: it has no vport of its own to
 * steer in. */
int refuse_on_representor(rte_eth_dev* dev, const rte_flow_attr* attr, rte_flow_error* error)
{
    if (!is_representor(dev))
        return 0;
    return flow_error(error, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr,
                      "a representor takes transfer rules only (attribute transfer)");
}

bool transfer(const rte_flow_attr* attr) { return attr != nullptr && attr->transfer; }

int flow_validate(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                  const rte_flow_action* actions, rte_flow_error* error)
{
    if (transfer(attr))
        return transfer_flow_validate(dev, attr, pattern, actions, error);
    if (int rc = refuse_on_representor(dev, attr, error); rc != 0)
        return rc;
    FlowRuleParams p;
    return parse(dev, attr, pattern, actions, p, error);
}

rte_flow* flow_create(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                      const rte_flow_action* actions, rte_flow_error* error)
{
    if (transfer(attr))
        return transfer_flow_create(dev, attr, pattern, actions, error);
    if (refuse_on_representor(dev, attr, error) != 0)
        return nullptr;
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

/* An ingress rule of the port, found by its handle alone: a handle the
 * application kept past its rule's end (legacy mode took a transfer rule)
 * is never dereferenced. */
auto find_ingress(rte_eth_dev* dev, const rte_flow* flow)
{
    EthPort* port = port_of(dev);
    auto it = std::find_if(port->flows.begin(), port->flows.end(), [&](const auto& f) { return f.get() == flow; });
    return std::pair{port, it};
}

int flow_destroy(rte_eth_dev* dev, rte_flow* flow, rte_flow_error* error)
{
    if (is_representor(dev))
        return transfer_flow_destroy(dev, flow, error);
    auto [port, it] = find_ingress(dev, flow);
    if (it == port->flows.end())
        return transfer_flow_destroy(dev, flow, error);
    if (int rc = unprogram(port, flow, error); rc != 0)
        return rc;
    port->flows.erase(it);
    return 0;
}

int flow_flush(rte_eth_dev* dev, rte_flow_error* error)
{
    if (int rc = transfer_flows_flush(dev, error); rc != 0 || is_representor(dev))
        return rc;
    EthPort* port = port_of(dev);
    while (!port->flows.empty())
        if (int rc = flow_destroy(dev, port->flows.back().get(), error); rc != 0)
            return rc;
    return 0;
}

int flow_query(rte_eth_dev* dev, rte_flow* flow, const rte_flow_action* action, void* data, rte_flow_error* error)
{
    if (is_representor(dev) || find_ingress(dev, flow).second == port_of(dev)->flows.end())
        return transfer_flow_query(dev, flow, action, data, error);
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
