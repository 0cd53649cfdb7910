/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 on the wire: PSN arithmetic across the 24-bit wrap, the RC
 * opcodes' headers and segmentation, the responder's PSN window, opcode
 * sequence and length rules, the transport headers' bit layouts,
 * the timer encodings, and the encapsulation with its ICRC — the last
 * against a frame scapy.contrib.roce built (an implementation no one here
 * wrote), and by the fields the ICRC must and must not cover.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "frame/checksum.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/psn.h"
#include "roce/request_checks.h"
#include "roce/timers.h"
#include "roce/transport.h"

namespace {

using namespace cna::fw;
using namespace cna::fw::roce;
using cna::hsi::rdma::RocePath;

std::vector<uint8_t> from_hex(const std::string& hex)
{
    std::vector<uint8_t> v;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        v.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    return v;
}

TEST(RocePsn, AddWrapsAt24Bits)
{
    EXPECT_EQ(psn_add(0xfffffe, 1), 0xffffffu);
    EXPECT_EQ(psn_add(0xffffff, 1), 0u);
    EXPECT_EQ(psn_add(0xfffff0, 0x20), 0x10u);
}

TEST(RocePsn, DistanceIsSignedWithinHalfTheSpace)
{
    EXPECT_EQ(psn_diff(5, 3), 2);
    EXPECT_EQ(psn_diff(3, 5), -2);
    EXPECT_EQ(psn_diff(0x000002, 0xfffffe), 4);
    EXPECT_EQ(psn_diff(0xfffffe, 0x000002), -4);
    EXPECT_EQ(psn_diff(0x7fffff, 0), 0x7fffff);
    EXPECT_EQ(psn_diff(0x800000, 0), -0x800000);
    EXPECT_TRUE(psn_before(0xffffff, 0));
    EXPECT_TRUE(psn_after(0, 0xffffff));
    EXPECT_FALSE(psn_before(7, 7));
    EXPECT_FALSE(psn_after(7, 7));
}

TEST(RoceOpcodes, EveryMessageStartsAndEnds)
{
    int valid = 0;
    for (unsigned o = 0; o < 256; o++) {
        uint16_t f = opcode_flags(static_cast<uint8_t>(o));
        if (!(f & opf::VALID))
            continue;
        valid++;
        /* A kind of operation each, payload only where data moves. */
        int kinds = !!(f & opf::SEND) + !!(f & opf::WRITE) + !!(f & opf::READ) + !!(f & opf::ATOMIC);
        EXPECT_LE(kinds, 1) << o;
        EXPECT_EQ((f & opf::RETH) != 0, o == op::WRITE_FIRST || o == op::WRITE_ONLY || o == op::WRITE_ONLY_IMM ||
                                            o == op::READ_REQUEST)
            << o;
    }
    EXPECT_EQ(valid, 23) << "RC's 21 and UD's SEND ONLY with and without immediate";
    EXPECT_EQ(opcode_flags(0x15), 0);
    EXPECT_EQ(opcode_flags(0x24), 0) << "UC: not here";
    EXPECT_EQ(ext_headers_len(opcode_flags(op::UD_SEND_ONLY)), DETH_LEN);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::UD_SEND_ONLY_IMM)), DETH_LEN + IMMDT_LEN);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::WRITE_ONLY_IMM)), RETH_LEN + IMMDT_LEN);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::ATOMIC_ACKNOWLEDGE)), AETH_LEN + ATOMIC_ACK_ETH_LEN);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::CMP_SWAP)), ATOMIC_ETH_LEN);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::READ_RESPONSE_MIDDLE)), 0u);
    EXPECT_EQ(ext_headers_len(opcode_flags(op::READ_RESPONSE_LAST)), AETH_LEN);
}

