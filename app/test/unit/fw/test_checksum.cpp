/* SPDX-License-Identifier: BSD-3-Clause
 * The Internet checksums against RFC 1071 done the slow way (big-endian
 * 16-bit words, the carry folded back after every add): every length from
 * 0 to past two vector steps at every alignment, long buffers that take
 * the vector sum (and one long enough to make its 32-bit lanes start
 * over), and the frame-level insert and check built on them.
 */
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/bytes.h"
#include "frame/checksum.h"
#include "frame/frame.h"

namespace {

using namespace cna::fw;

uint16_t reference_sum(const uint8_t* data, std::size_t len)
{
    uint32_t sum = 0;
    for (std::size_t i = 0; i < len; i += 2) {
        sum += uint32_t{data[i]} << 8 | (i + 1 < len ? data[i + 1] : 0);
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return static_cast<uint16_t>(sum);
}

std::vector<uint8_t> random_bytes(std::size_t len, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(len);
    for (auto& b : v)
        b = static_cast<uint8_t>(rng());
    return v;
}

static_assert(std::endian::native == std::endian::little, "expect_native() swaps");

/* csum_fold of a complete sum is its complement; 0 and 0xffff are the
 * same number in one's complement, so compare what fold gives for both. */
void expect_sum(const uint8_t* data, std::size_t len)
{
    uint16_t expected = static_cast<uint16_t>(~reference_sum(data, len));
    uint16_t got = csum_fold(csum_add(0, data, len));
    EXPECT_TRUE(got == expected || (got == 0 && expected == 0xffff) || (got == 0xffff && expected == 0))
        << "length " << len << ": " << std::hex << got << " vs " << expected;
}

TEST(Checksum, EveryLengthAndAlignmentSumsAsRfc1071)
{
    std::vector<uint8_t> bytes = random_bytes(600, 1);
    for (std::size_t align = 0; align < 8; align++)
        for (std::size_t len = 0; len + align <= bytes.size(); len++)
            expect_sum(bytes.data() + align, len);
}

TEST(Checksum, LongBuffersOfAllOnesDoNotOverflow)
{
    /* 0xffff words are the largest; 2^16 vector steps of them would
     * overflow a lane that never started over. */
    std::vector<uint8_t> ones(5 << 20, 0xff);
    for (std::size_t len : {std::size_t{1518}, std::size_t{9000}, std::size_t{(2 << 20) + 96}, ones.size() - 3})
        expect_sum(ones.data(), len);
    std::vector<uint8_t> bytes = random_bytes(3 << 20, 2);
    expect_sum(bytes.data() + 1, bytes.size() - 1);
}

/* A sum native_sum_long() gives, folded, against the reference's
 * big-endian one: the same number byte-swapped (on this little-endian
 * machine), 0 and 0xffff being one number. */
void expect_native(uint64_t native, const uint8_t* data, std::size_t len, const char* which)
{
    uint16_t got = __builtin_bswap16(csum_native_fold(native));
    uint16_t expected = reference_sum(data, len);
    EXPECT_TRUE(got == expected || (got == 0 && expected == 0xffff) || (got == 0xffff && expected == 0))
        << which << ", length " << len << ": " << std::hex << got << " vs " << expected;
}

TEST(Checksum, BothLongSumsAsRfc1071)
{
    std::vector<uint8_t> bytes = random_bytes(4096, 4);
    for (std::size_t align = 0; align < 4; align++)
        for (std::size_t len = 65; len + align <= bytes.size(); len += 37) {
            const uint8_t* data = bytes.data() + align;
            expect_native(native_sum_scalar(data, len), data, len, "scalar");
            if (native_sum_vector != nullptr)
                expect_native(native_sum_vector(data, len), data, len, "vector");
        }
}

TEST(Checksum, CopyingSumsWhatItCopiesAndNothingElse)
{
    std::vector<uint8_t> bytes = random_bytes(9100, 5);
    std::vector<uint8_t> ones(5 << 20, 0xff);
    constexpr uint8_t GUARD = 0xa5;
    auto check = [&](const uint8_t* src, std::size_t len, std::size_t dst_align) {
        std::vector<uint8_t> dst(len + dst_align + 64, GUARD);
        uint64_t sum = copy_native_sum(dst.data() + dst_align, src, len);
        expect_native(sum, src, len, "copying");
        EXPECT_EQ(std::memcmp(dst.data() + dst_align, src, len), 0) << "length " << len;
        for (std::size_t i = 0; i < dst.size(); i++) {
            bool outside = i < dst_align || i >= dst_align + len;
            ASSERT_TRUE(!outside || dst[i] == GUARD) << "length " << len << ": wrote byte " << i;
        }
    };
    for (std::size_t align = 0; align < 4; align++)
        for (std::size_t len = 0; len <= 600; len++)
            check(bytes.data() + align, len, (align * 3) % 5);
    for (std::size_t len : {std::size_t{1518}, std::size_t{9000}})
        check(bytes.data() + 1, len, 2);
    check(ones.data(), (2 << 20) + 96, 0); /* a round's limit, as for the sum alone */
    check(ones.data(), ones.size() - 3, 1);
}

TEST(Checksum, PiecesAddUpToTheWhole)
{
    std::vector<uint8_t> bytes = random_bytes(1500, 3);
    uint64_t sum = csum_add(0, bytes.data(), 200);
    sum = csum_add(sum, bytes.data() + 200, 1000);
    sum = csum_add(sum, bytes.data() + 1200, 300);
    EXPECT_EQ(csum_fold(sum), csum_fold(csum_add(0, bytes.data(), bytes.size())));
}

std::vector<uint8_t> udp_frame(uint32_t payload, uint32_t seed)
{
    std::vector<uint8_t> f = random_bytes(14 + 20 + 8 + payload, seed);
    f[12] = 0x08;
    f[13] = 0x00;
    f[14] = 0x45;
    f[15] = 0;
    store_be16(&f[16], static_cast<uint16_t>(20 + 8 + payload));
    f[20] = f[21] = 0; /* not a fragment */
    f[23] = 17;
    store_be16(&f[14 + 20 + 4], static_cast<uint16_t>(8 + payload));
    return f;
}

TEST(Checksum, InsertedChecksumsCheckAndACorruptByteFails)
{
    for (uint32_t payload : {0u, 1u, 18u, 111u, 1472u, 8000u}) {
        std::vector<uint8_t> f = udp_frame(payload, payload);
        FrameLayout layout;
        ASSERT_TRUE(parse_any_frame(f.data(), static_cast<uint32_t>(f.size()), layout));
        ipv4_insert_checksum(f.data(), layout);
        l4_insert_checksum(f.data(), layout);
        EXPECT_EQ(reference_sum(&f[14], 20), 0xffff) << "IPv4 header, payload " << payload;
        /* The pseudo header as RFC 768 has it, then the UDP datagram. */
        std::vector<uint8_t> pseudo(f.begin() + 26, f.begin() + 34);
        pseudo.insert(pseudo.end(), {0, 17, static_cast<uint8_t>((8 + payload) >> 8), static_cast<uint8_t>(8 + payload)});
        pseudo.insert(pseudo.end(), f.begin() + 34, f.end());
        EXPECT_EQ(reference_sum(pseudo.data(), pseudo.size()), 0xffff) << "UDP, payload " << payload;
        EXPECT_TRUE(ipv4_checksum_ok(f.data(), layout));
        EXPECT_EQ(l4_native_sum(f.data(), layout), 0xffff);
        f.back() ^= 0x01;
        EXPECT_NE(l4_native_sum(f.data(), layout), 0xffff) << "payload " << payload;
        f[14 + 8] ^= 0x01; /* TTL */
        EXPECT_FALSE(ipv4_checksum_ok(f.data(), layout));
    }
}

} // namespace
