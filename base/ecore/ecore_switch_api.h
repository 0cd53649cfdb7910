/* SPDX-License-Identifier: BSD-3-Clause
 * The port's switch in switchdev mode (doc/hsi.md section 13): the PF
 * manages its port's switch, whose transfer rules decide where the frames
 * of the wire, the PF's vports and its VFs go; what no rule takes goes to
 * the representor of where it came from (a vport of the PF started with
 * SpVportStartParams::represented_vf). Every call posts a ramrod and waits
 * (bounded) for its completion, like the rest of L2 (ecore_l2_api.h).
 *
 * The rules' counters live in host memory the PF gives the adapter with
 * switchdev_enable: a rule's are read with two loads, no ramrod.
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "hsi_switch.h"

namespace cna::ecore {

/* A rule as SWITCH_RULE_ADD carries it (hsi_switch.h). */
using SwitchRuleParams = hsi::eswitch::SwitchRuleAddRamrodData;

/* Switchdev mode with a table of max_rules (1..hsi::eswitch::MAX_RULES)
 * and its counters. Status::busy when the port has another PF loaded or
 * the switch is already in switchdev mode. */
Status switchdev_enable(Hwfn& hwfn, uint32_t max_rules);
/* Legacy mode: the rules gone, the port a MAC switch again. */
Status switchdev_disable(Hwfn& hwfn);
bool switchdev_enabled(const Hwfn& hwfn);
uint32_t switch_max_rules(const Hwfn& hwfn);

/* Adds a rule; *rule_id names it for deletion and its counters.
 * Status::nospc when the table is full, Status::inval for a rule the
 * adapter cannot carry out (checked by switch_rule_check first). */
Status sp_switch_rule_add(Hwfn& hwfn, const SwitchRuleParams& rule, uint32_t* rule_id);
Status sp_switch_rule_del(Hwfn& hwfn, uint32_t rule_id);
/* The counters of a rule with action::COUNT, as the adapter last wrote them. */
hsi::eswitch::SwitchCounters switch_rule_counters(const Hwfn& hwfn, uint32_t rule_id);
/* The switch's own counters (misses, drops, unreachable endpoints). */
void get_switch_stats(Hwfn& hwfn, Ptt& ptt, hsi::eswitch::SwitchStats* stats);

/* resc_free: the counters' memory, once the adapter writes it no more. */
void switch_free(Hwfn& hwfn);

} // namespace cna::ecore
