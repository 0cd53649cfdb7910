/* SPDX-License-Identifier: BSD-3-Clause
 * The InfiniBand transport headers RoCEv2 carries after UDP: the base
 * transport header (BTH) and the extended headers of the RC and UD
 * opcodes, their wire formats (big-endian) and which opcode carries which.
 */
#pragma once

#include <cstdint>

#include "base/bytes.h"

namespace cna::fw::roce {

inline constexpr uint16_t UDP_PORT = 4791;
inline constexpr uint32_t BTH_LEN = 12;
inline constexpr uint32_t RETH_LEN = 16;
inline constexpr uint32_t AETH_LEN = 4;
inline constexpr uint32_t ATOMIC_ETH_LEN = 28;
inline constexpr uint32_t ATOMIC_ACK_ETH_LEN = 8;
inline constexpr uint32_t IMMDT_LEN = 4;
inline constexpr uint32_t DETH_LEN = 8;
inline constexpr uint32_t ICRC_LEN = 4;
inline constexpr uint16_t DEFAULT_PKEY = 0xffff;
/* A packet's P_Key against the port's (DEFAULT_PKEY, full member): the
 * same partition (the low 15 bits); either member kind, since ours is
 * full. 0x0000 and 0x8000 are no partition's. */
constexpr bool pkey_matches(uint16_t pkey) { return (pkey & 0x7fff) == (DEFAULT_PKEY & 0x7fff); }

/* The RC opcodes (transport 000b in the opcode's top three bits). */
namespace op {
inline constexpr uint8_t SEND_FIRST = 0x00;
inline constexpr uint8_t SEND_MIDDLE = 0x01;
inline constexpr uint8_t SEND_LAST = 0x02;
inline constexpr uint8_t SEND_LAST_IMM = 0x03;
inline constexpr uint8_t SEND_ONLY = 0x04;
inline constexpr uint8_t SEND_ONLY_IMM = 0x05;
inline constexpr uint8_t WRITE_FIRST = 0x06;
inline constexpr uint8_t WRITE_MIDDLE = 0x07;
inline constexpr uint8_t WRITE_LAST = 0x08;
inline constexpr uint8_t WRITE_LAST_IMM = 0x09;
inline constexpr uint8_t WRITE_ONLY = 0x0a;
inline constexpr uint8_t WRITE_ONLY_IMM = 0x0b;
inline constexpr uint8_t READ_REQUEST = 0x0c;
inline constexpr uint8_t READ_RESPONSE_FIRST = 0x0d;
inline constexpr uint8_t READ_RESPONSE_MIDDLE = 0x0e;
inline constexpr uint8_t READ_RESPONSE_LAST = 0x0f;
inline constexpr uint8_t READ_RESPONSE_ONLY = 0x10;
inline constexpr uint8_t ACKNOWLEDGE = 0x11;
inline constexpr uint8_t ATOMIC_ACKNOWLEDGE = 0x12;
inline constexpr uint8_t CMP_SWAP = 0x13;
inline constexpr uint8_t FETCH_ADD = 0x14;
inline constexpr uint8_t COUNT = 0x15;
/* UD (transport 011b): a datagram is one packet. */
inline constexpr uint8_t UD_SEND_ONLY = 0x64;
inline constexpr uint8_t UD_SEND_ONLY_IMM = 0x65;
} // namespace op

/* What an opcode is and carries. */
namespace opf {
inline constexpr uint16_t RETH = 1u << 0;
inline constexpr uint16_t AETH = 1u << 1;
inline constexpr uint16_t ATOMIC_ETH = 1u << 2;
inline constexpr uint16_t ATOMIC_ACK_ETH = 1u << 3;
inline constexpr uint16_t IMMDT = 1u << 4;
inline constexpr uint16_t PAYLOAD = 1u << 5;
inline constexpr uint16_t FIRST = 1u << 6;  /* starts a message */
inline constexpr uint16_t LAST = 1u << 7;   /* ends a message (ONLY is FIRST | LAST) */
inline constexpr uint16_t REQUEST = 1u << 8;   /* requester to responder */
inline constexpr uint16_t SEND = 1u << 9;
inline constexpr uint16_t WRITE = 1u << 10;
inline constexpr uint16_t READ = 1u << 11;
inline constexpr uint16_t ATOMIC = 1u << 12;
inline constexpr uint16_t DETH = 1u << 13;     /* a UD datagram's */
inline constexpr uint16_t VALID = 1u << 15;
} // namespace opf

constexpr uint16_t opcode_flags(uint8_t opcode)
{
    using namespace opf;
    constexpr uint16_t send = VALID | REQUEST | SEND | PAYLOAD;
    constexpr uint16_t write = VALID | REQUEST | WRITE | PAYLOAD;
    constexpr uint16_t response = VALID | READ | PAYLOAD;
    switch (opcode) {
    case op::SEND_FIRST: return send | FIRST;
    case op::SEND_MIDDLE: return send;
    case op::SEND_LAST: return send | LAST;
    case op::SEND_LAST_IMM: return send | LAST | IMMDT;
    case op::SEND_ONLY: return send | FIRST | LAST;
    case op::SEND_ONLY_IMM: return send | FIRST | LAST | IMMDT;
    case op::WRITE_FIRST: return write | FIRST | RETH;
    case op::WRITE_MIDDLE: return write;
    case op::WRITE_LAST: return write | LAST;
    case op::WRITE_LAST_IMM: return write | LAST | IMMDT;
    case op::WRITE_ONLY: return write | FIRST | LAST | RETH;
    case op::WRITE_ONLY_IMM: return write | FIRST | LAST | RETH | IMMDT;
    case op::READ_REQUEST: return VALID | REQUEST | READ | FIRST | LAST | RETH;
    case op::READ_RESPONSE_FIRST: return response | FIRST | AETH;
    case op::READ_RESPONSE_MIDDLE: return response;
    case op::READ_RESPONSE_LAST: return response | LAST | AETH;
    case op::READ_RESPONSE_ONLY: return response | FIRST | LAST | AETH;
    case op::ACKNOWLEDGE: return VALID | FIRST | LAST | AETH;
    case op::ATOMIC_ACKNOWLEDGE: return VALID | ATOMIC | FIRST | LAST | AETH | ATOMIC_ACK_ETH;
    case op::CMP_SWAP:
    case op::FETCH_ADD: return VALID | REQUEST | ATOMIC | FIRST | LAST | ATOMIC_ETH;
    case op::UD_SEND_ONLY: return send | FIRST | LAST | DETH;
    case op::UD_SEND_ONLY_IMM: return send | FIRST | LAST | DETH | IMMDT;
    default: return 0;
    }
}

/* Bytes of extended headers between the BTH and the payload. */
constexpr uint32_t ext_headers_len(uint16_t flags)
{
    return (flags & opf::RETH ? RETH_LEN : 0) + (flags & opf::AETH ? AETH_LEN : 0) +
           (flags & opf::ATOMIC_ETH ? ATOMIC_ETH_LEN : 0) + (flags & opf::ATOMIC_ACK_ETH ? ATOMIC_ACK_ETH_LEN : 0) +
           (flags & opf::IMMDT ? IMMDT_LEN : 0) + (flags & opf::DETH ? DETH_LEN : 0);
}

/* A packet's place in its message, and the opcodes for each place. */
enum class Position : uint8_t { first, middle, last, only };
constexpr Position position(uint32_t index, uint32_t packets)
{
    if (packets == 1)
        return Position::only;
    return index == 0 ? Position::first : index + 1 == packets ? Position::last : Position::middle;
}
/* Packets of a message: a zero-length message is one packet. */
constexpr uint32_t packets_of(uint64_t length, uint32_t mtu)
{
    return length == 0 ? 1 : static_cast<uint32_t>((length + mtu - 1) / mtu);
}
/* SEND and WRITE: FIRST, MIDDLE, LAST, ONLY, and "with immediate" the
 * opcode after LAST's and ONLY's. */
constexpr uint8_t message_opcode(uint8_t first, Position p, bool imm)
{
    constexpr uint8_t offset[] = {0, 1, 2, 4}; /* FIRST, MIDDLE, LAST, ONLY from FIRST */
    const bool ends = p == Position::last || p == Position::only;
    return static_cast<uint8_t>(first + offset[static_cast<int>(p)] + (imm && ends ? 1 : 0));
}
constexpr uint8_t send_opcode(Position p, bool imm) { return message_opcode(op::SEND_FIRST, p, imm); }
constexpr uint8_t write_opcode(Position p, bool imm) { return message_opcode(op::WRITE_FIRST, p, imm); }
constexpr uint8_t read_response_opcode(Position p)
{
    constexpr uint8_t ops[] = {op::READ_RESPONSE_FIRST, op::READ_RESPONSE_MIDDLE, op::READ_RESPONSE_LAST,
                               op::READ_RESPONSE_ONLY};
    return ops[static_cast<int>(p)];
}

/* ---- BTH ---------------------------------------------------------------- */
struct Bth {
    uint8_t opcode = 0;
    bool solicited = false;
    bool migration = false;  /* MigReq: no path migration here */
    uint8_t pad = 0;         /* bytes padding the payload to a 4-byte multiple */
    uint16_t pkey = DEFAULT_PKEY;
    bool fecn = false;
    bool becn = false;
    uint32_t dest_qp = 0;    /* 24 bits */
    bool ack_request = false;
    uint32_t psn = 0;        /* 24 bits */

