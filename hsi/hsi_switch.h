/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the port's switch (doc/hsi.md section 13).
 *
 * Each port's functions meet in its switch. In legacy mode it is a MAC/VLAN
 * switch (a VEB) under the PF's per-VF policy. A PF turns it into a
 * switchdev switch with SWITCH_MODE: from then on the switch's ports are
 * its endpoints (the wire, each of the PF's VFs, each of the PF's vports),
 * a table of transfer rules decides where a frame goes and what is changed
 * on the way, and a frame that matches no rule goes to the representor of
 * the endpoint it came from:
 *
 *   from                       no rule matched: to
 *   the wire                   the PF's vport 0 (the uplink's representor)
 *   VF n                       the PF's vport that represents VF n
 *                              (dropped, counted, while none is started)
 *   the PF's vport 0           the wire
 *   a representor vport        the VF it represents
 *
 * A representor is a vport of the PF started with vport_flags::REPRESENTOR
 * (VportStartRamrodData::flags) and the VF it represents; its queues are the
 * PF's. Rules (SWITCH_RULE_ADD) match what a frame carries, as flow rules
 * do (hsi::eth::FlowMatch), and where it came from; a hit is counted in host
 * memory the PF gave at SWITCH_MODE, and the frame is dropped or rewritten
 * and forwarded to one endpoint. The RoCE engines' frames (the functions'
 * RDMA) do not go through the switch's rules.
 */
#pragma once

#include "hsi_common.h"
#include "hsi_eth.h"

