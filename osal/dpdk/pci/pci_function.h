/* SPDX-License-Identifier: BSD-3-Clause
 * The PCI function as ecore sees it: BAR0 (registers behind PTT windows plus
 * GTT-mapped storm RAM), the doorbell BAR, MSI-X eventfds and DMA through an
 * IOMMU. A backend provides it: the embedded software adapter, the adapter
 * daemon (cna-adapterd) in another process, a VF the daemon gave a QEMU
 * guest (from inside the guest), later real PCI. Nothing above the OSAL
 * knows which.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hsi_common.h"
#include "hsi_control.h"
#include "hsi_iov.h"
#include "pci_shared_bar.h"

namespace cna::osal {

using hsi::control::AdapterControl;
using hsi::control::Fault;
using hsi::control::PortCounters;
using hsi::control::Wire;

class PciFunction {
public:
    virtual ~PciFunction() = default;
    PciFunction(const PciFunction&) = delete;
    PciFunction& operator=(const PciFunction&) = delete;

    /* REG_RD/REG_WR: 32-bit access at a BAR0 offset. The GTT is memory
     * both sides map; the rest of BAR0 (and whatever lies past it, which the
     * device reports) goes through the device. A PF's and a VF's BAR0 place
     * their GTT differently (hsi::BAR0_GTT_BASE, hsi::iov::vf_bar0). */
    uint32_t reg_rd(uint32_t bar0_offset)
    {
        return in_gtt(bar0_offset) ? gtt_word(bar0_offset).load(std::memory_order_acquire) : bar0_read(bar0_offset);
    }
    void reg_wr(uint32_t bar0_offset, uint32_t value)
    {
        if (in_gtt(bar0_offset))
            gtt_word(bar0_offset).store(value, std::memory_order_release);
        else
            bar0_write(bar0_offset, value);
    }

    /* A VF (hsi_iov.h): its BAR0 is the reduced one, its doorbell BAR a
     * page; everything else it asks of its PF through the channel. */
    bool is_vf() const { return layout_.vf; }

    /* BAR0 from gtt_base() on (a PF's: storm RAM offset 0; a VF's: its own
     * page) and the doorbell BAR: memory the host stores to directly. */
    volatile uint8_t* gtt() { return gtt_.va(); }
    uint32_t gtt_base() const { return layout_.gtt_base; }
    volatile uint8_t* doorbells() { return doorbells_.va(); }
    /* The same, for a secondary process to map at the same addresses. */
    const SharedBar& gtt_bar() const { return gtt_; }
    const SharedBar& doorbell_bar() const { return doorbells_; }

    virtual uint32_t msix_count() const = 0;
    virtual int msix_eventfd(uint32_t vector) const = 0;

    /* Memory outside DPDK's (an RDMA application's buffers) made reachable
     * by the device at `iova`, as rte_vfio_container_dma_map does; 0 or
     * -errno (-EEXIST: overlaps a mapping). Unmapping waits until the
     * device is done with the range. */
    virtual int dma_map(uint64_t iova, void* va, std::size_t len) = 0;
    virtual int dma_unmap(uint64_t iova, std::size_t len) = 0;

    /* The adapter's back door; nullptr where the backend has none. */
    virtual AdapterControl* control() = 0;

    /* Surprise removal, as of a device that fell off the bus: an fd that
     * hangs up (POLLHUP) once the function is gone for good (the daemon
     * behind it ended), -1 where it cannot go; and whether it is gone. A
     * gone function answers every access at once (reads all ones,
     * requests -ENODEV) instead of waiting for what will never come. */
    virtual int removal_fd() const { return -1; }
    virtual bool removed() const { return false; }

    /* Whether the host's threads run the adapter's dataplane, a pass at a
     * time (an embedded adapter's engine=inline or engine=service): then
     * adapter_pass() runs one on the calling thread, for the function's
     * port group, and says whether it did anything. After a doorbell, a
     * pass already running on another thread passes again for it; an idle
     * thread's call does nothing while one runs. Hardware, and the
     * daemon's adapter, run on their own. */
    enum class PassCause { doorbell, idle };
    virtual bool engine_on_host() const { return false; }
    virtual bool adapter_pass(PassCause) { return false; }
    /* The doorbell just written at `doorbell` (in doorbells()) served on
     * the calling thread, as a device model serves the MMIO write it
     * trapped: an L2 Tx queue's beside the passes other threads run on the
     * group's other queues where it can be, else as
     * adapter_pass(doorbell). */
    virtual bool adapter_doorbell(const volatile void*) { return false; }

    const std::string& name() const { return name_; }

