/* SPDX-License-Identifier: BSD-3-Clause
 * A transfer rule's header changes: each field where the HSI says, and
 * every checksum the change touches still right by an independent
 * computation (fake_driver's reference sums), on a copy of the frame.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fake_driver.h"
#include "switch/rewrite.h"

namespace cna::fw::test {
namespace {

using namespace hsi::eswitch;

constexpr uint8_t DST[6] = {0x02, 0, 0, 0, 0, 0x01};
constexpr uint8_t SRC[6] = {0x02, 0, 0, 0, 0, 0x02};

std::vector<uint8_t> rewritten(const SwitchRule& r, const std::vector<uint8_t>& frame)
{
    WireFrame f{frame.data(), static_cast<uint32_t>(frame.size()), false, {}, nullptr};
    f.parsed = parse_any_frame(f.data, f.len, f.layout);
    std::vector<uint8_t> out(REWRITE_MAX);
    const std::vector<uint8_t> before = frame;
    out.resize(rewrite(r, f, out.data()));
    EXPECT_EQ(frame, before) << "the sender's buffer is never written";
    return out;
}

TEST(SwitchRewrite, AddressesAndPortsChangeWithTheirChecksums)
{
    SwitchRule r;
    r.actions = action::SET_MAC_SRC | action::SET_MAC_DST | action::SET_IPV4_SRC | action::SET_IPV4_DST |
                action::SET_TP_SRC | action::SET_TP_DST;
    const uint8_t mac_src[6] = {0x02, 0xaa, 0, 0, 0, 1}, mac_dst[6] = {0x02, 0xbb, 0, 0, 0, 2};
    std::memcpy(r.mac_src, mac_src, 6);
    std::memcpy(r.mac_dst, mac_dst, 6);
    const uint8_t ip_src[4] = {192, 168, 7, 1}, ip_dst[4] = {172, 16, 0, 99};
    std::memcpy(r.ipv4_src, ip_src, 4);
    std::memcpy(r.ipv4_dst, ip_dst, 4);
    r.tp_src = 4242;
    r.tp_dst = 80;
    for (const auto& frame : {udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 71),
                              tcp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 100)}) {
        const auto out = rewritten(r, frame);
        ASSERT_EQ(out.size(), frame.size());
        EXPECT_EQ(std::memcmp(out.data(), mac_dst, 6), 0);
        EXPECT_EQ(std::memcmp(out.data() + 6, mac_src, 6), 0);
        EXPECT_EQ(std::memcmp(out.data() + 26, ip_src, 4), 0);
        EXPECT_EQ(std::memcmp(out.data() + 30, ip_dst, 4), 0);
        EXPECT_EQ(out[34] << 8 | out[35], 4242);
        EXPECT_EQ(out[36] << 8 | out[37], 80);
        EXPECT_TRUE(ipv4_header_valid(out));
        EXPECT_TRUE(l4_valid(out)) << (frame[23] == 6 ? "TCP" : "UDP");
    }
}

TEST(SwitchRewrite, AUdpDatagramWithoutAChecksumKeepsNone)
{
    SwitchRule r;
    r.actions = action::SET_IPV4_DST;
    const uint8_t ip_dst[4] = {10, 9, 8, 7};
    std::memcpy(r.ipv4_dst, ip_dst, 4);
    auto frame = udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 30, false);
    ASSERT_EQ(frame[40] | frame[41], 0);
    const uint16_t header_sum = ref_checksum(&frame[14], 20);
    frame[24] = static_cast<uint8_t>(header_sum >> 8);
    frame[25] = static_cast<uint8_t>(header_sum);
    const auto out = rewritten(r, frame);
    EXPECT_EQ(out[40] | out[41], 0) << "0 says the sender computed none";
    EXPECT_TRUE(ipv4_header_valid(out));
}

TEST(SwitchRewrite, TtlIsSetOrDecrementedAndOneThatWouldExpireIsAnException)
{
    SwitchRule r;
    r.actions = action::DEC_TTL;
    auto frame = udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 30);
    const uint8_t ttl = frame[22];
    auto out = rewritten(r, frame);
    EXPECT_EQ(out[22], ttl - 1);
    EXPECT_TRUE(ipv4_header_valid(out));
    EXPECT_TRUE(l4_valid(out)) << "the TTL is in no pseudo-header";

    r.actions = action::SET_TTL;
    r.ttl = 3;
    out = rewritten(r, frame);
    EXPECT_EQ(out[22], 3);
    EXPECT_TRUE(ipv4_header_valid(out));

    r.actions = action::DEC_TTL;
    frame[22] = 1;
    frame[24] = frame[25] = 0;
    const uint16_t sum = ref_checksum(&frame[14], 20);
    frame[24] = static_cast<uint8_t>(sum >> 8);
    frame[25] = static_cast<uint8_t>(sum);
    EXPECT_TRUE(rewritten(r, frame).empty()) << "a TTL of 1 is not decremented: the frame goes to software";

    const auto v6 = tcp6_frame(DST, SRC, 1000, 2000, 40);
    out = rewritten(r, v6);
    ASSERT_EQ(out.size(), v6.size());
    EXPECT_EQ(out[21], v6[21] - 1) << "the hop limit";
    EXPECT_TRUE(l4_valid(out));
}

TEST(SwitchRewrite, AFragmentsAddressesAndPortsAreLeftToSoftware)
{
    SwitchRule r;
    r.actions = action::SET_IPV4_DST;
    auto frame = udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 30);
    frame[14 + 6] = 0x20; /* more fragments: the UDP checksum covers the others' bytes too */
    EXPECT_TRUE(rewritten(r, frame).empty()) << "an exception: where no rule matched";
    r.actions = action::DEC_TTL;
    EXPECT_EQ(rewritten(r, frame).size(), frame.size()) << "the IP header alone is the fragment's";
}

