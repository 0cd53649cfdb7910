/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow rules of net_cna's ethdevs. An ingress rule lives in its port's
 * vport, which every dev_start creates anew, so the port keeps each as the
 * ecore parameters it translated to and replays them (restore_flows). A
 * transfer rule lives in the port switch of the PF, made on the PF or one
 * of its representors, from its creation to its destruction whatever the
 * ports' states (cna_flow_transfer.cpp).
 */
#pragma once

#include <cstdint>

#include "ecore_flow_api.h"
#include "ecore_switch_api.h"

/* ethdev's opaque handle, defined by each PMD. */
struct rte_flow {
    /* Ingress. */
    cna::ecore::FlowRuleParams params;
    bool programmed = false;       /* in the adapter's table as hw_id */
    bool hw_counters = false;      /* hw_id's counters are this rule's (until the id is reused) */
    uint16_t hw_id = 0;
    /* Added to the adapter's counters (modulo 2^64): the counts of earlier
     * vports, minus what a query with reset had seen. */
    cna::hsi::eth::FlowCounters offset{};

    /* Transfer. */
    uint16_t creator = 0;          /* the ethdev it was made on */
    cna::ecore::SwitchRuleParams rule{};
    uint32_t rule_id = 0;          /* in the switch's table */
    cna::hsi::eswitch::SwitchCounters queried{}; /* what queries with reset took */
};
