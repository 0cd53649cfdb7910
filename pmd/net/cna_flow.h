/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow rules of a net_cna port. The adapter's rules live in the vport,
 * which every dev_start creates anew, so the port keeps each rule as the
 * ecore parameters it translated to and replays them (restore_flows).
 */
#pragma once

#include <cstdint>

#include "ecore_flow_api.h"

/* ethdev's opaque handle, defined by each PMD. */
struct rte_flow {
    cna::ecore::FlowRuleParams params;
    bool programmed = false;       /* in the adapter's table as hw_id */
    bool hw_counters = false;      /* hw_id's counters are this rule's (until the id is reused) */
    uint16_t hw_id = 0;
    /* Added to the adapter's counters (modulo 2^64): the counts of earlier
     * vports, minus what a query with reset had seen. */
    cna::hsi::eth::FlowCounters offset{};
};
