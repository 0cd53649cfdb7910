/* SPDX-License-Identifier: BSD-3-Clause
 * CRC-32 (IEEE 802.3, reflected polynomial 0xedb88320, the zlib/PNG CRC).
 * Shared by fwgen, which stamps the image and the microcode, by the storms,
 * which verify the microcode on STORM_START, and by RoCE's ICRC.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::fw {

/* Continue a CRC: start with crc = 0, feed consecutive buffers. */
uint32_t crc32(uint32_t crc, const void* data, std::size_t len);

} // namespace cna::fw
