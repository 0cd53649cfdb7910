/* SPDX-License-Identifier: BSD-3-Clause
 * The InfiniBand CM's messages on the wire (IBTA Vol 1, 12.6): 256-byte
 * MADs of management class 0x07, class version 2, method Send, sent to
 * and from QP1. Each message is a struct of what it carries, with a
 * format() that lays it out and a parse_*() that reads it back.
 *
 * Parsing never fails on the message's contents: every bit pattern is
 * some message, and what a value means (a reserved transport type, a path
 * MTU the port cannot do) is the state machine's to judge, with a REJ. Only
 * the common header decides whether a MAD is the CM's at all.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cna::cm {

inline constexpr std::size_t MAD_SIZE = 256;
inline constexpr std::size_t MAD_HEADER_SIZE = 24;
using Mad = std::array<uint8_t, MAD_SIZE>;
using Gid = std::array<uint8_t, 16>;

inline constexpr uint8_t MAD_BASE_VERSION = 1;
inline constexpr uint8_t CM_MGMT_CLASS = 0x07;
inline constexpr uint8_t CM_CLASS_VERSION = 2;
inline constexpr uint8_t MAD_METHOD_SEND = 0x03;

enum class Attribute : uint16_t {
    class_port_info = 0x0001,
    req = 0x0010,
    mra = 0x0011,
    rej = 0x0012,
    rep = 0x0013,
    rtu = 0x0014,
    dreq = 0x0015,
    drep = 0x0016,
    sidr_req = 0x0017,
    sidr_rep = 0x0018,
    lap = 0x0019,
    apr = 0x001a,
};

/* The MAD's common header (IBTA 13.4.3). */
struct MadHeader {
    uint8_t base_version = MAD_BASE_VERSION;
    uint8_t mgmt_class = CM_MGMT_CLASS;
    uint8_t class_version = CM_CLASS_VERSION;
    uint8_t method = MAD_METHOD_SEND;
    uint16_t status = 0;
    uint64_t transaction_id = 0;
    Attribute attribute = Attribute::req;
    uint32_t attribute_modifier = 0;
};

/* The header of what arrived on QP1, if it is a whole MAD of the CM's
 * class and version sent with the Send method; nothing else is the CM's. */
std::optional<MadHeader> parse_cm_header(std::span<const uint8_t> mad);

/* The transport service a REQ asks for (its 2-bit field). */
enum class Transport : uint8_t { rc = 0, uc = 1, rd = 2 };

/* Which message a REJ or an MRA is about (their 2-bit field). */
enum class MessageKind : uint8_t { req = 0, rep = 1, other = 2 };

/* REJ reasons (IBTA Table 112). */
enum class RejReason : uint16_t {
    no_qp = 1,
    no_eec = 2,
    no_resources = 3,
    timeout = 4,
    unsupported_request = 5,
    invalid_comm_id = 6,
    invalid_comm_instance = 7,
    invalid_service_id = 8,
    invalid_transport_type = 9,
    stale_connection = 10,
    rdc_not_exist = 11,
    invalid_gid = 12,
    invalid_lid = 13,
    invalid_sl = 14,
    invalid_traffic_class = 15,
    invalid_hop_limit = 16,
    invalid_packet_rate = 17,
    port_cm_redirect = 24,
    port_redirect = 25,
    invalid_mtu = 26,
    insufficient_resp_resources = 27,
    consumer_reject = 28,
    invalid_rnr_retry = 29,
    duplicate_local_comm_id = 30,
    invalid_class_version = 31,
    invalid_flow_label = 32,
};

/* SIDR REP status (IBTA Table 119). */
enum class SidrStatus : uint8_t {
    valid = 0,
    service_id_not_supported = 1,
    rejected = 2,
    no_qp = 3,
    redirect = 4,
    unsupported_class_version = 5,
};

/* One path of a REQ (primary or alternate). On RoCE the LIDs are unused
 * and the GIDs are the ports' addresses (IPv4-mapped for IPv4). */
struct Path {
    uint16_t local_lid = 0;
    uint16_t remote_lid = 0;
    Gid local_gid{};
    Gid remote_gid{};
    uint32_t flow_label = 0;  /* 20 bits */
    uint8_t packet_rate = 0;  /* 6 bits */
    uint8_t traffic_class = 0;
    uint8_t hop_limit = 0;
    uint8_t sl = 0;           /* 4 bits */
    bool subnet_local = false;
    uint8_t local_ack_timeout = 0; /* 5 bits: 4.096 us << t */
    bool operator==(const Path&) const = default;
};

inline constexpr std::size_t REQ_PRIVATE_DATA = 92;
inline constexpr std::size_t MRA_PRIVATE_DATA = 222;
inline constexpr std::size_t REJ_PRIVATE_DATA = 148;
inline constexpr std::size_t REJ_ARI_SIZE = 72;
inline constexpr std::size_t REP_PRIVATE_DATA = 196;
inline constexpr std::size_t RTU_PRIVATE_DATA = 224;
inline constexpr std::size_t DREQ_PRIVATE_DATA = 220;
inline constexpr std::size_t DREP_PRIVATE_DATA = 224;
inline constexpr std::size_t SIDR_REQ_PRIVATE_DATA = 216;
inline constexpr std::size_t SIDR_REP_PRIVATE_DATA = 136;
inline constexpr std::size_t SIDR_REP_INFO_SIZE = 72;

