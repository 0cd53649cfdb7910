/* SPDX-License-Identifier: BSD-3-Clause
 * The VF-PF channel's hardware end: one request pending at a time, an event
 * on the PF per request, and a VF that misuses it marked malicious.
 */
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "iov/vf_channel.h"

namespace {

using cna::fw::VfChannel;
using cna::hsi::iov::ChannelState;
namespace bar = cna::hsi::iov::vf_bar0;

struct Events {
    std::vector<uint64_t> requests;
    std::vector<std::string> malice;
};

VfChannel channel(Events& ev, uint32_t vf = 3)
{
    return VfChannel(
        vf,
        [&ev, vf](uint32_t v, uint64_t iova) {
            EXPECT_EQ(v, vf);
            ev.requests.push_back(iova);
        },
        [&ev](uint32_t, const char* why) { ev.malice.push_back(why); });
}

void send(VfChannel& ch, uint64_t iova)
{
    ch.write(bar::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(iova));
    ch.write(bar::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(iova >> 32));
    ch.write(bar::CHANNEL_TRIGGER, 1);
}

TEST(VfChannel, ClosedUntilThePfOpensIt)
{
    Events ev;
    VfChannel ch = channel(ev);
    EXPECT_EQ(ch.read(bar::CHANNEL_STATE), static_cast<uint32_t>(ChannelState::disabled));
    send(ch, 0x1000);
    EXPECT_TRUE(ev.requests.empty());
    EXPECT_TRUE(ev.malice.empty());
    EXPECT_EQ(ch.read(bar::CHANNEL_REQ_ADDR_LO), 0u) << "writes to a closed channel go nowhere";
}

TEST(VfChannel, OneEventPerRequestAndPendingUntilThePfIsDone)
{
    Events ev;
    VfChannel ch = channel(ev);
    ch.enable(true);
    send(ch, 0x12'3456'7000);
    ASSERT_EQ(ev.requests, std::vector<uint64_t>{0x12'3456'7000});
    EXPECT_EQ(ch.read(bar::CHANNEL_STATE), static_cast<uint32_t>(ChannelState::pending));
    EXPECT_EQ(ch.read(bar::CHANNEL_REQ_ADDR_HI), 0x12u);
    EXPECT_EQ(ch.read(bar::CHANNEL_TRIGGER), 0xffffffffu) << "write-only";
    ch.write(bar::CHANNEL_REQ_ADDR_LO, 0x8000); /* the next request's, early: harmless */
    EXPECT_TRUE(ch.complete());
    EXPECT_FALSE(ch.complete()) << "nothing pending any more";
    EXPECT_EQ(ch.state(), ChannelState::idle);
    ch.write(bar::CHANNEL_TRIGGER, 1);
    EXPECT_EQ(ev.requests.back(), 0x12'0000'8000u);
    EXPECT_TRUE(ev.malice.empty());
    ch.write(bar::CHANNEL_TRIGGER, 0); /* only 1 triggers */
    EXPECT_EQ(ev.requests.size(), 2u);
}

TEST(VfChannel, ASecondTriggerWhilePendingIsMalicious)
{
    Events ev;
    VfChannel ch = channel(ev);
    ch.enable(true);
    send(ch, 0x1000);
    send(ch, 0x2000);
    ASSERT_EQ(ev.malice, std::vector<std::string>{"triggered the channel while its request was pending"});
    EXPECT_EQ(ev.requests.size(), 1u);
    EXPECT_EQ(ch.state(), ChannelState::disabled);
    EXPECT_FALSE(ch.complete()) << "a malicious VF's request is dropped";
    send(ch, 0x3000);
    EXPECT_EQ(ev.requests.size(), 1u) << "closed until the PF opens it again";
    ch.enable(true);
    send(ch, 0x3000);
    EXPECT_EQ(ev.requests.back(), 0x3000u);
}

TEST(VfChannel, ATriggerWithoutAnAddressIsMalicious)
{
    Events ev;
    VfChannel ch = channel(ev);
    ch.enable(true);
    ch.write(bar::CHANNEL_TRIGGER, 1);
    EXPECT_EQ(ev.malice, std::vector<std::string>{"triggered the channel without a request address"});
    EXPECT_TRUE(ev.requests.empty());
}

TEST(VfChannel, ClosingForgetsAPendingRequest)
{
    Events ev;
    VfChannel ch = channel(ev);
    ch.enable(true);
    send(ch, 0x1000);
    ch.enable(false); /* the VF's FLR */
    EXPECT_EQ(ch.state(), ChannelState::disabled);
    EXPECT_FALSE(ch.complete());
    ch.enable(true);
    EXPECT_EQ(ch.read(bar::CHANNEL_REQ_ADDR_LO), 0u);
    send(ch, 0x2000);
    EXPECT_EQ(ev.requests.back(), 0x2000u);
    EXPECT_TRUE(ev.malice.empty());
}

} // namespace
