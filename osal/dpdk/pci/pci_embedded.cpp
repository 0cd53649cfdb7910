/* SPDX-License-Identifier: BSD-3-Clause
 * The embedded backend: software adapters in this process, kept in a
 * registry by name. The first PF attaching to a name powers the adapter on,
 * the PFs attached to it share it, and the last function to detach powers
 * it off. A VF joins an adapter a PF created (its PF enabled it), and keeps
 * the adapter on while attached, even past its PF's detach.
 */
#include "pci_embedded.h"

#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>

#include <rte_log.h>

#include <cna_fw/adapter.h>

#include "hsi_common.h"
#include "hsi_iov.h"
#include "osal_log.h"
#include "pci_iommu.h"

namespace cna::osal {
namespace {

/* A function of an adapter, as the registry counts it. */
struct FunctionKey {
    uint32_t pf = 0;
    bool is_vf = false;
    uint32_t vf = 0; /* relative to pf */
};

struct AdapterEntry {
    std::unique_ptr<fw::Adapter> adapter;
    uint32_t attached_pfs = 0; /* bit per PF */
    uint64_t attached_vfs = 0; /* bit per VF, vf_bit() */

    static uint64_t vf_bit(uint32_t pf, uint32_t vf) { return uint64_t{1} << (pf * hsi::iov::MAX_VFS_PER_PF + vf); }
    bool attached(const FunctionKey& f) const
    {
        return f.is_vf ? (attached_vfs & vf_bit(f.pf, f.vf)) != 0 : (attached_pfs & (1u << f.pf)) != 0;
    }
    void set_attached(const FunctionKey& f, bool on)
    {
        if (f.is_vf)
            attached_vfs = on ? attached_vfs | vf_bit(f.pf, f.vf) : attached_vfs & ~vf_bit(f.pf, f.vf);
        else
            attached_pfs = on ? attached_pfs | 1u << f.pf : attached_pfs & ~(1u << f.pf);
    }
    bool unused() const { return attached_pfs == 0 && attached_vfs == 0; }
};
static_assert(hsi::MAX_PFS * hsi::iov::MAX_VFS_PER_PF <= 64);

std::mutex g_registry_lock;
std::map<std::string, AdapterEntry> g_adapters;

/* The adapter's log lines go to the cna.adapter rte_log type. */
void route_adapter_log()
{
    static std::once_flag once;
    std::call_once(once, [] {
        fw::set_log_sink([](fw::LogLevel level, const std::string& line) {
            static constexpr uint32_t levels[] = {RTE_LOG_ERR, RTE_LOG_WARNING, RTE_LOG_NOTICE,
                                                  RTE_LOG_INFO, RTE_LOG_DEBUG};
            rte_log(levels[static_cast<int>(level)], logtype_adapter, "cna.adapter: %s\n", line.c_str());
        });
    });
}

fw::AdapterConfig to_adapter_config(const std::string& name, const EmbeddedConfig& c)
{
    fw::AdapterConfig config;
    config.name = name;
    config.ports = c.ports;
    config.pfs_per_port = c.pfs_per_port;
    config.wire = c.wire;
    config.tap_names = c.tap_names;
    fw::derive_base_mac(name, static_cast<uint32_t>(getpid()), config.base_mac);
    config.faults = c.faults;
    config.link_up_delay_ms = c.link_up_delay_ms;
    config.engine_threads = c.engine_threads;
    config.engine_placement = c.engine_on_host.value_or(false) ? fw::EnginePlacement::host : fw::EnginePlacement::threads;
    return config;
}

/* TAP wires are not part of the layout: a joining PF gives them (join_taps). */
bool same_layout(const fw::AdapterConfig& a, const fw::AdapterConfig& b)
{
    return a.ports == b.ports && a.pfs_per_port == b.pfs_per_port && a.wire == b.wire;
}

/* The TAP wires a PF joining an existing adapter asks for. */
bool join_taps(fw::Adapter& adapter, const fw::AdapterConfig& wanted, std::string* error)
{
    for (uint32_t port = 0; port < wanted.tap_names.size(); port++) {
        const std::string& name = wanted.tap_names[port];
        if (!name.empty() && adapter.config().tap_names[port] != name && !adapter.attach_tap(port, name, error))
            return false;
    }
    return true;
}

void release_function(const std::string& adapter, const FunctionKey& function)
{
    std::lock_guard guard(g_registry_lock);
    auto it = g_adapters.find(adapter);
    if (it == g_adapters.end())
        return;
    /* A VF its driver let go is reset, as VFIO resets a device (and as the
     * daemon does): its PF cleans up after it and enables it again. */
    if (function.is_vf)
        it->second.adapter->vf_level_reset(function.pf, function.vf);
    it->second.set_attached(function, false);
    if (it->second.unused())
        g_adapters.erase(it); /* powers the adapter off */
}

std::string function_name(const std::string& adapter, const FunctionKey& f)
{
    return adapter + "/pf" + std::to_string(f.pf) + (f.is_vf ? "/vf" + std::to_string(f.vf) : "");
}

class EmbeddedPciFunction final : public PciFunction {
public:
    EmbeddedPciFunction(std::string adapter, const FunctionKey& key, fw::DeviceFunction& df, fw::Adapter& owner)
        : PciFunction(function_name(adapter, key), key.is_vf ? VF_LAYOUT : PF_LAYOUT),
          adapter_(std::move(adapter)), key_(key), df_(df), control_(owner.control()),
          engine_on_host_(owner.config().engine_placement == fw::EnginePlacement::host),
          iommu_("cna-iommu-" + name(),
                 [this](uint64_t iova, void* va, std::size_t len) { return df_.dma_map(iova, va, len); },
                 [this](uint64_t iova, std::size_t len) { return df_.dma_unmap(iova, len); })
    {
    }
    ~EmbeddedPciFunction() override
    {
        iommu_.stop();
        release_function(adapter_, key_);
    }

