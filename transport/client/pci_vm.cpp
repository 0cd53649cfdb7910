/* SPDX-License-Identifier: BSD-3-Clause
 * The VM backend (vm_protocol.h), from inside the guest. BAR2 of the ivshmem
 * device is the VF's memory: its GTT page and doorbell page, stored to as on
 * the host, and two mailboxes the daemon polls, one for the BAR0 registers
 * outside the GTT (the VF channel, IGU commands), one for the VF's IOMMU
 * (guest memory by guest-physical address) and its reset. There are no
 * interrupts: the VF runs in poll mode.
 */
#include "pci_vm.h"

#include <rte_eal.h>
#include <rte_pause.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "vm_protocol.h"
#include "osal_log.h"
#include "osal_sync.h"
#include "pci_iommu.h"

namespace cna::osal {
namespace {

namespace vm = transport::vm;
using transport::daemon::Bar0Mailbox;
using transport::daemon::Bar0Op;

/* Longer than any daemon takes to look at a mailbox: then it is gone. */
constexpr uint32_t ANSWER_TIMEOUT_MS = 5000;
constexpr uint32_t RESET_TIMEOUT_MS = 3000;
constexpr uint32_t RESET_POLL_US = 1000;
/* Looks at a mailbox in a tight loop this often before sleeping between looks. */
constexpr uint32_t SPINS_BEFORE_SLEEP = 200;

const volatile vm::Header* header_of(const volatile uint8_t* bar)
{
    return reinterpret_cast<const volatile vm::Header*>(bar + vm::HEADER_OFFSET);
}

uint32_t signature_of(const volatile uint8_t* bar)
{
    return std::atomic_ref<const uint32_t>(const_cast<const uint32_t&>(header_of(bar)->signature))
        .load(std::memory_order_acquire);
}

template <typename T>
std::atomic_ref<T> shared(volatile T& field)
{
    return std::atomic_ref<T>(const_cast<T&>(field));
}

class VmPciFunction final : public PciFunction {
public:
    VmPciFunction(std::string name, volatile uint8_t* bar)
        : PciFunction(std::move(name), VF_LAYOUT), bar_(bar),
          mailbox_(reinterpret_cast<volatile Bar0Mailbox*>(bar + vm::MAILBOX_OFFSET)),
          function_mailbox_(reinterpret_cast<volatile vm::FunctionMailbox*>(bar + vm::FUNCTION_MAILBOX_OFFSET)),
          iommu_("cna-iommu-" + this->name(),
                 [this](uint64_t iova, void*, std::size_t len) { return ask(vm::FunctionOp::dma_map, iova, len); },
                 [this](uint64_t iova, std::size_t len) { return ask(vm::FunctionOp::dma_unmap, iova, len); })
    {
    }
    ~VmPciFunction() override
    {
        iommu_.stop();
        /* Released as VFIO releases a device: reset, for the next driver. */
        ask(vm::FunctionOp::reset, 0, 0);
    }

    int start(std::string* msg)
    {
        const volatile vm::Header* h = header_of(bar_);
        gtt_.view(bar_ + h->gtt_offset, -1, 0, h->gtt_size);
        doorbells_.view(bar_ + h->doorbells_offset, -1, 0, h->doorbells_size);
        /* Another driver of this guest may have used the mailboxes. */
        bar0_seq_ = shared(mailbox_->done_seq).load(std::memory_order_acquire);
        function_seq_ = shared(function_mailbox_->done_seq).load(std::memory_order_acquire);
        if (const int rc = reset(); rc != 0) {
            *msg = rc == -ETIMEDOUT ? "the VF's PF did not clean up after its reset (is its driver running?)"
                                    : "the adapter daemon did not reset the VF: " + std::string(strerror(-rc));
            return rc;
        }
        if (const int rc = iommu_.start(); rc != 0) {
            *msg = "cannot lend DPDK memory to the IOMMU of " + name();
            return rc;
        }
        return 0;
    }

    uint32_t msix_count() const override { return 0; }
    int msix_eventfd(uint32_t) const override { return -1; }
    int dma_map(uint64_t iova, void*, std::size_t len) override { return ask(vm::FunctionOp::dma_map, iova, len); }
    int dma_unmap(uint64_t iova, std::size_t len) override { return ask(vm::FunctionOp::dma_unmap, iova, len); }
    AdapterControl* control() override { return nullptr; }
    /* No fd to watch in a guest: the daemon (or, if the daemon died, cna-vm)
     * clears the BAR's signature, which the VF's bulletin poll reads. */
    bool removed() const override { return daemon_gone_ || signature_of(bar_) != vm::SIGNATURE; }

protected:
    uint32_t bar0_read(uint32_t offset) override { return bar0(Bar0Op::read, offset, 0); }
    void bar0_write(uint32_t offset, uint32_t value) override { bar0(Bar0Op::write, offset, value); }

private:
    /* Waits until the daemon publishes `seq` in done_seq: true, or false if
     * it is gone (it took the VF back, or never answered). */
    bool wait_done(volatile uint32_t& done_seq, uint32_t seq, const char* what);
    uint32_t bar0(Bar0Op op, uint32_t offset, uint32_t value);
    int ask(vm::FunctionOp op, uint64_t iova, uint64_t len);
    int reset();

