/* SPDX-License-Identifier: BSD-3-Clause
 * The firmware image fwgen authors: format, CRC, phases, zipped variant, and
 * that running it brings the storms up.
 */
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <iterator>

#include "fake_driver.h"
#include "base/crc32.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::init;

std::vector<uint8_t> read_file(const char* path)
{
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

struct ParsedImage {
    ImageHeader header;
    PhaseIndex phases[PHASE_COUNT];
    std::vector<InitOp> ops;
    const uint8_t* blob;
};

ParsedImage parse(const std::vector<uint8_t>& image)
{
    ParsedImage p{};
    std::memcpy(&p.header, image.data(), sizeof(p.header));
    std::memcpy(p.phases, image.data() + sizeof(p.header), sizeof(p.phases));
    p.ops.resize(p.header.op_count);
    std::memcpy(p.ops.data(), image.data() + sizeof(p.header) + sizeof(p.phases), p.ops.size() * sizeof(InitOp));
    p.blob = image.data() + sizeof(p.header) + sizeof(p.phases) + p.ops.size() * sizeof(InitOp);
    return p;
}

TEST(Crc32, MatchesZlib)
{
    const char text[] = "123456789";
    EXPECT_EQ(crc32(0, text, 9), 0xcbf43926u);
    std::vector<uint8_t> data(10000);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint8_t>(i * 31 + 7);
    EXPECT_EQ(cna::fw::crc32(0, data.data(), data.size()), ::crc32(0, data.data(), data.size()));
    EXPECT_EQ(cna::fw::crc32(cna::fw::crc32(0, data.data(), 100), data.data() + 100, 9900),
              ::crc32(0, data.data(), data.size()));
}

TEST(Image, BuiltinMatchesThePlainFileAndIsWellFormed)
{
    std::vector<uint8_t> plain = read_file(CNA_FW_BIN);
    ASSERT_EQ(plain.size(), builtin_image_size);
    EXPECT_EQ(0, std::memcmp(plain.data(), builtin_image, builtin_image_size));
    ParsedImage img = parse(plain);
    EXPECT_EQ(img.header.magic, IMAGE_MAGIC);
    EXPECT_EQ(img.header.format, IMAGE_FORMAT);
    EXPECT_EQ(img.header.hsi_major, HSI_VERSION_MAJOR);
    EXPECT_EQ(img.header.flags & IMAGE_FLAG_ZIPPED, 0);
    EXPECT_EQ(img.header.crc32, ::crc32(0, plain.data() + sizeof(ImageHeader), plain.size() - sizeof(ImageHeader)));
    EXPECT_EQ(sizeof(ImageHeader) + sizeof(img.phases) + img.ops.size() * sizeof(InitOp) + img.header.data_len,
              plain.size());
    uint32_t total = 0;
    for (const PhaseIndex& phase : img.phases) {
        EXPECT_EQ(phase.first_op, total);
        EXPECT_GT(phase.op_count, 0u);
        total += phase.op_count;
    }
    EXPECT_EQ(total, img.header.op_count);

    /* The engine phase: one write_array of microcode starting with the magic,
     * if_mode for every port mode, STORM_START then a poll on STORM_STATUS. */
    bool microcode = false, start = false, poll = false;
    uint32_t port_modes = 0, rt_ops = 0;
    for (const InitOp& op : img.ops) {
        if (op.type == static_cast<uint8_t>(OpType::write_array) && op.addr == reg::STORM_MICROCODE) {
            uint32_t magic;
            std::memcpy(&magic, img.blob + op.data, 4);
            EXPECT_EQ(magic, MICROCODE_MAGIC);
            EXPECT_GE(op.count * 4u, 2048u);
            microcode = true;
        }
        if (op.type == static_cast<uint8_t>(OpType::if_mode))
            port_modes |= op.value;
        if (op.type == static_cast<uint8_t>(OpType::write_rt))
            rt_ops++;
        start |= op.type == static_cast<uint8_t>(OpType::write) && op.addr == reg::STORM_START;
        poll |= start && op.type == static_cast<uint8_t>(OpType::poll) && op.addr == reg::STORM_STATUS &&
                op.value == static_cast<uint32_t>(StormStatus::running);
    }
    EXPECT_TRUE(microcode);
    EXPECT_TRUE(poll);
    EXPECT_EQ(port_modes, mode::PORTS_1 | mode::PORTS_2 | mode::PORTS_4);
    EXPECT_EQ(rt_ops, 4u);
}

TEST(Image, ZippedVariantInflatesToTheSamePayload)
{
    std::vector<uint8_t> plain = read_file(CNA_FW_BIN), zipped = read_file(CNA_FW_ZIPPED_BIN);
    ASSERT_EQ(plain.size(), builtin_image_size);
    ASSERT_GE(zipped.size(), sizeof(ImageHeader) + sizeof(PhaseIndex) * PHASE_COUNT);
    ParsedImage p = parse(plain), z = parse(zipped);
    EXPECT_EQ(z.header.flags & IMAGE_FLAG_ZIPPED, IMAGE_FLAG_ZIPPED);
    EXPECT_EQ(z.header.crc32, ::crc32(0, zipped.data() + sizeof(ImageHeader), zipped.size() - sizeof(ImageHeader)));
    EXPECT_LT(zipped.size(), plain.size());
    ASSERT_EQ(p.ops.size(), z.ops.size());
    for (size_t i = 0; i < p.ops.size(); i++) {
        if (p.ops[i].type != static_cast<uint8_t>(OpType::write_array)) {
            EXPECT_EQ(p.ops[i].type, z.ops[i].type);
            continue;
        }
        ASSERT_EQ(z.ops[i].type, static_cast<uint8_t>(OpType::write_zipped));
        EXPECT_EQ(z.ops[i].count, p.ops[i].count);
        std::vector<uint8_t> out(p.ops[i].count * 4u);
        uLongf len = out.size();
        ASSERT_EQ(uncompress(out.data(), &len, z.blob + z.ops[i].data, z.ops[i].data_len), Z_OK);
        EXPECT_EQ(0, std::memcmp(out.data(), p.blob + p.ops[i].data, out.size()));
    }
}

TEST(Image, BothVariantsBringTheStormsUp)
{
    for (const char* path : {CNA_FW_BIN, CNA_FW_ZIPPED_BIN}) {
        AdapterConfig config;
        config.ports = 4;
        auto adapter = Adapter::create(config, nullptr);
        FakeDriver drv(*adapter, 2);
        drv.open_ptt_access();
        std::vector<uint8_t> image = read_file(path);
        uint32_t modes = mode::ASIC | mode::SF | mode::PORTS_4 | mode::MSIX;
        ASSERT_TRUE(drv.run_phase(image.data(), image.size(), Phase::engine, modes)) << path;
        EXPECT_EQ(drv.rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::running));
        EXPECT_EQ(drv.rd(reg::NIG_PORT_MODE), 4u);
        EXPECT_EQ(drv.rd(reg::MISC_FW_VERSION), 0x01000000u);
        ASSERT_TRUE(drv.run_phase(image.data(), image.size(), Phase::port, modes));
        EXPECT_EQ(drv.rd(reg::NIG_PORT_RX_ENABLE), 1u);
        EXPECT_EQ(drv.rd(reg::NIG_PORT_MAX_FRAME), eth::MAX_MTU + eth::ETH_OVERHEAD);
        ASSERT_TRUE(drv.run_phase(image.data(), image.size(), Phase::pf, modes));
        EXPECT_EQ(drv.rd(reg::STORM_PF_ENABLE), 1u);
        EXPECT_EQ(drv.rd(reg::PGLUE_PF_MASTER_ENABLE), 1u);
        EXPECT_EQ(drv.rd(reg::STORM_ILT_CIDS), FakeDriver::ILT_CIDS);
    }
}

TEST(Image, CorruptedMicrocodeFailsThePoll)
{
    std::vector<uint8_t> image = read_file(CNA_FW_BIN);
    ParsedImage p = parse(image);
    for (const InitOp& op : p.ops)
        if (op.type == static_cast<uint8_t>(OpType::write_array))
            image[sizeof(ImageHeader) + sizeof(p.phases) + p.ops.size() * sizeof(InitOp) + op.data + 100] ^= 1;
    /* A well-formed image whose microcode is wrong: the storms, not the
     * driver's image check, are to refuse it. */
    const uint32_t crc = cna::fw::crc32(0, image.data() + sizeof(ImageHeader), image.size() - sizeof(ImageHeader));
    std::memcpy(image.data() + offsetof(ImageHeader, crc32), &crc, sizeof(crc));
    AdapterConfig config;
    auto adapter = Adapter::create(config, nullptr);
    FakeDriver drv(*adapter, 0);
    drv.open_ptt_access();
    EXPECT_FALSE(drv.run_phase(image.data(), image.size(), Phase::engine, mode::PORTS_1));
    EXPECT_EQ(drv.rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::bad_microcode));
}

} // namespace
} // namespace cna::fw::test
