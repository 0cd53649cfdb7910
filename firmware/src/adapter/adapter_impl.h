/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter: the chip-wide blocks (storm RAM and control, NIG and ports,
 * MFW), one FunctionHw and one PfStorm per PF, and the engine thread that
 * polls them. It is also the glue between the blocks: frames the wire
 * delivers go to the storms' Rx, MFW events become attentions.
 */
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "cna_fw/adapter.h"
#include "engine/engine.h"
#include "l2/rx.h"
#include "l2/tx.h"
#include "mfw/mfw.h"
#include "mfw/resources.h"
#include "pci/function.h"
#include "pci/grc.h"
#include "storm/pf_storm.h"
#include "storm/storm_ram.h"
#include "storm/storms.h"
#include "wire/nig.h"

namespace cna::fw {

class AdapterImpl final : public Adapter,
                          public AdapterControl,
                          private Pollable,
                          private FrameReceiver,
                          private MfwEvents {
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
    int set_engine_affinity(int cpu) override { return engine_->set_affinity(cpu); }

    /* AdapterControl */
    void set_carrier(uint32_t port, bool present) override;
    void inject(Fault fault, bool on) override;
    PortCounters port_counters(uint32_t port) const override { return nig_.port(port).counters(); }
    uint64_t dma_faults(uint32_t pf) const override { return functions_.at(pf)->pglue().dma_fault_count(); }

private:
    /* Pollable: one engine pass. */
    bool poll() override;
    std::span<pollfd> wake_fds() override { return nig_.tap_pollfds(); }
    bool slowpath_pending() const;
    /* Writes every changed status block and tells the IGU (CAU coalescing:
     * once per Tx poll that sent frames, and once per pass). */
    void flush_status_blocks();
    /* Slowpath lock held: the port's wire becomes the TAP ifname. */
    bool wire_tap(uint32_t port, const std::string& ifname, std::string* error);
    void run_slowpath();
    /* FrameReceiver */
    void receive(Port& port, const FrameBurst& burst) override;
    /* MfwEvents */
    void mfw_event(uint32_t pf) override;
    void function_unloaded(uint32_t pf) override;

    AdapterConfig config_; /* tap_names grow as PFs give their ports' wires */
    const Grant grant_{};
    std::mutex slowpath_;
    StormRam ram_;
    Storms storms_{ram_};
    Nig nig_;
    Mfw mfw_;
    std::vector<std::unique_ptr<PfStorm>> pf_storms_;
    Grc grc_;
    std::vector<std::unique_ptr<FunctionHw>> functions_;
    std::vector<std::vector<PfStorm*>> pfs_on_port_;
    std::unique_ptr<TxEngine> tx_ = std::make_unique<TxEngine>();
    std::unique_ptr<RxEngine> rx_ = std::make_unique<RxEngine>();
    /* Last: the engine starts polling as soon as it exists. */
    std::unique_ptr<Engine> engine_;
};

} // namespace cna::fw
