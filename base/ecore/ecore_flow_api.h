/* SPDX-License-Identifier: BSD-3-Clause
 * Flow rules: the adapter's per-PF classification table (doc/hsi.md
 * section 7). A rule matches header fields under masks on frames a vport
 * accepted and drops them, steers them to a queue or an RSS queue set,
 * marks their CQE and counts them. Every call posts a ramrod and waits
 * (bounded) for its completion, like the rest of L2 (ecore_l2_api.h); the
 * counters are read through a PTT like the other statistics.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "hsi_eth.h"

namespace cna::ecore {

struct FlowRuleParams {
    uint8_t vport_id = 0;
    uint16_t priority = 0;                 /* 0 first; equal: older rule first */
    uint16_t headers = 0;                  /* hsi::eth::flow_hdr::* the frame must carry */
    hsi::eth::FlowMatch spec{};
    hsi::eth::FlowMatch mask{};
    uint8_t actions = 0;                   /* hsi::eth::flow_action::* */
    uint16_t queue = 0;                    /* QUEUE */
    uint32_t mark = 0;                     /* MARK */
    uint16_t rss_hash_types = 0;           /* RSS: hsi::eth::rss::* */
    std::array<uint32_t, hsi::eth::rss::KEY_DWORDS> rss_key{};
    uint8_t rss_queue_count = 0;
    std::array<uint8_t, hsi::eth::FLOW_MAX_RSS_QUEUES> rss_queues{};
};

/* Adds a rule; *rule_id names it for deletion and its counters.
 * Status::nospc when the PF's FLOW_MAX_RULES are in use. */
Status sp_flow_rule_add(Hwfn& hwfn, const FlowRuleParams& params, uint16_t* rule_id);
/* Status::noent if the vport has no such rule. */
Status sp_flow_rule_del(Hwfn& hwfn, uint8_t vport_id, uint16_t rule_id);
/* Counters of a rule with the COUNT action. They stay readable after the
 * rule is gone (deleted, or its vport stopped) until the id is reused. */
Status get_flow_counters(Hwfn& hwfn, Ptt& ptt, uint16_t rule_id, hsi::eth::FlowCounters* counters);

} // namespace cna::ecore
