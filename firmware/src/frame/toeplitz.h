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
    uint32_t hash(const uint8_t* input, std::size_t len) const;

private:
    std::array<std::array<uint32_t, 256>, MAX_HASH_INPUT> table_;
};

} // namespace cna::fw
