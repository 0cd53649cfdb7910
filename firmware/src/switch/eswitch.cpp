/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch/eswitch.h"

#include <atomic>

#include "bus/dma.h"
#include "iov/pf_iov.h"
#include "l2/function_firmware.h"
#include "l2/stats.h"
#include "slowpath/storm_ram.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eswitch;

FwReturn EmbeddedSwitch::set_mode(FunctionFirmware& pf, PfIov& iov, const SwitchModeRamrodData& d)
{
    if (manager_ != nullptr && manager_ != &pf)
        return FwReturn::bad_state; /* another PF of the port manages it */
    switch (static_cast<SwitchMode>(d.mode)) {
    case SwitchMode::legacy:
        release(pf);
        return FwReturn::ok;
    case SwitchMode::switchdev:
        break;
    default:
        return FwReturn::invalid_param;
    }
    if (manager_ == &pf)
        return FwReturn::bad_state; /* a new table takes legacy mode first */
    if (d.max_rules == 0 || (d.counters.lo & 7) != 0)
        return FwReturn::invalid_param;
    if (d.max_rules > MAX_RULES)
        return FwReturn::no_resource;
    /* The port's wire is the switch's: no other PF may be on it. */
    for (const FunctionFirmware* fn : port_functions_.view())
        if (fn != &pf && !fn->hw().is_vf() && fn->started())
            return FwReturn::bad_state;
    counters_ = DmaRing(from_regpair(d.counters), uint64_t{d.max_rules} * sizeof(SwitchCounters));
    manager_ = &pf;
    for (uint32_t id = 0; id < d.max_rules; id++) {
        if (!zero_counters(id)) {
            manager_ = nullptr;
            counters_ = DmaRing{};
            return FwReturn::dma_error; /* memory the PF did not give the adapter */
        }
    }
    iov_ = &iov;
    table_.resize(d.max_rules);
    stats_ = &ram_.switch_stats(pf.hw().pf_id());
    ram_.zero(iro::switch_stats(pf.hw().pf_id()), iro::SWITCH_STATS_SIZE);
    vports_changed(pf);
    on_mode_changed_();
    return FwReturn::ok;
}

void EmbeddedSwitch::release(const FunctionFirmware& pf)
{
    if (manager_ != &pf)
        return;
    manager_ = nullptr;
    iov_ = nullptr;
    stats_ = nullptr;
    counters_ = DmaRing{};
    table_.resize(0);
    on_mode_changed_();
}

FwReturn EmbeddedSwitch::check_endpoint(uint16_t e) const
{
    const uint32_t index = e & ~endpoint::KIND;
    switch (e & endpoint::KIND) {
    case endpoint::WIRE: return e == endpoint::WIRE ? FwReturn::ok : FwReturn::invalid_param;
    case endpoint::VF: return index < iov_->num_vfs() ? FwReturn::ok : FwReturn::invalid_param;
    case endpoint::VPORT: return index < manager_->grant().num_vports ? FwReturn::ok : FwReturn::invalid_param;
    default: return FwReturn::invalid_param;
    }
}

FwReturn EmbeddedSwitch::add_rule(FunctionFirmware& pf, const SwitchRuleAddRamrodData& d, uint32_t* rule_id)
{
    if (manager_ != &pf)
        return FwReturn::bad_state;
    if (!d.any_source)
        if (FwReturn rc = check_endpoint(d.source); rc != FwReturn::ok)
            return rc;
    if (d.fate == static_cast<uint8_t>(Fate::forward)) {
        if (FwReturn rc = check_endpoint(d.destination); rc != FwReturn::ok)
            return rc;
        /* Frames never go back out of the wire they came in on. */
        if (!d.any_source && d.source == endpoint::WIRE && d.destination == endpoint::WIRE)
            return FwReturn::invalid_param;
    }
    uint32_t id = 0;
    if (FwReturn rc = table_.add(d, &id); rc != FwReturn::ok)
        return rc;
    if (!zero_counters(id)) {
        table_.remove(id);
        return FwReturn::dma_error;
    }
    *rule_id = id;
    return FwReturn::ok;
}

FwReturn EmbeddedSwitch::remove_rule(FunctionFirmware& pf, uint32_t rule_id)
{
    if (manager_ != &pf)
        return FwReturn::bad_state;
    return table_.remove(rule_id);
}

void EmbeddedSwitch::vports_changed(const FunctionFirmware& pf)
{
    if (manager_ != &pf)
        return;
    representor_.fill(Vport::NO_VF);
    for (uint32_t v = 0; v < pf.l2().vports.size(); v++) {
        const Vport& vport = pf.l2().vports[v];
        if (vport.started && vport.represented_vf != Vport::NO_VF)
            representor_[vport.represented_vf] = static_cast<uint8_t>(v);
    }
}

uint16_t EmbeddedSwitch::source_endpoint(const FunctionFirmware& fn, uint32_t vport) const
{
    if (&fn == manager_)
        return endpoint::vport(vport);
    if (fn.hw().is_vf() && fn.hw().pf_id() == manager_->hw().pf_id())
        return endpoint::vf(fn.hw().vf_id());
    return NOT_MANAGED;
}

uint16_t EmbeddedSwitch::miss_destination(uint16_t source) const
{
    const uint32_t index = source & ~endpoint::KIND;
    switch (source & endpoint::KIND) {
    case endpoint::WIRE: return endpoint::vport(0);
    case endpoint::VF:
        return representor_[index] != Vport::NO_VF ? endpoint::vport(representor_[index]) : NOWHERE;
    default: {
        const uint8_t vf = manager_->l2().vports[index].represented_vf;
        return vf != Vport::NO_VF ? endpoint::vf(vf) : endpoint::WIRE;
    }
    }
}

FunctionFirmware* EmbeddedSwitch::vf(uint32_t vf) const { return iov_->firmware(vf); }

bool EmbeddedSwitch::zero_counters(uint32_t rule_id)
{
    static constexpr SwitchCounters ZERO{};
    return manager_->hw().dma().write(counters_, uint64_t{rule_id} * sizeof(ZERO), &ZERO, sizeof(ZERO));
}

void EmbeddedSwitch::count_hit(const SwitchRule& rule, uint32_t len, uint32_t slot)
{
    const uint64_t offset = uint64_t{table_.id_of(rule)} * sizeof(SwitchCounters);
    uint8_t* at = manager_->hw().dma(slot).map(counters_, offset, sizeof(SwitchCounters));
    if (at == nullptr)
        return; /* the fault is raised: the host took the memory back */
    auto* c = reinterpret_cast<SwitchCounters*>(at);
    /* Single stores the host's 64-bit loads never see torn. */
    std::atomic_ref<uint64_t>(c->hits).store(c->hits + 1, std::memory_order_relaxed);
    std::atomic_ref<uint64_t>(c->bytes).store(c->bytes + len, std::memory_order_relaxed);
}

} // namespace cna::fw
