/* SPDX-License-Identifier: BSD-3-Clause
 *
 * Hand-written rather than taken from a library: the adapter links no DPDK
 * (rte_raw_cksum is the host's), and neither zlib nor ISA-L has the
 * Internet checksum.
 */
#include "frame/checksum.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cna::fw {
namespace {

/* Offset of the checksum field inside the L4 header. */
uint32_t l4_csum_offset(const FrameLayout& layout) { return layout.l4 == L4::tcp ? 16 : 6; }

} // namespace

/* 64-bit words added with their carries (add, add-with-carry), four to a
 * step; the 128-bit sum cannot overflow for any buffer. */
uint64_t native_sum_scalar(const uint8_t* data, std::size_t len)
{
    using Wide = unsigned __int128;
    auto word = [](const uint8_t* p) {
        uint64_t w;
        std::memcpy(&w, p, 8);
        return w;
    };
    Wide sum = 0;
    for (; len >= 32; data += 32, len -= 32)
        sum += Wide{word(data)} + word(data + 8) + word(data + 16) + word(data + 24);
    uint64_t low = static_cast<uint64_t>(sum), high = static_cast<uint64_t>(sum >> 64);
    uint64_t folded = low + high;
    folded += folded < low; /* end-around carry */
    return (folded & 0xffffffff) + (folded >> 32) + native_sum(data, len);
}

namespace {

#if defined(__x86_64__)
/* A 16-bit word with its top bit flipped reads as a signed word 32768
 * below it, and a multiply-add by ones adds signed neighbours into a
 * 32-bit lane: per 32 bytes a load-and-xor, a multiply-add and an add,
 * four vectors a step into accumulators of their own (and, copying, the
 * vector stored where it goes). The words' sum is the lanes' plus 32768
 * per word. A lane moves at most 2^16 a vector, so a round of under 2^13
 * steps (and up to three vectors after them) keeps the four accumulators'
 * sum within 32 bits; the scalar sum (and memcpy) take the tail. */
template <bool COPY>
[[gnu::target("avx2")]] inline __m256i word_pairs(uint8_t* dst, const uint8_t* src, std::size_t at)
{
    const __m256i flip = _mm256_set1_epi16(static_cast<int16_t>(0x8000));
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + at));
    if constexpr (COPY)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + at), v);
    return _mm256_madd_epi16(_mm256_xor_si256(v, flip), ones);
}

template <bool COPY>
[[gnu::target("avx2")]] uint64_t sum_avx2(uint8_t* dst, const uint8_t* src, std::size_t len)
{
    constexpr std::size_t VECTOR = 32;
    constexpr std::size_t STEPS_PER_ROUND = (1u << 13) - 1;
    const std::size_t vector_bytes = len & ~(VECTOR - 1);
    std::size_t at = 0;
    int64_t lanes = 0;
    while (len - at >= VECTOR) {
        __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
        for (std::size_t steps = 0; len - at >= 4 * VECTOR && steps < STEPS_PER_ROUND; steps++, at += 4 * VECTOR) {
            a = _mm256_add_epi32(a, word_pairs<COPY>(dst, src, at));
            b = _mm256_add_epi32(b, word_pairs<COPY>(dst, src, at + VECTOR));
            c = _mm256_add_epi32(c, word_pairs<COPY>(dst, src, at + 2 * VECTOR));
            d = _mm256_add_epi32(d, word_pairs<COPY>(dst, src, at + 3 * VECTOR));
        }
        for (; len - at >= VECTOR && len - at < 4 * VECTOR; at += VECTOR)
            a = _mm256_add_epi32(a, word_pairs<COPY>(dst, src, at));
        __m256i total = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
        __m256i wide = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(total)),
                                        _mm256_cvtepi32_epi64(_mm256_extracti128_si256(total, 1)));
        alignas(32) int64_t quads[4];
        _mm256_store_si256(reinterpret_cast<__m256i*>(quads), wide);
        lanes += quads[0] + quads[1] + quads[2] + quads[3];
    }
    if constexpr (COPY)
        std::memcpy(dst + at, src + at, len - at);
    return static_cast<uint64_t>(lanes + static_cast<int64_t>(vector_bytes / 2) * 32768) +
           native_sum(src + at, len - at);
}

[[gnu::target("avx2")]] uint64_t native_sum_avx2(const uint8_t* data, std::size_t len)
{
    return sum_avx2<false>(nullptr, data, len);
}

[[gnu::target("avx2")]] uint64_t copy_native_sum_avx2(uint8_t* dst, const uint8_t* src, std::size_t len)
{
    return sum_avx2<true>(dst, src, len);
}

#endif

} // namespace

#if defined(__x86_64__)
uint64_t (*const native_sum_vector)(const uint8_t*, std::size_t) =
    __builtin_cpu_supports("avx2") ? native_sum_avx2 : nullptr;
uint64_t (*const copy_native_sum_vector)(uint8_t*, const uint8_t*, std::size_t) =
    __builtin_cpu_supports("avx2") ? copy_native_sum_avx2 : nullptr;
#else
uint64_t (*const native_sum_vector)(const uint8_t*, std::size_t) = nullptr;
uint64_t (*const copy_native_sum_vector)(uint8_t*, const uint8_t*, std::size_t) = nullptr;
#endif

uint64_t native_sum_long(const uint8_t* data, std::size_t len)
{
    return native_sum_vector != nullptr ? native_sum_vector(data, len) : native_sum_scalar(data, len);
}

uint64_t copy_native_sum(uint8_t* dst, const uint8_t* src, std::size_t len)
{
    if (copy_native_sum_vector != nullptr)
        return copy_native_sum_vector(dst, src, len);
    std::memcpy(dst, src, len);
    return native_sum_long(src, len);
}

uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len)
{
    uint16_t folded = csum_native_fold(native_sum(data, len));
    return sum + (std::endian::native == std::endian::little ? __builtin_bswap16(folded) : folded);
}

uint16_t csum_fold(uint64_t sum) { return static_cast<uint16_t>(~csum_native_fold(sum)); }

void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout)
{
    uint8_t* ip = frame + layout.l2_len;
    store_be16(ip + 10, 0);
    uint16_t csum = static_cast<uint16_t>(~csum_native_fold(native_sum(ip, layout.l3_len)));
    std::memcpy(ip + 10, &csum, 2); /* the machine's order, as summed */
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

} // namespace cna::fw
