/* SPDX-License-Identifier: BSD-3-Clause
 * A PF of an embedded adapter driven through ecore the way the PMD does:
 * attach, bring-up to a started PF, tear-down; with the slowpath IRQ on the
 * EAL interrupt thread.
 */
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include <rte_interrupts.h>
#include <rte_memzone.h>

#include "ecore_chain.h"
#include "ecore_dev_api.h"
#include "ecore_l2_api.h"
#include "ecore_int_api.h"
#include "ecore_mcp_api.h"
#include "osal.h"
#include "pci_attach.h"

namespace test {

using namespace cna;

inline int memzone_count()
{
    int n = 0;
    rte_memzone_walk([](const rte_memzone*, void* arg) { ++*static_cast<int*>(arg); }, &n);
    return n;
}

/* Waits up to ms for cond(); returns its last value. */
template <class F> bool wait_for(F cond, uint32_t ms = 2000)
{
    osal::Deadline deadline(ms);
    while (!cond()) {
        if (deadline.expired())
            return cond();
        osal::usleep(200);
    }
    return true;
}

/* Queue pair 0 of vport 0 on status block 0, for tests that pass frames
 * through a function (a PF, or a VF over its channel): rings of RING
 * entries, the Rx BD ring full of BUF_SIZE-byte buffers. */
struct QueuePair {
    static constexpr uint32_t RING = 64;
    static constexpr uint16_t BUF_SIZE = 2048;
    ecore::Chain rx_bds, rx_cqes, tx_bds;
    osal::DmaMem rx_bufs, tx_buf;
    ecore::RxQueueStartRet rx;
    ecore::TxQueueStartRet tx;

    /* Call through ASSERT_NO_FATAL_FAILURE. */
    void start(ecore::Hwfn& hwfn)
    {
        using namespace cna::hsi::eth;
        ASSERT_EQ(rx_bds.alloc(RING, sizeof(RxBd), "test Rx BDs"), ecore::Status::success);
        ASSERT_EQ(rx_cqes.alloc(RING, sizeof(RxCqe), "test Rx CQEs"), ecore::Status::success);
        ASSERT_EQ(tx_bds.alloc(RING, sizeof(TxBd), "test Tx BDs"), ecore::Status::success);
        ASSERT_EQ(rx_bufs.alloc(std::size_t{RING} * BUF_SIZE, "test Rx buffers"), 0);
        ASSERT_EQ(tx_buf.alloc(BUF_SIZE, "test Tx buffer"), 0);
        while (auto* bd = rx_bds.produce_as<RxBd>())
            bd->addr = cna::hsi::make_regpair(rx_bufs.iova() + std::size_t{rx_bds.prod() - 1u} * BUF_SIZE);
        ecore::RxQueueStartParams rxp;
        rxp.queue = {0, 0, 0, cna::hsi::L2_PI_RX};
        rxp.bd_max_bytes = BUF_SIZE;
        rxp.bd_ring_iova = rx_bds.iova();
        rxp.bd_ring_size = rxp.cqe_ring_size = RING;
        rxp.cqe_ring_iova = rx_cqes.iova();
        ASSERT_EQ(ecore::eth_rx_queue_start(hwfn, rxp, &rx), ecore::Status::success);
        ASSERT_NE(rx.rx_prod_addr, nullptr);
        ecore::eth_rx_prod_update(rx.rx_prod_addr, rx_bds.prod(), 0);
        ecore::TxQueueStartParams txp;
        txp.queue = {0, 0, 0, cna::hsi::L2_PI_TX};
        txp.bd_ring_iova = tx_bds.iova();
        txp.bd_ring_size = RING;
        ASSERT_EQ(ecore::eth_tx_queue_start(hwfn, txp, &tx), ecore::Status::success);
        ASSERT_NE(tx.doorbell_addr, nullptr);
    }
};

struct Pf {
    std::unique_ptr<osal::PciFunction> pci;
    ecore::Dev dev;
    osal::MsixIrq sp_irq;
    std::atomic<int> irq_requests{0};
    std::atomic<int> dpc_runs{0};
    std::atomic<int> dpc_off_intr_thread{0};
    std::atomic<int> link_updates{0};
    std::atomic<bool> link_update_off_intr_thread{false};

