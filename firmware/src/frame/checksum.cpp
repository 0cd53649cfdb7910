/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Hand-written rather than taken from a library: the adapter links no DPDK
 * (rte_raw_cksum is the host's), and neither zlib nor ISA-L has the
 * Internet checksum. Sums are kept in the machine's byte order and only
 * the folded 16 bits are swapped where a big-endian value is wanted: a
 * one's-complement sum is the same in either order, byte-swapped (RFC 1071
 * section 2(B)).
 */
#include "frame/checksum.h"

#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base/bytes.h"

namespace cna::fw {
namespace {

/* Offset of the checksum field inside the L4 header. */
uint32_t l4_csum_offset(const FrameLayout& layout) { return layout.l4 == L4::tcp ? 16 : 6; }

/* 64-bit words, each split into its 32-bit halves so that no carry is
 * lost: two adds per 8 bytes, 2^32 words before the sum could overflow. */
uint64_t native_sum_scalar(const uint8_t* data, std::size_t len)
{
    uint64_t sum = 0;
    for (; len >= 8; data += 8, len -= 8) {
        uint64_t w;
        std::memcpy(&w, data, 8);
        sum += (w & 0xffffffff) + (w >> 32);
    }
    if (len >= 4) {
        uint32_t w;
        std::memcpy(&w, data, 4);
        sum += w;
        data += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t w;
        std::memcpy(&w, data, 2);
        sum += w;
        data += 2;
        len -= 2;
    }
    if (len != 0)
        sum += uint16_t{data[0]} << (std::endian::native == std::endian::little ? 0 : 8);
    return sum;
}

#if defined(__x86_64__)
/* A long frame's payload, 32 bytes a step: each 32-bit lane's two 16-bit
 * words added into lanes of their own, which 2^16 steps cannot overflow;
 * the scalar sum takes the tail. */
[[gnu::target("avx2")]] uint64_t native_sum_avx2(const uint8_t* data, std::size_t len)
{
    constexpr std::size_t STEP = 32;
    constexpr std::size_t MAX_STEPS = 1u << 16;
    const __m256i low_words = _mm256_set1_epi32(0xffff);
    uint64_t sum = 0;
    while (len >= STEP) {
        __m256i low = _mm256_setzero_si256();
        __m256i high = _mm256_setzero_si256();
        for (std::size_t steps = 0; len >= STEP && steps < MAX_STEPS; steps++, data += STEP, len -= STEP) {
            __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data));
            low = _mm256_add_epi32(low, _mm256_and_si256(v, low_words));
            high = _mm256_add_epi32(high, _mm256_srli_epi32(v, 16));
        }
        alignas(32) uint32_t lanes[16];
        _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), low);
        _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 8), high);
        for (uint32_t lane : lanes)
            sum += lane;
    }
    return sum + native_sum_scalar(data, len);
}

/* Short buffers (a small frame's payload, a header) never pay for the
 * vector unit's set-up. */
constexpr std::size_t VECTOR_FROM = 128;
const bool have_avx2 = __builtin_cpu_supports("avx2");
#endif

/* Every byte of [data, data + len) summed as the machine's 16-bit words,
 * not folded. */
uint64_t native_sum(const uint8_t* data, std::size_t len)
{
#if defined(__x86_64__)
    if (len >= VECTOR_FROM && have_avx2)
        return native_sum_avx2(data, len);
#endif
    return native_sum_scalar(data, len);
}

uint16_t fold(uint64_t sum)
{
    sum = (sum & 0xffffffff) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>((sum & 0xffff) + (sum >> 16));
}

/* The TCP/UDP pseudo header, in the machine's order: addresses, protocol
 * and L4 length (two big-endian 16-bit words, stored and read back). */
uint64_t pseudo_header_sum(const uint8_t* frame, const FrameLayout& layout)
{
    const uint8_t* ip = frame + layout.l2_len;
    uint8_t tail[4] = {0, layout.l4 == L4::tcp ? IPPROTO_TCP_ : IPPROTO_UDP_};
    store_be16(tail + 2, static_cast<uint16_t>(layout.l3_end - layout.l4_off));
    uint32_t tail_word;
    std::memcpy(&tail_word, tail, 4);
    return native_sum(ip + (layout.l3 == L3::ipv4 ? 12 : 8), layout.l3 == L3::ipv4 ? 8 : 32) + tail_word;
}

uint16_t l4_native_sum(const uint8_t* frame, const FrameLayout& layout)
{
    return fold(pseudo_header_sum(frame, layout) +
                native_sum(frame + layout.l4_off, layout.l3_end - layout.l4_off));
}

} // namespace

uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len)
{
    uint16_t folded = fold(native_sum(data, len));
    return sum + (std::endian::native == std::endian::little ? __builtin_bswap16(folded) : folded);
}

uint16_t csum_fold(uint64_t sum) { return static_cast<uint16_t>(~fold(sum)); }

void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout)
{
    uint8_t* ip = frame + layout.l2_len;
    store_be16(ip + 10, 0);
    uint16_t csum = static_cast<uint16_t>(~fold(native_sum(ip, layout.l3_len)));
    std::memcpy(ip + 10, &csum, 2); /* the machine's order, as summed */
}

uint64_t ipv4_options_sum(const uint8_t* ip, uint32_t header_len)
{
    return native_sum(ip + 20, header_len - 20);
}

void l4_insert_checksum(uint8_t* frame, const FrameLayout& layout)
{
    uint8_t* field = frame + layout.l4_off + l4_csum_offset(layout);
    store_be16(field, 0);
    uint16_t csum = static_cast<uint16_t>(~l4_native_sum(frame, layout));
    if (csum == 0 && layout.l4 == L4::udp)
        csum = 0xffff; /* zero means "no checksum" for UDP */
    std::memcpy(field, &csum, 2); /* the machine's order, as summed */
}

bool l4_checksum_ok(const uint8_t* frame, const FrameLayout& layout)
{
    return l4_native_sum(frame, layout) == 0xffff;
}

} // namespace cna::fw