    volatile uint8_t* const bar_;
    volatile Bar0Mailbox* const mailbox_;
    volatile vm::FunctionMailbox* const function_mailbox_;
    std::mutex bar0_lock_; /* one BAR0 access at a time: control thread, EAL alarm */
    uint32_t bar0_seq_ = 0;
    std::mutex function_lock_;
    uint32_t function_seq_ = 0;
    /* Set by a wait of either mailbox, each under its own lock. */
    std::atomic<bool> daemon_gone_{false};
    IommuSync iommu_;
};

bool VmPciFunction::wait_done(volatile uint32_t& done_seq, uint32_t seq, const char* what)
{
    Deadline deadline(ANSWER_TIMEOUT_MS);
    for (uint32_t spins = 0; shared(done_seq).load(std::memory_order_acquire) != seq; spins++) {
        if (signature_of(bar_) != vm::SIGNATURE || deadline.expired()) {
            daemon_gone_ = true;
            dp_log(logtype_ecore, DpLevel::err, dp_module::HW, name().c_str(), __func__,
                   "the adapter daemon %s (%s): the VF is gone",
                   signature_of(bar_) != vm::SIGNATURE ? "took the VF back" : "did not answer", what);
            return false;
        }
        if (spins < SPINS_BEFORE_SLEEP)
            rte_pause();
        else
            usleep(vm::POLL_PERIOD_US / 4);
    }
    return true;
}

/* A daemon that is gone reads as all ones, as a device that fell off the bus. */
uint32_t VmPciFunction::bar0(Bar0Op op, uint32_t offset, uint32_t value)
{
    std::lock_guard guard(bar0_lock_);
    if (daemon_gone_)
        return 0xffffffff;
    const uint32_t seq = ++bar0_seq_;
    shared(mailbox_->op).store(static_cast<uint32_t>(op), std::memory_order_relaxed);
    shared(mailbox_->offset).store(offset, std::memory_order_relaxed);
    shared(mailbox_->value).store(value, std::memory_order_relaxed);
    shared(mailbox_->request_seq).store(seq, std::memory_order_release);
    if (!wait_done(mailbox_->done_seq, seq, "a BAR0 access"))
        return 0xffffffff;
    return shared(mailbox_->value).load(std::memory_order_relaxed);
}

int VmPciFunction::ask(vm::FunctionOp op, uint64_t iova, uint64_t len)
{
    std::lock_guard guard(function_lock_);
    if (daemon_gone_)
        return -ENODEV;
    const uint32_t seq = ++function_seq_;
    shared(function_mailbox_->op).store(static_cast<uint32_t>(op), std::memory_order_relaxed);
    shared(function_mailbox_->iova).store(iova, std::memory_order_relaxed);
    shared(function_mailbox_->len).store(len, std::memory_order_relaxed);
    shared(function_mailbox_->request_seq).store(seq, std::memory_order_release);
    if (!wait_done(function_mailbox_->done_seq, seq, "a DMA mapping or reset"))
        return -ENODEV;
    return shared(function_mailbox_->status).load(std::memory_order_relaxed);
}

/* A VF's reset is done, as a PCI function level reset is after its wait,
 * when its PF has cleaned up after it: its channel opens again. */
int VmPciFunction::reset()
{
    if (const int rc = ask(vm::FunctionOp::reset, 0, 0); rc != 0)
        return rc;
    Deadline deadline(RESET_TIMEOUT_MS);
    while (static_cast<hsi::iov::ChannelState>(bar0(Bar0Op::read, hsi::iov::vf_bar0::CHANNEL_STATE, 0)) ==
           hsi::iov::ChannelState::disabled) {
        if (deadline.expired())
            return -ETIMEDOUT;
        usleep(RESET_POLL_US);
    }
    return daemon_gone_ ? -ENODEV : 0;
}

} // namespace

int vm_bar_check(const volatile uint8_t* bar, std::size_t len, std::string* why)
{
    if (bar == nullptr || len < vm::BAR_SIZE) {
        *why = "BAR2 is missing or smaller than a cna VF's";
        return -ENODEV;
    }
    if (signature_of(bar) != vm::SIGNATURE) {
        *why = "BAR2 has no cna VF signature (another ivshmem device, or a VF its daemon took back)";
        return -ENODEV;
    }
    const volatile vm::Header* h = header_of(bar);
    if (h->version != vm::VERSION || h->header_size < sizeof(vm::Header) || h->gtt_size < hsi::WINDOW_SIZE ||
        h->doorbells_size < hsi::iov::VF_DB_BAR_SIZE || h->gtt_offset > len - h->gtt_size ||
        h->doorbells_offset > len - h->doorbells_size || h->mailbox_offset != vm::MAILBOX_OFFSET ||
        h->function_mailbox_offset != vm::FUNCTION_MAILBOX_OFFSET) {
        *why = "BAR2 holds a cna VF of VM transport version " + std::to_string(h->version) + ", this driver speaks " +
               std::to_string(vm::VERSION);
        return -EPROTONOSUPPORT;
    }
    return 0;
}

std::unique_ptr<PciFunction> vm_attach(const PciAttachParams& params, int* err, std::string* msg)
{
    if (*err = vm_bar_check(params.vm_bar, params.vm_bar_len, msg); *err != 0)
        return nullptr;
    if (rte_eal_iova_mode() != RTE_IOVA_PA) {
        *err = -ENOTSUP;
        *msg = "the VM transport reaches guest memory by guest-physical address: run with --iova-mode=pa";
        return nullptr;
    }
    const volatile vm::Header* h = header_of(params.vm_bar);
    auto fn = std::make_unique<VmPciFunction>(params.device + "/pf" + std::to_string(h->pf) + "/vf" +
                                                  std::to_string(h->vf),
                                              params.vm_bar);
    if (*err = fn->start(msg); *err != 0)
        return nullptr;
    return fn;
}

} // namespace cna::osal