    ecore::Hwfn& hwfn() { return dev.hwfn; }

    static void slowpath_isr(void* arg)
    {
        auto* pf = static_cast<Pf*>(arg);
        if (!rte_thread_is_intr())
            pf->dpc_off_intr_thread++;
        ecore::int_sp_dpc(pf->dev.hwfn);
        pf->dpc_runs++;
    }

    /* Attaches PF `pf` of adapter `adapter`; false (and *skip) when this
     * build has no embedded adapter. */
    bool attach(const std::string& adapter, uint32_t pf_id, const osal::EmbeddedConfig& config, bool* skip)
    {
        osal::PciAttachParams params;
        params.adapter = adapter;
        params.pf = pf_id;
        params.embedded = config;
        int err = 0;
        std::string msg;
        pci = osal::pci_attach(params, &err, &msg);
        *skip = err == -ENOTSUP;
        if (!pci)
            return false;
        ecore::UpperOps ops;
        ops.link_update = [this](ecore::Hwfn&) {
            if (!rte_thread_is_intr())
                link_update_off_intr_thread = true;
            link_updates++;
        };
        ops.slowpath_irq_req = [this](ecore::Hwfn&) {
            irq_requests++;
            return sp_irq.request(pci->msix_eventfd(hsi::SP_MSIX_VECTOR), slowpath_isr, this) == 0
                       ? ecore::Status::success
                       : ecore::Status::io;
        };
        ops.slowpath_irq_release = [this](ecore::Hwfn&) { sp_irq.release(); };
        ecore::init_struct(dev, adapter + "/pf" + std::to_string(pf_id), *pci, std::move(ops));
        return true;
    }

    ecore::Status prepare()
    {
        ecore::Status rc = ecore::hw_prepare(dev);
        if (rc != ecore::Status::success)
            return rc;
        rc = ecore::resc_alloc(dev);
        if (rc != ecore::Status::success) {
            ecore::hw_remove(dev);
            return rc;
        }
        ecore::resc_setup(dev);
        return rc;
    }

    ecore::Status bring_up(ecore::IntMode mode)
    {
        ecore::Status rc = prepare();
        if (rc != ecore::Status::success)
            return rc;
        ecore::HwInitParams params;
        params.int_mode = mode;
        rc = ecore::hw_init(dev, params);
        if (rc != ecore::Status::success)
            unprepare();
        return rc;
    }

    void unprepare()
    {
        ecore::resc_free(dev);
        ecore::hw_remove(dev);
    }

    ecore::Status tear_down()
    {
        ecore::Status rc = ecore::hw_stop(dev);
        ecore::int_disable_post_isr_release(dev);
        unprepare();
        return rc;
    }

    bool link_up() { return ecore::mcp_get_link_state(dev.hwfn).link_up; }

    /* Up with MSI-X, its link asked for and up: where a test passes
     * frames. Call through ASSERT_NO_FATAL_FAILURE. */
    void bring_up_linked()
    {
        ASSERT_EQ(bring_up(ecore::IntMode::msix), ecore::Status::success);
        {
            ecore::PttGuard ptt(dev.hwfn);
            ASSERT_EQ(ecore::mcp_set_link(dev.hwfn, *ptt, true), ecore::Status::success);
        }
        ASSERT_TRUE(wait_for([&] { return link_up(); }));
    }
};

#define ATTACH_OR_SKIP(pf, adapter, id, config)                          \
    do {                                                                 \
        bool skip_ = false;                                              \
        if (!(pf).attach(adapter, id, config, &skip_)) {                 \
            if (skip_)                                                   \
                GTEST_SKIP() << "no embedded adapter in this build";     \
            FAIL() << "cannot attach PF " << (id) << " of " << adapter;  \
        }                                                                \
    } while (0)

} // namespace test
