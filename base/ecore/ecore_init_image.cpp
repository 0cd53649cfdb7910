/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_init_image.h"

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "osal_util.h"

namespace cna::ecore {

using namespace hsi::init;

namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

/* Whether [offset, offset + len) lies within size bytes (no overflow). */
bool within(uint64_t offset, uint64_t len, uint64_t size) { return offset <= size && len <= size - offset; }

ImageError check_op(InitImage& image, uint32_t index, uint32_t phase_end, std::string* why)
{
    const InitOp& op = image.ops[index];
    const uint64_t dwords_bytes = uint64_t{op.count} * 4;
    switch (static_cast<OpType>(op.type)) {
    case OpType::write:
    case OpType::poll:
    case OpType::zero:
        break;
    case OpType::write_rt:
        if (!within(op.value, op.count, rt::SIZE)) {
            *why = format("op %u: runtime entries [%u, %u) beyond the array of %u", index, op.value,
                          op.value + op.count, rt::SIZE);
            return ImageError::out_of_bounds;
        }
        break;
    case OpType::write_array:
        if (!within(op.data, dwords_bytes, image.blob.size())) {
            *why = format("op %u: %u dwords at data offset %u beyond the %zu-byte blob", index, op.count,
                          op.data, image.blob.size());
            return ImageError::out_of_bounds;
        }
        break;
    case OpType::write_zipped: {
        if (!within(op.data, op.data_len, image.blob.size())) {
            *why = format("op %u: %u zipped bytes at data offset %u beyond the %zu-byte blob", index,
                          op.data_len, op.data, image.blob.size());
            return ImageError::out_of_bounds;
        }
        std::vector<uint32_t> words(op.count);
        int rc = osal::unzip(image.blob.data() + op.data, op.data_len, words.data(), dwords_bytes);
        if (rc < 0) {
            *why = format("op %u: zipped array does not inflate to %u dwords (%s)", index, op.count,
                          rc == -EMSGSIZE ? "size mismatch" : "corrupt stream");
            return ImageError::unzip;
        }
        image.inflated[index] = std::move(words);
        break;
    }
    case OpType::if_mode:
        if (index + 1 + uint64_t{op.count} > phase_end) {
            *why = format("op %u: skips %u ops past the end of its phase", index, op.count);
            return ImageError::bad_op;
        }
        break;
    default:
        *why = format("op %u: unknown type %u", index, op.type);
        return ImageError::bad_op;
    }
    if (op.addr % 4 != 0) {
        *why = format("op %u: register address 0x%x is not dword aligned", index, op.addr);
        return ImageError::bad_op;
    }
    return ImageError::none;
}

} // namespace

const char* image_error_name(ImageError error)
{
    switch (error) {
    case ImageError::none: return "valid";
    case ImageError::truncated: return "truncated";
    case ImageError::bad_magic: return "bad magic";
    case ImageError::bad_format: return "bad format";
    case ImageError::hsi_mismatch: return "HSI version mismatch";
    case ImageError::bad_crc: return "CRC mismatch";
    case ImageError::bad_phase: return "bad phase index";
    case ImageError::bad_op: return "bad operation";
    case ImageError::out_of_bounds: return "out of bounds";
    case ImageError::unzip: return "unzip failure";
    }
    return "unknown";
}

uint32_t InitImage::array_dword(const InitOp& op, uint32_t i) const
{
    uint32_t v;
    memcpy(&v, blob.data() + op.data + std::size_t{i} * 4, 4);
    return v;
}

ImageError init_image_parse(std::span<const uint8_t> bytes, InitImage* image, std::string* why)
{
    InitImage img;
    if (bytes.size() < sizeof(ImageHeader)) {
        *why = format("%zu bytes: shorter than the %zu-byte header", bytes.size(), sizeof(ImageHeader));
        return ImageError::truncated;
    }
    memcpy(&img.header, bytes.data(), sizeof(ImageHeader));
    const ImageHeader& h = img.header;
    if (h.magic != IMAGE_MAGIC) {
        *why = format("magic 0x%08x, expected 0x%08x", h.magic, IMAGE_MAGIC);
        return ImageError::bad_magic;
    }
    if (h.format != IMAGE_FORMAT) {
        *why = format("format %u, this driver reads format %u", h.format, IMAGE_FORMAT);
        return ImageError::bad_format;
    }
    if (h.hsi_major != hsi::HSI_VERSION_MAJOR) {
        *why = format("built for HSI %u.%u, this driver speaks HSI %u.%u", h.hsi_major, h.hsi_minor,
                      hsi::HSI_VERSION_MAJOR, hsi::HSI_VERSION_MINOR);
        return ImageError::hsi_mismatch;
    }
    const uint64_t expected = sizeof(ImageHeader) + sizeof(PhaseIndex) * PHASE_COUNT +
                              uint64_t{h.op_count} * sizeof(InitOp) + h.data_len;
    if (bytes.size() < expected) {
        *why = format("%zu bytes, the header describes %" PRIu64, bytes.size(), expected);
        return ImageError::truncated;
    }
    if (bytes.size() > expected) {
        *why = format("%zu bytes, the header describes only %" PRIu64, bytes.size(), expected);
        return ImageError::bad_format;
    }
    const uint32_t crc = osal::crc32(bytes.data() + sizeof(ImageHeader), bytes.size() - sizeof(ImageHeader));
    if (crc != h.crc32) {
        *why = format("CRC32 0x%08x, the header says 0x%08x", crc, h.crc32);
        return ImageError::bad_crc;
    }

    const uint8_t* p = bytes.data() + sizeof(ImageHeader);
    memcpy(img.phases.data(), p, sizeof(PhaseIndex) * PHASE_COUNT);
    p += sizeof(PhaseIndex) * PHASE_COUNT;
    /* Copied element-wise: an image without ops must not memcpy from a null vector. */
    img.ops.resize(h.op_count);
    for (InitOp& op : img.ops) {
        memcpy(&op, p, sizeof(op));
        p += sizeof(op);
    }
    img.blob.assign(p, p + h.data_len);
    img.inflated.resize(h.op_count);

    /* Every op belongs to exactly one phase: an op no phase runs would be
     * unchecked data that later code could still trust. */
    std::vector<bool> owned(h.op_count);
    for (uint32_t phase = 0; phase < PHASE_COUNT; phase++) {
        const PhaseIndex& ph = img.phases[phase];
        if (!within(ph.first_op, ph.op_count, h.op_count)) {
            *why = format("phase %u: ops [%u, +%u) beyond the %u ops", phase, ph.first_op, ph.op_count, h.op_count);
            return ImageError::bad_phase;
        }
        for (uint32_t i = ph.first_op; i < ph.first_op + ph.op_count; i++) {
            if (owned[i]) {
                *why = format("op %u belongs to two phases", i);
                return ImageError::bad_phase;
            }
            owned[i] = true;
            ImageError err = check_op(img, i, ph.first_op + ph.op_count, why);
            if (err != ImageError::none)
                return err;
        }
    }
    for (uint32_t i = 0; i < h.op_count; i++) {
        if (!owned[i]) {
            *why = format("op %u belongs to no phase", i);
            return ImageError::bad_phase;
        }
    }
    *image = std::move(img);
    return ImageError::none;
}

} // namespace cna::ecore
