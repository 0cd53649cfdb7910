/* SPDX-License-Identifier: BSD-3-Clause */
#include "image_writer.h"

#include <zlib.h>

#include <cstring>
#include <stdexcept>

#include "base/crc32.h"

namespace cna::fw::tools {

using namespace hsi::init;

namespace {

std::vector<uint8_t> deflate_bytes(const std::vector<uint8_t>& in)
{
    uLongf len = compressBound(in.size());
    std::vector<uint8_t> out(len);
    if (compress2(out.data(), &len, in.data(), in.size(), Z_BEST_COMPRESSION) != Z_OK)
        throw std::runtime_error("zlib compress2 failed");
    out.resize(len);
    return out;
}

/* resize + memcpy rather than insert: GCC 12 at -O3 reports inserts into an
 * empty vector as overflows (a -Wstringop-overflow false positive). */
template <typename T> void append(std::vector<uint8_t>& out, const T& value)
{
    const std::size_t at = out.size();
    out.resize(at + sizeof(value));
    std::memcpy(out.data() + at, &value, sizeof(value));
}

} // namespace

void InitProgram::add(Phase phase, OpType type, uint16_t count, uint32_t addr, uint32_t value,
                      std::vector<uint8_t> payload)
{
    InitOp op{};
    op.type = static_cast<uint8_t>(type);
    op.count = count;
    op.addr = addr;
    op.value = value;
    phases_[static_cast<uint32_t>(phase)].push_back(Op{op, std::move(payload)});
}

void InitProgram::write(Phase phase, uint32_t addr, uint32_t value) { add(phase, OpType::write, 1, addr, value); }

void InitProgram::write_rt(Phase phase, uint32_t addr, uint32_t rt, uint16_t count)
{
    add(phase, OpType::write_rt, count, addr, rt);
}

void InitProgram::write_array(Phase phase, uint32_t addr, std::vector<uint8_t> bytes)
{
    if (bytes.size() % 4 != 0 || bytes.size() / 4 > UINT16_MAX)
        throw std::invalid_argument("array payload must be whole dwords, at most 65535");
    auto dwords = static_cast<uint16_t>(bytes.size() / 4);
    add(phase, OpType::write_array, dwords, addr, 0, std::move(bytes));
}

void InitProgram::if_mode(Phase phase, uint32_t modes, uint16_t ops) { add(phase, OpType::if_mode, ops, 0, modes); }

void InitProgram::poll(Phase phase, uint32_t addr, uint32_t value, uint16_t timeout_ms)
{
    add(phase, OpType::poll, timeout_ms, addr, value);
}

std::vector<uint8_t> InitProgram::encode(const FwVersion& version, bool zipped) const
{
    std::vector<uint8_t> ops, blob;
    PhaseIndex index[PHASE_COUNT];
    uint32_t op_count = 0;
    for (uint32_t p = 0; p < PHASE_COUNT; p++) {
        index[p] = PhaseIndex{op_count, static_cast<uint32_t>(phases_[p].size())};
        for (const Op& entry : phases_[p]) {
            InitOp op = entry.op;
            if (!entry.payload.empty()) {
                std::vector<uint8_t> stored = zipped ? deflate_bytes(entry.payload) : entry.payload;
                op.type = static_cast<uint8_t>(zipped ? OpType::write_zipped : OpType::write_array);
                op.data = static_cast<uint32_t>(blob.size());
                op.data_len = static_cast<uint32_t>(stored.size());
                blob.insert(blob.end(), stored.begin(), stored.end());
                while (blob.size() % 4 != 0)
                    blob.push_back(0); /* keep every payload dword-aligned */
            }
            append(ops, op);
            op_count++;
        }
    }

    std::vector<uint8_t> body;
    for (const PhaseIndex& phase : index)
        append(body, phase);
    body.insert(body.end(), ops.begin(), ops.end());
    body.insert(body.end(), blob.begin(), blob.end());

    ImageHeader header{};
    header.magic = IMAGE_MAGIC;
    header.format = IMAGE_FORMAT;
    header.fw_major = version.major;
    header.fw_minor = version.minor;
    header.fw_rev = version.rev;
    header.fw_eng = version.eng;
    header.hsi_major = hsi::HSI_VERSION_MAJOR;
    header.hsi_minor = hsi::HSI_VERSION_MINOR;
    header.flags = zipped ? IMAGE_FLAG_ZIPPED : 0;
    header.op_count = op_count;
    header.data_len = static_cast<uint32_t>(blob.size());
    header.crc32 = crc32(0, body.data(), body.size());

    std::vector<uint8_t> image(sizeof(header) + body.size());
    std::memcpy(image.data(), &header, sizeof(header));
    std::memcpy(image.data() + sizeof(header), body.data(), body.size());
    return image;
}

} // namespace cna::fw::tools
