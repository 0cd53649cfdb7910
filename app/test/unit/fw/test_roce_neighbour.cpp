/* SPDX-License-Identifier: BSD-3-Clause
 * The RoCE firmware' neighbour protocols: ARP requests and IPv6 neighbour
 * solicitations for the PF's addresses answered (fields, flags, options
 * and the ICMPv6 checksum against an independent bytewise sum), the
 * addresses announced when set, the questions asked for a resolution, and the answers matched to them.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fake_driver.h"
#include "roce/neighbour.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::roce;
using namespace cna::hsi::rdma;

const uint8_t OUR_MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x07};
const uint8_t PEER[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
const uint8_t OUR_V4[4] = {10, 0, 0, 7};
const uint8_t PEER_V4[4] = {10, 0, 0, 9};
/* fe80:: and the EUI-64 of OUR_MAC */
const uint8_t OUR_LL[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x07};
const uint8_t PEER_V6[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};

struct Rig {
    Neighbours n;
    std::vector<uint8_t> buffers = std::vector<uint8_t>(FrameBurst::MAX * 128);
    FrameBurst out;
    /* What setting the addresses told the link. */
    std::vector<std::vector<uint8_t>> announced;
    Rig()
    {
        n.set_mac(OUR_MAC);
        SetAddressesRamrodData d{};
        d.num_ipv4 = 1;
        std::memcpy(d.ipv4[0], OUR_V4, 4);
        n.set_addresses(d);
        announced = sent();
    }
    std::vector<std::vector<uint8_t>> sent()
    {
        out.clear();
        n.poll(out, buffers.data(), 128);
        std::vector<std::vector<uint8_t>> frames;
        for (uint32_t i = 0; i < out.count; i++)
            frames.emplace_back(out.frames[i].data, out.frames[i].data + out.frames[i].len);
        return frames;
    }
    /* Hands a frame to the agent; the answers it reported. */
    std::vector<std::pair<std::vector<uint8_t>, uint16_t>> feed(const std::vector<uint8_t>& frame)
    {
        FrameBurst b;
        b.add(frame.data(), static_cast<uint32_t>(frame.size()));
        EXPECT_TRUE(Neighbours::is_neighbour_protocol(b.frames[0]));
        std::vector<std::pair<std::vector<uint8_t>, uint16_t>> answers;
        n.receive(b.frames[0], [&](const uint8_t(&mac)[6], uint16_t tag) {
            answers.emplace_back(std::vector<uint8_t>(mac, mac + 6), tag);
        });
        return answers;
    }
};

std::vector<uint8_t> arp(uint16_t op, const uint8_t* dst_mac, const uint8_t* sha, const uint8_t* spa,
                         const uint8_t* tpa)
{
    std::vector<uint8_t> f(60, 0);
    std::memcpy(f.data(), dst_mac, 6);
    std::memcpy(f.data() + 6, sha, 6);
    f[12] = 0x08, f[13] = 0x06;
    uint8_t* a = f.data() + 14;
    a[1] = 1, a[2] = 0x08, a[4] = 6, a[5] = 4, a[7] = static_cast<uint8_t>(op);
    std::memcpy(a + 8, sha, 6);
    std::memcpy(a + 14, spa, 4);
    std::memcpy(a + 24, tpa, 4);
    return f;
}

/* An NS or NA with a link-layer option, its ICMPv6 checksum from the
 * bytewise reference sum. */
