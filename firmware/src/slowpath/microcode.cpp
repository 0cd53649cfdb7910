/* SPDX-License-Identifier: BSD-3-Clause */
#include "slowpath/microcode.h"

#include <cstring>

#include "hsi_init_image.h"
#include "slowpath/microcode_format.h"
#include "base/crc32.h"

namespace cna::fw {

hsi::StormStatus verify_microcode(const uint8_t* blob, uint32_t len, uint32_t expected_crc)
{
    using hsi::StormStatus;
    if (len < sizeof(microcode::Header) || len > hsi::reg::STORM_MICROCODE_MAX)
        return StormStatus::bad_microcode;
    if (crc32(0, blob, len) != expected_crc)
        return StormStatus::bad_microcode;
    microcode::Header header;
    std::memcpy(&header, blob, sizeof(header));
    if (header.magic != hsi::init::MICROCODE_MAGIC || header.total_len != len)
        return StormStatus::bad_microcode;
    uint64_t table_end = sizeof(header) + uint64_t{header.section_count} * sizeof(microcode::Section);
    if (header.section_count == 0 || table_end > len)
        return StormStatus::bad_microcode;
    for (uint32_t i = 0; i < header.section_count; i++) {
        microcode::Section section;
        std::memcpy(&section, blob + sizeof(header) + i * sizeof(section), sizeof(section));
        if (section.offset < table_end || uint64_t{section.offset} + section.len > len || section.entry >= section.len)
            return StormStatus::bad_microcode;
    }
    if (header.hsi_major != hsi::HSI_VERSION_MAJOR)
        return StormStatus::bad_version;
    return StormStatus::running;
}

} // namespace cna::fw
