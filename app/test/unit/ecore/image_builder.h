/* SPDX-License-Identifier: BSD-3-Clause
 * Builds small firmware images (hsi_init_image.h) for the parser tests,
 * independently of firmware/tools/fwgen.
 */
#pragma once

#include <cstring>
#include <vector>

#include <zlib.h>

#include "hsi_init_image.h"

namespace test {

using namespace cna::hsi::init;

class ImageBuilder {
public:
    void op(Phase phase, OpType type, uint32_t addr, uint32_t value, uint16_t count = 0)
    {
        InitOp o{};
        o.type = static_cast<uint8_t>(type);
        o.addr = addr;
        o.value = value;
        o.count = count;
        ops_[static_cast<int>(phase)].push_back(o);
    }
    void array(Phase phase, uint32_t addr, const std::vector<uint32_t>& dwords, bool zipped)
    {
        InitOp o{};
        o.addr = addr;
        o.count = static_cast<uint16_t>(dwords.size());
        o.data = static_cast<uint32_t>(blob_.size());
        if (!zipped) {
            o.type = static_cast<uint8_t>(OpType::write_array);
            append(dwords.data(), dwords.size() * 4);
        } else {
            o.type = static_cast<uint8_t>(OpType::write_zipped);
            uLongf len = compressBound(dwords.size() * 4);
            std::vector<uint8_t> z(len);
            compress(z.data(), &len, reinterpret_cast<const Bytef*>(dwords.data()), dwords.size() * 4);
            append(z.data(), len);
            o.data_len = static_cast<uint32_t>(len);
        }
        ops_[static_cast<int>(phase)].push_back(o);
    }

    std::vector<uint8_t> build(uint8_t hsi_major = cna::hsi::HSI_VERSION_MAJOR, bool zipped_flag = false) const
    {
        ImageHeader h{};
        h.magic = IMAGE_MAGIC;
        h.format = IMAGE_FORMAT;
        h.fw_major = 1;
        h.hsi_major = hsi_major;
        h.flags = zipped_flag ? IMAGE_FLAG_ZIPPED : 0;
        PhaseIndex idx[PHASE_COUNT];
        std::vector<InitOp> all;
        for (uint32_t p = 0; p < PHASE_COUNT; p++) {
            idx[p] = PhaseIndex{static_cast<uint32_t>(all.size()), static_cast<uint32_t>(ops_[p].size())};
            all.insert(all.end(), ops_[p].begin(), ops_[p].end());
        }
        h.op_count = static_cast<uint32_t>(all.size());
        h.data_len = static_cast<uint32_t>(blob_.size());
        std::vector<uint8_t> body(sizeof(idx) + all.size() * sizeof(InitOp) + blob_.size());
        memcpy(body.data(), idx, sizeof(idx));
        if (!all.empty())
            memcpy(body.data() + sizeof(idx), all.data(), all.size() * sizeof(InitOp));
        if (!blob_.empty())
            memcpy(body.data() + sizeof(idx) + all.size() * sizeof(InitOp), blob_.data(), blob_.size());
        h.crc32 = static_cast<uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size())));
        std::vector<uint8_t> image(sizeof(h) + body.size());
        memcpy(image.data(), &h, sizeof(h));
        memcpy(image.data() + sizeof(h), body.data(), body.size());
        return image;
    }

private:
    void append(const void* p, std::size_t n)
    {
        auto* b = static_cast<const uint8_t*>(p);
        blob_.insert(blob_.end(), b, b + n);
    }
    std::vector<InitOp> ops_[PHASE_COUNT];
    std::vector<uint8_t> blob_;
};

/* A representative image: every op type, arrays plain or zipped. */
inline std::vector<uint8_t> sample_image(bool zipped)
{
    ImageBuilder b;
    std::vector<uint32_t> words(300);
    for (uint32_t i = 0; i < words.size(); i++)
        words[i] = i * 0x01010101u;
    b.op(Phase::engine, OpType::write, 0x20, 1);
    b.array(Phase::engine, 0x1000, words, zipped);
    b.op(Phase::port, OpType::if_mode, 0, mode::PORTS_2, 1);
    b.op(Phase::port, OpType::zero, 0x2000, 0, 4);
    b.op(Phase::pf, OpType::write_rt, 0x3000, rt::SPQ_BASE_LO, 3);
    b.op(Phase::pf, OpType::poll, 0x4000, 1, 10);
    return b.build(cna::hsi::HSI_VERSION_MAJOR, zipped);
}

} // namespace test