protected:
    /* What kind of function the backend attached: where its BAR0 has the
     * GTT, and the sizes of the memory the backend maps for its BARs. */
    struct Bar0Layout {
        bool vf;
        uint32_t gtt_base;
        uint32_t gtt_size;
        uint32_t doorbells_size; /* the doorbell BAR's */
    };
    static constexpr Bar0Layout PF_LAYOUT{false, hsi::BAR0_GTT_BASE, hsi::GTT_SIZE, hsi::DB_BAR_SIZE};
    static constexpr Bar0Layout VF_LAYOUT{true, hsi::iov::vf_bar0::GTT_BASE, hsi::WINDOW_SIZE,
                                          hsi::iov::VF_DB_BAR_SIZE};

    explicit PciFunction(std::string name, const Bar0Layout& layout = PF_LAYOUT)
        : layout_(layout), name_(std::move(name))
    {
    }
    const Bar0Layout& layout() const { return layout_; }
    /* BAR0 outside the GTT, as the backend reaches it. */
    virtual uint32_t bar0_read(uint32_t offset) = 0;
    virtual void bar0_write(uint32_t offset, uint32_t value) = 0;

    /* The backend maps them at attach. */
    SharedBar gtt_;
    SharedBar doorbells_;

private:
    /* One subtraction and compare: an offset below the base wraps around
     * to one past the size. */
    bool in_gtt(uint32_t offset) const { return offset - layout_.gtt_base < layout_.gtt_size && offset % 4 == 0; }
    std::atomic_ref<uint32_t> gtt_word(uint32_t offset)
    {
        return std::atomic_ref<uint32_t>(
            *reinterpret_cast<uint32_t*>(const_cast<uint8_t*>(gtt_.va()) + (offset - layout_.gtt_base)));
    }

    const Bar0Layout layout_;
    std::string name_;
};

/* ---- Attaching a PCI function ------------------------------------------ */

enum class Backend { embedded, remote, vm };

/* Configuration of an embedded adapter, used by the first PF attaching to it.
 * Later attaches share the adapter; with layout_given they must ask for the
 * same layout (ports, PFs per port, wire), without it they take the one the
 * adapter has. Any attach may give TAP wires: a port the adapter has on that
 * TAP already is fine, a loopback port none of whose PFs is loaded takes it
 * (so each PF can bring its own port's TAP), anything else is refused. */
struct EmbeddedConfig {
    bool layout_given = true;
    uint32_t ports = 1;            /* 1, 2 or 4 */
    uint32_t pfs_per_port = 1;
    Wire wire = Wire::loopback;    /* loopback or cable, every port's but the TAP ports; cable: port 2k <-> port 2k+1 */
    /* Per port: the Linux TAP interface that is its wire (the kernel is the
     * link partner), created if absent; empty: the port has `wire`. */
    std::array<std::string, hsi::MAX_PORTS> tap_names{};
    uint32_t faults = 0;           /* Fault bits active from power-on */
    uint32_t link_up_delay_ms = 5; /* autonegotiation time */
    uint32_t engine_threads = 1;   /* 1 up to the adapter's port groups */
    std::vector<uint32_t> engine_cpus; /* CPU of each engine thread; empty: any */
    /* Whether the host's threads run the dataplane (PciFunction::adapter_pass);
     * unset: a new adapter's engine threads do, a joined one's as it has. */
    std::optional<bool> engine_on_host;
};

struct PciAttachParams {
    Backend backend = Backend::embedded;
    std::string adapter = "cna0"; /* embedded: adapter instance name */
    std::string daemon_socket;    /* remote: cna-adapterd's socket */
    /* remote: the flags of the daemon started when none serves the socket
     * (its adapter's layout), and the ports its adapter must have (0: any). */
    std::vector<std::string> daemon_options;
    uint32_t daemon_ports = 0;
    uint32_t pf = 0;
    /* A VF of PF `pf` (relative to it): the PF must have enabled it. An
     * embedded VF joins an adapter a PF of this process created, a remote
     * one the daemon's; neither ever creates or starts one. */
    bool is_vf = false;
    uint32_t vf = 0;
    EmbeddedConfig embedded;
    /* vm: the ivshmem device's BAR2 as EAL mapped it, and the device's name
     * (its PCI address). The VF is the one the BAR holds. */
    volatile uint8_t* vm_bar = nullptr;
    std::size_t vm_bar_len = 0;
    std::string device;
};

} // namespace cna::osal