TEST(SwitchRewrite, VlanTagsArePushedSetAndPopped)
{
    SwitchRule r;
    r.actions = action::PUSH_VLAN | action::SET_VLAN_VID | action::SET_VLAN_PCP;
    r.vlan_tpid = 0x88a8;
    r.vlan_tci = 5u << 13 | 300;
    const auto frame = udp4_frame(DST, SRC, 0x0a000001, 0x0a000002, 1000, 2000, 30);
    auto out = rewritten(r, frame);
    ASSERT_EQ(out.size(), frame.size() + 4);
    EXPECT_EQ(out[12] << 8 | out[13], 0x88a8);
    EXPECT_EQ(out[14] << 8 | out[15], 5 << 13 | 300);
    EXPECT_EQ(std::memcmp(out.data() + 16, frame.data() + 12, frame.size() - 12), 0);

    r.actions = action::SET_VLAN_VID;
    const auto tagged = with_vlan(frame, 3u << 13 | 7);
    out = rewritten(r, tagged);
    EXPECT_EQ(out[14] << 8 | out[15], 3 << 13 | 300) << "the VID alone, the PCP kept";
    EXPECT_EQ(rewritten(r, frame), frame) << "no tag to set";

    r.actions = action::POP_VLAN | action::DEC_TTL;
    out = rewritten(r, tagged);
    ASSERT_EQ(out.size(), frame.size());
    EXPECT_EQ(out[12] << 8 | out[13], 0x0800);
    EXPECT_EQ(out[22], frame[22] - 1) << "the IP header found after the pop";
    EXPECT_TRUE(ipv4_header_valid(out));

    r.actions = action::POP_VLAN | action::PUSH_VLAN | action::SET_VLAN_VID;
    r.vlan_tpid = 0x8100;
    out = rewritten(r, tagged);
    ASSERT_EQ(out.size(), tagged.size());
    EXPECT_EQ(out[14] << 8 | out[15], 300) << "popped, then a new tag: the old PCP gone";
}

} // namespace
} // namespace cna::fw::test
