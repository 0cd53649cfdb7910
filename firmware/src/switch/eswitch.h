/* SPDX-License-Identifier: BSD-3-Clause
 * A port's switch in switchdev mode (hsi_switch.h): which PF manages it,
 * its rules and their counters, which of the PF's vports represent which
 * VF, and the endpoints a frame is delivered to. One per port, shared by
 * the slowpath (the manager's ramrods, with every pass of the port held)
 * and the port's dataplane (PortSwitch), which reads it without a lock.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "hsi_iov.h"
#include "hsi_spq.h"
#include "hsi_switch.h"
#include "bus/dma_ring.h"
#include "switch/switch_table.h"

namespace cna::fw {

class FunctionFirmware;
class FunctionList;
class PfIov;
class StormRam;

class EmbeddedSwitch {
public:
    /* on_mode_changed: the port switches from now on (or no longer needs
     * to), slowpath lock held. */
    EmbeddedSwitch(StormRam& ram, const FunctionList& port_functions, std::function<void()> on_mode_changed)
        : ram_(ram), port_functions_(port_functions), on_mode_changed_(std::move(on_mode_changed))
    {
    }

    /* The manager's ramrods (engine thread 0, every pass held). A PF other
     * than the manager gets bad_state. */
    hsi::FwReturn set_mode(FunctionFirmware& pf, PfIov& iov, const hsi::eswitch::SwitchModeRamrodData& d);
    hsi::FwReturn add_rule(FunctionFirmware& pf, const hsi::eswitch::SwitchRuleAddRamrodData& d, uint32_t* rule_id);
    hsi::FwReturn remove_rule(FunctionFirmware& pf, uint32_t rule_id);
    /* A vport of pf started or stopped: its representors may have. */
    void vports_changed(const FunctionFirmware& pf);
    /* pf unloaded or reset: if it managed the switch, back to legacy. */
    void release(const FunctionFirmware& pf);

    /* Dataplane. */
    bool switchdev() const { return manager_ != nullptr; }
    FunctionFirmware& manager() const { return *manager_; }
    const SwitchTable& table() const { return table_; }
    hsi::eswitch::SwitchStats& stats() const { return *stats_; }
    /* The endpoint a function's vport sends as, NOT_MANAGED when the
     * function is not the manager or one of its VFs (legacy switching). */
    static constexpr uint16_t NOT_MANAGED = 0xffff;
    uint16_t source_endpoint(const FunctionFirmware& fn, uint32_t vport) const;
    /* Where a frame from `source` goes when no rule takes it; NOWHERE for a
     * VF no started vport represents. */
    static constexpr uint16_t NOWHERE = 0xfffe;
    uint16_t miss_destination(uint16_t source) const;
    /* The function behind a VF endpoint, nullptr when its VF is not enabled. */
    FunctionFirmware* vf(uint32_t vf) const;
    /* A rule's hit: its counters in host memory (the DMA view of the pass
     * slot the frame is on). */
    void count_hit(const SwitchRule& rule, uint32_t len, uint32_t slot);

private:
    hsi::FwReturn check_endpoint(uint16_t endpoint) const;
    /* The host's counters of a rule id, zeroed as a new rule takes it. */
    bool zero_counters(uint32_t rule_id);

    StormRam& ram_;
    const FunctionList& port_functions_;
    const std::function<void()> on_mode_changed_;
    FunctionFirmware* manager_ = nullptr;
    PfIov* iov_ = nullptr;
    hsi::eswitch::SwitchStats* stats_ = nullptr;
    SwitchTable table_;
    DmaRing counters_;
    std::array<uint8_t, hsi::iov::MAX_VFS_PER_PF> representor_{}; /* the vport of each VF's, NO_VF for none */
};

} // namespace cna::fw