std::vector<uint8_t> nd(uint8_t type, const uint8_t* src_mac, const uint8_t* src, const uint8_t* dst,
                        const uint8_t* target, uint8_t hop_limit = 255)
{
    std::vector<uint8_t> f(14 + 40 + 32, 0);
    std::memset(f.data(), 0x33, 2);
    std::memcpy(f.data() + 6, src_mac, 6);
    f[12] = 0x86, f[13] = 0xdd;
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x60, ip[5] = 32, ip[6] = 58, ip[7] = hop_limit;
    std::memcpy(ip + 8, src, 16);
    std::memcpy(ip + 24, dst, 16);
    uint8_t* m = ip + 40;
    m[0] = type;
    std::memcpy(m + 8, target, 16);
    m[24] = type == 135 ? 1 : 2, m[25] = 1;
    std::memcpy(m + 26, src_mac, 6);
    uint8_t pseudo[40] = {};
    std::memcpy(pseudo, src, 16);
    std::memcpy(pseudo + 16, dst, 16);
    pseudo[35] = 32, pseudo[39] = 58;
    uint16_t c = cna::fw::test::ref_checksum(m, 32, cna::fw::test::ref_checksum(pseudo, 40) ^ 0xffff);
    m[2] = static_cast<uint8_t>(c >> 8), m[3] = static_cast<uint8_t>(c);
    return f;
}

bool icmpv6_checksum_ok(const std::vector<uint8_t>& f)
{
    const uint8_t* ip = f.data() + 14;
    uint8_t pseudo[40] = {};
    std::memcpy(pseudo, ip + 8, 32);
    const uint32_t len = uint32_t{ip[4]} << 8 | ip[5];
    pseudo[34] = static_cast<uint8_t>(len >> 8), pseudo[35] = static_cast<uint8_t>(len), pseudo[39] = 58;
    return cna::fw::test::ref_checksum(ip + 40, len, cna::fw::test::ref_checksum(pseudo, 40) ^ 0xffff) == 0;
}

/* A neighbour advertisement of `address`, from it, to dst_mac and dst,
 * with the flags (0x40 solicited, 0x20 override) and our MAC in its target
 * link-layer address option. */
void expect_advert(const std::vector<uint8_t>& f, const uint8_t* dst_mac, const uint8_t* dst, const uint8_t* address,
                   uint8_t flags)
{
    EXPECT_EQ(std::memcmp(f.data(), dst_mac, 6), 0);
    const uint8_t* ip = f.data() + 14;
    EXPECT_EQ(ip[7], 255);
    EXPECT_EQ(std::memcmp(ip + 8, address, 16), 0) << "from the address";
    EXPECT_EQ(std::memcmp(ip + 24, dst, 16), 0);
    const uint8_t* m = ip + 40;
    EXPECT_EQ(m[0], 136);
    EXPECT_EQ(m[4], flags);
    EXPECT_EQ(std::memcmp(m + 8, address, 16), 0);
    EXPECT_EQ(m[24], 2) << "target link-layer address option";
    EXPECT_EQ(std::memcmp(m + 26, OUR_MAC, 6), 0);
    EXPECT_TRUE(icmpv6_checksum_ok(f));
}

/* Override, not solicited, to all nodes. */
void expect_unsolicited_advert(const std::vector<uint8_t>& f, const uint8_t* address)
{
    const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
    const uint8_t all_nodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    expect_advert(f, all_nodes_mac, all_nodes, address, 0x20);
}

TEST(RoceNeighbour, AddressesSetAreAnnouncedToTheLink)
{
    Rig r;
    ASSERT_EQ(r.announced.size(), 2u) << "the IPv4 address and the link-local one";
    const auto& a = r.announced[0];
    EXPECT_EQ(std::memcmp(a.data(), "\xff\xff\xff\xff\xff\xff", 6), 0) << "broadcast";
    EXPECT_EQ(std::memcmp(a.data() + 6, OUR_MAC, 6), 0);
    EXPECT_EQ(a[21], 1) << "an ARP request (RFC 5227's announcement)";
    EXPECT_EQ(std::memcmp(a.data() + 22, OUR_MAC, 6), 0);
    EXPECT_EQ(std::memcmp(a.data() + 28, OUR_V4, 4), 0) << "our address as the sender's";
    EXPECT_EQ(std::memcmp(a.data() + 32, "\0\0\0\0\0\0", 6), 0);
    EXPECT_EQ(std::memcmp(a.data() + 38, OUR_V4, 4), 0) << "and as the target";
    expect_unsolicited_advert(r.announced[1], OUR_LL);

    SetAddressesRamrodData d{};
    d.num_ipv6 = 2;
    std::memcpy(d.ipv6[0], PEER_V6, 16);
    d.ipv6[1][0] = 0xfd, d.ipv6[1][15] = 0x44;
    r.n.set_addresses(d);
    const auto again = r.sent();
    ASSERT_EQ(again.size(), 3u) << "no IPv4 address now: the link-local and both IPv6 ones";
    expect_unsolicited_advert(again[0], OUR_LL);
    expect_unsolicited_advert(again[1], d.ipv6[0]);
    expect_unsolicited_advert(again[2], d.ipv6[1]);
}

