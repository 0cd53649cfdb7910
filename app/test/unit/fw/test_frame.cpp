/* SPDX-License-Identifier: BSD-3-Clause
 * The frame parser's shortcut for the common frame (untagged IPv4, 20-byte
 * header, UDP or TCP) against the full parse: every frame the shortcut
 * takes must get the full parse's layout, and the frames it must leave to
 * the full parse (options, fragments, tags, short or lying length fields,
 * odd TCP offsets) must be left. Each header byte of a UDP and a TCP frame
 * is set to values around its field's boundaries, alone and in pairs with
 * the length fields.
 */
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "frame/frame.h"

namespace {

using namespace cna::fw;

std::vector<uint8_t> ipv4_frame(uint8_t proto, uint32_t len)
{
    std::vector<uint8_t> f(len, 0);
    for (int i = 0; i < 12; i++)
        f[i] = static_cast<uint8_t>(0x10 + i);
    f[12] = 0x08;
    f[14] = 0x45;
    f[16] = static_cast<uint8_t>((len - 14) >> 8);
    f[17] = static_cast<uint8_t>(len - 14);
    f[23] = proto;
    f[34 + 12] = 0x50; /* TCP data offset 20 (a UDP frame's payload) */
    return f;
}

/* Whether the shortcut took the frame; fails the test if it disagrees. */
bool agrees(const std::vector<uint8_t>& f)
{
    FrameLayout shortcut, full;
    bool taken = parse_udp_tcp_ipv4(f.data(), static_cast<uint32_t>(f.size()), shortcut);
    bool parsed = parse_any_frame(f.data(), static_cast<uint32_t>(f.size()), full);
    if (taken) {
        EXPECT_TRUE(parsed);
        EXPECT_TRUE(shortcut == full) << "l3_end " << shortcut.l3_end << " vs " << full.l3_end << ", l4 "
                                      << int(shortcut.l4) << " vs " << int(full.l4);
    }
    FrameLayout dispatched;
    EXPECT_EQ(parse_frame(f.data(), static_cast<uint32_t>(f.size()), dispatched), parsed);
    if (parsed) {
        EXPECT_TRUE(dispatched == full);
    }
    return taken;
}

TEST(FrameParse, TheShortcutTakesPlainUdpAndTcpOverIpv4)
{
    for (uint8_t proto : {uint8_t{17}, uint8_t{6}}) {
        for (uint32_t len : {54u, 60u, 64u, 128u, 1518u}) {
            EXPECT_TRUE(agrees(ipv4_frame(proto, len))) << int(proto) << " " << len;
        }
    }
}

TEST(FrameParse, TheShortcutLeavesEverythingElseToTheFullParse)
{
    auto udp = ipv4_frame(17, 64);
    auto with = [&](std::vector<uint8_t> f, uint32_t at, uint8_t v) {
        f[at] = v;
        return f;
    };
    EXPECT_FALSE(agrees(with(udp, 14, 0x46)));   /* IP options */
    EXPECT_FALSE(agrees(with(udp, 14, 0x65)));   /* version 6 */
    EXPECT_FALSE(agrees(with(udp, 12, 0x81)));   /* a VLAN tag */
    EXPECT_FALSE(agrees(with(udp, 20, 0x20)));   /* more fragments */
    EXPECT_FALSE(agrees(with(udp, 21, 0x01)));   /* a fragment offset */
    EXPECT_FALSE(agrees(with(udp, 23, 1)));      /* ICMP */
    EXPECT_FALSE(agrees(with(with(udp, 16, 0), 17, 27))); /* total length below IP + UDP */
    EXPECT_FALSE(agrees(with(ipv4_frame(6, 64), 46, 0x40))); /* TCP offset below 20 */
    EXPECT_FALSE(agrees(with(ipv4_frame(6, 64), 46, 0xf0))); /* TCP offset beyond the packet */
    EXPECT_FALSE(agrees(std::vector<uint8_t>(udp.begin(), udp.begin() + 53))); /* shorter than IPv4 + TCP */
}

TEST(FrameParse, EveryHeaderByteAtItsBoundariesParsesAsTheFullParse)
{
    const uint8_t values[] = {0x00, 0x01, 0x05, 0x06, 0x08, 0x11, 0x1b, 0x1c, 0x20, 0x3f,
                              0x40, 0x45, 0x46, 0x50, 0x55, 0x60, 0x80, 0x81, 0x86, 0x88,
                              0xa8, 0xdd, 0xf0, 0xff};
    uint32_t taken = 0, cases = 0;
    for (uint8_t proto : {uint8_t{17}, uint8_t{6}}) {
        for (uint32_t len : {54u, 64u}) {
            auto base = ipv4_frame(proto, len);
            for (uint32_t at = 12; at < 34 + 14; at++) {
                for (uint8_t v : values) {
                    auto f = base;
                    f[at] = v;
                    for (uint8_t total_lo : {uint8_t{0x1b}, uint8_t{0x1c}, uint8_t{0x28}, uint8_t{0x32}, uint8_t{0xff}}) {
                        f[17] = at == 17 ? v : total_lo;
                        taken += agrees(f);
                        cases++;
                    }
                }
            }
        }
    }
    /* Both outcomes occur, so neither parse is compared against nothing. */
    EXPECT_GT(taken, 0u);
    EXPECT_LT(taken, cases);
}

} // namespace
