/* SPDX-License-Identifier: BSD-3-Clause
 * Internet checksums (RFC 1071) for the Tx offloads and Rx validation.
 *
 * Sums are kept in the machine's byte order and only a folded result is
 * swapped where a big-endian value is wanted: a one's-complement sum is the
 * same in either order, byte-swapped (RFC 1071 section 2(B)). Every
 * received frame is checked, most of them short: the sums of up to a cache
 * line are inline, longer ones a call (vectorised where the CPU can).
 */
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/bytes.h"
#include "frame/frame.h"

namespace cna::fw {

/* One's-complement sum of a buffer, to be folded by csum_fold. */
uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len);
uint16_t csum_fold(uint64_t sum);

/* Every byte of [data, data + len) summed as the machine's 16-bit words,
 * not folded: below 2^48 (2^33 for a buffer under 64 KiB), so that sums
 * may be added without losing a carry. */
uint64_t native_sum_long(const uint8_t* data, std::size_t len);
/* The two ways native_sum_long() takes, the second where the CPU has AVX2
 * (nullptr where it has not); declared for the tests, which check both. */
uint64_t native_sum_scalar(const uint8_t* data, std::size_t len);
extern uint64_t (*const native_sum_vector)(const uint8_t* data, std::size_t len);
inline uint64_t native_sum(const uint8_t* data, std::size_t len)
{
    constexpr std::size_t INLINE_UP_TO = 64;
    if (len > INLINE_UP_TO)
        return native_sum_long(data, len);
    /* 64-bit words with their carries: an add and an add-with-carry each. */
    using Wide = unsigned __int128;
    Wide sum = 0;
    for (const uint8_t* end = data + (len & ~std::size_t{7}); data != end; data += 8) {
        uint64_t w;
        std::memcpy(&w, data, 8);
        sum += w;
    }
    uint64_t tail = 0;
    if (len & 4) {
        uint32_t w;
        std::memcpy(&w, data, 4);
        tail += w;
        data += 4;
    }
    if (len & 2) {
        uint16_t w;
        std::memcpy(&w, data, 2);
        tail += w;
        data += 2;
    }
    if (len & 1)
        tail += uint16_t{data[0]} << (std::endian::native == std::endian::little ? 0 : 8);
    /* A carry out of 64 bits is worth 1, as 2^64 is modulo 2^16 - 1. */
    const uint64_t low = static_cast<uint64_t>(sum);
    return (low >> 32) + (low & 0xffffffff) + static_cast<uint64_t>(sum >> 64) + tail;
}

/* A native sum folded to 16 bits, the carries wrapped around (0xffff for
 * a buffer that holds its own valid checksum): each half added to the
 * other by a rotation, the carry landing in the upper half. */
inline uint16_t csum_native_fold(uint64_t sum)
{
    auto rotate64 = [](uint64_t x) { return x << 32 | x >> 32; };
    auto rotate32 = [](uint32_t x) { return x << 16 | x >> 16; };
    uint64_t s64 = sum + rotate64(sum);
    uint32_t s32 = static_cast<uint32_t>(s64 >> 32);
    s32 += rotate32(s32);
    return static_cast<uint16_t>(s32 >> 16);
}

/* IPv4 header checksum. */
void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
/* The header is whole 32-bit words (IHL): the 20 bytes every header has
 * as three loads, options apart. */
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
        sum += native_sum(ip + 20, layout.l3_len - 20u);
    return csum_native_fold(sum) == 0xffff;
}

/* Copies [src, src + len) to dst and returns the bytes' native sum, as
 * native_sum_long() gives it: one pass over a long frame where its copy
 * into a host buffer and the validation of its checksum took two. */
uint64_t copy_native_sum(uint8_t* dst, const uint8_t* src, std::size_t len);
/* Its AVX2 way (nullptr where the CPU has not AVX2), for the tests. */
extern uint64_t (*const copy_native_sum_vector)(uint8_t* dst, const uint8_t* src, std::size_t len);

/* The TCP/UDP checksum's pseudo header is the addresses, then protocol
 * and L4 length as two big-endian 16-bit words. An IPv4 header without
 * options ends with the addresses, so that they and the segment are one
 * run of the frame, [begin, end); empty (end == 0) where they are not. */
struct SumRun {
    uint32_t begin = 0, end = 0;
};
inline SumRun l4_sum_run(const FrameLayout& layout)
{
    constexpr uint32_t V4_ADDRS = 12; /* offset in the IP header */
    if (layout.l3 == L3::ipv4 && layout.l4_off == layout.l2_len + 20)
        return {layout.l2_len + V4_ADDRS, layout.l3_end};
    return {};
}

/* The pseudo header's protocol and L4 length, as the machine's word. */
inline uint32_t l4_pseudo_tail(const FrameLayout& layout)
{
    uint8_t tail[4] = {0, layout.l4 == L4::tcp ? IPPROTO_TCP_ : IPPROTO_UDP_};
    store_be16(tail + 2, static_cast<uint16_t>(layout.l3_end - layout.l4_off));
    uint32_t word;
    std::memcpy(&word, tail, 4);
    return word;
}

/* The TCP/UDP checksum's sum, in the machine's order, from the native
 * sum of the frame's run (l4_sum_run). */
inline uint16_t l4_native_sum_of_run(const FrameLayout& layout, uint64_t run_sum)
{
    return csum_native_fold(run_sum + l4_pseudo_tail(layout));
}

/* The TCP/UDP checksum's sum, in the machine's order: the pseudo header
 * and the segment. */
inline uint16_t l4_native_sum(const uint8_t* frame, const FrameLayout& layout)
{
    if (const SumRun run = l4_sum_run(layout); run.end != 0)
        return l4_native_sum_of_run(layout, native_sum(frame + run.begin, run.end - run.begin));
    constexpr uint32_t V4_ADDRS = 12, V6_ADDRS = 8; /* offsets in the IP header */
    const uint8_t* ip = frame + layout.l2_len;
    uint64_t addresses = layout.l3 == L3::ipv4 ? native_sum(ip + V4_ADDRS, 8) : native_sum(ip + V6_ADDRS, 32);
    return csum_native_fold(addresses + l4_pseudo_tail(layout) +
                            native_sum(frame + layout.l4_off, layout.l3_end - layout.l4_off));
}

/* TCP/UDP checksum over the pseudo header and [l4_off, l3_end). */
void l4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
/* UDP over IPv4 without a checksum (zero) counts as not checked. */
inline bool l4_checksum_present(const uint8_t* frame, const FrameLayout& layout)
{
    return !(layout.l4 == L4::udp && layout.l3 == L3::ipv4 && frame[layout.l4_off + 6] == 0 &&
             frame[layout.l4_off + 7] == 0);
}

} // namespace cna::fw
