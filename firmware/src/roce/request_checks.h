/* SPDX-License-Identifier: BSD-3-Clause
 * What a responder checks of each request packet before it acts on it,
 * in the order the transport takes them: the PSN against the one it
 * expects, the opcode against the message in progress, the payload length
 * against the path MTU and the request's own lengths. Pure functions of
 * the packet and the responder's state, so the rules read in one place.
 */
#pragma once

#include <cstdint>

#include "roce/psn.h"
#include "roce/transport.h"

namespace cna::fw::roce {

/* expected: act on it. duplicate: an earlier PSN, resent because an ACK
 * was lost (ACK it again; READs and atomics are answered again). ahead: a
 * packet was lost before it (NAK PSN sequence error, once). */
enum class PsnClass : uint8_t { expected, duplicate, ahead };
constexpr PsnClass classify_psn(uint32_t psn, uint32_t expected_psn)
{
    int32_t d = psn_diff(psn, expected_psn);
    return d == 0 ? PsnClass::expected : d < 0 ? PsnClass::duplicate : PsnClass::ahead;
}

/* The multi-packet message a responder is in the middle of. */
enum class InProgress : uint8_t { none, send, write };

/* A reliable connection's requests: a FIRST or ONLY packet may come only
 * between messages; a MIDDLE or LAST only inside a message of its kind.
 * READ requests and atomics are single packets. Responses, ACKs and
 * datagrams are no requests of a connection at all. */
constexpr bool opcode_in_sequence(InProgress in, uint8_t opcode)
{
    const uint16_t f = opcode_flags(opcode);
    if (!(f & opf::VALID) || !(f & opf::REQUEST) || (f & opf::DETH))
        return false;
    if (f & opf::FIRST)
        return in == InProgress::none;
    if (f & opf::SEND)
        return in == InProgress::send;
    return (f & opf::WRITE) && in == InProgress::write;
}

/* The message a packet leaves in progress, once accepted. */
constexpr InProgress after(uint8_t opcode)
{
    const uint16_t f = opcode_flags(opcode);
    if (f & opf::LAST)
        return InProgress::none;
    return f & opf::SEND ? InProgress::send : f & opf::WRITE ? InProgress::write : InProgress::none;
}

/* FIRST and MIDDLE packets carry exactly a path MTU, a LAST between 1 byte
 * and an MTU, an ONLY up to an MTU; READ requests and atomics none. */
constexpr bool payload_length_ok(uint8_t opcode, uint32_t payload, uint32_t mtu)
{
    const uint16_t f = opcode_flags(opcode);
    if (!(f & opf::PAYLOAD))
        return payload == 0;
    const bool first = (f & opf::FIRST) != 0, last = (f & opf::LAST) != 0;
    if (first && last)
        return payload <= mtu;
    if (last)
        return payload >= 1 && payload <= mtu;
    return payload == mtu;
}

/* An atomic's target: 8 bytes, 8-byte aligned. */
inline constexpr uint32_t ATOMIC_SIZE = 8;
constexpr bool atomic_aligned(uint64_t va) { return (va & (ATOMIC_SIZE - 1)) == 0; }

} // namespace cna::fw::roce
