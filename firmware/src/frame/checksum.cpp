/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/checksum.h"

#include <cstring>

#include "base/bytes.h"

namespace cna::fw {
namespace {

/* Offset of the checksum field inside the L4 header. */
uint32_t l4_csum_offset(const FrameLayout& layout) { return layout.l4 == L4::tcp ? 16 : 6; }

uint64_t pseudo_header_sum(const uint8_t* frame, const FrameLayout& layout)
{
    const uint8_t* ip = frame + layout.l2_len;
    uint32_t l4_bytes = layout.l3_end - layout.l4_off;
    uint8_t proto = layout.l4 == L4::tcp ? IPPROTO_TCP_ : IPPROTO_UDP_;
    uint64_t sum = layout.l3 == L3::ipv4 ? csum_add(0, ip + 12, 8) : csum_add(0, ip + 8, 32);
    uint8_t tail[8] = {};
    store_be32(tail, l4_bytes);
    tail[7] = proto;
    return csum_add(sum, tail, sizeof(tail));
}

} // namespace

uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len)
{
    /* Sum big-endian 16-bit words; adding native 32-bit loads and swapping
     * the folded result gives the same one's-complement sum, faster. */
    uint64_t acc = 0;
    while (len >= 8) {
        uint32_t a, b;
        std::memcpy(&a, data, 4);
        std::memcpy(&b, data + 4, 4);
        acc += uint64_t{a} + b;
        data += 8;
        len -= 8;
    }
    if (len >= 4) {
        uint32_t a;
        std::memcpy(&a, data, 4);
        acc += a;
        data += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t a;
        std::memcpy(&a, data, 2);
        acc += a;
        data += 2;
        len -= 2;
    }
    if (len)
        acc += data[0];
    while (acc >> 16)
        acc = (acc & 0xffff) + (acc >> 16);
    uint64_t be = ((acc & 0xff) << 8) | (acc >> 8);
    sum += be;
    return sum;
}

uint16_t csum_fold(uint64_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout)
{
    uint8_t* ip = frame + layout.l2_len;
    store_be16(ip + 10, 0);
    store_be16(ip + 10, csum_fold(csum_add(0, ip, layout.l3_len)));
}

uint64_t ipv4_options_sum(const uint8_t* ip, uint32_t header_len)
{
    uint64_t sum = 0;
    for (uint32_t off = 20; off < header_len; off += 4) {
        uint32_t word;
        std::memcpy(&word, ip + off, 4);
        sum += word;
    }
    return sum;
}

void l4_insert_checksum(uint8_t* frame, const FrameLayout& layout)
{
    uint8_t* field = frame + layout.l4_off + l4_csum_offset(layout);
    store_be16(field, 0);
    uint16_t csum = csum_fold(csum_add(pseudo_header_sum(frame, layout), frame + layout.l4_off,
                                       layout.l3_end - layout.l4_off));
    if (csum == 0 && layout.l4 == L4::udp)
        csum = 0xffff; /* zero means "no checksum" for UDP */
    store_be16(field, csum);
}

bool l4_checksum_ok(const uint8_t* frame, const FrameLayout& layout)
{
    return csum_fold(csum_add(pseudo_header_sum(frame, layout), frame + layout.l4_off,
                              layout.l3_end - layout.l4_off)) == 0;
}

} // namespace cna::fw