    int start(std::string* msg)
    {
        const fw::DeviceFunction::SharedBars bars = df_.shared_bars();
        gtt_.view(df_.gtt_memory(), bars.gtt_fd, bars.gtt_offset, layout().gtt_size);
        doorbells_.view(df_.doorbell_memory(), bars.doorbell_fd, bars.doorbell_offset, layout().doorbells_size);
        if (int rc = iommu_.start(); rc != 0) {
            *msg = "cannot map DPDK memory into the IOMMU of " + name();
            return rc;
        }
        return 0;
    }

    uint32_t msix_count() const override { return df_.msix_count(); }
    int msix_eventfd(uint32_t vector) const override { return df_.msix_eventfd(vector); }
    int dma_map(uint64_t iova, void* va, std::size_t len) override { return df_.dma_map(iova, va, len); }
    int dma_unmap(uint64_t iova, std::size_t len) override { return df_.dma_unmap(iova, len); }
    AdapterControl* control() override { return &control_; }
    bool engine_on_host() const override { return engine_on_host_; }
    bool adapter_pass(PassCause cause) override
    {
        return df_.engine_pass(cause == PassCause::doorbell ? fw::PassCause::doorbell : fw::PassCause::idle);
    }
    bool adapter_doorbell(const volatile void* doorbell) override
    {
        return df_.doorbell_pass(static_cast<uint32_t>(static_cast<const volatile uint8_t*>(doorbell) - doorbells()));
    }

protected:
    uint32_t bar0_read(uint32_t offset) override { return df_.bar0_read(offset); }
    void bar0_write(uint32_t offset, uint32_t value) override { df_.bar0_write(offset, value); }

private:
    std::string adapter_;
    FunctionKey key_;
    fw::DeviceFunction& df_;
    AdapterControl& control_;
    const bool engine_on_host_;
    IommuSync iommu_;
};

/* Outside the registry lock: the walk takes the memory hotplug lock. */
std::unique_ptr<PciFunction> start(std::unique_ptr<EmbeddedPciFunction> fn, int* err, std::string* msg)
{
    if (int rc = fn->start(msg); rc < 0) {
        *err = rc;
        return nullptr; /* fn's destructor detaches the function */
    }
    *err = 0;
    return fn;
}

/* VFs of `pf` its driver enabled, for a refusal's message. */
uint32_t enabled_vfs(fw::Adapter& adapter, uint32_t pf)
{
    uint32_t n = 0;
    for (uint32_t vf = 0; vf < hsi::iov::MAX_VFS_PER_PF; vf++)
        n += adapter.vf_function(pf, vf) != nullptr;
    return n;
}

std::unique_ptr<PciFunction> attach_vf(const PciAttachParams& params, int* err, std::string* msg)
{
    const FunctionKey key{params.pf, true, params.vf};
    std::unique_ptr<EmbeddedPciFunction> fn;
    {
        std::lock_guard guard(g_registry_lock);
        auto it = g_adapters.find(params.adapter);
        if (it == g_adapters.end()) {
            *err = -ENODEV;
            *msg = "no adapter " + params.adapter + " in this process: a VF joins the adapter its PF's driver created";
            return nullptr;
        }
        AdapterEntry& entry = it->second;
        fw::Adapter& adapter = *entry.adapter;
        fw::DeviceFunction* df = nullptr;
        if (params.pf >= adapter.num_functions() || params.pf >= hsi::MAX_PFS ||
            params.vf >= hsi::iov::MAX_VFS_PER_PF) {
            *err = -ENODEV;
            *msg = "adapter " + params.adapter + " has no VF " + std::to_string(params.vf) + " of PF " +
                   std::to_string(params.pf) + " (" + std::to_string(adapter.num_functions()) + " PFs, " +
                   std::to_string(hsi::iov::MAX_VFS_PER_PF) + " VFs each at most)";
        } else if (df = adapter.vf_function(params.pf, params.vf); df == nullptr) {
            *err = -ENODEV;
            *msg = "pf" + std::to_string(params.pf) + " of adapter " + params.adapter + " has no VF " +
                   std::to_string(params.vf) + " enabled (vfs=" + std::to_string(enabled_vfs(adapter, params.pf)) +
                   ")";
        } else if (entry.attached(key)) {
            *err = -EBUSY;
            *msg = function_name(params.adapter, key) + " is already attached";
        } else {
            entry.set_attached(key, true);
            fn = std::make_unique<EmbeddedPciFunction>(params.adapter, key, *df, *entry.adapter);
        }
        if (!fn)
            return nullptr;
    }
    return start(std::move(fn), err, msg);
}

} // namespace

std::unique_ptr<PciFunction> embedded_attach(const PciAttachParams& params, int* err, std::string* msg)
{
    route_adapter_log();
    if (params.is_vf)
        return attach_vf(params, err, msg);
    const fw::AdapterConfig wanted = to_adapter_config(params.adapter, params.embedded);
    const FunctionKey key{params.pf};

    std::unique_ptr<EmbeddedPciFunction> fn;
    {
        std::lock_guard guard(g_registry_lock);
        auto it = g_adapters.find(params.adapter);
        if (it == g_adapters.end()) {
            std::string error;
            auto adapter = fw::Adapter::create(wanted, &error);
            if (!adapter) {
                *err = -EINVAL;
                *msg = "cannot create adapter " + params.adapter + ": " + error;
                return nullptr;
            }
            const std::vector<uint32_t>& cpus = params.embedded.engine_cpus;
            for (uint32_t t = 0; t < cpus.size(); t++) {
                if (const int rc = adapter->set_engine_affinity(t, static_cast<int>(cpus[t])); rc != 0) {
                    *err = rc;
                    *msg = "cannot pin engine thread " + std::to_string(t) + " of adapter " + params.adapter +
                           " to CPU " + std::to_string(cpus[t]);
                    return nullptr;
                }
            }
            it = g_adapters.emplace(params.adapter, AdapterEntry{std::move(adapter)}).first;
        } else if (params.embedded.layout_given && !same_layout(it->second.adapter->config(), wanted)) {
            *err = -EINVAL;
            *msg = "adapter " + params.adapter + " exists with another layout (ports, PFs, wire)";
            return nullptr;
        } else if (params.embedded.engine_on_host &&
                   it->second.adapter->config().engine_placement != wanted.engine_placement) {
            *err = -EINVAL;
            *msg = "adapter " + params.adapter + " exists with " +
                   (wanted.engine_placement == fw::EnginePlacement::host
                        ? "engine threads: engine=inline and engine=service need an adapter of their own"
                        : "its dataplane on the host's threads: give engine=inline or engine=service");
            return nullptr;
        }
        AdapterEntry& entry = it->second;
        if (params.pf >= entry.adapter->num_functions() || params.pf >= 32) {
            *err = -ENODEV;
            *msg = "adapter " + params.adapter + " has no PF " + std::to_string(params.pf);
        } else if (entry.attached(key)) {
            *err = -EBUSY;
            *msg = "PF " + std::to_string(params.pf) + " of adapter " + params.adapter + " is already attached";
        } else if (std::string error; !join_taps(*entry.adapter, wanted, &error)) {
            *err = -EINVAL;
            *msg = "adapter " + params.adapter + " cannot take the TAP wire: " + error;
        } else {
            entry.set_attached(key, true);
            fn = std::make_unique<EmbeddedPciFunction>(params.adapter, key, entry.adapter->function(params.pf),
                                                       *entry.adapter);
        }
        if (!fn) {
            if (entry.unused())
                g_adapters.erase(it);
            return nullptr;
        }
    }
    return start(std::move(fn), err, msg);
}

} // namespace cna::osal
