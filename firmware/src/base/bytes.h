/* SPDX-License-Identifier: BSD-3-Clause
 * Byte-order helpers. HSI structures are little-endian and the adapter only
 * builds for little-endian hosts, so they are copied as they are; protocol
 * headers inside frames are big-endian and go through these.
 */
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>

namespace cna::fw {

static_assert(std::endian::native == std::endian::little, "HSI structures are little-endian");

inline uint16_t load_be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p)
{
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}
inline uint64_t load_be64(const uint8_t* p) { return uint64_t{load_be32(p)} << 32 | load_be32(p + 4); }
inline uint32_t load_le32(const uint8_t* p)
{
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline void store_le32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void store_le64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void store_be16(uint8_t* p, uint16_t v)
{
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}
inline void store_be32(uint8_t* p, uint32_t v)
{
    store_be16(p, static_cast<uint16_t>(v >> 16));
    store_be16(p + 2, static_cast<uint16_t>(v));
}
inline void store_be64(uint8_t* p, uint64_t v)
{
    store_be32(p, static_cast<uint32_t>(v >> 32));
    store_be32(p + 4, static_cast<uint32_t>(v));
}

/* A 64-bit counter the engines write and host threads read: an atomic
 * add, since passes that run at once (engine=inline's queue passes) count
 * into one vport's counters; never a torn value. */
inline void counter_add(uint64_t& counter, uint64_t delta)
{
    std::atomic_ref<uint64_t>(counter).fetch_add(delta, std::memory_order_relaxed);
}

} // namespace cna::fw
