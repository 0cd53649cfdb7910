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
/* 32 bytes a step: each 32-bit lane's two 16-bit words added into lanes of
 * their own, which 2^16 steps cannot overflow; the scalar sum takes the
 * tail. */
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
    return sum + native_sum(data, len);
}

#endif

} // namespace

#if defined(__x86_64__)
uint64_t (*const native_sum_vector)(const uint8_t*, std::size_t) =
    __builtin_cpu_supports("avx2") ? native_sum_avx2 : nullptr;
#else
uint64_t (*const native_sum_vector)(const uint8_t*, std::size_t) = nullptr;
#endif

uint64_t native_sum_long(const uint8_t* data, std::size_t len)
{
    return native_sum_vector != nullptr ? native_sum_vector(data, len) : native_sum_scalar(data, len);
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
