/* SPDX-License-Identifier: BSD-3-Clause
 * Storms: microcode verification, SPQ -> EQ ramrod completion, error codes.
 */
#include <gtest/gtest.h>

#include <thread>

#include "hsi_iov.h"
#include "fake_driver.h"
#include "slowpath/microcode_format.h"
#include "base/crc32.h"

namespace cna::fw::test {
namespace {

using namespace hsi;
using namespace hsi::eth;

std::unique_ptr<Adapter> make(uint32_t pfs_per_port = 1)
{
    AdapterConfig config;
    config.name = "storm";
    config.pfs_per_port = pfs_per_port;
    return Adapter::create(config, nullptr);
}

/* Loads a microcode blob by hand and returns the resulting StormStatus. */
uint32_t start_storms(FakeDriver& drv, std::vector<uint8_t> blob, uint32_t crc)
{
    for (std::size_t i = 0; i < blob.size(); i += 4) {
        uint32_t v = 0;
        std::memcpy(&v, blob.data() + i, std::min<std::size_t>(4, blob.size() - i));
        drv.wr(reg::STORM_MICROCODE + static_cast<uint32_t>(i), v);
    }
    drv.wr(reg::STORM_FW_LEN, static_cast<uint32_t>(blob.size()));
    drv.wr(reg::STORM_FW_CRC, crc);
    drv.wr(reg::STORM_START, 1);
    return drv.rd(reg::STORM_STATUS);
}

std::vector<uint8_t> microcode_blob(uint8_t hsi_major)
{
    std::vector<uint8_t> blob(sizeof(microcode::Header) + sizeof(microcode::Section) + 256, 0x5a);
    microcode::Header h{init::MICROCODE_MAGIC, hsi_major, 0, 1, 0x01000000, static_cast<uint32_t>(blob.size())};
    microcode::Section s{{'T', 'S', 'E', 'M'}, sizeof(h) + sizeof(s), 256, 0};
    std::memcpy(blob.data(), &h, sizeof(h));
    std::memcpy(blob.data() + sizeof(h), &s, sizeof(s));
    return blob;
}

TEST(Microcode, VerifiedOnStormStart)
{
    auto adapter = make();
    FakeDriver drv(*adapter, 0);
    drv.open_ptt_access();
    EXPECT_EQ(drv.rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::halted));

    std::vector<uint8_t> good = microcode_blob(HSI_VERSION_MAJOR);
    uint32_t crc = crc32(0, good.data(), good.size());
    EXPECT_EQ(start_storms(drv, good, crc ^ 1), static_cast<uint32_t>(StormStatus::bad_microcode));
    EXPECT_EQ(start_storms(drv, good, crc), static_cast<uint32_t>(StormStatus::running));

    std::vector<uint8_t> other = microcode_blob(HSI_VERSION_MAJOR + 1);
    EXPECT_EQ(start_storms(drv, other, crc32(0, other.data(), other.size())),
              static_cast<uint32_t>(StormStatus::bad_version));

    std::vector<uint8_t> no_magic = good;
    no_magic[0] ^= 0xff;
    EXPECT_EQ(start_storms(drv, no_magic, crc32(0, no_magic.data(), no_magic.size())),
              static_cast<uint32_t>(StormStatus::bad_microcode));
    EXPECT_EQ(start_storms(drv, {}, 0), static_cast<uint32_t>(StormStatus::bad_microcode)) << "empty";
}

class Spq : public ::testing::Test {
protected:
    void SetUp() override
    {
        adapter = make();
        ASSERT_NE(adapter, nullptr);
        drv = std::make_unique<FakeDriver>(*adapter, 0);
        ASSERT_EQ(drv->load(), mfw::FW_MSG_CODE_DRV_LOAD_ENGINE);
        ASSERT_EQ(drv->rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::running));
    }
    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> drv;
};

TEST_F(Spq, RamrodBeforePfStartAsserts)
{
    drv->wr(reg::ATTN_MASK, attn::ALL);
    EventRingElement e = drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0, false);
    (void)e;
    ASSERT_TRUE(wait_until([&] { return drv->attn_status() & attn::FW_ASSERT; }));
    EXPECT_NE(drv->rd(reg::ATTN_FW_ASSERT_CODE), 0u);
    EXPECT_EQ(drv->start_pf(), FwReturn::ok) << "the dropped ramrod does not block the SPQ";
}

