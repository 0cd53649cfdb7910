/* SPDX-License-Identifier: BSD-3-Clause
 * Flow rule ramrods and counters.
 */
#include "ecore_flow_api.h"

#include <algorithm>

#include "ecore_l2.h"
#include "ecore_log.h"
#include "ecore_spq.h"

namespace cna::ecore {

using namespace hsi::eth;

namespace {

bool check_rx_queue(Hwfn& hwfn, uint32_t queue_id)
{
    if (queue_id < hwfn.hw_info.resc.num_rx_queues)
        return true;
    DP_ERR(hwfn, "flow rule: Rx queue %u is beyond the %u granted to this PF", queue_id,
           hwfn.hw_info.resc.num_rx_queues);
    return false;
}

bool check_params(Hwfn& hwfn, const FlowRuleParams& p)
{
    if (!check_vport(hwfn, p.vport_id))
        return false;
    if ((p.actions & flow_action::QUEUE) && !check_rx_queue(hwfn, p.queue))
        return false;
    if (p.actions & flow_action::RSS) {
        if (p.rss_queue_count == 0 || p.rss_queue_count > FLOW_MAX_RSS_QUEUES) {
            DP_ERR(hwfn, "flow rule: RSS over %u queues: need 1 to %u", p.rss_queue_count, FLOW_MAX_RSS_QUEUES);
            return false;
        }
        for (uint32_t i = 0; i < p.rss_queue_count; i++)
            if (!check_rx_queue(hwfn, p.rss_queues[i]))
                return false;
    }
    return true;
}

bool check_rule_id(Hwfn& hwfn, uint16_t rule_id)
{
    if (rule_id < FLOW_MAX_RULES)
        return true;
    DP_ERR(hwfn, "flow rule id %u: the adapter has %u", rule_id, FLOW_MAX_RULES);
    return false;
}

} // namespace

Status sp_flow_rule_add(Hwfn& hwfn, const FlowRuleParams& p, uint16_t* rule_id)
{
    if (!check_params(hwfn, p))
        return Status::inval;
    FlowRuleAddRamrodData data{};
    data.vport_id = p.vport_id;
    data.actions = p.actions;
    data.priority = p.priority;
    data.headers = p.headers;
    data.queue = p.queue;
    data.mark = p.mark;
    data.rss_hash_types = p.rss_hash_types;
    data.rss_queue_count = p.rss_queue_count;
    std::copy(p.rss_key.begin(), p.rss_key.end(), data.rss_key);
    std::copy(p.rss_queues.begin(), p.rss_queues.end(), data.rss_queues);
    data.spec = p.spec;
    data.mask = p.mask;
    uint64_t id = 0;
    const Status rc = spq_post(hwfn,
                               SpqRequest{hsi::ProtocolId::eth, static_cast<uint8_t>(EthCmd::flow_rule_add),
                                          hsi::CID_SPQ, &data, sizeof(data)},
                               &id);
    if (rc != Status::success) {
        DP_ERR(hwfn, "vport %u: flow rule (priority %u, headers 0x%x, actions 0x%x) not added: %s", p.vport_id,
               p.priority, p.headers, p.actions, status_name(rc));
        return rc;
    }
    *rule_id = static_cast<uint16_t>(id);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "vport %u: flow rule %u (priority %u, headers 0x%x, actions 0x%x)",
               p.vport_id, *rule_id, p.priority, p.headers, p.actions);
    return Status::success;
}

Status sp_flow_rule_del(Hwfn& hwfn, uint8_t vport_id, uint16_t rule_id)
{
    if (!check_vport(hwfn, vport_id) || !check_rule_id(hwfn, rule_id))
        return Status::inval;
    FlowRuleDelRamrodData data{};
    data.vport_id = vport_id;
    data.rule_id = rule_id;
    const Status rc = spq_post(hwfn, SpqRequest{hsi::ProtocolId::eth, static_cast<uint8_t>(EthCmd::flow_rule_del),
                                                hsi::CID_SPQ, &data, sizeof(data)});
    if (rc != Status::success)
        DP_ERR(hwfn, "vport %u: flow rule %u not deleted: %s", vport_id, rule_id, status_name(rc));
    else
        DP_VERBOSE(hwfn, osal::dp_module::L2, "vport %u: flow rule %u deleted", vport_id, rule_id);
    return rc;
}

Status get_flow_counters(Hwfn& hwfn, Ptt& ptt, uint16_t rule_id, FlowCounters* counters)
{
    if (!check_rule_id(hwfn, rule_id))
        return Status::inval;
    const uint32_t base = hsi::reg::STORM_RAM_BASE + hsi::iro::flow_counters(hwfn.hw_info.pf_id, rule_id);
    counters->hits = rd64(hwfn, ptt, base + offsetof(FlowCounters, hits));
    counters->bytes = rd64(hwfn, ptt, base + offsetof(FlowCounters, bytes));
    return Status::success;
}

} // namespace cna::ecore
