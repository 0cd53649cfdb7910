/* SPDX-License-Identifier: BSD-3-Clause
 * The management firmware running on the MCP: it fills SHMEM at power-on,
 * answers the driver mailboxes, keeps the load bookkeeping that tells each
 * PF which init phases it owns, and runs the link (mfw/link.h).
 *
 * A mailbox write through BAR0 only records that a command is pending; the
 * engine thread answers it on its next pass, as the MCP would. All state
 * here is guarded by the adapter's slowpath lock.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "cna_fw/adapter.h"
#include "hsi_mfw.h"
#include "mfw/link.h"
#include "slowpath/resources.h"

namespace cna::fw {

class Nig;

/* What the MFW needs from the rest of the adapter. */
class MfwEvents {
public:
    /* A message was posted to the PF's mfw_mb: raise attn::MFW_EVENT. */
    virtual void mfw_event(uint32_t pf) = 0;
    /* UNLOAD_DONE: the function goes back to its power-on state, but for
     * the VFs its driver left enabled. */
    virtual void function_unloaded(uint32_t pf) = 0;
    /* VF_DISABLED_DONE: the PF cleaned up after its VF's FLR; false when
     * none was pending. */
    virtual bool vf_flr_done(uint32_t pf, uint32_t vf) = 0;
    /* Whether the PF has VFs enabled, whose traffic keeps its port's PHY up. */
    virtual bool vfs_enabled(uint32_t pf) = 0;

protected:
    ~MfwEvents() = default;
};

class Mfw {
public:
    Mfw(const AdapterConfig& config, const Grant& grant, Nig& nig, MfwEvents& events);

    /* GRC MCP block. */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    /* Engine, lock-free: a command waits, or the link has a timer running. */
    bool mailbox_pending() const { return pending_.load(std::memory_order_acquire) != 0; }
    bool link_pending() const { return link_.has_work(); }
    void poll(Link::Clock::time_point now);

    void set_silent(bool silent) { silent_ = silent; }
    void carrier_changed() { link_.carrier_changed(); }
    /* A function level reset of the PF: unloaded whatever its driver was
     * doing, its mailbox command forgotten, its port's link reset if no
     * other PF of the port wants it. */
    void function_reset(uint32_t pf);
    /* Whether a PF of the port is loaded (or on its way in or out). */
    bool port_loaded(uint32_t port) const;
    /* Whether the PF's driver is loaded (or on its way in or out). */
    bool function_loaded(uint32_t pf) const { return load_[pf] != LoadState::unloaded; }
    /* PFs are interleaved over the ports, as on the real chip. */
    uint32_t port_of(uint32_t pf) const { return pf % num_ports_; }

private:
    enum class LoadState { unloaded, loading, loaded, unloading };
    struct Response {
        uint32_t code;
        uint32_t param = 0;
    };

    void power_on(const AdapterConfig& config, const Grant& grant);
    void handle_mailbox(uint32_t pf);
    Response execute(uint32_t pf, uint32_t command, uint32_t param);
    Response load_req(uint32_t pf, uint32_t param);
    Response unload_req(uint32_t pf);
    Response unload_done(uint32_t pf);
    uint32_t others_loaded(uint32_t pf, bool same_port_only) const;
    /* Whether another PF's load was granted and is not done. */
    bool others_loading(uint32_t pf) const;
    /* The PF no longer wants its port's link (LINK_RESET, unload, FLR):
     * the PHY is reset once no PF of the port wants it and none has VFs
     * enabled (whose traffic is not their PF's driver's to stop). */
    void release_link(uint32_t pf);
    void link_changed(uint32_t port);
    /* A link change message to one PF. */
    void link_event(uint32_t pf);

    hsi::mfw::Shmem shmem_{};
    uint32_t num_ports_;
    uint32_t num_pfs_;
    std::vector<LoadState> load_;
    /* A PF's INIT_PHY until its LINK_RESET: the PFs of a port share its
     * PHY, which is up while any of them wants it. */
    std::vector<bool> wants_link_;
    MfwEvents& events_;
    Link link_;
    bool silent_ = false;
    std::atomic<uint32_t> pending_{0}; /* bit per PF: drv_mb_header written */
};

} // namespace cna::fw
