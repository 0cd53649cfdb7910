/* SPDX-License-Identifier: BSD-3-Clause
 * The bursts' test fixture: an L2 PF with configurable rings, numbered
 * frames, a batch of Tx BDs rung with one doorbell, and the tallies the
 * statistics are checked against (test_burst.cpp, test_burst_faults.cpp).
 */
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>

#include "fake_driver.h"
#include "l2_fixture.h"

namespace cna::fw::test {

using namespace hsi;
using namespace hsi::eth;

using namespace hsi;
using namespace hsi::eth;

const uint8_t OWN_MAC[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00};
const uint8_t MCAST[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x07};

constexpr auto RX_TIMEOUT = std::chrono::seconds(3);

/* A frame carrying its sequence number in its last four bytes (where VLAN
 * insertion or a tag in front does not move it). */
inline std::vector<uint8_t> numbered(const uint8_t* dst, uint32_t seq, std::size_t payload = 46)
{
    std::vector<uint8_t> f = eth_frame(dst, PEER_MAC, 0x88b5, payload);
    for (int i = 0; i < 4; i++)
        f[f.size() - 4 + i] = static_cast<uint8_t>(seq >> (24 - 8 * i));
    return f;
}

inline uint32_t seq_of(const std::vector<uint8_t>& f)
{
    if (f.size() < 4)
        return UINT32_MAX;
    uint32_t seq = 0;
    for (std::size_t i = f.size() - 4; i < f.size(); i++)
        seq = seq << 8 | f[i];
    return seq;
}

/* Packets written to a Tx ring and rung with one doorbell, so that the
 * engine sees all of them in one poll (FakeDriver::send rings once per
 * packet, and the engine may poll between two rings). Each batch has its
 * own buffer space, left untouched until the test ends. */
using Frames = std::vector<std::vector<uint8_t>>;

/* count frames, frame i made by make(i). */
template <typename Make> Frames make_frames(uint32_t count, Make make)
{
    Frames frames;
    for (uint32_t i = 0; i < count; i++)
        frames.push_back(make(i));
    return frames;
}

class TxBatch {
public:
    explicit TxBatch(FakeDriver& drv, std::size_t bytes = 1u << 20) : drv_(drv), mem_(drv.alloc(bytes)) {}

    /* nbds > 1: the packet split over that many BDs (gathered by the
     * engine rather than sent from its one host buffer). */
    void add(const std::vector<uint8_t>& frame, uint32_t nbds = 1)
    {
        ASSERT_LE(used_ + frame.size(), mem_.len);
        std::memcpy(mem_.va + used_, frame.data(), frame.size());
        std::size_t per_bd = (frame.size() + nbds - 1) / nbds;
        std::size_t first = bds_.size();
        for (std::size_t off = 0; off < frame.size(); off += per_bd) {
            TxBd bd{};
            bd.addr = make_regpair(mem_.iova + used_ + off);
            bd.nbytes = static_cast<uint16_t>(std::min(per_bd, frame.size() - off));
            bds_.push_back(bd);
        }
        bds_[first].flags = txbd::START;
        bds_[first].nbds = static_cast<uint8_t>(bds_.size() - first);
        used_ += (frame.size() + 63) & ~std::size_t{63};
    }
    /* A one-BD packet whose buffer the IOMMU does not know: a DMA fault. */
    void add_unmapped(uint16_t len)
    {
        TxBd bd{};
        bd.addr = make_regpair(mem_.iova + mem_.len + 0x10000);
        bd.nbytes = len;
        bd.flags = txbd::START;
        bd.nbds = 1;
        bds_.push_back(bd);
    }
    void ring(uint16_t queue)
    {
        drv_.send_bds(queue, bds_);
        bds_.clear();
    }

private:
    FakeDriver& drv_;
    HostMem mem_;
    std::size_t used_ = 0;
    std::vector<TxBd> bds_;
};

/* Frames and bytes by destination, as the vport statistics count them. */
struct Tally {
    std::array<uint64_t, 3> pkts{}, bytes{}; /* unicast, multicast, broadcast */

