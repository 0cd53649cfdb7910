/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: ecore's firmware image parser. Whatever the bytes, it must
 * either reject them or return an image whose every op stays inside it.
 *
 * The CRC is recomputed over each input, so mutations reach the parser past
 * the checksum instead of dying there.
 */
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ecore_init_image.h"
#include "osal_util.h"

using namespace cna;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using hsi::init::ImageHeader;
    std::vector<uint8_t> bytes(data, data + size);
    if (size > sizeof(ImageHeader)) {
        const uint32_t crc = osal::crc32(bytes.data() + sizeof(ImageHeader), size - sizeof(ImageHeader));
        std::memcpy(bytes.data() + offsetof(ImageHeader, crc32), &crc, sizeof(crc));
    }
    ecore::InitImage image;
    std::string why;
    if (ecore::init_image_parse(bytes, &image, &why) != ecore::ImageError::none)
        return 0;
    for (const hsi::init::PhaseIndex& phase : image.phases)
        if (phase.first_op + phase.op_count > image.ops.size())
            std::abort();
    for (const hsi::init::InitOp& op : image.ops)
        if (op.type == static_cast<uint8_t>(hsi::init::OpType::write_array))
            for (uint32_t i = 0; i < op.count; i++)
                (void)image.array_dword(op, i); /* ASan catches a read outside the blob */
    return 0;
}