TEST(RoceNeighbour, ArpRequestsForOurAddressAreAnswered)
{
    Rig r;
    const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    EXPECT_TRUE(r.feed(arp(1, bcast, PEER, PEER_V4, OUR_V4)).empty());
    auto out = r.sent();
    ASSERT_EQ(out.size(), 1u);
    const auto& f = out[0];
    EXPECT_EQ(f.size(), 60u);
    EXPECT_EQ(std::memcmp(f.data(), PEER, 6), 0) << "to the asker";
    EXPECT_EQ(std::memcmp(f.data() + 6, OUR_MAC, 6), 0);
    EXPECT_EQ(f[21], 2) << "a reply";
    EXPECT_EQ(std::memcmp(f.data() + 22, OUR_MAC, 6), 0) << "sender hardware address";
    EXPECT_EQ(std::memcmp(f.data() + 28, OUR_V4, 4), 0);
    EXPECT_EQ(std::memcmp(f.data() + 32, PEER, 6), 0);
    EXPECT_EQ(std::memcmp(f.data() + 38, PEER_V4, 4), 0);

    const uint8_t other[4] = {10, 0, 0, 8};
    r.feed(arp(1, bcast, PEER, PEER_V4, other));
    EXPECT_TRUE(r.sent().empty()) << "not our address";
}

TEST(RoceNeighbour, SolicitationsForOurLinkLocalAddressAreAdvertised)
{
    Rig r;
    const uint8_t group[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0x00, 0x00, 0x07};
    r.feed(nd(135, PEER, PEER_V6, group, OUR_LL));
    auto out = r.sent();
    ASSERT_EQ(out.size(), 1u);
    /* To the solicitation's source link-layer address; solicited, override. */
    expect_advert(out[0], PEER, PEER_V6, OUR_LL, 0x60);

    /* Duplicate address detection: to all nodes, not solicited. */
    const uint8_t unspecified[16] = {};
    r.feed(nd(135, PEER, unspecified, group, OUR_LL));
    out = r.sent();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][14 + 24], 0xff);
    EXPECT_EQ(out[0][14 + 39], 1);
    EXPECT_EQ(out[0][14 + 40 + 4], 0x20);

    r.feed(nd(135, PEER, PEER_V6, group, OUR_LL, 64));
    EXPECT_TRUE(r.sent().empty()) << "a forwarded solicitation (hop limit 64) is not valid";
    r.feed(nd(135, PEER, PEER_V6, group, PEER_V6));
    EXPECT_TRUE(r.sent().empty()) << "not our address";
}

