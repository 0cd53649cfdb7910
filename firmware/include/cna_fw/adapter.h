/* SPDX-License-Identifier: BSD-3-Clause
 * The software adapter as seen from outside: an Adapter owns ports, wires,
 * the MFW and the storms, and presents one PCI function per PF. A
 * DeviceFunction is the device side of those four resources (BAR0, the
 * doorbell BAR, MSI-X vectors, DMA through an IOMMU); the host's OSAL wraps it
 * and nothing else of the adapter is visible to the driver.
 *
 * AdapterControl is the test and operator back door, in the spirit of
 * netdevsim: link flaps, fault injection, adapter-side counters.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "hsi_common.h"
#include "hsi_control.h"

namespace cna::fw {

using hsi::control::AdapterControl;
using hsi::control::Fault;
using hsi::control::PortCounters;
using hsi::control::Wire;

/* Who runs the adapter's dataplane (Tx, the wires' Rx, RoCE): its own
 * engine threads, or the host's threads, each pass asked for through
 * DeviceFunction::engine_pass (net_cna's engine=inline and engine=service).
 * The slowpath (ramrods, the MFW, link) has an engine thread either way;
 * with host passes it sleeps while there is none. */
enum class EnginePlacement { threads, host };

struct AdapterConfig {
    std::string name;
    uint32_t ports = 1;             /* 1, 2 or 4 */
    uint32_t pfs_per_port = 1;
    Wire wire = Wire::loopback;     /* every port's wire but the TAP ports: loopback or cable */
    /* Per port: the TAP interface that is the port's wire (created if absent,
     * attached if it exists); empty: the port has `wire`. Both ends of a
     * cable pair must have TAPs or neither. */
    std::array<std::string, hsi::MAX_PORTS> tap_names{};
    uint8_t base_mac[6] = {0x02, 0x00, 0xc0, 0xa0, 0x00, 0x00}; /* PF n gets base + n */
    uint32_t faults = 0;            /* Fault bits active from power-on */
    uint32_t link_up_delay_ms = 5;  /* autonegotiation time the MFW simulates */
    /* Engine threads: 1 up to the number of port groups (a cable pair is
     * one group, any other port a group of its own); group g is animated
     * by thread g % engine_threads. */
    uint32_t engine_threads = 1;
    /* host: one dataplane per port group, engine_threads must be 1. */
    EnginePlacement engine_placement = EnginePlacement::threads;
};

/* A base MAC for an adapter of a process: locally administered, from a
 * CRC-32 of the adapter name and the process ID, its last byte 0 (PF n
 * gets base + n). Two adapters of one name in two processes, whose wires
 * may meet in one bridge, thus never share an address. */
void derive_base_mac(const std::string& name, uint32_t pid, uint8_t mac[6]);

/* Port groups of a configuration: what engine_threads may go up to. */
uint32_t port_groups(const AdapterConfig& config);
/* The name engine thread `engine` of adapter `adapter_name` has in ps, top
 * and /proc/<pid>/task/<tid>/comm (15 characters at most). */
std::string engine_thread_name(const std::string& adapter_name, uint32_t engine);

/* Where the adapter sends its log lines; the embedding host routes them to
 * its own logging (rte_log type cna.adapter). */
enum class LogLevel { err = 0, warning = 1, notice = 2, info = 3, debug = 4 };
using LogSink = std::function<void(LogLevel, const std::string&)>;
void set_log_sink(LogSink sink);

/* Why a host thread gives the adapter a pass (DeviceFunction::engine_pass):
 * it rang a doorbell, which must be served, or it found nothing to do
 * (an idle poll) and lends its time. */
enum class PassCause { doorbell, idle };

/* Host memory the adapter reaches by copying rather than by address:
 * another process's that the daemon cannot map, as the buffers a verbs
 * application allocates with malloc. `va` is the host's own address of the
 * bytes. true when every byte was copied. Engine threads call it; the
 * implementation decides how (cna-adapterd: the client's /proc/self/mem). */
class RemoteMemory {
public:
    virtual ~RemoteMemory() = default;
    virtual bool read(uint64_t va, void* dst, std::size_t len) = 0;
    virtual bool write(uint64_t va, const void* src, std::size_t len) = 0;
    /* Whether the memory is gone for good, its owner with it (a process
     * that ended): the function's host is gone, and its reset is coming. */
    virtual bool gone() const = 0;
};

/* Device side of one PCI function. Thread-safe: any host thread may access
 * BAR0 and the IOMMU while the engine runs. */
