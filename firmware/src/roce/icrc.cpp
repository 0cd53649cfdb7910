/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/icrc.h"

#include <cstring>

#include "roce/transport.h"
#include "base/crc32.h"

namespace cna::fw::roce {

namespace {

constexpr uint32_t MAX_IP_HLEN = 60; /* IPv4 with options; IPv6 is 40 */
constexpr uint32_t UDP_HLEN = 8;
constexpr uint32_t MASKED_LEN = 8 + MAX_IP_HLEN + UDP_HLEN + BTH_LEN;
/* A short packet's payload joins the masked headers for one CRC call:
 * a CRC call's fixed cost is about that of 100 bytes. */
constexpr uint32_t SHORT_REST = 192;
/* ISA-L's CRC takes buffers of 256 bytes and more by folding, shorter
 * ones a slower way: 130 bytes cost it half again what 256 do. A short
 * input is lengthened to 256 without changing its CRC: four bytes of
 * ones bring the CRC's preset register (all ones) to zero, and a register
 * of zero stays zero through zero bytes, so zeros may go between the
 * first four of the eight bytes of ones and the rest. */
constexpr uint32_t FOLDED_FROM = 256;
constexpr uint32_t ONES_TO_ZERO = 4;

/* The copies and the zeros here are a few dozen bytes: moved 16 at a
 * time, the last move overlapping, rather than by the string instructions
 * GCC makes of a memcpy or memset of a variable or large length, whose
 * start-up costs more than these bytes (75 % of icrc()'s own time in an
 * inline latency profile). Nor may GCC turn the loops back into library
 * calls (loop distribution): memmove's dispatch cost the engine thread
 * more than the CRC itself. */
#if defined(__GNUC__) && !defined(__clang__)
#define CNA_MOVES_AS_WRITTEN __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define CNA_MOVES_AS_WRITTEN
#endif
constexpr uint32_t MOVE = 16;

CNA_MOVES_AS_WRITTEN void copy_short(uint8_t* dst, const uint8_t* src, uint32_t len)
{
    if (len >= MOVE) {
        for (uint32_t i = 0; i + MOVE < len; i += MOVE)
            std::memcpy(dst + i, src + i, MOVE);
        std::memcpy(dst + len - MOVE, src + len - MOVE, MOVE);
    } else if (len >= 8) {
        std::memcpy(dst, src, 8);
        std::memcpy(dst + len - 8, src + len - 8, 8);
    } else if (len >= 4) {
        std::memcpy(dst, src, 4);
        std::memcpy(dst + len - 4, src + len - 4, 4);
    } else if (len != 0) {
        dst[0] = src[0];
        dst[len / 2] = src[len / 2];
        dst[len - 1] = src[len - 1];
    }
}

/* Zeros in [end - len, end), and in up to 15 bytes before. */
CNA_MOVES_AS_WRITTEN void zero_before(uint8_t* end, uint32_t len)
{
    static constexpr uint8_t ZEROS[MOVE] = {};
    for (uint8_t* p = end - MOVE; p + MOVE > end - len; p -= MOVE)
        std::memcpy(p, ZEROS, MOVE);
}

} // namespace

uint32_t icrc(const uint8_t* frame, const FrameLayout& layout)
{
    /* The masked headers are copied, behind room for zeros; the payload is
     * taken where it lies unless it is short. */
    alignas(64) uint8_t buffer[FOLDED_FROM + MASKED_LEN + SHORT_REST];
    uint8_t* masked = buffer + FOLDED_FROM;
    std::memset(masked, 0xff, 8);
    uint8_t* ip = masked + 8;
    const uint32_t ip_len = layout.l4_off - layout.l2_len;
    copy_short(ip, frame + layout.l2_len, ip_len + UDP_HLEN + BTH_LEN);
    if (layout.l3 == L3::ipv4) {
        ip[1] = 0xff;                /* TOS */
        ip[8] = 0xff;                /* TTL */
        ip[10] = ip[11] = 0xff;      /* header checksum */
    } else {
        ip[0] |= 0x0f;               /* traffic class and flow label */
        ip[1] = ip[2] = ip[3] = 0xff;
        ip[7] = 0xff;                /* hop limit */
    }
    uint8_t* udp = ip + ip_len;
    udp[6] = udp[7] = 0xff;          /* checksum */
    udp[UDP_HLEN + 4] = 0xff;        /* BTH: FECN, BECN, reserved */
    uint32_t masked_len = 8 + ip_len + UDP_HLEN + BTH_LEN;
    const uint32_t rest = layout.l4_off + UDP_HLEN + BTH_LEN;
    const uint32_t rest_len = layout.l3_end - ICRC_LEN - rest;
    const bool whole = rest_len <= SHORT_REST;
    if (whole) {
        copy_short(masked + masked_len, frame + rest, rest_len);
        masked_len += rest_len;
    }
    if (masked_len < FOLDED_FROM) {
        const uint32_t zeros = FOLDED_FROM - masked_len;
        masked -= zeros;
        zero_before(masked + ONES_TO_ZERO + zeros, zeros);
        std::memset(masked, 0xff, ONES_TO_ZERO);
        masked_len = FOLDED_FROM;
    }
    const uint32_t crc = crc32(0, masked, masked_len);
    return whole ? crc : crc32(crc, frame + rest, rest_len);
}

} // namespace cna::fw::roce