TEST(RoceNeighbour, QuestionsGoOutAndTheirAnswersComeBack)
{
    Rig r;
    ResolveNeighbourRamrodData q{};
    q.ip_version = IP_VERSION_4;
    q.tag = 77;
    std::memcpy(q.target + 12, PEER_V4, 4);
    std::memcpy(q.source + 12, OUR_V4, 4);
    r.n.ask(q);
    auto out = r.sent();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][0], 0xff) << "broadcast";
    EXPECT_EQ(out[0][21], 1) << "a request";
    EXPECT_EQ(std::memcmp(out[0].data() + 38, PEER_V4, 4), 0);
    auto answers = r.feed(arp(2, OUR_MAC, PEER, PEER_V4, OUR_V4));
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].first, std::vector<uint8_t>(PEER, PEER + 6));
    EXPECT_EQ(answers[0].second, 77);
    EXPECT_TRUE(r.feed(arp(2, OUR_MAC, PEER, PEER_V4, OUR_V4)).empty()) << "answered once";

    q = {};
    q.ip_version = IP_VERSION_6;
    q.tag = 78;
    std::memcpy(q.target, PEER_V6, 16);
    std::memcpy(q.source, OUR_LL, 16);
    r.n.ask(q);
    out = r.sent();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0][0], 0x33);
    EXPECT_EQ(out[0][2], 0xff);
    EXPECT_EQ(out[0][5], 9) << "the solicited-node group of ...:9";
    EXPECT_EQ(out[0][14 + 40], 135);
    EXPECT_TRUE(icmpv6_checksum_ok(out[0]));
    answers = r.feed(nd(136, PEER, PEER_V6, OUR_LL, PEER_V6));
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0].second, 78);
}

/* RESOLVE_NEIGHBOUR for 10.0.0.`host` from OUR_V4. */
ResolveNeighbourRamrodData question_for(uint8_t host, uint16_t tag)
{
    ResolveNeighbourRamrodData q{};
    q.ip_version = IP_VERSION_4;
    q.tag = tag;
    const uint8_t target[4] = {10, 0, 0, host};
    std::memcpy(q.target + 12, target, 4);
    std::memcpy(q.source + 12, OUR_V4, 4);
    return q;
}

TEST(RoceNeighbour, ATargetAskedAgainKeepsOneQuestionWithTheLatestTag)
{
    Rig r;
    /* More times than the adapter keeps questions: ecore asks again each
     * time an answer is late. */
    for (uint16_t tag = 1; tag <= 40; tag++) {
        r.n.ask(question_for(PEER_V4[3], tag));
        EXPECT_EQ(r.sent().size(), 1u) << "each asking is an ARP request";
    }
    const auto answers = r.feed(arp(2, OUR_MAC, PEER, PEER_V4, OUR_V4));
    ASSERT_EQ(answers.size(), 1u) << "one question, answered once";
    EXPECT_EQ(answers[0].second, 40);
}

TEST(RoceNeighbour, QuestionsNobodyAnswersMakeRoomOldestFirst)
{
    Rig r;
    const auto ask = [&](uint8_t host) {
        r.n.ask(question_for(host, host));
        r.sent();
    };
    for (uint8_t host = 100; host < 140; host++) /* 40 dead addresses */
        ask(host);
    ask(9); /* PEER_V4, after them */
    const auto answers = r.feed(arp(2, OUR_MAC, PEER, PEER_V4, OUR_V4));
    ASSERT_EQ(answers.size(), 1u) << "dead addresses' questions do not crowd out a live one";
    EXPECT_EQ(answers[0].second, 9);
    const uint8_t oldest[4] = {10, 0, 0, 100}, recent[4] = {10, 0, 0, 139};
    EXPECT_TRUE(r.feed(arp(2, OUR_MAC, PEER, oldest, OUR_V4)).empty()) << "the oldest made room";
    EXPECT_EQ(r.feed(arp(2, OUR_MAC, PEER, recent, OUR_V4)).size(), 1u) << "a recent one is still asked";
}

TEST(RoceNeighbour, EventDataCarriesTheMacAndTheTag)
{
    const uint8_t mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    const uint64_t data = neighbour_event(mac, 0xbeef);
    uint8_t back[6];
    neighbour_event_mac(data, back);
    EXPECT_EQ(std::memcmp(back, mac, 6), 0);
    EXPECT_EQ(neighbour_event_tag(data), 0xbeef);
}

} // namespace
