/* SPDX-License-Identifier: BSD-3-Clause
 * Ramrods on a PF started in POLL mode: waiters process the EQ themselves. */
#include "fixture.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <rte_log.h>

#include "ecore_spq.h"
#include "hsi_eth.h"

using namespace cna;
using ecore::Status;

namespace {

Status post_empty(test::Pf& pf)
{
    return ecore::spq_post(pf.hwfn(), ecore::SpqRequest{hsi::ProtocolId::common,
                                                        static_cast<uint8_t>(hsi::CommonCmd::empty)});
}

Status post_vport_update(test::Pf& pf, uint8_t vport)
{
    hsi::eth::VportUpdateRamrodData data{};
    data.vport_id = vport;
    data.update_flags = hsi::eth::vport_update::UPDATE_ACTIVE_RX;
    return ecore::spq_post(pf.hwfn(), ecore::SpqRequest{hsi::ProtocolId::eth,
                                                        static_cast<uint8_t>(hsi::eth::EthCmd::vport_update),
                                                        hsi::CID_SPQ, &data, sizeof(data)});
}

} // namespace

class Spq : public testing::Test {
protected:
    void SetUp() override
    {
        ATTACH_OR_SKIP(pf, "t_spq", 0, osal::EmbeddedConfig{});
        ASSERT_EQ(pf.bring_up(ecore::IntMode::poll), Status::success);
        up = true;
    }
    void TearDown() override
    {
        if (up) {
            EXPECT_EQ(pf.tear_down(), Status::success);
        }
    }
    test::Pf pf;
    bool up = false;
};

TEST_F(Spq, RamrodCompletes)
{
    for (int i = 0; i < 3 * static_cast<int>(ecore::SPQ_RING_SIZE); i++)
        ASSERT_EQ(post_empty(pf), Status::success) << i;
}

TEST_F(Spq, ErrorCompletionsMapToStatus)
{
    /* VPORT_UPDATE on a vport never started: bad_state. */
    EXPECT_EQ(post_vport_update(pf, 0), Status::busy);
    /* Unknown command: invalid_command. */
    EXPECT_EQ(ecore::spq_post(pf.hwfn(), ecore::SpqRequest{hsi::ProtocolId::eth, 0x7f}), Status::notimpl);
    /* A second PF_START: bad_state. */
    hsi::PfStartRamrodData data{};
    EXPECT_EQ(ecore::spq_post(pf.hwfn(), ecore::SpqRequest{hsi::ProtocolId::common,
                                                           static_cast<uint8_t>(hsi::CommonCmd::pf_start),
                                                           hsi::CID_SPQ, &data, sizeof(data)}),
              Status::busy);
    /* The queue keeps working after errors. */
    EXPECT_EQ(post_empty(pf), Status::success);
}

TEST_F(Spq, LostRamrodTimesOut)
{
    pf.hwfn().spq->timeout_ms = 300;
    pf.pci->control()->inject(osal::Fault::lose_ramrod, true);
    const uint64_t t0 = osal::time_ms();
    EXPECT_EQ(post_empty(pf), Status::timeout);
    EXPECT_GE(osal::time_ms() - t0, 290u);
    pf.pci->control()->inject(osal::Fault::lose_ramrod, false);
    pf.hwfn().spq->timeout_ms = ecore::SPQ_DEFAULT_TIMEOUT_MS;
    /* Not wedged: the next ramrods complete. */
    for (int i = 0; i < 2 * static_cast<int>(ecore::SPQ_RING_SIZE); i++)
        ASSERT_EQ(post_empty(pf), Status::success) << i;
}

/* A device that cannot reach the SPQ cannot tell through its status block
 * either: the timeout says why, from the PGLUE fault registers. */
TEST_F(Spq, RamrodTheDeviceCannotReadTimesOutSayingWhy)
{
    pf.hwfn().spq->timeout_ms = 300;
    char* text = nullptr;
    std::size_t size = 0;
    FILE* log = open_memstream(&text, &size);
    ASSERT_NE(log, nullptr);
    rte_openlog_stream(log);
    pf.pci->control()->inject(osal::Fault::dma_fault, true);
    const Status st = post_empty(pf);
    pf.pci->control()->inject(osal::Fault::dma_fault, false);
    rte_openlog_stream(nullptr);
    fclose(log);
    const std::string logged(text, size);
    free(text);
    EXPECT_EQ(st, Status::timeout);
    EXPECT_NE(logged.find("EMPTY: the device reports"), std::string::npos) << logged;
    EXPECT_NE(logged.find("DMA fault(s), the last at IOVA 0x"), std::string::npos) << logged;
    EXPECT_NE(logged.find("cna.adapter: pglue: pf0 DMA fault: no IOMMU mapping covers IOVA"), std::string::npos)
        << logged;
    pf.hwfn().spq->timeout_ms = ecore::SPQ_DEFAULT_TIMEOUT_MS;
    /* Not wedged: the next ramrods complete. */
    for (int i = 0; i < 2 * static_cast<int>(ecore::SPQ_RING_SIZE); i++)
        ASSERT_EQ(post_empty(pf), Status::success) << i;
}
