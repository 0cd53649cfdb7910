/* SPDX-License-Identifier: BSD-3-Clause */
#include "adapter/adapter_impl.h"

#include <algorithm>

#include "base/crc32.h"
#include "base/log.h"
#include "roce/icrc.h"
#include "roce/transport.h"

namespace cna::fw {
namespace {

Wire wire_of(const AdapterConfig& config, uint32_t port)
{
    return config.tap_names[port].empty() ? config.wire : Wire::tap;
}

const char* wire_name(Wire wire)
{
    switch (wire) {
    case Wire::loopback: return "loopback";
    case Wire::cable: return "cable";
    case Wire::tap: return "tap";
    }
    return "?";
}

uint32_t port_group(const AdapterConfig& config, uint32_t port)
{
    return config.wire == Wire::cable ? port / 2 : port;
}

} // namespace

void derive_base_mac(const std::string& name, uint32_t pid, uint8_t mac[6])
{
    const uint32_t hash = crc32(crc32(0, name.data(), name.size()), &pid, sizeof(pid));
    mac[0] = 0x02; /* locally administered, unicast */
    mac[1] = static_cast<uint8_t>(hash >> 24);
    mac[2] = static_cast<uint8_t>(hash >> 16);
    mac[3] = static_cast<uint8_t>(hash >> 8);
    mac[4] = static_cast<uint8_t>(hash);
    mac[5] = 0;
}

uint32_t port_groups(const AdapterConfig& config)
{
    return port_group(config, config.ports - 1) + 1;
}

std::string engine_thread_name(const std::string& adapter_name, uint32_t engine)
{
    std::string prefix = engine == 0 ? "cna-" : "cna" + std::to_string(engine) + "-";
    return (prefix + adapter_name).substr(0, 15);
}

AdapterImpl::AdapterImpl(const AdapterConfig& config)
    : config_(config), nig_(config.ports, config.wire), mfw_(config_, grant_, nig_, *this),
      grc_(slowpath_, mfw_, nig_, storms_, ram_, pf_firmware_, iovs_), pfs_on_port_(config.ports)
{
    uint32_t pfs = config.ports * config.pfs_per_port;
    for (uint32_t pf = 0; pf < pfs; pf++) {
        functions_.push_back(
            std::make_unique<FunctionHw>(pf, mfw_.port_of(pf), grant_.num_sbs + 1, grc_, ram_.gtt_page(pf),
                                         ram_.gtt_fd(pf), static_cast<ServingEngines&>(*this)));
        PtpClock& clock = nig_.port(mfw_.port_of(pf)).ptp_clock;
        pf_firmware_.push_back(std::make_unique<PfFirmware>(*functions_.back(), ram_, storms_, grant_, clock));
        iovs_.push_back(std::make_unique<PfIov>(
            *functions_.back(), grc_, ram_, storms_, clock, static_cast<ServingEngines&>(*this),
            [this, pf](VfFirmware& vf) { vf_created(pf, vf); },
            [this, pf] { update_switching(mfw_.port_of(pf)); }));
        pf_firmware_.back()->attach_iov(*iovs_.back());
        const uint32_t port = mfw_.port_of(pf);
        if (!eswitches_[port])
            eswitches_[port] = std::make_unique<EmbeddedSwitch>(ram_, functions_on_port_[port],
                                                                [this, port] { update_switching(port); });
        pf_firmware_.back()->attach_switch(*eswitches_[port]);
        pfs_on_port_[mfw_.port_of(pf)].push_back(pf_firmware_.back().get());
        functions_on_port_[mfw_.port_of(pf)].add(pf_firmware_.back().get());
        roce_on_port_[mfw_.port_of(pf)].add(&pf_firmware_.back()->roce());
    }
    /* Faults asked for at power-on, set as inject() sets them later (the
     * MFW takes its own from the configuration). */
    for (Fault fault : {Fault::fw_assert, Fault::lose_ramrod, Fault::dma_fault})
        inject(fault, config.faults & static_cast<uint32_t>(fault));
    const uint32_t num_dataplanes = host_passes() ? port_groups(config) : config.engine_threads;
    for (uint32_t t = 0; t < num_dataplanes; t++)
        dataplanes_.push_back(std::make_unique<Dataplane>(*this, t));
    for (uint32_t port = 0; port < config.ports; port++) {
        Dataplane& dp = *dataplanes_[port_group(config, port) % num_dataplanes];
        dataplane_of_port_[port] = &dp;
        dp.ports |= 1u << port;
        for (PfFirmware* pf : pfs_on_port_[port]) {
            dp.functions.add(pf);
            dp.roce.add(&pf->roce());
        }
        PortSwitch& sw = dp.port_switch[port].emplace(roce_on_port_[port], functions_on_port_[port], storms_,
                                                      *eswitches_[port], dp.clock);
        nig_.port(port).bind_receiver(sw);
        nig_.port(port).bind_switch(sw);
    }
    if (host_passes()) {
        slowpath_engine_ = std::make_unique<SlowpathEngine>(*this);
        log(LogLevel::info, "%s: powered on, %u port(s), %u PF(s), %s wire, the host's threads run the dataplane",
            config.name.c_str(), config.ports, pfs, wire_name(config.wire));
        return;
    }
    for (auto& dp : dataplanes_)
        dp->start();
    log(LogLevel::info, "%s: powered on, %u port(s), %u PF(s), %s wire, %u engine thread(s)", config.name.c_str(),
        config.ports, pfs, wire_name(config.wire), config.engine_threads);
}

AdapterImpl::~AdapterImpl()
{
    /* Every thread stopped before any dataplane goes: thread 0 takes the
     * others' pass locks. */
    slowpath_engine_.reset();
    for (auto& dp : dataplanes_)
        dp->stop();
}

AdapterImpl::Dataplane::Dataplane(AdapterImpl& adapter, uint32_t index)
    : rx(0, adapter.host_passes()), adapter_(adapter), index_(index)
{
    if (!adapter.host_passes())
        return;
    for (uint32_t slot = 1; slot < PASS_SLOTS; slot++)
        queue_slots[slot].engines = std::make_unique<QueuePassSlot::Engines>(slot);
}

uint32_t AdapterImpl::Dataplane::take_slot(uint32_t cid)
{
    for (uint32_t i = 0; i < PASS_SLOTS - 1; i++) {
        const uint32_t slot = 1 + (cid + i) % (PASS_SLOTS - 1);
        std::atomic<bool>& taken = queue_slots[slot].taken;
        if (taken.load(std::memory_order_relaxed) || taken.exchange(true, std::memory_order_seq_cst))
            continue;
        if (!host_gate.held())
            return slot;
        give_slot(slot);
        return 0;
    }
    return 0;
}

void AdapterImpl::Dataplane::start()
{
    const std::string name = engine_thread_name(adapter_.config_.name, index_);
    engine_ = std::make_unique<Engine>(name, static_cast<Pollable&>(*this));
}

bool AdapterImpl::Dataplane::poll()
{
    if (index_ == 0) {
        std::lock_guard hold(pass);
        bool slowpath = adapter_.poll_slowpath();
        return adapter_.poll_dataplane(*this) || slowpath;
    }
    while (adapter_.slowpath_waiting_.load(std::memory_order_acquire))
        cpu_relax();
    std::lock_guard hold(pass);
    return adapter_.poll_dataplane(*this);
}

bool AdapterImpl::Dataplane::host_pass(PassCause cause)
{
    /* After a doorbell: the runner, or the next call after the hold, serves
     * the request. Idle: the runner's pass does what this one would. */
    if (!(cause == PassCause::doorbell ? host_gate.enter() : host_gate.enter_if_free()))
        return false;
    bool work = false;
    do
        work |= adapter_.poll_dataplane(*this);
    while (!host_gate.done()); /* a request came during the pass: its thread left it to us */
    return work;
}

std::span<pollfd> AdapterImpl::Dataplane::wake_fds()
{
    return adapter_.nig_.tap_pollfds(ports, wake_fds_);
}

AdapterImpl::SlowpathEngine::SlowpathEngine(AdapterImpl& adapter)
    : adapter_(adapter), engine_(engine_thread_name(adapter.config_.name, 0), static_cast<Pollable&>(*this))
{
}

int AdapterImpl::set_engine_affinity(uint32_t engine, int cpu)
{
    if (host_passes())
        return engine == 0 ? slowpath_engine_->engine().set_affinity(cpu) : -EINVAL;
    if (engine >= dataplanes_.size())
        return -EINVAL;
    return dataplanes_[engine]->engine().set_affinity(cpu);
}

bool AdapterImpl::pass(uint32_t port, PassCause cause)
{
    return host_passes() && dataplane_of_port_[port]->host_pass(cause);
}

bool AdapterImpl::tx_doorbell(uint32_t pf, uint32_t cid)
{
    if (!host_passes())
        return false;
    PfFirmware& fw = *pf_firmware_[pf];
    const uint32_t port = fw.hw().port_id();
    Dataplane& dp = *dataplane_of_port_[port];
    if (const uint32_t slot = dp.take_slot(cid); slot != 0) {
        uint32_t index = 0;
        const bool beside = serves_beside(dp, fw, cid, index);
        bool work = false;
        if (beside) {
            work = dp.queue_slots[slot].engines->tx.serve(fw, index, nig_.port(port)) != 0;
            flush_status_blocks(dp.functions.view(), slot);
        }
        dp.give_slot(slot);
        if (beside)
            return work;
    }
    return dp.host_pass(PassCause::doorbell);
}

bool AdapterImpl::serves_beside(const Dataplane& dp, PfFirmware& pf, uint32_t cid, uint32_t& index)
{
    if (!storms_.running() || !pf.started())
        return false;
    const Port& port = nig_.port(pf.hw().port_id());
    if (port.switching.load(std::memory_order_relaxed) || port.tap() != nullptr || port.loses())
        return false;
    const std::span<roce::RoceFirmware* const> roce = dp.roce.view();
    if (std::any_of(roce.begin(), roce.end(), [](roce::RoceFirmware* r) { return r->active(); }))
        return false;
    for (uint32_t queues = pf.l2().started_txqs; queues != 0; queues &= queues - 1) {
        const uint32_t queue = std::countr_zero(queues);
        const TxQueue& q = pf.l2().txqs[queue];
        if (q.cid == cid) {
            index = queue;
            return !pf.l2().vports[q.vport].tx_policy;
        }
    }
    return false;
}

bool AdapterImpl::powered_on() const
{
    if (!ram_.valid())
        return false;
    for (const auto& fn : functions_)
        if (!fn->valid())
            return false;
    return true;
}

bool AdapterImpl::open_taps(std::string* error)
{
    std::lock_guard lock(slowpath_);
    for (uint32_t port = 0; port < config_.ports; port++)
        if (!config_.tap_names[port].empty() && !wire_tap(port, config_.tap_names[port], error))
            return false;
    return true;
}

bool AdapterImpl::attach_tap(uint32_t port, const std::string& ifname, std::string* error)
{
    std::string why;
    std::lock_guard lock(slowpath_);
    if (port >= config_.ports)
        why = "no such port";
    else if (wire_of(config_, port) != Wire::loopback)
        why = std::string("its wire is already a ") + wire_name(wire_of(config_, port));
    else if (mfw_.port_loaded(port))
        why = "a PF of the port is loaded";
    else if (wire_tap(port, ifname, &why))
        return true;
    if (error != nullptr)
        *error = "port " + std::to_string(port) + ": " + why;
    return false;
}

bool AdapterImpl::wire_tap(uint32_t port, const std::string& ifname, std::string* error)
{
    if (!nig_.attach_tap(port, ifname, error))
        return false;
    config_.tap_names[port] = ifname;
    log(LogLevel::info, "%s: port %u wired to TAP interface %s", config_.name.c_str(), port, ifname.c_str());
    return true;
}

void AdapterImpl::wait_passes()
{
    for (auto& dp : dataplanes_)
        std::lock_guard wait(*dp);
}

bool AdapterImpl::slowpath_pending() const
{
    if (storms_.assert_event_pending() || mfw_.mailbox_pending())
        return true;
    for (const auto& pf : pf_firmware_)
        if (pf->spq().pending() || pf->hw().attention().undelivered() || pf->roce().events_pending())
            return true;
    for (const auto& iov : iovs_)
        if (iov->events_pending() || iov->resets_pending())
            return true;
    for (VfFirmware* vf : vfs_.view())
        if (vf->spq().pending() || vf->roce().events_pending())
            return true;
    return false;
}

bool AdapterImpl::poll_slowpath()
{
    if (nig_.take_carrier_loss())
        mfw_.carrier_changed();
    bool work = slowpath_pending();
    if (!work && !mfw_.link_pending())
        return false;
    /* The other threads first, the slowpath lock last: host threads wait
     * for it (GRC accesses) only while the slowpath runs, not while the
     * other threads finish their passes. */
    slowpath_waiting_.store(true, std::memory_order_relaxed);
    std::array<std::unique_lock<Dataplane>, hsi::MAX_PORTS> held;
    for (std::size_t t = host_passes() ? 0 : 1; t < dataplanes_.size(); t++)
        held[t] = std::unique_lock(*dataplanes_[t]);
    slowpath_waiting_.store(false, std::memory_order_relaxed);
    std::lock_guard lock(slowpath_);
    run_slowpath();
    /* The slowpath SBs it changed belong to every group's PFs: written
     * back before their threads, which own the CAUs, run again. */
    for (auto& dp : dataplanes_)
        flush_status_blocks(dp->functions.view());
    return work;
}

bool AdapterImpl::poll_dataplane(Dataplane& dp)
{
    dp.clock.begin();
    bool work = nig_.poll_taps(dp.ports, dp.rx);
    work |= nig_.drain_cables(dp.ports, dp.rx);
    const std::span<FunctionFirmware* const> functions = dp.functions.view();
    if (storms_.running()) {
        for (FunctionFirmware* fn : functions) {
            if (fn->started() && dp.tx.poll(*fn, nig_.port(fn->hw().port_id())) != 0) {
                /* The frames this function sent are in their Rx rings: the
                 * host may take them while the next one's queues are served. */
                flush_status_blocks(functions);
                work = true;
            }
        }
        for (roce::RoceFirmware* roce : dp.roce.view())
            if (roce->active())
                work |= poll_roce(*roce, dp);
    }
    flush_status_blocks(functions); /* whatever else changed them (TAP) */
    dp.clock.end();
    return work;
}

bool AdapterImpl::poll_roce(roce::RoceFirmware& roce, Dataplane& dp)
{
    FrameBurst& out = dp.roce_out;
    out.clear();
    Port& port = nig_.port(roce.port());
    roce.track_link(port.link_up.load(std::memory_order_relaxed));
    const bool work = roce.poll(dp.clock.now(), out);
    if (out.count == 0)
        return work;
    const FrameBurst& wire = dp.port_switch[port.id()]->switch_roce(out, roce, dp.roce_uplink);
    if (wire.count == 0)
        return work;
    /* Frames to a TAP leave the adapter: their ICRCs now. (A TAP is
     * attached only while no PF of the port is loaded.) */
    if (port.tap() != nullptr)
        roce::write_pending_icrcs(wire);
    port.transmit(wire, dp.rx);
    return work;
}

void AdapterImpl::flush_status_blocks(std::span<FunctionFirmware* const> functions, uint32_t slot)
{
    for (FunctionFirmware* fn : functions)
        if (Cau& cau = fn->hw().cau(); cau.dirty())
            cau.flush(fn->hw().dma(slot), fn->hw().igu());
}

void AdapterImpl::vf_created(uint32_t pf, VfFirmware& vf)
{
    const uint32_t port = mfw_.port_of(pf);
    functions_on_port_[port].add(&vf);
    roce_on_port_[port].add(&vf.roce());
    dataplane_of_port_[port]->functions.add(&vf);
    dataplane_of_port_[port]->roce.add(&vf.roce());
    vfs_.add(&vf);
}

void AdapterImpl::update_switching(uint32_t port)
{
    /* A port switches between its functions while a PF of it has VFs, or
     * manages it in switchdev mode: the PFs alone in legacy mode need no
     * switch, their frames going to the wire as ever. */
    const bool vfs = std::any_of(pfs_on_port_[port].begin(), pfs_on_port_[port].end(),
                                 [this](PfFirmware* pf) { return iovs_[pf->pf()]->num_vfs() != 0; });
    nig_.port(port).switching.store(vfs || eswitches_[port]->switchdev(), std::memory_order_release);
}

void AdapterImpl::run_slowpath()
{
    /* First: a VF's objects are gone before its PF hears from it again. */
    for (const auto& iov : iovs_)
        iov->run_resets();
    if (storms_.take_assert_event())
        for (const auto& pf : pf_firmware_)
            pf->raise_fw_assert(fw_assert::INJECTED);
    mfw_.poll(Link::Clock::now());
    for (const auto& pf : pf_firmware_) {
        pf->spq().poll();
        pf->post_async_events();
    }
    for (VfFirmware* vf : vfs_.view()) {
        vf->spq().poll();
        vf->roce().post_events(vf->spq());
    }
    for (const auto& fn : functions_)
        fn->attention().deliver();
}

void AdapterImpl::mfw_event(uint32_t pf)
{
    functions_[pf]->attention().raise(hsi::attn::MFW_EVENT);
}

void AdapterImpl::function_unloaded(uint32_t pf)
{
    iovs_[pf]->unattend();
    pf_firmware_[pf]->reset();
    functions_[pf]->pglue().reset();
}

/* Every engine thread between two passes and the slowpath idle, in the
 * order the slowpath takes them. */
class AdapterImpl::Quiesce {
public:
    explicit Quiesce(AdapterImpl& adapter)
    {
        for (std::size_t t = 0; t < adapter.dataplanes_.size(); t++)
            held_[t] = std::unique_lock(*adapter.dataplanes_[t]);
        slowpath_ = std::unique_lock(adapter.slowpath_);
    }

private:
    std::array<std::unique_lock<Dataplane>, hsi::MAX_PORTS> held_;
    std::unique_lock<std::mutex> slowpath_;
};

bool AdapterImpl::vf_flr_done(uint32_t pf, uint32_t vf)
{
    return iovs_[pf]->flr_done(vf);
}

void AdapterImpl::function_level_reset(uint32_t pf)
{
    if (pf >= functions_.size())
        return;
    Quiesce quiet(*this);
    /* A driver that unloaded left its VFs enabled on purpose, for their
     * drivers: only one that died takes them along. Before the MFW's
     * reset, whose PHY stays up for VFs. */
    const bool driver_died = mfw_.function_loaded(pf);
    const uint32_t vfs = iovs_[pf]->num_vfs();
    if (driver_died)
        iovs_[pf]->reset();
    mfw_.function_reset(pf);
    pf_firmware_[pf]->reset();
    functions_[pf]->reset();
    if (driver_died || vfs == 0)
        log(LogLevel::notice, "%s: pf%u function level reset", config_.name.c_str(), pf);
    else
        log(LogLevel::notice, "%s: pf%u function level reset; its driver had unloaded: its %u VF(s) stay enabled",
            config_.name.c_str(), pf, vfs);
}

bool AdapterImpl::vfs_enabled(uint32_t pf) { return iovs_[pf]->num_vfs() != 0; }

DeviceFunction* AdapterImpl::vf_function(uint32_t pf, uint32_t vf)
{
    return pf < iovs_.size() ? iovs_[pf]->function(vf) : nullptr;
}

void AdapterImpl::vf_level_reset(uint32_t pf, uint32_t vf)
{
    if (pf >= iovs_.size())
        return;
    Quiesce quiet(*this);
    iovs_[pf]->function_level_reset(vf);
}

void AdapterImpl::set_carrier(uint32_t port, bool present)
{
    if (port >= nig_.port_count())
        return;
    nig_.port(port).carrier.store(present);
    mfw_.carrier_changed();
}

void AdapterImpl::inject(Fault fault, bool on)
{
    std::lock_guard lock(slowpath_);
    switch (fault) {
    case Fault::mfw_silent: mfw_.set_silent(on); break;
    case Fault::fw_assert: storms_.set_assert_fault(on); break;
    case Fault::lose_ramrod: storms_.set_lose_ramrod(on); break;
    case Fault::dma_fault:
        for (auto& fn : functions_)
            fn->iommu().set_blocked(on);
        break;
    case Fault::none: break;
    }
}

void AdapterImpl::ptp_step(uint32_t port, int64_t delta)
{
    if (port >= nig_.port_count())
        return;
    std::lock_guard lock(slowpath_); /* the clock's one writer, as its PFs' registers */
    nig_.port(port).ptp_clock.step(delta);
}

int64_t AdapterImpl::ptp_offset(uint32_t port, uint32_t other) const
{
    if (port >= nig_.port_count() || other >= nig_.port_count())
        return 0;
    const uint64_t raw = PtpClock::raw_now();
    return static_cast<int64_t>(nig_.port(other).ptp_clock.at(raw) - nig_.port(port).ptp_clock.at(raw));
}

bool AdapterImpl::set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns)
{
    if (port >= nig_.port_count() || !cable_delay_valid(delay_ns, asymmetry_ns))
        return false;
    std::lock_guard lock(slowpath_);
    return nig_.set_cable_delay(port, delay_ns, asymmetry_ns);
}