TEST_F(Spq, CompletesRamrodsOnTheEq)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    EventRingElement e = drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_EQ(e.opcode, static_cast<uint8_t>(CommonCmd::empty));
    EXPECT_EQ(e.protocol_id, static_cast<uint8_t>(ProtocolId::common));
    EXPECT_EQ(e.fw_return_code, static_cast<uint8_t>(FwReturn::ok));
    EXPECT_EQ(e.echo, 2u);
    EXPECT_EQ(drv->start_pf(), FwReturn::bad_state) << "second PF_START";
    EXPECT_EQ(drv->ramrod(ProtocolId::common, 77, nullptr, 0).fw_return_code,
              static_cast<uint8_t>(FwReturn::invalid_command));
    EXPECT_EQ(drv->ramrod(static_cast<ProtocolId>(9), 1, nullptr, 0).fw_return_code,
              static_cast<uint8_t>(FwReturn::invalid_command));
    /* Many more ramrods than EQ slots: the consumer updates keep it flowing. */
    for (int i = 0; i < 3 * static_cast<int>(FakeDriver::EQ_SIZE); i++)
        ASSERT_EQ(drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0).fw_return_code, 0);
}

TEST_F(Spq, ValidatesL2Ramrods)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    EXPECT_EQ(drv->vport_start(hsi::iov::vf_vport(0)), FwReturn::no_resource) << "a VF the PF has not enabled";
    EXPECT_EQ(drv->vport_start(hsi::iov::vf_vport(hsi::iov::MAX_VFS_PER_PF)), FwReturn::invalid_param);
    EXPECT_EQ(drv->vport_start(0, 20), FwReturn::invalid_param) << "MTU below MIN_MTU";
    EXPECT_EQ(drv->vport_start(0, MAX_MTU + 1), FwReturn::invalid_param);
    EXPECT_EQ(drv->vport_activate(0, accept::BCAST), FwReturn::bad_state) << "vport not started";
    EXPECT_EQ(drv->vport_start(0), FwReturn::ok);
    EXPECT_EQ(drv->vport_start(0), FwReturn::bad_state);

    EXPECT_EQ(drv->rx_queue_start(MAX_QUEUES_PER_PF, 0, 0), FwReturn::invalid_param);
    EXPECT_EQ(drv->rx_queue_start(MAX_QUEUES_PER_PF - 1, 0, 0), FwReturn::no_resource) << "beyond the grant";
    EXPECT_EQ(drv->rx_queue_start(0, 0, MAX_SB_PER_PF - 1), FwReturn::no_resource);
    EXPECT_EQ(drv->rx_queue_start(0, 0, 0, 2048, 48), FwReturn::invalid_param) << "not a power of two";
    EXPECT_EQ(drv->rx_queue_start(0, 0, 0, 2048, 32), FwReturn::invalid_param) << "below MIN_RING_SIZE";
    EXPECT_EQ(drv->rx_queue_start(0, 1, 0), FwReturn::bad_state) << "vport 1 not started";
    EXPECT_EQ(drv->rx_queue_start(0, 0, 0), FwReturn::ok);
    EXPECT_EQ(drv->rx_queue_start(0, 0, 0), FwReturn::bad_state);
    EXPECT_EQ(drv->tx_queue_start(0, 0, 1), FwReturn::ok);

    QueueStopRamrodData stop{};
    EXPECT_EQ(drv->eth(EthCmd::vport_stop, &stop, sizeof(stop)), FwReturn::bad_state) << "queues still started";
    EXPECT_EQ(drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::pf_stop), &stop, sizeof(stop))
                  .fw_return_code,
              static_cast<uint8_t>(FwReturn::bad_state))
        << "PF_STOP with a started vport";
    stop.queue_id = 0;
    EXPECT_EQ(drv->eth(EthCmd::rx_queue_stop, &stop, sizeof(stop)), FwReturn::ok);
    EXPECT_EQ(drv->eth(EthCmd::rx_queue_stop, &stop, sizeof(stop)), FwReturn::bad_state);
    EXPECT_EQ(drv->eth(EthCmd::tx_queue_stop, &stop, sizeof(stop)), FwReturn::ok);
    EXPECT_EQ(drv->eth(EthCmd::vport_stop, &stop, sizeof(stop)), FwReturn::ok);
    EXPECT_EQ(drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::pf_stop), &stop, sizeof(stop))
                  .fw_return_code,
              static_cast<uint8_t>(FwReturn::ok));
    EXPECT_EQ(drv->start_pf(), FwReturn::ok) << "a stopped PF can start again";
}

