/* SPDX-License-Identifier: BSD-3-Clause
 * Microcode verification performed by the storms on STORM_START.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "hsi_common.h"

namespace cna::fw {

/* running, bad_microcode (empty, oversized, CRC, magic or section table
 * wrong) or bad_version (built for another HSI major). */
hsi::StormStatus verify_microcode(const uint8_t* blob, uint32_t len, uint32_t expected_crc);

} // namespace cna::fw