TEST(RoceOpcodes, SegmentationAcrossTheMtu)
{
    constexpr uint32_t mtu = 1024;
    EXPECT_EQ(packets_of(0, mtu), 1u);
    EXPECT_EQ(packets_of(1, mtu), 1u);
    EXPECT_EQ(packets_of(mtu - 1, mtu), 1u);
    EXPECT_EQ(packets_of(mtu, mtu), 1u);
    EXPECT_EQ(packets_of(mtu + 1, mtu), 2u);
    EXPECT_EQ(packets_of(1u << 20, mtu), 1024u);
    EXPECT_EQ(packets_of(1ull << 31, 4096), 1u << 19);

    EXPECT_EQ(send_opcode(position(0, 1), false), op::SEND_ONLY);
    EXPECT_EQ(send_opcode(position(0, 1), true), op::SEND_ONLY_IMM);
    std::vector<uint8_t> seq;
    for (uint32_t i = 0; i < 4; i++)
        seq.push_back(write_opcode(position(i, 4), true));
    EXPECT_EQ(seq, (std::vector<uint8_t>{op::WRITE_FIRST, op::WRITE_MIDDLE, op::WRITE_MIDDLE, op::WRITE_LAST_IMM}));
    EXPECT_EQ(send_opcode(position(1, 2), false), op::SEND_LAST);
    EXPECT_EQ(read_response_opcode(position(0, 2)), op::READ_RESPONSE_FIRST);
    EXPECT_EQ(read_response_opcode(position(0, 1)), op::READ_RESPONSE_ONLY);
}

TEST(RoceHeaders, BthBitLayout)
{
    Bth b{.opcode = op::SEND_ONLY_IMM, .solicited = true, .migration = true, .pad = 3, .pkey = 0x8001,
          .fecn = true, .becn = false, .dest_qp = 0xabcdef, .ack_request = true, .psn = 0x123456};
    uint8_t p[BTH_LEN];
    write_bth(p, b);
    EXPECT_EQ(std::vector<uint8_t>(p, p + BTH_LEN),
              (std::vector<uint8_t>{0x05, 0xf0, 0x80, 0x01, 0x80, 0xab, 0xcd, 0xef, 0x80, 0x12, 0x34, 0x56}));
    EXPECT_EQ(read_bth(p), b);
    EXPECT_EQ(bth_tver(p), 0);
    b.dest_qp = 0x1ffffff; /* only 24 bits go out */
    write_bth(p, b);
    EXPECT_EQ(read_bth(p).dest_qp, 0xffffffu);
}

TEST(RoceHeaders, ExtendedHeadersRoundTrip)
{
    uint8_t p[ATOMIC_ETH_LEN];
    Reth r{0x0102030405060708ull, 0xa1b2c3d4, 0x10000};
    write_reth(p, r);
    EXPECT_EQ(p[0], 0x01);
    EXPECT_EQ(p[8], 0xa1);
    EXPECT_EQ(p[13], 0x01);
    EXPECT_EQ(read_reth(p), r);
    AtomicEth a{0x1000, 0x2233, 0x1111222233334444ull, 0x5555666677778888ull};
    write_atomic_eth(p, a);
    EXPECT_EQ(p[12], 0x11);
    EXPECT_EQ(p[27], 0x88);
    EXPECT_EQ(read_atomic_eth(p), a);
    Aeth k{syndrome::nak(NakCode::remote_access_error), 0x00abcd};
    write_aeth(p, k);
    EXPECT_EQ(p[0], 0x62);
    EXPECT_EQ(read_aeth(p), k);
    /* DETH: the Q_Key, a reserved byte, the source QP. */
    Deth d{0x80010000u, 0x123456};
    write_deth(p, d);
    EXPECT_EQ(p[0], 0x80);
    EXPECT_EQ(p[4], 0x00);
    EXPECT_EQ(p[5], 0x12);
    EXPECT_EQ(p[7], 0x56);
    EXPECT_EQ(read_deth(p), d);
}

TEST(RoceHeaders, SyndromeKinds)
{
    EXPECT_EQ(syndrome::kind(syndrome::ack()), AethKind::ack);
    EXPECT_EQ(syndrome::value(syndrome::ack()), syndrome::NO_CREDITS_ADVERTISED);
    EXPECT_EQ(syndrome::kind(syndrome::rnr_nak(14)), AethKind::rnr_nak);
    EXPECT_EQ(syndrome::value(syndrome::rnr_nak(14)), 14);
    EXPECT_EQ(syndrome::kind(syndrome::nak(NakCode::psn_sequence_error)), AethKind::nak);
    EXPECT_EQ(syndrome::nak(NakCode::invalid_request), 0x61);
    EXPECT_EQ(syndrome::kind(0x40), AethKind::reserved);
}

