/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: L2 (ethernet) fastpath formats, ramrods and statistics.
 *
 * Rx: the driver posts RxBd buffers and publishes the BD producer (and the
 * CQEs it consumed) in storm RAM through the GTT (iro::rx_prod). For each
 * frame the storm DMA-writes the payload into one or more buffers, writes an
 * RxCqe and advances L2_PI_RX of the queue's status block.
 * Tx: the driver writes TxBds and rings the queue's doorbell with the BD
 * producer; the storm reports the BD consumer in L2_PI_TX.
 */
#pragma once

#include "hsi_common.h"

namespace cna::hsi::eth {

enum class EthCmd : uint8_t {
    vport_start = 1,
    vport_update = 2,
    vport_stop = 3,
    rx_queue_start = 4,
    rx_queue_stop = 5,
    tx_queue_start = 6,
    tx_queue_stop = 7,
    filters_update = 8,
    flow_rule_add = 9,   /* FlowRuleAddRamrodData; EQE data: the rule id */
    flow_rule_del = 10,  /* FlowRuleDelRamrodData */
    switch_mode = 11,     /* eswitch::SwitchModeRamrodData (hsi_switch.h) */
    switch_rule_add = 12, /* eswitch::SwitchRuleAddRamrodData; EQE data: the rule id */
    switch_rule_del = 13, /* eswitch::SwitchRuleDelRamrodData */
};

inline constexpr uint32_t MIN_RING_SIZE = 64;
inline constexpr uint32_t MAX_RING_SIZE = 32768;  /* u16 indices wrap at 65536 */
inline constexpr uint32_t MIN_MTU = 64;
inline constexpr uint32_t MAX_MTU = 9600;
inline constexpr uint32_t ETH_OVERHEAD = 14 + 4 + 4; /* header, one VLAN tag, FCS budget */
inline constexpr uint32_t MAX_BDS_PER_PACKET = 16;

/* ---- Tx --------------------------------------------------------------- */
namespace txbd {
inline constexpr uint8_t START = 1u << 0;        /* first BD of a packet; nbds valid */
inline constexpr uint8_t IP_CSUM = 1u << 1;      /* insert IPv4 header checksum */
inline constexpr uint8_t L4_CSUM = 1u << 2;      /* insert TCP/UDP checksum */
inline constexpr uint8_t VLAN_INSERT = 1u << 3;  /* insert TxBd::vlan as an 802.1Q tag */
inline constexpr uint8_t LSO = 1u << 4;          /* segment TCP by TxBd::mss */
inline constexpr uint8_t PTP_TIMESTAMP = 1u << 5; /* latch the frame's wire time (hsi_ptp.h) */
} // namespace txbd

struct TxBd {
    RegPair addr;
    uint16_t nbytes;
    uint8_t nbds;    /* first BD: number of BDs of this packet */
    uint8_t flags;   /* first BD: txbd::* */
    uint16_t vlan;   /* first BD: tag for VLAN_INSERT */
    uint16_t mss;    /* first BD: segment size for LSO */
};
static_assert(sizeof(TxBd) == 16);

/* ---- Rx --------------------------------------------------------------- */
struct RxBd {
    RegPair addr;    /* buffer IOVA; the queue's bd_max_bytes may be written */
};
static_assert(sizeof(RxBd) == 8);

enum class CqeType : uint8_t { regular = 1 };

namespace pars {
inline constexpr uint16_t L3_MASK = 0x3;          /* 0 other, 1 IPv4, 2 IPv6 */
inline constexpr uint16_t L3_IPV4 = 1;
inline constexpr uint16_t L3_IPV6 = 2;
inline constexpr uint16_t L4_SHIFT = 2;
inline constexpr uint16_t L4_MASK = 0x3u << L4_SHIFT; /* 0 none, 1 TCP, 2 UDP, 3 other */
inline constexpr uint16_t L4_TCP = 1u << L4_SHIFT;
inline constexpr uint16_t L4_UDP = 2u << L4_SHIFT;
inline constexpr uint16_t L4_OTHER = 3u << L4_SHIFT;
inline constexpr uint16_t VLAN_PRESENT = 1u << 4;   /* frame carried a tag */
inline constexpr uint16_t VLAN_STRIPPED = 1u << 5;  /* ...which is now in RxCqe::vlan_tag */
inline constexpr uint16_t IP_CSUM_CHECKED = 1u << 6;
inline constexpr uint16_t IP_CSUM_BAD = 1u << 7;
inline constexpr uint16_t L4_CSUM_CHECKED = 1u << 8;
inline constexpr uint16_t L4_CSUM_BAD = 1u << 9;
inline constexpr uint16_t RSS_HASH_VALID = 1u << 10;
inline constexpr uint16_t IP_FRAGMENT = 1u << 11;
inline constexpr uint16_t FLOW_MARK = 1u << 12;     /* a flow rule's MARK: RxCqe::flow_mark */
/* A PTP message of a transport the function's PTP block looks for
 * (hsi_ptp.h), and the Rx latch that holds its stamp: 0 none (a general
 * message, or every latch was full), n latch n - 1. */
inline constexpr uint16_t PTP = 1u << 13;
inline constexpr uint16_t PTP_LATCH_SHIFT = 14;
inline constexpr uint16_t PTP_LATCH_MASK = 0x3u << PTP_LATCH_SHIFT;
} // namespace pars

/* 16 bytes, four to a cache line: the CQE ring is the one the adapter writes
 * and the host reads for every frame, so its size is the per-frame cost of
 * the cache-line transfers between them. A flow rule's mark takes the RSS
 * hash's place (as an FDIR ID does in other NICs' descriptors): a frame
 * carries one or the other, as its pars_flags say. */
struct RxCqe {
    uint8_t type;             /* CqeType */
    uint8_t bd_num;           /* buffers used by this frame */
    uint16_t pkt_len;         /* total frame length */
    uint16_t len_on_first_bd;
    uint16_t vlan_tag;        /* valid with pars::VLAN_STRIPPED */
    union {
        uint32_t rss_hash;    /* valid with pars::RSS_HASH_VALID */
        uint32_t flow_mark;   /* valid with pars::FLOW_MARK (then no RSS hash) */
    };
    uint8_t rss_hash_type;    /* RssHashType; none with pars::FLOW_MARK */
    uint8_t placement_offset; /* frame starts this many bytes into the first buffer */
    uint16_t pars_flags;      /* pars::* */
};
static_assert(sizeof(RxCqe) == 16);

/* ---- Classification ----------------------------------------------------- */
namespace accept {
inline constexpr uint16_t NONE = 0;
inline constexpr uint16_t UCAST_MATCHED = 1u << 0;
inline constexpr uint16_t UCAST_UNMATCHED = 1u << 1;
inline constexpr uint16_t MCAST_MATCHED = 1u << 2;
inline constexpr uint16_t MCAST_UNMATCHED = 1u << 3;
inline constexpr uint16_t BCAST = 1u << 4;
} // namespace accept

enum class RssHashType : uint8_t { none = 0, ipv4 = 1, tcp_ipv4 = 2, udp_ipv4 = 3, ipv6 = 4, tcp_ipv6 = 5, udp_ipv6 = 6 };
namespace rss {
inline constexpr uint16_t IPV4 = 1u << 0;
inline constexpr uint16_t TCP_IPV4 = 1u << 1;
inline constexpr uint16_t UDP_IPV4 = 1u << 2;
inline constexpr uint16_t IPV6 = 1u << 3;
inline constexpr uint16_t TCP_IPV6 = 1u << 4;
inline constexpr uint16_t UDP_IPV6 = 1u << 5;
inline constexpr uint32_t RETA_SIZE = 128;
inline constexpr uint32_t KEY_DWORDS = 10;          /* 40-byte Toeplitz key */
} // namespace rss

/* ---- Ramrod data -------------------------------------------------------- */
struct VportStartRamrodData {
    uint8_t vport_id;
    uint8_t vlan_strip;            /* strip the (outermost) VLAN tag into the CQE */
    uint8_t max_bds_per_packet;    /* > 1 enables scattered Rx */
    uint8_t rx_csum_en;            /* validate IPv4 header and TCP/UDP checksums into the CQE */
    uint16_t mtu;
    uint8_t flags;                 /* eswitch::vport_flags:: (hsi_switch.h), a PF's vport only */
    uint8_t represented_vf;        /* eswitch::vport_flags::REPRESENTOR: the VF's relative id */
};
static_assert(sizeof(VportStartRamrodData) == 8);

namespace vport_update {
inline constexpr uint32_t UPDATE_ACTIVE_RX = 1u << 0;
inline constexpr uint32_t UPDATE_ACTIVE_TX = 1u << 1;
inline constexpr uint32_t UPDATE_RX_MODE = 1u << 2;
inline constexpr uint32_t UPDATE_MTU = 1u << 3;
inline constexpr uint32_t UPDATE_VLAN_STRIP = 1u << 4;
inline constexpr uint32_t UPDATE_RSS = 1u << 5;
/* A VF's vport (hsi_iov.h), set by its PF's policy: */
inline constexpr uint32_t UPDATE_ANTI_SPOOF = 1u << 6; /* drop Tx whose source MAC no MAC filter has */
inline constexpr uint32_t UPDATE_PORT_VLAN = 1u << 7;  /* tag Tx, take only that VLAN on Rx and strip it */
inline constexpr uint32_t UPDATE_TX_RATE = 1u << 8;    /* limit the vport's Tx to tx_rate_mbps */
inline constexpr uint32_t UPDATE_LINK_DOWN = 1u << 9;  /* cut the vport off the port, as a link down */
/* The fastest rate limit a vport takes: the fastest link speed. */
inline constexpr uint32_t MAX_TX_RATE_MBPS = 100000;
} // namespace vport_update

struct VportUpdateRamrodData {
    uint8_t vport_id;
    uint8_t active_rx;
    uint8_t active_tx;
    uint8_t vlan_strip;            /* as in VportStartRamrodData */
    uint32_t update_flags;         /* vport_update::* */
    uint16_t rx_accept;            /* accept::* */
    uint16_t mtu;
    uint8_t rss_enable;
    uint8_t reserved;
    uint16_t rss_hash_types;       /* rss::* */
    uint32_t rss_key[rss::KEY_DWORDS];
    uint16_t rss_reta[rss::RETA_SIZE]; /* Rx queue per entry, the vport's function's (a VF's own on a VF's vport) */
    uint8_t anti_spoof;            /* UPDATE_ANTI_SPOOF */
    uint8_t link_down;             /* UPDATE_LINK_DOWN: 1 neither sends nor receives */
    uint16_t port_vlan;            /* UPDATE_PORT_VLAN: 1..4095, 0 for none */
    uint32_t tx_rate_mbps;         /* UPDATE_TX_RATE: frame bytes out of the vport, Mbps; 0: no limit */
};
static_assert(sizeof(VportUpdateRamrodData) == 16 + 40 + 256 + 8);

namespace rxq_flags {
/* Every frame the queue receives is stamped with the port's PTP clock
 * (hsi_ptp.h) when it came off the wire, into the stamp ring: the CQE
 * ring's memory holds cqe_ring_size stamps of RX_TIMESTAMP_BYTES behind
 * its CQEs, stamp i the nanoseconds (little-endian) of CQE i's frame
 * (hsi.md section 14). Beside the CQEs, not in the frame's buffer: the host
 * reads them on the lines the completions already bring it. */
inline constexpr uint8_t TIMESTAMP = 1u << 0;
inline constexpr uint8_t ALL = TIMESTAMP;
} // namespace rxq_flags
inline constexpr uint32_t RX_TIMESTAMP_BYTES = 8;
/* The HSI minor version that brought rxq_flags (a VF's PF's driver of an
 * older one passes no flag on). */
inline constexpr uint8_t RXQ_FLAGS_HSI_MINOR = 2;

struct RxQueueStartRamrodData {
    uint8_t vport_id;
    uint8_t sb_pi;
    uint16_t queue_id;
    uint16_t sb_id;
    uint16_t bd_max_bytes;         /* bytes the storm may write into one buffer */
    RegPair bd_base;
    RegPair cqe_base;
    uint16_t bd_ring_size;         /* elements, power of two */
    uint16_t cqe_ring_size;        /* elements, power of two */
    uint8_t flags;                 /* rxq_flags:: */
    uint8_t reserved[3];
};
static_assert(sizeof(RxQueueStartRamrodData) == 32);

struct TxQueueStartRamrodData {
    uint8_t vport_id;
    uint8_t sb_pi;
    uint16_t queue_id;
    uint16_t sb_id;
    uint16_t bd_ring_size;         /* elements, power of two */
    RegPair bd_base;
    uint32_t cid;                  /* doorbell of this queue: db_offset(cid) */
    uint32_t reserved;
};
static_assert(sizeof(TxQueueStartRamrodData) == 24);

struct QueueStopRamrodData {
    uint8_t vport_id;
    uint8_t reserved;
    uint16_t queue_id;
    uint32_t reserved2;
};
static_assert(sizeof(QueueStopRamrodData) == 8);

struct VportStopRamrodData {
    uint8_t vport_id;
    uint8_t reserved[7];
};
static_assert(sizeof(VportStopRamrodData) == 8);

enum class FilterOpcode : uint8_t { add = 1, remove = 2, move = 3, replace = 4 };
enum class FilterType : uint8_t { mac = 1, vlan = 2, mac_vlan = 3 };

struct FiltersUpdateRamrodData {
    uint8_t vport_id;
    uint8_t opcode;                /* FilterOpcode */
    uint8_t type;                  /* FilterType */
    uint8_t dst_vport_id;          /* FilterOpcode::move */
    uint8_t mac[6];
    uint16_t vlan;
};
static_assert(sizeof(FiltersUpdateRamrodData) == 12);

/* ---- Statistics (storm RAM, iro::vport_stats / iro::*_queue_stats) -------- */
struct VportStats {
    uint64_t rx_ucast_pkts, rx_mcast_pkts, rx_bcast_pkts;
    uint64_t rx_ucast_bytes, rx_mcast_bytes, rx_bcast_bytes;
    uint64_t rx_filtered_pkts;     /* dropped by classification (rx mode, MAC/VLAN filters) */
    uint64_t rx_no_buffer_pkts;    /* dropped: no Rx BD or CQE space */
    uint64_t rx_oversize_pkts;     /* dropped: longer than the vport MTU allows */
    uint64_t rx_error_pkts;        /* dropped: runts, DMA faults */
    uint64_t tx_ucast_pkts, tx_mcast_pkts, tx_bcast_pkts;
    uint64_t tx_ucast_bytes, tx_mcast_bytes, tx_bcast_bytes;
    uint64_t tx_error_pkts;        /* malformed BD chains, DMA faults */
    uint64_t tx_oversize_pkts;
    uint64_t rx_flow_drop_pkts;    /* dropped by a flow rule's DROP action */
    uint64_t tx_spoofed_pkts;      /* a VF's, dropped by anti-spoofing (vport_update::UPDATE_ANTI_SPOOF) */
    uint64_t tx_link_down_pkts;    /* a VF's, dropped while its PF forces its link down (UPDATE_LINK_DOWN) */
    uint64_t rx_link_down_pkts;    /* a VF's, that it would have received while its link is forced down */
    uint64_t reserved[10];
};
static_assert(sizeof(VportStats) == iro::VPORT_STATS_SIZE);

struct QueueStats {
    uint64_t pkts;
    uint64_t bytes;
    uint64_t drops;                /* Rx: no buffer; Tx: errors */
    uint64_t reserved[5];
};
static_assert(sizeof(QueueStats) == iro::QUEUE_STATS_SIZE);

/* ---- Flow rules (doc/hsi.md section 7) -------------------------------------
 * A per-PF table of FLOW_MAX_RULES classification rules, evaluated after a
 * vport accepted a frame and before RSS. A frame matches a rule when it
 * carries every header in `headers` and (field & mask) == spec for every
 * byte of FlowMatch; first match in (priority, age) order wins. */
inline constexpr uint32_t FLOW_MAX_RULES = iro::FLOW_RULES_PER_PF;

namespace flow_hdr {                       /* headers the frame must carry */
inline constexpr uint16_t VLAN = 1u << 0;  /* an 802.1Q/802.1ad tag (the outer one is matched) */
inline constexpr uint16_t IPV4 = 1u << 1;
inline constexpr uint16_t IPV6 = 1u << 2;
inline constexpr uint16_t TCP = 1u << 3;   /* never an IP fragment */
inline constexpr uint16_t UDP = 1u << 4;   /* never an IP fragment */
inline constexpr uint16_t ICMP = 1u << 5;  /* ICMP over IPv4, ICMPv6 over IPv6; never an IP fragment */
inline constexpr uint16_t UNTAGGED = 1u << 6;  /* no VLAN tag */
inline constexpr uint16_t WHOLE_IP = 1u << 7;  /* an IP packet that is not a fragment */
inline constexpr uint16_t ALL = VLAN | IPV4 | IPV6 | TCP | UDP | ICMP | UNTAGGED | WHOLE_IP;
} // namespace flow_hdr

namespace flow_action {
inline constexpr uint8_t DROP = 1u << 0;   /* excludes QUEUE, RSS and MARK */
inline constexpr uint8_t QUEUE = 1u << 1;  /* to FlowRuleAddRamrodData::queue */
inline constexpr uint8_t RSS = 1u << 2;    /* over the rule's own key, types and queue set */
inline constexpr uint8_t MARK = 1u << 3;   /* RxCqe::flow_mark + pars::FLOW_MARK */
inline constexpr uint8_t COUNT = 1u << 4;  /* FlowCounters at iro::flow_counters */
inline constexpr uint8_t ALL = DROP | QUEUE | RSS | MARK | COUNT;
} // namespace flow_action

/* Match fields. Numbers are little-endian like every HSI field; addresses
 * are bytes in wire order (an IPv4 address in the first 4 bytes). */
struct FlowMatch {
    uint8_t dst_mac[6];
    uint8_t src_mac[6];
    uint16_t ethertype;       /* the one after the VLAN tags */
    uint16_t vlan_tci;        /* outer tag; needs flow_hdr::VLAN */
    uint8_t ip_proto;         /* IPv4 protocol / IPv6 next header; needs IPV4 or IPV6 */
    uint8_t ip_tos;           /* IPv4 type of service; needs IPV4 */
    uint8_t icmp_type;        /* needs ICMP */
    uint8_t icmp_code;        /* needs ICMP */
    uint8_t src_ip[16];       /* needs IPV4 or IPV6 */
    uint8_t dst_ip[16];
    uint16_t src_port;        /* needs TCP or UDP */
    uint16_t dst_port;
};
static_assert(sizeof(FlowMatch) == 56);

inline constexpr uint32_t FLOW_MAX_RSS_QUEUES = 32;

struct FlowRuleAddRamrodData {
    uint8_t vport_id;
    uint8_t actions;          /* flow_action::* */
    uint16_t priority;        /* 0 is evaluated first; equal priorities: older rule first */
    uint16_t headers;         /* flow_hdr::* */
    uint16_t queue;           /* QUEUE: PF-relative Rx queue */
    uint32_t mark;            /* MARK */
    uint16_t rss_hash_types;  /* RSS: rss::* */
    uint8_t rss_queue_count;  /* RSS: 1..FLOW_MAX_RSS_QUEUES */
    uint8_t reserved;
    uint32_t rss_key[rss::KEY_DWORDS];            /* RSS: Toeplitz key */
    uint8_t rss_queues[FLOW_MAX_RSS_QUEUES];      /* RSS: PF-relative Rx queues */
    FlowMatch spec;
    FlowMatch mask;
};
static_assert(sizeof(FlowRuleAddRamrodData) == 16 + 40 + 32 + 2 * 56);

struct FlowRuleDelRamrodData {
    uint8_t vport_id;
    uint8_t reserved;
    uint16_t rule_id;         /* as FLOW_RULE_ADD returned it */
    uint32_t reserved2;
};
static_assert(sizeof(FlowRuleDelRamrodData) == 8);

/* Per rule, at iro::flow_counters(pf, rule_id): kept with COUNT, each a
 * single 64-bit store like the other statistics. */
struct FlowCounters {
    uint64_t hits;
    uint64_t bytes;
};
static_assert(sizeof(FlowCounters) == iro::FLOW_COUNTERS_SIZE);
static_assert(iro::flow_counters(MAX_PFS - 1, FLOW_MAX_RULES - 1) + iro::FLOW_COUNTERS_SIZE <=
              reg::STORM_MICROCODE - reg::STORM_RAM_BASE);

} // namespace cna::hsi::eth
