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

} // namespace cna::ecore
