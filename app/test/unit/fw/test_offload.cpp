/* SPDX-License-Identifier: BSD-3-Clause
 * Tx offloads seen from the Rx side of a loopback: VLAN insert, IPv4 header
 * and TCP/UDP checksums (IPv4, IPv6), LSO. Malformed BD chains are
 * test_validation.cpp's.
 */
#include <gtest/gtest.h>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

class Offload : public L2PortTest {
protected:
    void SetUp() override { ASSERT_NO_FATAL_FAILURE(bring_up("offload")); }
};

uint16_t be16(const std::vector<uint8_t>& f, size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }
uint32_t be32(const std::vector<uint8_t>& f, size_t at)
{
    return uint32_t{be16(f, at)} << 16 | be16(f, at + 2);
}

TEST_F(Offload, InsertsChecksums)
{
    auto tcp = tcp4_frame(BCAST, PEER_MAC, 0x01020304, 0x05060708, 1, 2, 77);
    auto udp = udp4_frame(BCAST, PEER_MAC, 0x01020304, 0x05060708, 1, 2, 33);
    auto tcp6 = tcp6_frame(BCAST, PEER_MAC, 5, 6, 101);
    for (auto* f : {&tcp, &udp}) {
        (*f)[24] = (*f)[25] = 0; /* IP checksum */
    }
    tcp[50] = tcp[51] = 0x55;
    udp[40] = udp[41] = 0x55;
    tcp6[70] = tcp6[71] = 0;
    FakeDriver::TxOptions csum{txbd::IP_CSUM | txbd::L4_CSUM, 0, 0, 2, 0};
    drv->send(0, tcp, csum);
    drv->send(0, udp, csum);
    drv->send(0, tcp6, csum);
    auto frames = drv->rx_wait(0, 3);
    ASSERT_EQ(frames.size(), 3u);
    for (auto& f : frames) {
        EXPECT_FALSE(f.cqe.pars_flags & (pars::IP_CSUM_BAD | pars::L4_CSUM_BAD));
        EXPECT_TRUE(f.cqe.pars_flags & pars::L4_CSUM_CHECKED);
        EXPECT_TRUE(l4_valid(f.data));
    }
    EXPECT_TRUE(ipv4_header_valid(frames[0].data));
    EXPECT_TRUE(ipv4_header_valid(frames[1].data));
    EXPECT_EQ(frames[2].cqe.pars_flags & pars::L3_MASK, pars::L3_IPV6);
}

TEST_F(Offload, InsertsVlanTags)
{
    auto f = udp4_frame(BCAST, PEER_MAC, 1, 2, 3, 4, 20);
    drv->send(0, f, FakeDriver::TxOptions{txbd::VLAN_INSERT, 0x0123, 0, 1, 0});
    auto frames = drv->rx_wait(0, 1);
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].data, with_vlan(f, 0x0123));
    EXPECT_TRUE(frames[0].cqe.pars_flags & pars::VLAN_PRESENT);
}

TEST_F(Offload, SegmentsLargeTcpPackets)
{
    const uint16_t mss = 1000;
    auto big = tcp4_frame(BCAST, PEER_MAC, 0x0a000001, 0x0a000002, 1234, 80, 3500, 0x80 | 0x08 | 0x01 | 0x10);
    uint32_t seq = be32(big, 38);
    uint16_t ip_id = be16(big, 18);
    drv->send(0, big, FakeDriver::TxOptions{txbd::LSO, 0, mss, 4, 0});
    auto segs = drv->rx_wait(0, 4);
    ASSERT_EQ(segs.size(), 4u);
    size_t payload = 0;
    for (size_t i = 0; i < segs.size(); i++) {
        const auto& s = segs[i].data;
        size_t len = i < 3 ? mss : 500;
        ASSERT_EQ(s.size(), 54 + len);
        EXPECT_EQ(be16(s, 16), 40 + len) << "IP total length";
        EXPECT_EQ(be16(s, 18), static_cast<uint16_t>(ip_id + i)) << "IP id";
        EXPECT_EQ(be32(s, 38), seq + i * mss) << "TCP sequence";
        uint8_t flags = s[47];
        EXPECT_EQ(bool(flags & 0x01), i == 3) << "FIN on the last segment only";
        EXPECT_EQ(bool(flags & 0x08), i == 3) << "PSH on the last segment only";
        EXPECT_EQ(bool(flags & 0x80), i == 0) << "CWR on the first segment only";
        EXPECT_TRUE(flags & 0x10) << "ACK everywhere";
        EXPECT_TRUE(ipv4_header_valid(s));
        EXPECT_TRUE(l4_valid(s));
        EXPECT_EQ(0, std::memcmp(&s[54], &big[54 + payload], len));
        payload += len;
    }
    EXPECT_EQ(drv->vport_stats(0).tx_bcast_pkts, 4u);
}

} // namespace
} // namespace cna::fw::test