TEST_F(Spq, FilterTableLimits)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    ASSERT_EQ(drv->vport_start(0), FwReturn::ok);
    ASSERT_EQ(drv->vport_start(1), FwReturn::ok);
    uint32_t limit = drv->rd(mfw::func_addr(0) + offsetof(mfw::PublicFunc, num_mac_filters));
    uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < limit; i++) {
        mac[5] = static_cast<uint8_t>(i);
        ASSERT_EQ(drv->filter(FilterOpcode::add, FilterType::mac, i % 2, mac), FwReturn::ok);
    }
    mac[5] = 0xfe;
    EXPECT_EQ(drv->filter(FilterOpcode::add, FilterType::mac, 0, mac), FwReturn::no_resource);
    EXPECT_EQ(drv->filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::not_found);
    mac[5] = 1; /* on vport 1 */
    EXPECT_EQ(drv->filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::not_found);
    EXPECT_EQ(drv->filter(FilterOpcode::move, FilterType::mac, 1, mac, 0, 0), FwReturn::ok);
    EXPECT_EQ(drv->filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::ok);
    /* Replace drops every MAC filter of the vport. */
    mac[5] = 0xfe;
    EXPECT_EQ(drv->filter(FilterOpcode::replace, FilterType::mac, 0, mac), FwReturn::ok);
    mac[5] = 0;
    EXPECT_EQ(drv->filter(FilterOpcode::remove, FilterType::mac, 0, mac), FwReturn::not_found);
    EXPECT_EQ(drv->filter(FilterOpcode::add, FilterType::vlan, 0, nullptr, 100), FwReturn::ok);
    EXPECT_EQ(drv->filter(FilterOpcode::add, FilterType::vlan, 3, nullptr, 100), FwReturn::bad_state);
    EXPECT_EQ(drv->filter(static_cast<FilterOpcode>(9), FilterType::vlan, 0, nullptr, 100), FwReturn::invalid_param);
}

TEST_F(Spq, UnreadableRamrodDataIsADmaError)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    EventRingElement e = drv->ramrod(ProtocolId::eth, static_cast<uint8_t>(EthCmd::vport_start), nullptr, 0, true,
                                     0xdead0000ull);
    EXPECT_EQ(e.fw_return_code, static_cast<uint8_t>(FwReturn::dma_error));
    EXPECT_TRUE(drv->attn_status() & attn::DMA_FAULT);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_LO), 0xdead0000u);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_ADDR_HI), 0u);
    EXPECT_EQ(drv->rd(reg::PGLUE_DMA_FAULT_COUNT), 1u);
    EXPECT_EQ(adapter->control().dma_faults(0), 1u);
}

TEST_F(Spq, LostRamrodNeverCompletes)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    adapter->control().inject(Fault::lose_ramrod, true);
    drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_TRUE(drv->eqe_timed_out());
    EventRingElement e = drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_FALSE(drv->eqe_timed_out()) << "only the next ramrod is lost";
    EXPECT_EQ(e.echo, 3u);
}

TEST_F(Spq, InjectedDmaFaultFaultsEveryAccess)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    adapter->control().inject(Fault::dma_fault, true);
    drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_TRUE(drv->eqe_timed_out()) << "the ramrod cannot even be read";
    EXPECT_GE(adapter->control().dma_faults(0), 1u);
    EXPECT_GE(drv->rd(reg::PGLUE_DMA_FAULT_COUNT), 1u);
    adapter->control().inject(Fault::dma_fault, false);
    EventRingElement e = drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_FALSE(drv->eqe_timed_out()) << "translations are back";
    EXPECT_EQ(e.opcode, static_cast<uint8_t>(CommonCmd::empty));
}

TEST_F(Spq, FirmwareAssertHaltsTheStorms)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    adapter->control().inject(Fault::fw_assert, true);
    ASSERT_TRUE(wait_until([&] { return drv->attn_status() & attn::FW_ASSERT; }));
    EXPECT_EQ(drv->rd(reg::STORM_STATUS), static_cast<uint32_t>(StormStatus::asserted));
    EXPECT_NE(drv->rd(reg::ATTN_FW_ASSERT_CODE), 0u);
    drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0);
    EXPECT_TRUE(drv->eqe_timed_out()) << "asserted storms take no ramrods";
}

TEST_F(Spq, StopsTakingRamrodsWhileTheEqIsFull)
{
    ASSERT_EQ(drv->start_pf(), FwReturn::ok);
    /* Fill the SPQ (more would overwrite ramrods not taken yet, which the
     * storms refuse) without consuming any EQE: more than the EQ holds. */
    static_assert(FakeDriver::SPQ_SIZE >= FakeDriver::EQ_SIZE);
    for (uint32_t i = 0; i < FakeDriver::SPQ_SIZE; i++)
        drv->ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::empty), nullptr, 0, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    /* PF_START's EQE was consumed (cons 1): the producer stops at cons + size - 1. */
    EXPECT_EQ(drv->sb_pi(SP_SB_ID, SP_PI_EQ), 1u + (FakeDriver::EQ_SIZE - 1));
}

} // namespace
} // namespace cna::fw::test
