/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include <cstring>

#include "ecore_init_image.h"
#include "image_builder.h"

using namespace cna::ecore;
using namespace cna::hsi::init;

namespace {

ImageError parse(const std::vector<uint8_t>& bytes, InitImage* image = nullptr)
{
    InitImage scratch;
    std::string why;
    ImageError err = init_image_parse(bytes, image ? image : &scratch, &why);
    if (err != ImageError::none) {
        EXPECT_FALSE(why.empty()) << "an error must say why";
    }
    return err;
}

/* Rewrites the header CRC after a change to the body. */
void restamp(std::vector<uint8_t>& bytes)
{
    ImageHeader h;
    memcpy(&h, bytes.data(), sizeof(h));
    h.crc32 = static_cast<uint32_t>(crc32(0, bytes.data() + sizeof(h), static_cast<uInt>(bytes.size() - sizeof(h))));
    memcpy(bytes.data(), &h, sizeof(h));
}

} // namespace

TEST(InitImage, ValidPlainImage)
{
    InitImage image;
    ASSERT_EQ(parse(test::sample_image(false), &image), ImageError::none);
    EXPECT_EQ(image.header.op_count, 6u);
    EXPECT_EQ(image.phases[0].op_count, 2u);
    EXPECT_EQ(image.array_dword(image.ops[1], 2), 2 * 0x01010101u);
}

TEST(InitImage, ValidZippedImage)
{
    InitImage image;
    ASSERT_EQ(parse(test::sample_image(true), &image), ImageError::none);
    EXPECT_TRUE(image.header.flags & IMAGE_FLAG_ZIPPED);
    ASSERT_EQ(image.inflated[1].size(), 300u);
    EXPECT_EQ(image.inflated[1][299], 299 * 0x01010101u);
}

TEST(InitImage, BuiltinImageIsValid)
{
    if (builtin_image_size == 0)
        GTEST_SKIP() << "no builtin firmware image in this build";
    std::vector<uint8_t> bytes(builtin_image, builtin_image + builtin_image_size);
    EXPECT_EQ(parse(bytes), ImageError::none);
}

TEST(InitImage, CorruptMagic)
{
    auto bytes = test::sample_image(false);
    bytes[0] ^= 0xff;
    EXPECT_EQ(parse(bytes), ImageError::bad_magic);
}

TEST(InitImage, CorruptFormat)
{
    auto bytes = test::sample_image(false);
    bytes[offsetof(ImageHeader, format)] = 9;
    EXPECT_EQ(parse(bytes), ImageError::bad_format);
}

TEST(InitImage, CorruptCrc)
{
    auto bytes = test::sample_image(false);
    bytes[bytes.size() - 5] ^= 0x40;
    EXPECT_EQ(parse(bytes), ImageError::bad_crc);
}

TEST(InitImage, Truncated)
{
    auto bytes = test::sample_image(false);
    bytes.resize(bytes.size() - 16);
    EXPECT_EQ(parse(bytes), ImageError::truncated);
    bytes.resize(10);
    EXPECT_EQ(parse(bytes), ImageError::truncated);
}

TEST(InitImage, HsiMismatch)
{
    test::ImageBuilder b;
    b.op(Phase::pf, OpType::write, 0x20, 1);
    EXPECT_EQ(parse(b.build(cna::hsi::HSI_VERSION_MAJOR + 1)), ImageError::hsi_mismatch);
}

TEST(InitImage, ArrayBeyondTheBlob)
{
    auto bytes = test::sample_image(false);
    /* op 1 (write_array): claim more dwords than the blob holds */
    InitOp op;
    const std::size_t at = sizeof(ImageHeader) + sizeof(PhaseIndex) * PHASE_COUNT + sizeof(InitOp);
    memcpy(&op, bytes.data() + at, sizeof(op));
    op.count = 400;
    memcpy(bytes.data() + at, &op, sizeof(op));
    restamp(bytes);
    EXPECT_EQ(parse(bytes), ImageError::out_of_bounds);
}

TEST(InitImage, CorruptZippedArray)
{
    auto bytes = test::sample_image(true);
    bytes[bytes.size() - 20] ^= 0xff; /* inside the zlib stream */
    restamp(bytes);
    EXPECT_EQ(parse(bytes), ImageError::unzip);
}

TEST(InitImage, UnknownOp)
{
    test::ImageBuilder b;
    b.op(Phase::pf, static_cast<OpType>(42), 0x20, 1);
    EXPECT_EQ(parse(b.build()), ImageError::bad_op);
}

/* Found by fuzzing: an op outside every phase escaped validation. */
TEST(InitImage, OpsOutsideEveryPhaseAreRejected)
{
    auto bytes = test::sample_image(false);
    PhaseIndex pf;
    const std::size_t at = sizeof(ImageHeader) + sizeof(PhaseIndex) * static_cast<int>(Phase::pf);
    memcpy(&pf, bytes.data() + at, sizeof(pf));
    ASSERT_GT(pf.op_count, 0u);
    pf.op_count--; /* the last op now belongs to no phase */
    memcpy(bytes.data() + at, &pf, sizeof(pf));
    restamp(bytes);
    EXPECT_EQ(parse(bytes), ImageError::bad_phase);
}

TEST(InitImage, OverlappingPhasesAreRejected)
{
    auto bytes = test::sample_image(false);
    PhaseIndex engine;
    memcpy(&engine, bytes.data() + sizeof(ImageHeader), sizeof(engine));
    PhaseIndex port{engine.first_op, engine.op_count};
    memcpy(bytes.data() + sizeof(ImageHeader) + sizeof(PhaseIndex), &port, sizeof(port));
    restamp(bytes);
    EXPECT_EQ(parse(bytes), ImageError::bad_phase);
}

/* Found by fuzzing (UBSan): an image with no ops at all. */
TEST(InitImage, ImageWithoutOpsParses)
{
    test::ImageBuilder b;
    InitImage image;
    EXPECT_EQ(parse(b.build(), &image), ImageError::none);
    EXPECT_TRUE(image.ops.empty());
}
