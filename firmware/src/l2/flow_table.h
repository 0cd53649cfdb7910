/* SPDX-License-Identifier: BSD-3-Clause
 * The flow rule table of a PF (FLOW_RULE_ADD / FLOW_RULE_DEL, hsi.md
 * section 7) and the lookup the Rx path makes once a vport accepted a frame.
 * Rules are kept in evaluation order (priority, then age: a new rule goes
 * after every rule of its priority), so the lookup is
 * a walk that stops at the first match. Ramrods and the Rx path both run on
 * the engine thread.
 */
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hsi_eth.h"
#include "hsi_spq.h"
#include "frame/flow_key.h"
#include "l2/l2_state.h"

namespace cna::fw {

class StormRam;

struct FlowRule {
    bool used = false;
    uint8_t vport = 0;
    uint8_t actions = 0;   /* flow_action::* */
    uint16_t priority = 0;
    uint16_t headers = 0;
    uint16_t queue = 0;
    uint32_t mark = 0;
    FlowWords spec{};      /* already masked */
    FlowWords mask{};
    Rss rss;               /* RSS action: its own key, types and a RETA of its queue set */
    hsi::eth::FlowCounters* counters = nullptr;

    bool matches(const FlowKey& key) const;
};

class FlowTable {
public:
    FlowTable(StormRam& ram, uint32_t pf);

    /* FLOW_RULE_ADD; the vport and queue ids are already validated.
     * *rule_id gets the rule's id. */
    hsi::FwReturn add(const hsi::eth::FlowRuleAddRamrodData& data, uint32_t* rule_id);
    hsi::FwReturn remove(const hsi::eth::FlowRuleDelRamrodData& data);
    /* VPORT_STOP: the vport's rules go with it. */
    void clear(uint8_t vport);
    void reset();

    /* Rx: the branch that keeps a vport without rules at no cost. */
    bool empty(uint32_t vport) const { return per_vport_[vport] == 0; }
    const FlowRule* match(uint32_t vport, const FlowKey& key) const;

private:
    hsi::FwReturn check(const hsi::eth::FlowRuleAddRamrodData& data) const;
    void erase(uint32_t rule_id);

    StormRam& ram_;
    const uint32_t pf_;
    std::array<FlowRule, hsi::eth::FLOW_MAX_RULES> rules_;
    std::vector<uint8_t> order_;  /* ids of used rules in evaluation order */
    std::array<uint32_t, hsi::MAX_VPORTS_PER_PF> per_vport_{};
};

} // namespace cna::fw
