/* SPDX-License-Identifier: BSD-3-Clause
 * Layout of the storm microcode blob. Private to the adapter side: fwgen
 * writes it, the storms verify it; the driver only copies it into storm RAM
 * and stamps its length and CRC32 (hsi_init_image.h).
 *
 *   MicrocodeHeader
 *   MicrocodeSection[section_count]   one per storm processor
 *   section payloads
 */
#pragma once

#include <cstdint>

namespace cna::fw::microcode {

struct Header {
    uint32_t magic;          /* hsi::init::MICROCODE_MAGIC */
    uint8_t hsi_major;       /* HSI the microcode implements */
    uint8_t hsi_minor;
    uint16_t section_count;
    uint32_t fw_version;     /* major<<24 | minor<<16 | rev<<8 | eng */
    uint32_t total_len;      /* bytes, header included */
};
static_assert(sizeof(Header) == 16);

struct Section {
    char storm[4];           /* "TSEM", "MSEM", ... */
    uint32_t offset;         /* from the start of the blob */
    uint32_t len;
    uint32_t entry;          /* entry point, relative to offset */
};
static_assert(sizeof(Section) == 16);

} // namespace cna::fw::microcode
