/* SPDX-License-Identifier: BSD-3-Clause
 * The VF-PF channel's TLV lists and the bulletin board: what a PF accepts
 * from a VF and a VF from its PF, byte by byte.
 */
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ecore_iov_tlv.h"

namespace {

using namespace cna::hsi::iov;
using cna::ecore::iov::bulletin_read;
using cna::ecore::iov::bulletin_seal;
using cna::ecore::iov::BULLETIN_MIN_SIZE;
using cna::ecore::iov::TlvReader;
using cna::ecore::iov::TlvWriter;
using Find = TlvReader::Find;

std::vector<uint8_t> acquire_message(uint8_t rx_queues)
{
    std::vector<uint8_t> buf(CHANNEL_REQUEST_MAX);
    TlvWriter w(buf);
    AcquireRequest req{};
    req.hdr.reply_address = 0x1234000;
    req.rx_queues = rx_queues;
    req.bulletin_size = sizeof(Bulletin);
    EXPECT_TRUE(w.add(TlvType::acquire, req));
    EXPECT_TRUE(w.end());
    buf.resize(w.size());
    return buf;
}

/* Appends a raw TLV header (and `body` zero bytes) to a message. */
void raw_tlv(std::vector<uint8_t>& msg, uint16_t type, uint16_t length, std::size_t body)
{
    const TlvHeader h{type, length};
    const auto* p = reinterpret_cast<const uint8_t*>(&h);
    msg.insert(msg.end(), p, p + sizeof h);
    msg.insert(msg.end(), body, 0);
}

TEST(IovTlv, AWrittenRequestReadsBack)
{
    const std::vector<uint8_t> msg = acquire_message(3);
    EXPECT_EQ(msg.size(), sizeof(AcquireRequest) + sizeof(TlvHeader));
    TlvReader r(msg);
    ASSERT_EQ(r.error(), nullptr);
    EXPECT_EQ(r.first_type(), TlvType::acquire);
    AcquireRequest req;
    ASSERT_EQ(r.find(TlvType::acquire, &req), Find::found);
    EXPECT_EQ(req.hdr.tlv.length, sizeof(AcquireRequest));
    EXPECT_EQ(req.hdr.reply_address, 0x1234000u);
    EXPECT_EQ(req.rx_queues, 3);
    VportRxModeTlv mode;
    EXPECT_EQ(r.find(TlvType::vport_rx_mode, &mode), Find::absent);
}

TEST(IovTlv, UnknownTypesAreSkippedByTheirLength)
{
    std::vector<uint8_t> msg = acquire_message(1);
    msg.resize(msg.size() - sizeof(TlvHeader)); /* drop list_end */
    raw_tlv(msg, 0x4242, 12, 8);               /* from a newer VF */
    std::vector<uint8_t> tail(sizeof(VportVlanStripTlv) + sizeof(TlvHeader));
    TlvWriter w(tail);
    ASSERT_TRUE(w.add(TlvType::vport_vlan_strip, VportVlanStripTlv{{}, 1, {}}));
    ASSERT_TRUE(w.end());
    msg.insert(msg.end(), tail.begin(), tail.end());
    TlvReader r(msg);
    ASSERT_EQ(r.error(), nullptr);
    EXPECT_EQ(r.unknown(), 1u);
    VportVlanStripTlv strip;
    ASSERT_EQ(r.find(TlvType::vport_vlan_strip, &strip), Find::found);
    EXPECT_EQ(strip.strip, 1);
}

TEST(IovTlv, ALongerTlvIsCutAShorterOneRefused)
{
    std::vector<uint8_t> msg;
    raw_tlv(msg, static_cast<uint16_t>(TlvType::update_mtu), sizeof(UpdateMtuRequest) + 8,
            sizeof(UpdateMtuRequest) + 8 - sizeof(TlvHeader));
    raw_tlv(msg, static_cast<uint16_t>(TlvType::vport_rx_mode), 4, 0); /* a header, no body */
    raw_tlv(msg, static_cast<uint16_t>(TlvType::list_end), 4, 0);
    TlvReader r(msg);
    ASSERT_EQ(r.error(), nullptr);
    UpdateMtuRequest mtu;
    EXPECT_EQ(r.find(TlvType::update_mtu, &mtu), Find::found);
    VportRxModeTlv mode;
    EXPECT_EQ(r.find(TlvType::vport_rx_mode, &mode), Find::too_short);
}

TEST(IovTlv, MalformedListsAreRefusedWithTheirReason)
{
    struct Case {
        const char* what;
        std::vector<uint8_t> msg;
        const char* error;
    };
    std::vector<Case> cases;
    cases.push_back({"empty", {}, "shorter than a TLV header"});
    std::vector<uint8_t> m;
    raw_tlv(m, 1, 6, 4);
    raw_tlv(m, static_cast<uint16_t>(TlvType::list_end), 4, 0);
    cases.push_back({"length 6", m, "a TLV length that is not a multiple of 4 of at least its header"});
    m.clear();
    raw_tlv(m, 1, 0, 0);
    cases.push_back({"length 0 (would loop)", m, "a TLV length that is not a multiple of 4 of at least its header"});
    m.clear();
    raw_tlv(m, 1, 64, 4);
    cases.push_back({"past the end", m, "a TLV running past the end of the message"});
    std::vector<uint8_t> no_end = acquire_message(1);
    no_end.resize(no_end.size() - sizeof(TlvHeader));
    cases.push_back({"no list_end", no_end, "no list_end TLV before the end of the message"});
    m.clear();
    raw_tlv(m, static_cast<uint16_t>(TlvType::list_end), 4, 0);
    cases.push_back({"only list_end", m, "no TLV before list_end"});
    for (const Case& c : cases) {
        TlvReader r(c.msg);
        ASSERT_NE(r.error(), nullptr) << c.what;
        EXPECT_STREQ(r.error(), c.error) << c.what;
        EXPECT_EQ(r.first_type(), TlvType::none) << c.what;
        AcquireRequest req;
        EXPECT_EQ(r.find(TlvType::acquire, &req), Find::absent) << c.what;
    }
}

TEST(IovTlv, TheWriterStopsAtItsBuffer)
{
    std::array<uint8_t, sizeof(AcquireRequest) + 2> buf{};
    TlvWriter w(buf);
    EXPECT_TRUE(w.add(TlvType::acquire, AcquireRequest{}));
    EXPECT_FALSE(w.end()); /* 2 bytes left */
    EXPECT_EQ(w.size(), sizeof(AcquireRequest));
}

TEST(IovBulletin, ASealedBoardReadsBackAndATornOneDoesNot)
{
    Bulletin board{};
    board.flags = BULLETIN_MAC_FORCED;
    board.mac[5] = 7;
    board.link_up = 1;
    bulletin_seal(board, sizeof board);
    EXPECT_EQ(board.version, 1u);
    bulletin_seal(board, sizeof board);
    EXPECT_EQ(board.version, 2u);
    std::array<uint8_t, sizeof(Bulletin)> dma{};
    std::memcpy(dma.data(), &board, sizeof board);
    Bulletin seen;
    ASSERT_TRUE(bulletin_read(dma, &seen));
    EXPECT_EQ(seen.version, 2u);
    EXPECT_EQ(seen.mac[5], 7);
    for (std::size_t byte : {std::size_t{4}, offsetof(Bulletin, link_up), offsetof(Bulletin, speed_mbps) + 1}) {
        auto torn = dma;
        torn[byte] ^= 0x40;
        EXPECT_FALSE(bulletin_read(torn, &seen)) << "byte " << byte;
    }
    std::array<uint8_t, sizeof(Bulletin)> never{};
    EXPECT_FALSE(bulletin_read(never, &seen)) << "version 0: the PF never wrote it";
}

TEST(IovBulletin, TheAgreedSizeBoundsWhatIsCoveredAndCopied)
{
    Bulletin board{};
    board.speed_mbps = 25000;
    board.reserved2[0] = 0xdead; /* past the agreed size: neither covered nor copied */
    bulletin_seal(board, BULLETIN_MIN_SIZE);
    EXPECT_EQ(board.size, BULLETIN_MIN_SIZE);
    std::array<uint8_t, sizeof(Bulletin)> dma{};
    std::memcpy(dma.data(), &board, sizeof board);
    Bulletin seen;
    ASSERT_TRUE(bulletin_read(dma, &seen));
    EXPECT_EQ(seen.speed_mbps, 25000u);
    EXPECT_EQ(seen.reserved2[0], 0u);
    /* A VF that allocated less than the board claims refuses it. */
    EXPECT_FALSE(bulletin_read(std::span(dma).first(BULLETIN_MIN_SIZE - 4), &seen));
    board.size = sizeof(Bulletin) + 64; /* a newer PF's, beyond the bytes read */
    std::memcpy(dma.data(), &board, sizeof board);
    EXPECT_FALSE(bulletin_read(dma, &seen));
}

} // namespace
