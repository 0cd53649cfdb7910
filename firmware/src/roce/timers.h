/* SPDX-License-Identifier: BSD-3-Clause
 * The transport's timer encodings: the local ACK timeout (a QP attribute)
 * and the RNR NAK timer (a responder attribute the requester obeys).
 */
#pragma once

#include <array>
#include <cstdint>

namespace cna::fw::roce {

/* Local ACK timeout: 4.096 us * 2^timeout; 0 disables the timer. */
constexpr uint64_t ack_timeout_ns(uint8_t timeout)
{
    return timeout == 0 ? 0 : timeout > 31 ? 4096ull << 31 : 4096ull << timeout;
}

/* The 5-bit RNR NAK timer codes of the InfiniBand specification, in
 * microseconds: code 0 is the longest wait (655.36 ms), 1..31 rise from
 * 0.01 ms to 491.52 ms. */
inline constexpr std::array<uint32_t, 32> RNR_TIMER_US = {
    655360, 10,    20,    30,    40,    60,    80,     120,    160,    240,    320,
    480,    640,   960,   1280,  1920,  2560,  3840,   5120,   7680,   10240,  15360,
    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
constexpr uint64_t rnr_timer_ns(uint8_t code) { return uint64_t{RNR_TIMER_US[code & 0x1f]} * 1000; }

/* retry_cnt and rnr_retry are 3 bits; an rnr_retry of 7 retries forever. */
inline constexpr uint8_t INFINITE_RNR_RETRY = 7;

} // namespace cna::fw::roce
