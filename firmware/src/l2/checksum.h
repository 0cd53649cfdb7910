/* SPDX-License-Identifier: BSD-3-Clause
 * Internet checksums (RFC 1071) for the Tx offloads and Rx validation.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "l2/frame.h"

namespace cna::fw {

/* One's-complement sum of a buffer, to be folded by csum_fold. */
uint64_t csum_add(uint64_t sum, const uint8_t* data, std::size_t len);
uint16_t csum_fold(uint64_t sum);

/* IPv4 header checksum. */
void ipv4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
bool ipv4_checksum_ok(const uint8_t* frame, const FrameLayout& layout);

/* TCP/UDP checksum over the pseudo header and [l4_off, l3_end). */
void l4_insert_checksum(uint8_t* frame, const FrameLayout& layout);
/* UDP over IPv4 without a checksum (zero) counts as not checked. */
bool l4_checksum_present(const uint8_t* frame, const FrameLayout& layout);
bool l4_checksum_ok(const uint8_t* frame, const FrameLayout& layout);

} // namespace cna::fw
