/* SPDX-License-Identifier: BSD-3-Clause
 * Internet checksums (RFC 1071) for the Tx offloads and Rx validation.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "frame/frame.h"

namespace cna::fw {

/* One's-complement sum of a buffer, to be folded by csum_fold. */
uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len);
uint16_t csum_fold(uint64_t sum);

/* IPv4 header checksum. */
void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
/* Inline: every received IPv4 frame is checked. The header is whole 32-bit
 * words (IHL), and a valid one sums to all ones in either byte order, so
 * its native words are added without csum_add's tail handling and byte
 * swap: the 20 bytes every header has as three loads, options apart. */
uint64_t ipv4_options_sum(const uint8_t* ip, uint32_t header_len);
inline bool ipv4_checksum_ok(const uint8_t* frame, const FrameLayout& layout)
{
    const uint8_t* ip = frame + layout.l2_len;
    uint64_t a, b;
    uint32_t c;
    std::memcpy(&a, ip, 8);
    std::memcpy(&b, ip + 8, 8);
    std::memcpy(&c, ip + 16, 4);
    uint64_t sum = (a & 0xffffffff) + (a >> 32) + (b & 0xffffffff) + (b >> 32) + c;
    if (layout.l3_len > 20) [[unlikely]]
        sum += ipv4_options_sum(ip, layout.l3_len);
    sum = (sum & 0xffffffff) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return ((sum & 0xffff) + (sum >> 16)) == 0xffff;
}

/* TCP/UDP checksum over the pseudo header and [l4_off, l3_end). */
void l4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
/* UDP over IPv4 without a checksum (zero) counts as not checked. */
inline bool l4_checksum_present(const uint8_t* frame, const FrameLayout& layout)
{
    return !(layout.l4 == L4::udp && layout.l3 == L3::ipv4 && frame[layout.l4_off + 6] == 0 &&
             frame[layout.l4_off + 7] == 0);
}
bool l4_checksum_ok(const uint8_t* frame, const FrameLayout& layout);

} // namespace cna::fw
