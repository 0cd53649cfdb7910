/* SPDX-License-Identifier: BSD-3-Clause
 * The device side of one PCI function: BAR0 (PTT entries and windows, IGU
 * command space, GTT windows), the doorbell BAR, MSI-X vectors and DMA
 * through the function's IOMMU, plus the per-function hardware blocks
 * behind them (PGLUE, attentions, CAU, IGU).
 *
 * BAR0 decoding is lock-free; PTT window accesses are forwarded to the
 * adapter's internal register space (RegisterSpace), which serialises
 * them with the slowpath.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "cna_fw/adapter.h"
#include "hsi_common.h"
#include "irq/attention.h"
#include "irq/cau.h"
#include "irq/igu.h"
#include "bus/dma.h"
#include "bus/iommu.h"
#include "bus/msix.h"
#include "function/pglue.h"
#include "base/shared_memory.h"

namespace cna::fw {

class FunctionHw;

/* The internal (GRC) address space as seen by one function. */
class RegisterSpace {
public:
    virtual uint32_t grc_read(FunctionHw& fn, uint32_t addr) = 0;
    virtual void grc_write(FunctionHw& fn, uint32_t addr, uint32_t value) = 0;

protected:
    ~RegisterSpace() = default;
};

/* The registers of a VF's BAR0 that are its channel to the PF (iov/'s
 * VfChannel): where a PF's BAR0 leads to the GRC space, a VF's leads there. */
class ChannelRegisters {
public:
    virtual uint32_t read(uint32_t offset) const = 0;
    virtual void write(uint32_t offset, uint32_t value) = 0;

protected:
    ~ChannelRegisters() = default;
};

/* The engines that serve a function, as it sees them (adapter/ binds them). */
class ServingEngines {
public:
    /* Returns once no engine is in a pass begun before the call: what an
     * IOMMU invalidation waits for. */
    virtual void wait_passes() = 0;
    /* DeviceFunction::engine_pass for a function of `port`. */
    virtual bool pass(uint32_t port, PassCause cause) = 0;
    /* DeviceFunction::doorbell_pass for PF `pf`'s doorbell of cid. */
    virtual bool tx_doorbell(uint32_t pf, uint32_t cid) = 0;

protected:
    ~ServingEngines() = default;
};

inline constexpr uint32_t REG_ALL_ONES = 0xffffffff; /* what an unanswered read returns */

/* Passes that may run at once on one function's queues: slot 0 is the port
 * group's own (an engine thread's, or a host thread's), the others queue
 * passes beside it (engine=inline's Tx doorbells). Each has its own view
 * of the function's DMA. */
inline constexpr uint32_t PASS_SLOTS = 4;

class FunctionHw final : public DeviceFunction {
public:
    FunctionHw(uint32_t pf, uint32_t port, uint32_t msix_vectors, RegisterSpace& grc, uint8_t* gtt, int gtt_fd,
               ServingEngines& engines);
    /* A VF of PF `pf`: the reduced BAR0 (its channel, its RDMA slowpath's
     * registers, which lead to `grc` as a PF's STORM_PF block, its IGU
     * commands and a GTT page of its own), a doorbell BAR (a page and a
     * DPI page), a vector per status block. */
    FunctionHw(uint32_t pf, uint32_t vf, uint32_t port, ChannelRegisters& channel, RegisterSpace& grc,
               ServingEngines& engines);

    bool valid() const { return msix_.valid() && doorbells_ != nullptr && gtt_ != nullptr; }

    /* DeviceFunction */
    uint32_t bar0_read(uint32_t offset) override;
    void bar0_write(uint32_t offset, uint32_t value) override;
    volatile uint8_t* gtt_memory() override { return gtt_; }
    volatile uint8_t* doorbell_memory() override { return doorbells_; }
    SharedBars shared_bars() const override;
    VmBar vm_bar() const override { return {vf_memory_.fd(), vf_memory_.base()}; }
    uint32_t msix_count() const override { return msix_.count(); }
    int msix_eventfd(uint32_t vector) const override { return msix_.eventfd(vector); }
    int route_msix(uint32_t vector, int fd) override { return msix_.route(vector, fd); }
    int dma_map(uint64_t iova, void* va, std::size_t len) override { return iommu_.map(iova, va, len); }
    int dma_map_remote(uint64_t iova, std::shared_ptr<RemoteMemory> memory, uint64_t va, std::size_t len) override
    {
        return iommu_.map_remote(iova, std::move(memory), va, len);
    }
    int dma_unmap(uint64_t iova, std::size_t len) override;
    uint32_t pf_id() const override { return pf_; }
    uint32_t port_id() const override { return port_; }
    bool is_vf() const override { return channel_ != nullptr; }
    uint32_t vf_id() const override { return vf_; }
    /* "pf0", "pf0 vf1": the function in the adapter's log. */
    const std::string& name() const { return name_; }
    bool engine_pass(PassCause cause) override { return engines_.pass(port_, cause); }
    bool doorbell_pass(uint32_t offset) override;