/* A message's private data: what the consumer gave, at most its message's
 * room; parsed, the whole room (the wire does not say how much was meant). */
using PrivateData = std::vector<uint8_t>;

struct Req {
    uint32_t local_comm_id = 0;
    uint64_t service_id = 0;
    uint64_t local_ca_guid = 0;
    uint32_t local_qkey = 0;
    uint32_t local_qpn = 0;            /* 24 bits */
    uint8_t responder_resources = 0;
    uint32_t local_eecn = 0;           /* 24 bits */
    uint8_t initiator_depth = 0;
    uint32_t remote_eecn = 0;          /* 24 bits */
    uint8_t remote_cm_response_timeout = 0; /* 5 bits */
    Transport transport = Transport::rc;
    bool end_to_end_flow_control = false;
    uint32_t starting_psn = 0;         /* 24 bits */
    uint8_t local_cm_response_timeout = 0; /* 5 bits */
    uint8_t retry_count = 0;           /* 3 bits */
    uint16_t pkey = 0xffff;
    uint8_t path_mtu = 0;              /* 4 bits, IB's encoding: 1 = 256 ... 5 = 4096 */
    bool rdc_exists = false;
    uint8_t rnr_retry_count = 0;       /* 3 bits */
    uint8_t max_cm_retries = 0;        /* 4 bits */
    bool srq = false;
    uint8_t extended_transport = 0;    /* 3 bits */
    Path primary;
    std::optional<Path> alternate;     /* present when its local LID or GID is not zero */
    PrivateData private_data;
};

struct Mra {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    MessageKind message = MessageKind::req;
    uint8_t service_timeout = 0;       /* 5 bits */
    PrivateData private_data;
};

struct Rej {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    MessageKind message = MessageKind::req;
    RejReason reason = RejReason::consumer_reject;
    std::vector<uint8_t> additional_info; /* ARI, at most 72 bytes; its length is on the wire */
    PrivateData private_data;
};

struct Rep {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    uint32_t local_qkey = 0;
    uint32_t local_qpn = 0;            /* 24 bits */
    uint32_t local_eecn = 0;           /* 24 bits */
    uint32_t starting_psn = 0;         /* 24 bits */
    uint8_t responder_resources = 0;
    uint8_t initiator_depth = 0;
    uint8_t target_ack_delay = 0;      /* 5 bits */
    uint8_t failover_accepted = 0;     /* 2 bits */
    bool end_to_end_flow_control = false;
    uint8_t rnr_retry_count = 0;       /* 3 bits */
    bool srq = false;
    uint64_t local_ca_guid = 0;
    PrivateData private_data;
};

struct Rtu {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    PrivateData private_data;
};

/* A DREQ names the QP it ends: the receiver's. */
struct Dreq {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    uint32_t remote_qpn = 0;           /* 24 bits */
    PrivateData private_data;
};

struct Drep {
    uint32_t local_comm_id = 0;
    uint32_t remote_comm_id = 0;
    PrivateData private_data;
};

struct SidrReq {
    uint32_t request_id = 0;
    uint16_t pkey = 0xffff;
    uint64_t service_id = 0;
    PrivateData private_data;
};

struct SidrRep {
    uint32_t request_id = 0;
    SidrStatus status = SidrStatus::valid;
    std::vector<uint8_t> additional_info; /* at most 72 bytes, in the ClassPortInfo area */
    uint32_t qpn = 0;                  /* 24 bits */
    uint64_t service_id = 0;
    uint32_t qkey = 0;
    PrivateData private_data;
};

Mad format(const Req& m, uint64_t transaction_id);
Mad format(const Mra& m, uint64_t transaction_id);
Mad format(const Rej& m, uint64_t transaction_id);
Mad format(const Rep& m, uint64_t transaction_id);
Mad format(const Rtu& m, uint64_t transaction_id);
Mad format(const Dreq& m, uint64_t transaction_id);
Mad format(const Drep& m, uint64_t transaction_id);
Mad format(const SidrReq& m, uint64_t transaction_id);
Mad format(const SidrRep& m, uint64_t transaction_id);

Req parse_req(const Mad& mad);
Mra parse_mra(const Mad& mad);
Rej parse_rej(const Mad& mad);
Rep parse_rep(const Mad& mad);
Rtu parse_rtu(const Mad& mad);
Dreq parse_dreq(const Mad& mad);
Drep parse_drep(const Mad& mad);
SidrReq parse_sidr_req(const Mad& mad);
SidrRep parse_sidr_rep(const Mad& mad);

/* Every message's first two words, whatever it is: for RTU, DREQ, DREP,
 * MRA, REJ and REP the sender's comm ID and then the receiver's (REQ has
 * only the first). */
uint32_t sender_comm_id(const Mad& mad);
uint32_t receiver_comm_id(const Mad& mad);

/* IB's response-time encoding (4.096 us << t), in nanoseconds. */
constexpr uint64_t iba_time_ns(uint8_t exponent)
{
    return exponent > 31 ? iba_time_ns(31) : (uint64_t{4096} << exponent);
}

} // namespace cna::cm
