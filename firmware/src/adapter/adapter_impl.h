/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter: the chip-wide blocks (storm RAM and control, NIG and ports,
 * MFW), one FunctionHw and one PfFirmware per PF, and the engine threads that
 * poll them. It is also the glue between the blocks: frames the wire
 * delivers go to the storms' Rx, MFW events become attentions.
 *
 * Engine threads split the adapter by port group: a cable pair, or a port
 * on its own wire (loopback, TAP). A group's frames never leave it, so the
 * thread that sends a frame also delivers it, and every queue, status block
 * and counter of the group's PFs has that one writer: the dataplane takes no
 * lock. The slowpath (ramrods, MFW, link) runs on engine thread 0 while the
 * other threads wait between two passes, since it changes the state their
 * passes read.
 *
 * With EnginePlacement::host there is a dataplane per port group and no
 * thread runs it: the host's threads do, a pass at a time
 * (DeviceFunction::engine_pass), and the pass gate makes each group's pass
 * one thread's at a time as an engine thread's is. A Tx doorbell's queue
 * pass (DeviceFunction::doorbell_pass) runs beside it on a slot of its
 * own, which a hold waits out too: each Tx queue is one pass's at a time,
 * each Rx queue one writer's at a time (its claim), and what they share
 * (counters, status blocks) takes atomic adds and a status block's lock.
 * The slowpath has engine thread 0 to itself, holding every group's
 * passes off while it runs.
 */
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "adapter/grc.h"
#include "cna_fw/adapter.h"
#include "base/clock.h"
#include "base/engine.h"
#include "base/host_pass_gate.h"
#include "iov/pf_iov.h"
#include "l2/rx.h"
#include "l2/tx.h"
#include "switch/port_switch.h"
#include "mfw/mfw.h"
#include "function/function.h"
#include "pf/pf_firmware.h"
#include "slowpath/resources.h"
#include "slowpath/storm_ram.h"
#include "slowpath/storms.h"
#include "wire/nig.h"

namespace cna::fw {

class AdapterImpl final : public Adapter,
                          public AdapterControl,
                          private MfwEvents,
                          private ServingEngines {
public:
    explicit AdapterImpl(const AdapterConfig& config);
    ~AdapterImpl() override;

    /* Whether power-on obtained every OS resource (memory, eventfds). */
    bool powered_on() const;
    /* Power-on: the TAP wires the configuration names. */
    bool open_taps(std::string* error);

    /* Adapter */
    const AdapterConfig& config() const override { return config_; }
    uint32_t num_functions() const override { return static_cast<uint32_t>(functions_.size()); }
    DeviceFunction& function(uint32_t pf) override { return *functions_.at(pf); }
    AdapterControl& control() override { return *this; }
    bool attach_tap(uint32_t port, const std::string& ifname, std::string* error) override;
    int set_engine_affinity(uint32_t engine, int cpu) override;
    void function_level_reset(uint32_t pf) override;
    DeviceFunction* vf_function(uint32_t pf, uint32_t vf) override;
    void vf_level_reset(uint32_t pf, uint32_t vf) override;

    /* AdapterControl */
    void set_carrier(uint32_t port, bool present) override;
    void inject(Fault fault, bool on) override;
    void set_roce_loss(uint32_t port, uint32_t per_million) override;
    PortCounters port_counters(uint32_t port) const override { return nig_.port(port).counters(); }
    uint64_t dma_faults(uint32_t pf) const override { return functions_.at(pf)->pglue().dma_fault_count(); }
    uint64_t ptp_time(uint32_t port) const override { return nig_.port(port).ptp_clock.now(); }
    void ptp_step(uint32_t port, int64_t delta) override;
    int64_t ptp_offset(uint32_t port, uint32_t other) const override;
    bool set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns) override;

private:
    /* What one engine thread animates (or the host's threads, a pass at a
     * time): its port groups' ports and PFs, and its own Tx and Rx engines
     * (their scratch state is per pass). */
    class Dataplane final : private Pollable {
    public:
        Dataplane(AdapterImpl& adapter, uint32_t index);
        /* Starts the thread once the ports and PFs are in place. */
        void start();
        /* Stops and joins the thread, if it has one. */
        void stop() { engine_.reset(); }
        Engine& engine() { return *engine_; }
        /* A pass on the calling host thread (EnginePlacement::host). */
        bool host_pass(PassCause cause);

        uint32_t ports = 0; /* bit per port */
        FunctionList functions; /* the PFs and their VFs: L2 Tx and status blocks */
        roce::RoceList roce;    /* theirs: the RoCE engines' passes */
        RxEngine rx;
        TxEngine tx{rx};
        /* Host passes: the queue passes that run beside the group's, each
         * on a slot of its own (pass slots 1 on; slot 0 is rx and tx
         * above): its engines, and whether a pass has it, on a line of its
         * own, so that passes on different slots share none. */
        struct alignas(64) QueuePassSlot {
            struct Engines {
                explicit Engines(uint32_t slot) : rx(slot, true) {}
                RxEngine rx;
                TxEngine tx{rx};
            };
            std::atomic<bool> taken{false};
            std::unique_ptr<Engines> engines;
        };
        std::array<QueuePassSlot, PASS_SLOTS> queue_slots;
        /* A slot for the pass of the Tx queue with doorbell cid (one of
         * its own first, so that lcores on different queues meet on none):
         * taken, unless the passes are held; 0 when none is free or they
         * are held (the doorbell goes to the group's pass). */
        uint32_t take_slot(uint32_t cid);
        void give_slot(uint32_t slot) { queue_slots[slot].taken.store(false, std::memory_order_release); }
        FrameBurst roce_out;    /* the RoCE frames a function sends in a pass */
        FrameBurst roce_uplink; /* those of them for the wire, when some were not */
        PassClock clock;     /* the time of the pass, for its ports' switches too */
        std::array<std::optional<PortSwitch>, hsi::MAX_PORTS> port_switch;
        /* Held by the engine thread for the length of a pass. */
        std::mutex pass;
        /* Who runs the passes when the host's threads do. */
        HostPassGate host_gate;
        /* Holds the group's passes off (BasicLockable), the engine
         * thread's and the host's: thread 0's slowpath runs between two of
         * them, an IOMMU unmap waits out the DMA in flight. The mutex also
         * makes the holders take turns. */
        void lock()
        {
            pass.lock();
            host_gate.hold();
            for (const QueuePassSlot& slot : queue_slots)
                while (slot.taken.load(std::memory_order_seq_cst))
                    cpu_relax();
        }
        void unlock()
        {
            host_gate.release();
            pass.unlock();
        }

