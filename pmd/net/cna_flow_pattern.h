/* SPDX-License-Identifier: BSD-3-Clause
 * rte_flow patterns in the adapter's terms: the header fields a rule
 * matches under masks (hsi::eth::FlowMatch) and the headers a frame must
 * carry, for a vport's ingress rules and, with more to match, the port
 * switch's transfer rules. Shared by both, with the rest of what rte_flow
 * parsing of this PMD shares: its error reports.
 */
#pragma once

#include <cstdint>

#include <rte_flow.h>

#include "hsi_eth.h"

namespace cna::net {

struct FlowPattern {
    uint16_t headers = 0; /* hsi::eth::flow_hdr:: */
    hsi::eth::FlowMatch spec{};
    hsi::eth::FlowMatch mask{};
    /* Transfer rules only (hsi_switch.h). */
    uint8_t ip_ttl = 0, ip_ttl_mask = 0;
    uint8_t tcp_flags = 0, tcp_flags_mask = 0;
};

/* ETH, VLAN, IPV4 or IPV6, TCP, UDP or ICMP, in that order, each at most
 * once and each optional, with spec and mask (no last). Transfer rules may
 * also match TTLs and TCP flags; what the rule's table cannot match exactly
 * is refused, naming the item and what. */
int parse_pattern(const rte_flow_item* items, bool transfer, FlowPattern& p, rte_flow_error* error);

/* What rules of both kinds ask of their attributes: group 0, and a
 * priority the adapter's tables take (0 first, to 65535). */
int parse_group_and_priority(const rte_flow_attr* attr, uint16_t* priority, rte_flow_error* error);

/* rte_flow_error_set with EINVAL and a formatted message, which lives
 * until the thread's next error. */
int flow_error(rte_flow_error* error, rte_flow_error_type type, const void* cause, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

} // namespace cna::net
