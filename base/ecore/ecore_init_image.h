/* SPDX-License-Identifier: BSD-3-Clause
 * The firmware image (hsi_init_image.h): parsed and validated completely
 * before hw_init touches the device, so a bad image fails cleanly.
 */
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hsi_init_image.h"

namespace cna::ecore {

enum class ImageError {
    none,
    truncated,     /* shorter than its header says */
    bad_magic,
    bad_format,    /* unknown format version, or trailing bytes */
    hsi_mismatch,  /* built for another HSI major */
    bad_crc,
    bad_phase,     /* a phase's ops outside the op table */
    bad_op,        /* unknown op type, misaligned address */
    out_of_bounds, /* an op's data or runtime index outside the image */
    unzip,         /* a zipped array does not inflate to its size */
};
const char* image_error_name(ImageError error);

struct InitImage {
    hsi::init::ImageHeader header{};
    std::array<hsi::init::PhaseIndex, hsi::init::PHASE_COUNT> phases{};
    std::vector<hsi::init::InitOp> ops;
    std::vector<uint8_t> blob;
    /* Inflated payload of each write_zipped op (empty for the others). */
    std::vector<std::vector<uint32_t>> inflated;

    /* Dword i of a write_array op's payload. */
    uint32_t array_dword(const hsi::init::InitOp& op, uint32_t i) const;
};

/* Parses and validates an image. On failure, *why says what is wrong. */
ImageError init_image_parse(std::span<const uint8_t> bytes, InitImage* image, std::string* why);

/* The init tool's interpreter: runs the ops of one phase of a parsed image
 * in order, under the given init modes. It reaches the device through io:
 *   io.write(addr, value)      a register write;
 *   io.runtime(index, &value)  the runtime array's entry, false when it was
 *                              never set (its write is skipped);
 *   io.poll(op)                waits up to op.count ms for op.addr to read
 *                              op.value; false ends the phase.
 * Returns false when a poll failed. */
template <class Io> bool init_image_run(const InitImage& image, hsi::init::Phase phase, uint32_t modes, Io& io)
{
    using hsi::init::OpType;
    const hsi::init::PhaseIndex& index = image.phases[static_cast<uint32_t>(phase)];
    const uint32_t end = index.first_op + index.op_count;
    for (uint32_t i = index.first_op; i < end; i++) {
        const hsi::init::InitOp& op = image.ops[i];
        switch (static_cast<OpType>(op.type)) {
        case OpType::write:
            io.write(op.addr, op.value);
            break;
        case OpType::write_rt:
            for (uint32_t k = 0; k < op.count; k++)
                if (uint32_t value; io.runtime(op.value + k, &value))
                    io.write(op.addr + 4 * k, value);
            break;
        case OpType::write_array:
            for (uint32_t k = 0; k < op.count; k++)
                io.write(op.addr + 4 * k, image.array_dword(op, k));
            break;
        case OpType::write_zipped:
            for (uint32_t k = 0; k < op.count; k++)
                io.write(op.addr + 4 * k, image.inflated[i][k]);
            break;
        case OpType::zero:
            for (uint32_t k = 0; k < op.count; k++)
                io.write(op.addr + 4 * k, 0);
            break;
        case OpType::if_mode:
            if ((modes & op.value) != op.value)
                i += op.count;
            break;
        case OpType::poll:
            if (!io.poll(op))
                return false;
            break;
        }
    }
    return true;
}

} // namespace cna::ecore