void AdapterImpl::set_roce_loss(uint32_t port, uint32_t per_million)
{
    if (port >= nig_.port_count())
        return;
    /* Between two passes: a lossy wire's state is one pass's at a time. */
    std::lock_guard hold(*dataplane_of_port_[port]);
    nig_.port(port).lose(roce::UDP_PORT, std::min<uint32_t>(per_million, 1'000'000));
}

std::unique_ptr<Adapter> Adapter::create(const AdapterConfig& config, std::string* error)
{
    auto fail = [&](const char* why) {
        if (error != nullptr)
            *error = why;
        return nullptr;
    };
    if (config.ports != 1 && config.ports != 2 && config.ports != 4)
        return fail("ports must be 1, 2 or 4");
    if (config.pfs_per_port == 0 || config.ports * config.pfs_per_port > hsi::MAX_PFS)
        return fail("pfs_per_port must be at least 1 and ports * pfs_per_port at most MAX_PFS");
    if (config.wire == Wire::tap)
        return fail("TAP wires are given per port (tap_names)");
    if (config.wire == Wire::cable && config.ports < 2)
        return fail("a cable needs two ports (port 2k <-> port 2k+1)");
    for (uint32_t port = config.ports; port < hsi::MAX_PORTS; port++)
        if (!config.tap_names[port].empty())
            return fail("a TAP wire is given for a port the adapter does not have");
    for (uint32_t port = 0; port < config.ports && config.wire == Wire::cable; port++)
        if (wire_of(config, port) != wire_of(config, port ^ 1))
            return fail("a cable pair (port 2k <-> port 2k+1) needs TAP wires on both ports or neither");
    if (config.engine_placement == EnginePlacement::host && config.engine_threads != 1)
        return fail("engine_threads is for engine threads: with host passes the slowpath has one thread");
    if (config.engine_threads == 0 || config.engine_threads > port_groups(config))
        return fail("engine_threads must be 1 up to the number of port groups (a cable pair is one group, "
                    "any other port a group of its own)");
    auto adapter = std::make_unique<AdapterImpl>(config);
    if (!adapter->powered_on())
        return fail("out of memory or eventfds");
    std::string tap_error;
    if (!adapter->open_taps(&tap_error)) {
        if (error != nullptr)
            *error = std::move(tap_error);
        return nullptr;
    }
    return adapter;
}

} // namespace cna::fw
