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
    std::memcpy(ip, frame + layout.l2_len, ip_len + UDP_HLEN + BTH_LEN);
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
        std::memcpy(masked + masked_len, frame + rest, rest_len);
        masked_len += rest_len;
    }
    if (masked_len < FOLDED_FROM) {
        const uint32_t zeros = FOLDED_FROM - masked_len;
        masked -= zeros;
        std::memset(masked, 0xff, ONES_TO_ZERO);
        std::memset(masked + ONES_TO_ZERO, 0, zeros);
        masked_len = FOLDED_FROM;
    }
    const uint32_t crc = crc32(0, masked, masked_len);
    return whole ? crc : crc32(crc, frame + rest, rest_len);
}

} // namespace cna::fw::roce
