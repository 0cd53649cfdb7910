/* SPDX-License-Identifier: BSD-3-Clause */
#include <gtest/gtest.h>

#include "ecore_chain.h"

using cna::ecore::Chain;
using cna::ecore::Status;

TEST(Chain, RejectsSizesThatAreNotPowersOfTwo)
{
    Chain c;
    EXPECT_EQ(c.alloc(100, 8, "test"), Status::inval);
    EXPECT_EQ(c.alloc(1, 8, "test"), Status::inval);
    EXPECT_EQ(c.alloc(65536, 8, "test"), Status::inval);
    EXPECT_FALSE(c);
}

TEST(Chain, EmptyAndFull)
{
    Chain c;
    ASSERT_EQ(c.alloc(8, 16, "test"), Status::success);
    EXPECT_NE(c.iova(), 0u);
    EXPECT_TRUE(c.is_empty());
    EXPECT_EQ(c.consume(), nullptr);
    EXPECT_EQ(c.capacity(), 7u);
    for (int i = 0; i < 7; i++)
        ASSERT_NE(c.produce(), nullptr) << i;
    EXPECT_TRUE(c.is_full());
    EXPECT_EQ(c.produce(), nullptr);
    EXPECT_EQ(c.free_count(), 0);
    EXPECT_NE(c.consume(), nullptr);
    EXPECT_FALSE(c.is_full());
    EXPECT_EQ(c.free_count(), 1);
}

TEST(Chain, IndicesWrapAtU16AndSlotsFollow)
{
    Chain c;
    ASSERT_EQ(c.alloc(64, sizeof(uint32_t), "test"), Status::success);
    /* Run the free-running indices across 65535 -> 0. */
    c.set_prod(65530);
    c.set_cons(65530);
    for (uint32_t i = 0; i < 20; i++) {
        auto* e = c.produce_as<uint32_t>();
        ASSERT_NE(e, nullptr);
        *e = i;
    }
    EXPECT_EQ(c.prod(), uint16_t(65530 + 20));
    EXPECT_EQ(c.used(), 20);
    /* Slot of index 65535 is 63, of index 0 (after wrap) is 0. */
    EXPECT_EQ(c.elem(65535), static_cast<uint8_t*>(c.va()) + 63 * 4);
    EXPECT_EQ(c.elem(0), c.va());
    for (uint32_t i = 0; i < 20; i++) {
        auto* e = c.consume_as<uint32_t>();
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(*e, i);
    }
    EXPECT_TRUE(c.is_empty());
}

TEST(Chain, MoveTransfersTheMemory)
{
    Chain a;
    ASSERT_EQ(a.alloc(4, 8, "test"), Status::success);
    void* va = a.va();
    Chain b = std::move(a);
    EXPECT_EQ(b.va(), va);
    EXPECT_FALSE(a);
}