    bool operator==(const Bth&) const = default;
};

inline void write_bth(uint8_t* p, const Bth& b)
{
    p[0] = b.opcode;
    p[1] = static_cast<uint8_t>((b.solicited ? 0x80 : 0) | (b.migration ? 0x40 : 0) | (b.pad & 3) << 4);
    store_be16(p + 2, b.pkey);
    store_be32(p + 4, (b.fecn ? 1u << 31 : 0) | (b.becn ? 1u << 30 : 0) | (b.dest_qp & 0xffffff));
    store_be32(p + 8, (b.ack_request ? 1u << 31 : 0) | (b.psn & 0xffffff));
}

inline Bth read_bth(const uint8_t* p)
{
    uint32_t qp = load_be32(p + 4), psn = load_be32(p + 8);
    return Bth{.opcode = p[0],
               .solicited = (p[1] & 0x80) != 0,
               .migration = (p[1] & 0x40) != 0,
               .pad = static_cast<uint8_t>((p[1] >> 4) & 3),
               .pkey = load_be16(p + 2),
               .fecn = (qp >> 31) != 0,
               .becn = ((qp >> 30) & 1) != 0,
               .dest_qp = qp & 0xffffff,
               .ack_request = (psn >> 31) != 0,
               .psn = psn & 0xffffff};
}
/* Transport header version: 0 is the only one. */
inline uint8_t bth_tver(const uint8_t* p) { return p[1] & 0x0f; }

/* ---- Extended headers ---------------------------------------------------- */
struct Reth {
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint32_t length = 0;
    bool operator==(const Reth&) const = default;
};
inline void write_reth(uint8_t* p, const Reth& r)
{
    store_be64(p, r.va);
    store_be32(p + 8, r.rkey);
    store_be32(p + 12, r.length);
}
inline Reth read_reth(const uint8_t* p) { return Reth{load_be64(p), load_be32(p + 8), load_be32(p + 12)}; }

struct AtomicEth {
    uint64_t va = 0;
    uint32_t rkey = 0;
    uint64_t swap_add = 0;
    uint64_t compare = 0;
    bool operator==(const AtomicEth&) const = default;
};
inline void write_atomic_eth(uint8_t* p, const AtomicEth& a)
{
    store_be64(p, a.va);
    store_be32(p + 8, a.rkey);
    store_be64(p + 12, a.swap_add);
    store_be64(p + 20, a.compare);
}
inline AtomicEth read_atomic_eth(const uint8_t* p)
{
    return AtomicEth{load_be64(p), load_be32(p + 8), load_be64(p + 12), load_be64(p + 20)};
}

/* AETH: a syndrome and the responder's message sequence number. The
 * syndrome's top three bits say what it is: 000 ACK (the rest a credit
 * count, 31 = none advertised), 001 RNR NAK (the rest an RNR timer code),
 * 011 NAK (the rest a NakCode). */
struct Aeth {
    uint8_t syndrome = 0;
    uint32_t msn = 0;  /* 24 bits */
    bool operator==(const Aeth&) const = default;
};
inline void write_aeth(uint8_t* p, const Aeth& a) { store_be32(p, uint32_t{a.syndrome} << 24 | (a.msn & 0xffffff)); }
inline Aeth read_aeth(const uint8_t* p)
{
    uint32_t v = load_be32(p);
    return Aeth{static_cast<uint8_t>(v >> 24), v & 0xffffff};
}

/* DETH: the datagram's Q_Key and the sending QP. */
struct Deth {
    uint32_t qkey = 0;
    uint32_t src_qp = 0;  /* 24 bits */
    bool operator==(const Deth&) const = default;
};
inline void write_deth(uint8_t* p, const Deth& d)
{
    store_be32(p, d.qkey);
    store_be32(p + 4, d.src_qp & 0xffffff);
}
inline Deth read_deth(const uint8_t* p) { return Deth{load_be32(p), load_be32(p + 4) & 0xffffff}; }

enum class NakCode : uint8_t {
    psn_sequence_error = 0,
    invalid_request = 1,
    remote_access_error = 2,
    remote_operational_error = 3,
    invalid_rd_request = 4,
};
enum class AethKind : uint8_t { ack, rnr_nak, nak, reserved };
namespace syndrome {
inline constexpr uint8_t NO_CREDITS_ADVERTISED = 0x1f;
constexpr uint8_t ack() { return NO_CREDITS_ADVERTISED; }
constexpr uint8_t rnr_nak(uint8_t timer_code) { return 0x20 | (timer_code & 0x1f); }
constexpr uint8_t nak(NakCode code) { return 0x60 | static_cast<uint8_t>(code); }
constexpr AethKind kind(uint8_t s)
{
    switch (s >> 5) {
    case 0: return AethKind::ack;
    case 1: return AethKind::rnr_nak;
    case 3: return AethKind::nak;
    default: return AethKind::reserved;
    }
}
constexpr uint8_t value(uint8_t s) { return s & 0x1f; }
} // namespace syndrome

} // namespace cna::fw::roce