namespace cna::hsi::eswitch {

/* An endpoint of the switch: where a frame enters it, where a rule sends
 * one. */
namespace endpoint {
inline constexpr uint16_t WIRE = 0x0000;  /* the physical port */
inline constexpr uint16_t VF = 0x0100;    /* | the VF's relative id: what it sends, into its vport */
inline constexpr uint16_t VPORT = 0x0200; /* | the PF's vport id: what it sends, into it */
inline constexpr uint16_t KIND = 0xff00;
inline constexpr uint16_t vf(uint32_t vf) { return static_cast<uint16_t>(VF | vf); }
inline constexpr uint16_t vport(uint32_t vport) { return static_cast<uint16_t>(VPORT | vport); }
} // namespace endpoint

/* VportStartRamrodData::flags */
namespace vport_flags {
inline constexpr uint8_t REPRESENTOR = 1u << 0; /* represents VportStartRamrodData::represented_vf */
} // namespace vport_flags

enum class SwitchMode : uint8_t { legacy = 0, switchdev = 1 };

/* The largest table SWITCH_MODE takes. */
inline constexpr uint32_t MAX_RULES = 1u << 17;

struct SwitchModeRamrodData {
    uint8_t mode;             /* SwitchMode */
    uint8_t reserved[3];
    uint32_t max_rules;       /* switchdev: the table's size, 1..MAX_RULES (no_resource past it) */
    RegPair counters;         /* switchdev: IOVA of max_rules SwitchCounters, 8-byte aligned */
};
static_assert(sizeof(SwitchModeRamrodData) == 16);

/* A rule's fate. */
enum class Fate : uint8_t { drop = 1, forward = 2 };

/* What a rule changes, applied in this order whatever the bits' order:
 * the outer VLAN tag popped; addresses, ports and TTL set or decremented;
 * a tag pushed; then the outer tag's VID and PCP set (a frame without a
 * tag is left untagged). Checksums the changes touch (IPv4 header, TCP,
 * UDP) are updated. */
namespace action {
inline constexpr uint16_t COUNT = 1u << 0;        /* SwitchCounters[rule_id] */
inline constexpr uint16_t POP_VLAN = 1u << 1;     /* a frame without a tag is left as it is */
inline constexpr uint16_t SET_MAC_SRC = 1u << 2;
inline constexpr uint16_t SET_MAC_DST = 1u << 3;
inline constexpr uint16_t SET_IPV4_SRC = 1u << 4; /* the rule needs flow_hdr::IPV4 */
inline constexpr uint16_t SET_IPV4_DST = 1u << 5; /* the rule needs flow_hdr::IPV4 */
/* The IPv4 TTL or IPv6 hop limit; the rule needs IPV4 or IPV6. A frame
 * whose TTL would reach 0 goes to the representor of where it came from,
 * as a frame that matched no rule does; so does an IP fragment whose
 * addresses or ports a rule would change. */
inline constexpr uint16_t DEC_TTL = 1u << 6;
inline constexpr uint16_t PUSH_VLAN = 1u << 7;    /* vlan_tpid, TCI 0 until set */
inline constexpr uint16_t SET_VLAN_VID = 1u << 8; /* vlan_tci's VID */
inline constexpr uint16_t SET_VLAN_PCP = 1u << 9; /* vlan_tci's PCP */
inline constexpr uint16_t SET_TTL = 1u << 10;     /* ttl; the rule needs IPV4 or IPV6 */
inline constexpr uint16_t SET_TP_SRC = 1u << 11;  /* tp_src; the rule needs TCP or UDP */
inline constexpr uint16_t SET_TP_DST = 1u << 12;  /* tp_dst; the rule needs TCP or UDP */
inline constexpr uint16_t ALL = (1u << 13) - 1;
} // namespace action

struct SwitchRuleAddRamrodData {
    uint16_t priority;        /* 0 is evaluated first; equal priorities: older rule first */
    uint16_t headers;         /* eth::flow_hdr:: the frame must carry */
    uint16_t source;          /* endpoint:: the frame came from, unless any_source */
    uint8_t any_source;
    uint8_t fate;             /* Fate */
    uint16_t destination;     /* Fate::forward: endpoint:: */
    uint16_t actions;         /* action:: */
    uint16_t vlan_tpid;       /* PUSH_VLAN: 0x8100 or 0x88a8 */
    uint16_t vlan_tci;        /* SET_VLAN_VID, SET_VLAN_PCP */
    uint8_t mac_src[6];       /* SET_MAC_SRC */
    uint8_t mac_dst[6];       /* SET_MAC_DST */
    uint8_t ipv4_src[4];      /* SET_IPV4_SRC, wire order */
    uint8_t ipv4_dst[4];      /* SET_IPV4_DST, wire order */
    uint16_t tp_src;          /* SET_TP_SRC */
    uint16_t tp_dst;          /* SET_TP_DST */
    uint8_t ttl;              /* SET_TTL */
    /* Matched beside FlowMatch's fields, (field & mask) == value: the IPv4
     * TTL or IPv6 hop limit (needs IPV4 or IPV6), the TCP flags' low 8
     * bits (needs TCP). */
    uint8_t ip_ttl;
    uint8_t ip_ttl_mask;
    uint8_t tcp_flags;
    uint8_t tcp_flags_mask;
    uint8_t reserved[3];
    eth::FlowMatch spec;      /* as a flow rule's (hsi_eth.h) */
    eth::FlowMatch mask;
};
static_assert(sizeof(SwitchRuleAddRamrodData) == 16 + 12 + 8 + 12 + 2 * 56);

struct SwitchRuleDelRamrodData {
    uint32_t rule_id;         /* as SWITCH_RULE_ADD returned it */
    uint32_t reserved;
};
static_assert(sizeof(SwitchRuleDelRamrodData) == 8);

/* Per rule with action::COUNT, at SwitchModeRamrodData::counters + rule_id *
 * 16: written by the adapter with single 64-bit stores, zeroed when a rule
 * takes the id. */
struct SwitchCounters {
    uint64_t hits;
    uint64_t bytes;
};
static_assert(sizeof(SwitchCounters) == 16);

/* The switch's own counters, at iro::switch_stats of the PF that manages
 * it (zeroed by SWITCH_MODE switchdev), each a single 64-bit store. */
struct SwitchStats {
    uint64_t rule_hits;          /* frames a rule matched */
    uint64_t misses;             /* frames no rule matched: to a representor */
    uint64_t drop_pkts;          /* frames a DROP rule took */
    /* Frames for an endpoint that takes none: a VF disabled or without an
     * active vport, a vport not active, the wire for a frame from it. */
    uint64_t unreachable_pkts;
    uint64_t no_representor_pkts; /* misses of a VF no started vport represents */
    /* Frames a rule's changes could not be made to (DEC_TTL of a TTL of 0
     * or 1): to the representor of where they came from instead. */
    uint64_t exception_pkts;
    uint64_t reserved[2];
};
static_assert(sizeof(SwitchStats) == iro::SWITCH_STATS_SIZE);

} // namespace cna::hsi::eswitch