    void add(const std::vector<uint8_t>& f)
    {
        uint32_t d = !(f[0] & 1) ? 0 : std::memcmp(f.data(), BCAST, 6) == 0 ? 2 : 1;
        pkts[d]++;
        bytes[d] += f.size();
    }
    uint64_t total_pkts() const { return pkts[0] + pkts[1] + pkts[2]; }
    uint64_t total_bytes() const { return bytes[0] + bytes[1] + bytes[2]; }
};

/* Unicast, multicast, broadcast counters of one direction against a tally. */
inline void expect_counts(const char* dir, std::array<uint64_t, 3> pkts, std::array<uint64_t, 3> bytes,
                          const Tally& t)
{
    static constexpr const char* CAST[] = {"unicast", "multicast", "broadcast"};
    for (int c = 0; c < 3; c++) {
        EXPECT_EQ(pkts[c], t.pkts[c]) << dir << " " << CAST[c] << " packets";
        EXPECT_EQ(bytes[c], t.bytes[c]) << dir << " " << CAST[c] << " bytes";
    }
}
inline void expect_rx(const VportStats& s, const Tally& t)
{
    expect_counts("rx", {s.rx_ucast_pkts, s.rx_mcast_pkts, s.rx_bcast_pkts},
                  {s.rx_ucast_bytes, s.rx_mcast_bytes, s.rx_bcast_bytes}, t);
}
inline void expect_tx(const VportStats& s, const Tally& t)
{
    expect_counts("tx", {s.tx_ucast_pkts, s.tx_mcast_pkts, s.tx_bcast_pkts},
                  {s.tx_ucast_bytes, s.tx_mcast_bytes, s.tx_bcast_bytes}, t);
}

inline uint64_t rx_total(const VportStats& s) { return s.rx_ucast_pkts + s.rx_mcast_pkts + s.rx_bcast_pkts; }

inline QueueStats tx_queue_stats(FakeDriver& drv, uint32_t queue)
{
    QueueStats s;
    auto* words = reinterpret_cast<uint64_t*>(&s);
    for (uint32_t i = 0; i < sizeof(s) / 8; i++)
        words[i] = drv.stat64(iro::tx_queue_stats(drv.pf(), queue) + i * 8);
    return s;
}

/* Ring sizes and buffers of the PF under test: bring_up_l2's rings (64)
 * hold less than the bursts these tests queue at once. */
struct Rings {
    uint16_t rx = 256;
    uint16_t cqe = 0; /* 0: as rx */
    uint16_t rx_posted = 255;
    uint16_t tx = 256;
    uint16_t bd_max_bytes = 2048;
    uint16_t mtu = 1500;
    uint8_t max_bds = 1;

    /* MTU 9000 on 1 KiB buffers, up to max_bds per frame: the scatter path. */
    static Rings scatter(uint8_t max_bds)
    {
        Rings r;
        r.mtu = 9000;
        r.bd_max_bytes = 1024;
        r.max_bds = max_bds;
        return r;
    }
};

/* A one-port loopback adapter, its PF with vport 0 (Rx queue 0 on SB 0,
 * Tx queue 0 on SB 1) accepting everything. */
class Burst : public ::testing::Test {
protected:
    /* A fresh adapter each call (a test may bring up several in turn). */
    void bring_up(const Rings& r = Rings{})
    {
        drv.reset(); /* the driver of the previous one goes first */
        adapter.reset();
        AdapterConfig config;
        config.name = "burst";
        config.wire = Wire::loopback;
        config.link_up_delay_ms = 0;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
        drv = std::make_unique<FakeDriver>(*adapter, 0);
        ASSERT_NE(drv->load(), 0u);
        ASSERT_EQ(drv->start_pf(), FwReturn::ok);
        mfw::DrvPhyCfg cfg{};
        drv->write_union(&cfg, sizeof(cfg));
        ASSERT_EQ(drv->mcp_cmd(mfw::DRV_MSG_CODE_INIT_PHY), mfw::FW_MSG_CODE_LINK_DONE);
        ASSERT_EQ(drv->vport_start(0, r.mtu, r.max_bds), FwReturn::ok);
        ASSERT_EQ(drv->rx_queue_start(0, 0, 0, r.bd_max_bytes, r.rx, r.cqe), FwReturn::ok);
        drv->rx_post(0, r.rx_posted);
        ASSERT_EQ(drv->tx_queue_start(0, 0, 1, r.tx), FwReturn::ok);
        ASSERT_EQ(drv->vport_activate(0, accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED | accept::BCAST),
                  FwReturn::ok);
        ASSERT_TRUE(wait_link(*drv));
    }

    /* Every counter the engine writes once the last burst is in: the Tx SB
     * index moves after the Rx side has dealt with the frames, but the
     * counters are read through registers, so wait for the total rather
     * than trust one read. */
    ::testing::AssertionResult wait_rx_accounted(uint64_t pkts, uint64_t dropped = 0)
    {
        VportStats s{};
        auto dropped_of = [](const VportStats& v) {
            return v.rx_no_buffer_pkts + v.rx_error_pkts + v.rx_filtered_pkts + v.rx_oversize_pkts;
        };
        if (wait_until([&] {
                s = drv->vport_stats(0);
                return rx_total(s) == pkts && dropped_of(s) == dropped;
            }))
            return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "vport 0 received " << rx_total(s) << " (expected " << pkts << "), dropped " << dropped_of(s)
               << " (expected " << dropped << ": no buffer " << s.rx_no_buffer_pkts << ", error "
               << s.rx_error_pkts << ", filtered " << s.rx_filtered_pkts << ", oversize " << s.rx_oversize_pkts
               << "; tx error " << s.tx_error_pkts << ", tx oversize " << s.tx_oversize_pkts << ")";
    }

    /* The frames on Tx queue 0 behind one doorbell, all consumed by the
     * adapter on return. */
    void send_in_one_doorbell(const Frames& frames)
    {
        TxBatch batch(*drv);
        for (const auto& f : frames)
            ASSERT_NO_FATAL_FAILURE(batch.add(f));
        batch.ring(0);
        ASSERT_TRUE(drv->wait_tx_done(0));
    }

    /* The next n frames of Rx queue 0 are sent[0..n), in that order. */
    void expect_arrival(const Frames& sent, std::size_t n)
    {
        auto frames = drv->rx_wait(0, n, RX_TIMEOUT);
        ASSERT_EQ(frames.size(), n);
        for (std::size_t i = 0; i < n; i++)
            EXPECT_EQ(frames[i].data, sent[i]) << "frame " << i;
    }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
};

} // namespace cna::fw::test