class DeviceFunction {
public:
    virtual ~DeviceFunction() = default;
    /* BAR0 outside the GTT windows (PTT entries, PTT windows, IGU commands). */
    virtual uint32_t bar0_read(uint32_t offset) = 0;
    virtual void bar0_write(uint32_t offset, uint32_t value) = 0;
    /* GTT windows of BAR0 and the doorbell BAR: plain memory the host maps. */
    virtual volatile uint8_t* gtt_memory() = 0;
    virtual volatile uint8_t* doorbell_memory() = 0;
    /* The files behind that memory, for a host in another process: the GTT
     * windows are hsi::GTT_SIZE bytes of gtt_fd from gtt_offset, the doorbell
     * BAR hsi::DB_BAR_SIZE bytes of doorbell_fd from doorbell_offset. */
    struct SharedBars {
        int gtt_fd;
        uint64_t gtt_offset;
        int doorbell_fd;
        uint64_t doorbell_offset;
    };
    virtual SharedBars shared_bars() const = 0;
    /* A VF's memory is one file, laid out as the VM transport's BAR
     * (vm_protocol.h): its GTT page and doorbell page where that layout has them,
     * and the pages before them the transport's. A PF's: {-1, nullptr}. */
    struct VmBar {
        int fd;
        uint8_t* base;
    };
    virtual VmBar vm_bar() const = 0;
    /* MSI-X: the adapter writes 1 to the vector's eventfd to interrupt. */
    virtual uint32_t msix_count() const = 0;
    virtual int msix_eventfd(uint32_t vector) const = 0;
    /* The vector signals `fd` (the adapter keeps a duplicate) from now on
     * instead of its own eventfd; -1 gives it its own back. 0 or -errno. */
    virtual int route_msix(uint32_t vector, int fd) = 0;
    /* IOMMU: the only way the adapter reaches host memory. Returns 0 or -errno. */
    virtual int dma_map(uint64_t iova, void* va, std::size_t len) = 0;
    /* [iova, iova + len) as the bytes from `va` of `memory`, which the
     * adapter copies to and from (the RDMA engines' payload; rings and
     * buffers it must address are refused there as unmapped). */
    virtual int dma_map_remote(uint64_t iova, std::shared_ptr<RemoteMemory> memory, uint64_t va,
                               std::size_t len) = 0;
    /* Every mapping, of either kind, inside [iova, iova + len). */
    virtual int dma_unmap(uint64_t iova, std::size_t len) = 0;
    virtual uint32_t pf_id() const = 0;
    virtual uint32_t port_id() const = 0;
    /* A VF (hsi_iov.h): its BAR0 is the reduced one (hsi::iov::vf_bar0),
     * its GTT a page of its own (the first hsi::WINDOW_SIZE bytes of
     * gtt_fd), its doorbell BAR hsi::iov::VF_DB_BAR_SIZE bytes. vf_id() is
     * relative to its PF, pf_id(). */
    virtual bool is_vf() const = 0;
    virtual uint32_t vf_id() const = 0;
    /* With EnginePlacement::host, one pass of the dataplane serving this
     * function's port group on the calling thread: the Tx its doorbells
     * asked for, what its wire delivered, its RoCE. It never waits: after
     * a doorbell, a thread that finds another in the group's pass leaves
     * its work to that one, which passes again; an idle thread finds that
     * pass doing its work already and leaves nothing. Whether anything was
     * done (always false with engine threads). */
    virtual bool engine_pass(PassCause cause) = 0;
    /* With EnginePlacement::host, the doorbell the host wrote at `offset`
     * of the doorbell BAR served on the calling thread, as a device model
     * serves the MMIO write it trapped: an L2 Tx queue's in a pass of its
     * own, beside the passes other threads run on the group's other
     * queues, where its frames need nothing the group's pass keeps to
     * itself; else, and for any other doorbell, as engine_pass(doorbell). */
    virtual bool doorbell_pass(uint32_t offset) = 0;
};

class Adapter {
public:
    virtual ~Adapter() = default;
    /* Powers the adapter on: SHMEM written by the MFW, engine threads running.
     * Returns nullptr with a message in *error on an invalid configuration. */
    static std::unique_ptr<Adapter> create(const AdapterConfig& config, std::string* error);
    virtual const AdapterConfig& config() const = 0;
    virtual uint32_t num_functions() const = 0;
    virtual DeviceFunction& function(uint32_t pf) = 0;
    virtual AdapterControl& control() = 0;
    /* Makes a TAP interface the wire of a loopback port no PF of which is
     * loaded: a PF joining the adapter gives its own port's wire. False with
     * a message in *error when the port cannot take it or the TAP cannot be
     * opened. */
    virtual bool attach_tap(uint32_t port, const std::string& ifname, std::string* error) = 0;
    /* What a PCIe function level reset does: PF `pf` forgets whatever its
     * driver set up (queues, RDMA objects, status blocks, interrupts, PTT
     * windows, bus mastering) and its load state with the MFW, so a new
     * driver can load it; the other functions carry on. For a driver that
     * went away without unloading (its process died), and then its VFs are
     * disabled too; VFs a driver unloaded leaving enabled stay so, as
     * assigned VFs outlive their PF's driver. */
    virtual void function_level_reset(uint32_t pf) = 0;
    /* VF `vf` of PF `pf` while the PF has it enabled (reg::IOV_NUM_VFS),
     * else nullptr. The function outlives every VF enable and disable: a
     * host may keep it; a VF its PF disabled answers nothing. */
    virtual DeviceFunction* vf_function(uint32_t pf, uint32_t vf) = 0;
    /* A VF's function level reset (its driver went away): its queues,
     * vport and status blocks are forgotten, its channel closed, and its
     * PF told (IovEvent::vf_flr), which cleans up and enables it again. */
    virtual void vf_level_reset(uint32_t pf, uint32_t vf) = 0;
    /* Pins engine thread `engine` (0..config().engine_threads - 1) to a
     * CPU (-1: no affinity). 0 or -errno. */
    virtual int set_engine_affinity(uint32_t engine, int cpu) = 0;
};

} // namespace cna::fw