TEST(RoceTimers, Encodings)
{
    EXPECT_EQ(ack_timeout_ns(0), 0u);
    EXPECT_EQ(ack_timeout_ns(14), 4096ull << 14); /* ~67 ms */
    EXPECT_EQ(rnr_timer_ns(1), 10'000u);
    EXPECT_EQ(rnr_timer_ns(12), 640'000u);
    EXPECT_EQ(rnr_timer_ns(0), 655'360'000u);
    for (uint8_t c = 2; c < 32; c++)
        EXPECT_GT(rnr_timer_ns(c), rnr_timer_ns(c - 1)) << int(c);
}

RocePath path_v4()
{
    RocePath p{};
    const uint8_t dst[6] = {2, 0, 0, 0, 0, 2}, src[6] = {2, 0, 0, 0, 0, 1};
    std::memcpy(p.dst_mac, dst, 6);
    std::memcpy(p.src_mac, src, 6);
    p.vlan_tci = cna::hsi::rdma::NO_VLAN;
    p.ip_version = cna::hsi::rdma::IP_VERSION_4;
    p.traffic_class = 2;
    p.hop_limit = 64;
    p.udp_src_port = 0xc000;
    const uint8_t sip[4] = {10, 0, 0, 1}, dip[4] = {10, 0, 0, 2};
    std::memcpy(p.src_ip + 12, sip, 4);
    std::memcpy(p.dst_ip + 12, dip, 4);
    return p;
}

/* SEND ONLY of 16 bytes; built by scapy 2.5:
 * Ether()/IP(tos=2, ttl=64, flags="DF", id=0)/UDP(sport=0xc000, chksum=0)
 * /BTH(opcode=4, psn=0x123456, dqpn=0x41, ackreq=1, icrc=None)/bytes(range(16)) */
const char* const SCAPY_SEND_ONLY =
    "02000000000202000000000108004502003c00004000401126ad0a0000010a000002c00012b7002800000400ffff0000004180123456"
    "000102030405060708090a0b0c0d0e0fc89942ff";

std::vector<uint8_t> build(const RocePath& path, const Bth& bth, uint32_t payload)
{
    std::vector<uint8_t> f(encap_len(path) + BTH_LEN + payload + ICRC_LEN);
    FrameLayout l = write_encap(f.data(), path, BTH_LEN + payload + ICRC_LEN);
    EXPECT_EQ(l.l3_end, f.size());
    write_bth(f.data() + l.l4_off + UDP_HLEN, bth);
    for (uint32_t i = 0; i < payload; i++)
        f[l.l4_off + UDP_HLEN + BTH_LEN + i] = static_cast<uint8_t>(i);
    icrc_insert(f.data(), l);
    return f;
}

TEST(RoceEncap, Ipv4FrameMatchesScapy)
{
    Bth bth{.opcode = op::SEND_ONLY, .dest_qp = 0x41, .ack_request = true, .psn = 0x123456};
    EXPECT_EQ(build(path_v4(), bth, 16), from_hex(SCAPY_SEND_ONLY));
}

TEST(RoceEncap, RecognisedAndParsedAsTheWriterLaidItOut)
{
    auto f = from_hex(SCAPY_SEND_ONLY);
    FrameLayout l;
    ASSERT_TRUE(parse_frame(f.data(), static_cast<uint32_t>(f.size()), l));
    EXPECT_TRUE(is_roce(f.data(), l));
    EXPECT_TRUE(icrc_ok(f.data(), l));
    f[l.l4_off + 3] = 0xb8; /* UDP port 4792 */
    EXPECT_FALSE(is_roce(f.data(), l));
    f = from_hex(SCAPY_SEND_ONLY);
    f.resize(l.l4_off + UDP_HLEN + BTH_LEN + ICRC_LEN - 1);
    ASSERT_TRUE(parse_frame(f.data(), static_cast<uint32_t>(f.size()), l));
    EXPECT_FALSE(is_roce(f.data(), l)); /* no room for a BTH and an ICRC */
}

/* What routers may change leaves the ICRC as it is; anything else breaks
 * it. `skip` (when not 0): a byte only partly covered, checked apart. */
void expect_icrc_coverage(std::vector<uint8_t> f, const std::vector<uint32_t>& variant_offsets, uint32_t skip = 0)
{
    FrameLayout l;
    ASSERT_TRUE(parse_frame(f.data(), static_cast<uint32_t>(f.size()), l));
    ASSERT_TRUE(icrc_ok(f.data(), l));
    for (uint32_t off : variant_offsets) {
        auto g = f;
        g[off] ^= 0x5a;
        EXPECT_TRUE(icrc_ok(g.data(), l)) << "byte " << off << " must not be covered";
    }
    for (uint32_t off = l.l2_len; off < l.l3_end - ICRC_LEN; off++) {
        bool variant = off == skip;
        for (uint32_t v : variant_offsets)
            variant |= v == off;
        if (variant)
            continue;
        auto g = f;
        g[off] ^= 0x01;
        EXPECT_FALSE(icrc_ok(g.data(), l)) << "byte " << off << " must be covered";
    }
}

TEST(RoceIcrc, Ipv4CoversAllButTheVariantFields)
{
    auto f = from_hex(SCAPY_SEND_ONLY);
    const uint32_t ip = 14, udp = 34, bth = 42;
    expect_icrc_coverage(f, {ip + 1, ip + 8, ip + 10, ip + 11, udp + 6, udp + 7, bth + 4});
}

/* CRC-32 a bit at a time, as the IEEE 802.3 definition reads. */
uint32_t bitwise_crc32(const std::vector<uint8_t>& data)
{
    uint32_t crc = 0xffffffff;
    for (uint8_t byte : data) {
        crc ^= byte;
        for (int bit = 0; bit < 8; bit++)
            crc = crc & 1 ? crc >> 1 ^ 0xedb88320 : crc >> 1;
    }
    return ~crc;
}

TEST(RoceIcrc, EveryPayloadLengthMatchesTheDefinition)
{
    /* Short packets are taken in one piece (lengthened with zeros), long
     * ones in two: all must be the CRC of the masked packet. */
    std::vector<uint32_t> payloads;
    for (uint32_t payload = 0; payload <= 300; payload++)
        payloads.push_back(payload);
    for (uint32_t payload : {1000u, 4096u})
        payloads.push_back(payload);
    for (uint32_t payload : payloads) {
        auto f = build(path_v4(), Bth{.opcode = op::SEND_ONLY, .dest_qp = 0x41, .psn = 7}, payload);
        const uint32_t ip = 14, udp = 34, bth = 42;
        std::vector<uint8_t> masked(8 + f.size() - ICRC_LEN - ip, 0xff);
        std::copy(f.begin() + ip, f.end() - ICRC_LEN, masked.begin() + 8);
        for (uint32_t off : {ip + 1, ip + 8, ip + 10, ip + 11, udp + 6, udp + 7, bth + 4})
            masked[8 + off - ip] = 0xff;
        EXPECT_EQ(load_le32(f.data() + f.size() - ICRC_LEN), bitwise_crc32(masked)) << payload << " bytes";
    }
}

TEST(RoceIcrc, Ipv6CoversAllButTheVariantFieldsWithAZeroUdpChecksum)
{
    RocePath p = path_v4();
    p.ip_version = cna::hsi::rdma::IP_VERSION_6;
    p.vlan_tci = 0x2005;
    p.flow_label = 0x12345;
    const uint8_t sip[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    const uint8_t dip[16] = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    std::memcpy(p.src_ip, sip, 16);
    std::memcpy(p.dst_ip, dip, 16);
    auto f = build(p, Bth{.opcode = op::WRITE_ONLY, .dest_qp = 0x42, .psn = 0xfffffe}, RETH_LEN + 20);
    FrameLayout l;
    ASSERT_TRUE(parse_frame(f.data(), static_cast<uint32_t>(f.size()), l));
    EXPECT_EQ(l.vlan_tci, 0x2005);
    EXPECT_EQ(l.l3, L3::ipv6);
    EXPECT_TRUE(is_roce(f.data(), l));
    const uint32_t ip = 18, udp = 58, bth = 66;
    EXPECT_EQ(f[udp + 6] | f[udp + 7], 0) << "no UDP checksum: the ICRC covers the packet";
    /* Version stays covered; traffic class and flow label do not. */
    EXPECT_EQ(f[ip] >> 4, 6);
    std::vector<uint8_t> g = f;
    g[ip] ^= 0x0f;
    EXPECT_TRUE(icrc_ok(g.data(), l));
    g[ip] ^= 0x10;
    EXPECT_FALSE(icrc_ok(g.data(), l));
    expect_icrc_coverage(f, {ip + 1, ip + 2, ip + 3, ip + 7, udp + 6, udp + 7, bth + 4}, ip);
}

} // namespace

namespace {

using namespace cna::fw::roce;

TEST(RoceResponderChecks, PsnWindowAcrossTheWrap)
{
    EXPECT_EQ(classify_psn(100, 100), PsnClass::expected);
    EXPECT_EQ(classify_psn(99, 100), PsnClass::duplicate);
    EXPECT_EQ(classify_psn(101, 100), PsnClass::ahead);
    EXPECT_EQ(classify_psn(0xffffff, 0), PsnClass::duplicate);
    EXPECT_EQ(classify_psn(0, 0xffffff), PsnClass::ahead);
    EXPECT_EQ(classify_psn(0x000005, 0xfffffa), PsnClass::ahead);
    EXPECT_EQ(classify_psn(0xfffffa, 0x000005), PsnClass::duplicate);
    /* Half the space away is behind, not ahead. */
    EXPECT_EQ(classify_psn(0x800000, 0), PsnClass::duplicate);
    EXPECT_EQ(classify_psn(0x7fffff, 0), PsnClass::ahead);
}

TEST(RoceResponderChecks, OpcodeSequences)
{
    using enum InProgress;
    EXPECT_TRUE(opcode_in_sequence(none, op::SEND_FIRST));
    EXPECT_TRUE(opcode_in_sequence(none, op::SEND_ONLY_IMM));
    EXPECT_TRUE(opcode_in_sequence(none, op::READ_REQUEST));
    EXPECT_TRUE(opcode_in_sequence(none, op::FETCH_ADD));
    EXPECT_FALSE(opcode_in_sequence(none, op::SEND_MIDDLE)) << "no message started";
    EXPECT_FALSE(opcode_in_sequence(none, op::WRITE_LAST));
    EXPECT_TRUE(opcode_in_sequence(send, op::SEND_MIDDLE));
    EXPECT_TRUE(opcode_in_sequence(send, op::SEND_LAST_IMM));
    EXPECT_FALSE(opcode_in_sequence(send, op::WRITE_MIDDLE)) << "another kind of message";
    EXPECT_FALSE(opcode_in_sequence(send, op::SEND_FIRST)) << "the message did not end";
    EXPECT_FALSE(opcode_in_sequence(write, op::READ_REQUEST));
    EXPECT_TRUE(opcode_in_sequence(write, op::WRITE_LAST));
    EXPECT_FALSE(opcode_in_sequence(none, op::ACKNOWLEDGE)) << "not a request";
    EXPECT_FALSE(opcode_in_sequence(none, op::READ_RESPONSE_ONLY));
    EXPECT_FALSE(opcode_in_sequence(none, 0x15));
    EXPECT_FALSE(opcode_in_sequence(none, 0x64)) << "UD";

    EXPECT_EQ(after(op::SEND_FIRST), send);
    EXPECT_EQ(after(op::SEND_MIDDLE), send);
    EXPECT_EQ(after(op::SEND_LAST), none);
    EXPECT_EQ(after(op::WRITE_FIRST), write);
    EXPECT_EQ(after(op::WRITE_ONLY), none);
    EXPECT_EQ(after(op::CMP_SWAP), none);
}

TEST(RoceResponderChecks, PayloadLengthsAgainstTheMtu)
{
    constexpr uint32_t mtu = 1024;
    EXPECT_TRUE(payload_length_ok(op::SEND_ONLY, 0, mtu));
    EXPECT_TRUE(payload_length_ok(op::SEND_ONLY, mtu, mtu));
    EXPECT_FALSE(payload_length_ok(op::SEND_ONLY, mtu + 1, mtu));
    EXPECT_TRUE(payload_length_ok(op::SEND_FIRST, mtu, mtu));
    EXPECT_FALSE(payload_length_ok(op::SEND_FIRST, mtu - 1, mtu));
    EXPECT_FALSE(payload_length_ok(op::WRITE_MIDDLE, mtu - 4, mtu));
    EXPECT_TRUE(payload_length_ok(op::WRITE_LAST, 1, mtu));
    EXPECT_FALSE(payload_length_ok(op::WRITE_LAST, 0, mtu));
    EXPECT_FALSE(payload_length_ok(op::WRITE_LAST_IMM, mtu + 1, mtu));
    EXPECT_TRUE(payload_length_ok(op::READ_REQUEST, 0, mtu));
    EXPECT_FALSE(payload_length_ok(op::READ_REQUEST, 4, mtu));
    EXPECT_FALSE(payload_length_ok(op::FETCH_ADD, 8, mtu));
    EXPECT_TRUE(atomic_aligned(0x1000));
    EXPECT_FALSE(atomic_aligned(0x1004));
}

} // namespace
