/* SPDX-License-Identifier: BSD-3-Clause
 * Toeplitz hash for RSS. Built once per key (VPORT_UPDATE) as one table per
 * input byte position, so hashing a packet is one lookup and XOR per byte
 * instead of one per bit.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace cna::fw {

class Toeplitz {
public:
    static constexpr std::size_t KEY_BYTES = 40;
    /* Longest input: IPv6 addresses and ports. */
    static constexpr std::size_t MAX_HASH_INPUT = 36;

    explicit Toeplitz(const uint8_t (&key)[KEY_BYTES]);
    /* The hash's share of n input bytes that stand at input position at
     * on: an input is hashed in pieces (addresses, then ports) where the
     * frame has them, each share XORed in, without gathering it first.
     * Inline, n constant where it is called: one unrolled lookup per byte. */
    uint32_t hash_at(std::size_t at, const uint8_t* bytes, std::size_t n) const
    {
        uint32_t h = 0;
        for (std::size_t i = 0; i < n; i++)
            h ^= table_[at + i][bytes[i]];
        return h;
    }

private:
    std::array<std::array<uint32_t, 256>, MAX_HASH_INPUT> table_;
};

} // namespace cna::fw