    /* Engine: the producer last rung on a connection's doorbell. Inline:
     * every engine pass reads one per started queue. */
    uint16_t doorbell_prod(uint32_t cid) const
    {
        uint32_t raw = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(doorbells_ + hsi::db_offset(cid)))
                           .load(std::memory_order_acquire);
        hsi::DoorbellData db;
        std::memcpy(&db, &raw, sizeof(db));
        return db.prod;
    }
    /* Engine: a 32-bit word of the doorbell BAR (an RDMA DPI slot), as
     * the host last published it. */
    uint32_t doorbell_word(uint32_t offset) const
    {
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(doorbells_ + offset))
            .load(std::memory_order_acquire);
    }
    /* Engine: the doorbell queue forgets a connection (connection start,
     * function reset) so a stale producer is never acted on. */
    void clear_doorbell(uint32_t cid);
    /* ... or the 8-byte slot of an RDMA object at `offset`. */
    void clear_doorbell_slot(uint32_t offset);
    void clear_doorbells();
    /* Function level reset of the PCI function's own blocks, with the
     * engine held: bus mastering off, PTT windows, scratch, attentions,
     * status blocks and interrupt state as at power-on, doorbells clear.
     * The IOMMU's mappings are the host's and stay. */
    void reset();

    /* Per-function register state of the MISC block. */
    std::array<std::atomic<uint32_t>, hsi::reg::MISC_SCRATCH_DWORDS> scratch{};

    Iommu& iommu() { return iommu_; }
    Attention& attention() { return attention_; }
    Pglue& pglue() { return pglue_; }
    /* The view of the pass in `slot` (slot 0 also the slowpath's). */
    Dma& dma(uint32_t slot = 0) { return dma_[slot]; }
    Cau& cau() { return cau_; }
    Igu& igu() { return igu_; }

private:
    template <std::size_t... SLOT>
    std::array<Dma, PASS_SLOTS> dma_views(std::index_sequence<SLOT...>)
    {
        return {(static_cast<void>(SLOT), Dma{iommu_, pglue_})...};
    }
    /* Whether a register answers at a BAR0 offset. */
    static bool decodes(uint32_t offset);
    /* A VF's reduced BAR0. */
    uint32_t vf_bar0_read(uint32_t offset);
    void vf_bar0_write(uint32_t offset, uint32_t value);

    const uint32_t pf_;
    const uint32_t vf_ = 0;
    const uint32_t port_;
    RegisterSpace* const grc_;      /* a PF's PTT windows lead there, a VF's slowpath registers */
    ChannelRegisters* const channel_ = nullptr; /* a VF's */
    const std::string name_ = "pf" + std::to_string(pf_) + (channel_ != nullptr ? " vf" + std::to_string(vf_) : "");
    SharedMemory vf_memory_;        /* a VF's: vm_protocol.h's BAR, with its GTT and doorbell pages */
    uint8_t* const gtt_;
    const int gtt_fd_;
    ServingEngines& engines_;
    SharedMemory doorbell_memory_;  /* a PF's doorbell BAR */
    uint8_t* const doorbells_;
    const uint32_t doorbells_size_;
    std::array<std::atomic<uint32_t>, hsi::PTT_WINDOWS> ptt_entries_{};

    /* Construction order follows the references between the blocks. */
    Iommu iommu_;
    Msix msix_;
    Attention attention_{cau_};
    Pglue pglue_{name_, attention_};
    std::array<Dma, PASS_SLOTS> dma_ = dma_views(std::make_index_sequence<PASS_SLOTS>{});
    Cau cau_;
    Igu igu_{cau_, msix_};
};

} // namespace cna::fw