    private:
        bool poll() override;
        std::span<pollfd> wake_fds() override;

        AdapterImpl& adapter_;
        const uint32_t index_;
        std::array<pollfd, hsi::MAX_PORTS> wake_fds_{};
        std::unique_ptr<Engine> engine_;
    };

    /* Engine thread 0 alone, with host passes. */
    class SlowpathEngine final : private Pollable {
    public:
        explicit SlowpathEngine(AdapterImpl& adapter);
        Engine& engine() { return engine_; }

    private:
        bool poll() override { return adapter_.poll_slowpath(); }
        std::span<pollfd> wake_fds() override { return {}; }

        AdapterImpl& adapter_;
        Engine engine_;
    };

    /* Engine thread 0, before its dataplane pass (with host passes, all it
     * does): the slowpath, if any is pending, with the other dataplanes'
     * passes held. True if there was slowpath work (a link still
     * negotiating is not work: the engine may back off meanwhile). */
    bool poll_slowpath();
    /* One dataplane pass: the TAPs, then every started PF's Tx (whose
     * frames the wire delivers to the group's Rx at once). */
    bool poll_dataplane(Dataplane& dp);
    /* A function's RoCE: what its QPs send, through its port's switch. */
    bool poll_roce(roce::RoceFirmware& roce, Dataplane& dp);
    bool slowpath_pending() const;
    /* EnginePlacement::host: the host's threads run the dataplanes. */
    bool host_passes() const { return config_.engine_placement == EnginePlacement::host; }
    /* ServingEngines */
    void wait_passes() override;
    bool pass(uint32_t port, PassCause cause) override;
    bool tx_doorbell(uint32_t pf, uint32_t cid) override;
    /* A Tx doorbell's queue pass: whether one may serve the PF's queue
     * with doorbell cid (its index in `index`) beside the group's pass.
     * It may when its frames need nothing the group's pass keeps to
     * itself: no RoCE on the group (its QPs and timers), no switching
     * between the port's functions, no TAP wire, no loss on the wire, no
     * VF Tx policy. Passes held off, so that none of it changes. */
    bool serves_beside(const Dataplane& dp, PfFirmware& pf, uint32_t cid, uint32_t& index);
    /* Writes every changed status block of the given functions and tells
     * the IGU (CAU coalescing: once per Tx poll that sent frames, and once
     * per pass), through the DMA views of pass slot `slot`. */
    static void flush_status_blocks(std::span<FunctionFirmware* const> functions, uint32_t slot = 0);
    /* Slowpath lock held: the engines serve a PF's new VF. */
    void vf_created(uint32_t pf, VfFirmware& vf);
    /* Slowpath lock held: whether the port's switch runs (its PFs' VFs). */
    void update_switching(uint32_t port);
    /* Holds every engine thread between two passes and the slowpath, in
     * the order the slowpath takes them. */
    class Quiesce;
    /* Slowpath lock held: the port's wire becomes the TAP ifname. */
    bool wire_tap(uint32_t port, const std::string& ifname, std::string* error);
    void run_slowpath();
    /* MfwEvents */
    void mfw_event(uint32_t pf) override;
    void function_unloaded(uint32_t pf) override;
    bool vfs_enabled(uint32_t pf) override;
    bool vf_flr_done(uint32_t pf, uint32_t vf) override;

    AdapterConfig config_; /* tap_names grow as PFs give their ports' wires */
    const Grant grant_{};
    std::mutex slowpath_;
    StormRam ram_;
    Storms storms_{ram_};
    Nig nig_;
    Mfw mfw_;
    std::vector<std::unique_ptr<PfFirmware>> pf_firmware_;
    Grc grc_;
    std::vector<std::unique_ptr<FunctionHw>> functions_;
    std::vector<std::unique_ptr<PfIov>> iovs_;
    std::vector<std::vector<PfFirmware*>> pfs_on_port_;
    std::array<std::unique_ptr<EmbeddedSwitch>, hsi::MAX_PORTS> eswitches_; /* a port's switch in switchdev mode */
    std::array<FunctionList, hsi::MAX_PORTS> functions_on_port_;
    std::array<roce::RoceList, hsi::MAX_PORTS> roce_on_port_; /* functions_on_port_'s RoCE firmware */
    PublishedList<VfFirmware, hsi::MAX_PFS * hsi::iov::MAX_VFS_PER_PF> vfs_; /* their RDMA slowpaths */
    /* Set while the slowpath waits for the other engine threads' pass
     * locks: they hold off their next pass instead of racing it for them. */
    std::atomic<bool> slowpath_waiting_{false};
    /* Last: the engines start polling as soon as they exist. */
    std::vector<std::unique_ptr<Dataplane>> dataplanes_;
    std::array<Dataplane*, hsi::MAX_PORTS> dataplane_of_port_{};
    std::unique_ptr<SlowpathEngine> slowpath_engine_; /* host passes */
};

} // namespace cna::fw
