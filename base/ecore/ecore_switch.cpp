/* SPDX-License-Identifier: BSD-3-Clause
 * The switch's mode and rule ramrods, and its counters.
 */
#include "ecore_switch.h"

#include <atomic>

#include "ecore_log.h"
#include "ecore_spq.h"

namespace cna::ecore {

using namespace hsi::eswitch;
using hsi::eth::EthCmd;

namespace {

Status post_switch(Hwfn& hwfn, EthCmd cmd, const void* data, std::size_t len, uint64_t* completion = nullptr)
{
    return spq_post(hwfn, SpqRequest{hsi::ProtocolId::eth, static_cast<uint8_t>(cmd), hsi::CID_SPQ, data, len},
                    completion);
}

} // namespace

Status switchdev_enable(Hwfn& hwfn, uint32_t max_rules)
{
    if (hwfn.eswitch) {
        DP_ERR(hwfn, "the switch is in switchdev mode already");
        return Status::busy;
    }
    if (max_rules == 0 || max_rules > MAX_RULES) {
        DP_ERR(hwfn, "a switch table of %u rules: the adapter takes 1 to %u", max_rules, MAX_RULES);
        return Status::inval;
    }
    auto info = std::make_unique<SwitchInfo>();
    info->max_rules = max_rules;
    if (int rc = info->counters.alloc(std::size_t{max_rules} * sizeof(SwitchCounters), "switch_counters"); rc != 0) {
        DP_ERR(hwfn, "no memory for the counters of %u switch rules", max_rules);
        return Status::nomem;
    }
    SwitchModeRamrodData data{};
    data.mode = static_cast<uint8_t>(SwitchMode::switchdev);
    data.max_rules = max_rules;
    data.counters = hsi::make_regpair(info->counters.iova());
    const Status rc = post_switch(hwfn, EthCmd::switch_mode, &data, sizeof(data));
    if (rc == Status::timeout) {
        /* It may yet run: the counters stay the adapter's, and a
         * switchdev_disable takes them back. */
        hwfn.eswitch = std::move(info);
        DP_ERR(hwfn, "switchdev mode: no answer from the adapter");
        return rc;
    }
    if (rc != Status::success) {
        DP_ERR(hwfn, "switchdev mode refused: %s%s", status_name(rc),
               rc == Status::busy ? " (another PF of the port is loaded)" : "");
        return rc;
    }
    hwfn.eswitch = std::move(info);
    DP_INFO(hwfn, "port switch in switchdev mode, %u rules", max_rules);
    return Status::success;
}

Status switchdev_disable(Hwfn& hwfn)
{
    if (!hwfn.eswitch)
        return Status::success;
    SwitchModeRamrodData data{};
    data.mode = static_cast<uint8_t>(SwitchMode::legacy);
    const Status rc = post_switch(hwfn, EthCmd::switch_mode, &data, sizeof(data));
    if (rc != Status::success) {
        DP_ERR(hwfn, "legacy mode refused: %s", status_name(rc));
        return rc; /* the counters stay the adapter's */
    }
    hwfn.eswitch.reset();
    DP_INFO(hwfn, "port switch in legacy mode");
    return Status::success;
}

bool switchdev_enabled(const Hwfn& hwfn) { return hwfn.eswitch != nullptr; }

uint32_t switch_max_rules(const Hwfn& hwfn) { return hwfn.eswitch ? hwfn.eswitch->max_rules : 0; }

Status sp_switch_rule_add(Hwfn& hwfn, const SwitchRuleParams& rule, uint32_t* rule_id)
{
    if (!hwfn.eswitch) {
        DP_ERR(hwfn, "switch rule: the switch is not in switchdev mode");
        return Status::inval;
    }
    uint64_t id = 0;
    const Status rc = post_switch(hwfn, EthCmd::switch_rule_add, &rule, sizeof(rule), &id);
    if (rc != Status::success) {
        DP_ERR(hwfn, "switch rule (priority %u, source 0x%04x%s, headers 0x%x, actions 0x%x) not added: %s",
               rule.priority, rule.source, rule.any_source ? " or any" : "", rule.headers, rule.actions,
               status_name(rc));
        return rc;
    }
    *rule_id = static_cast<uint32_t>(id);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "switch rule %u (priority %u, fate %u to 0x%04x, actions 0x%x)", *rule_id,
               rule.priority, rule.fate, rule.destination, rule.actions);
    return Status::success;
}

Status sp_switch_rule_del(Hwfn& hwfn, uint32_t rule_id)
{
    if (!hwfn.eswitch || rule_id >= hwfn.eswitch->max_rules) {
        DP_ERR(hwfn, "switch rule %u: no such rule", rule_id);
        return Status::inval;
    }
    SwitchRuleDelRamrodData data{};
    data.rule_id = rule_id;
    const Status rc = post_switch(hwfn, EthCmd::switch_rule_del, &data, sizeof(data));
    if (rc != Status::success)
        DP_ERR(hwfn, "switch rule %u not deleted: %s", rule_id, status_name(rc));
    return rc;
}

SwitchCounters switch_rule_counters(const Hwfn& hwfn, uint32_t rule_id)
{
    if (!hwfn.eswitch || rule_id >= hwfn.eswitch->max_rules)
        return {};
    SwitchCounters& c = hwfn.eswitch->counters.as<SwitchCounters>()[rule_id];
    return {std::atomic_ref<uint64_t>(c.hits).load(std::memory_order_relaxed),
            std::atomic_ref<uint64_t>(c.bytes).load(std::memory_order_relaxed)};
}

void get_switch_stats(Hwfn& hwfn, Ptt& ptt, SwitchStats* stats)
{
    const uint32_t base = hsi::reg::STORM_RAM_BASE + hsi::iro::switch_stats(hwfn.hw_info.pf_id);
    auto* words = reinterpret_cast<uint64_t*>(stats);
    for (uint32_t i = 0; i < sizeof(SwitchStats) / 8; i++)
        words[i] = rd64(hwfn, ptt, base + i * 8);
}

void switch_free(Hwfn& hwfn) { hwfn.eswitch.reset(); }

} // namespace cna::ecore
