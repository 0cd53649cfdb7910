/* SPDX-License-Identifier: BSD-3-Clause
 * Packet sequence numbers: 24 bits that wrap. Two PSNs compare by their
 * distance modulo 2^24 taken as a signed 24-bit number, so "before" and
 * "after" hold within half the space (2^23) of each other, which is as far
 * apart as a QP's outstanding packets may ever be.
 */
#pragma once

#include <cstdint>

namespace cna::fw::roce {

inline constexpr uint32_t PSN_BITS = 24;
inline constexpr uint32_t PSN_MASK = (1u << PSN_BITS) - 1;

constexpr uint32_t psn_add(uint32_t psn, uint32_t n) { return (psn + n) & PSN_MASK; }

/* a - b, in [-2^23, 2^23). */
constexpr int32_t psn_diff(uint32_t a, uint32_t b)
{
    return static_cast<int32_t>((a - b) << (32 - PSN_BITS)) >> (32 - PSN_BITS);
}

constexpr bool psn_before(uint32_t a, uint32_t b) { return psn_diff(a, b) < 0; }
constexpr bool psn_after(uint32_t a, uint32_t b) { return psn_diff(a, b) > 0; }

} // namespace cna::fw::roce
