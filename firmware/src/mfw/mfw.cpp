/* SPDX-License-Identifier: BSD-3-Clause */
#include "mfw/mfw.h"

#include <cstring>

#include "base/log.h"
#include "wire/nig.h"

namespace cna::fw {

using namespace hsi::mfw;

namespace {

constexpr uint32_t MFW_VERSION = 1u << 24 | 2u << 16; /* 1.2.0.0 */
constexpr uint32_t MEDIA_VIRTUAL = 3;
constexpr uint32_t SPEED_CAPABILITIES = speed_cap(LinkSpeed::s10g) | speed_cap(LinkSpeed::s25g) |
                                        speed_cap(LinkSpeed::s40g) | speed_cap(LinkSpeed::s50g) |
                                        speed_cap(LinkSpeed::s100g);

constexpr uint32_t shmem_offset(uint32_t addr) { return addr - hsi::reg::MCP_SHMEM_BASE; }

} // namespace

Mfw::Mfw(const AdapterConfig& config, const Grant& grant, Nig& nig, MfwEvents& events)
    : num_ports_(config.ports), num_pfs_(config.ports * config.pfs_per_port), load_(num_pfs_, LoadState::unloaded),
      wants_link_(num_pfs_, false), events_(events),
      link_(nig, shmem_, std::chrono::milliseconds(config.link_up_delay_ms),
            [this](uint32_t port) { link_changed(port); }),
      silent_(config.faults & static_cast<uint32_t>(Fault::mfw_silent))
{
    power_on(config, grant);
}

void Mfw::power_on(const AdapterConfig& config, const Grant& grant)
{
    shmem_.magic = SHMEM_MAGIC;
    shmem_.mfw_version = MFW_VERSION;
    shmem_.num_ports = config.ports;
    shmem_.num_pfs = num_pfs_;
    for (uint32_t p = 0; p < config.ports; p++) {
        shmem_.port[p].speed_capabilities = SPEED_CAPABILITIES;
        shmem_.port[p].default_speed = static_cast<uint32_t>(LinkSpeed::s100g);
        shmem_.port[p].media_type = MEDIA_VIRTUAL;
    }
    for (uint32_t pf = 0; pf < num_pfs_; pf++) {
        uint8_t mac[6];
        std::memcpy(mac, config.base_mac, sizeof(mac));
        for (int i = 5, carry = static_cast<int>(pf); i >= 0 && carry != 0; i--) {
            int sum = mac[i] + carry;
            mac[i] = static_cast<uint8_t>(sum);
            carry = sum >> 8;
        }
        PublicFunc& f = shmem_.func[pf];
        f.mac_upper = uint32_t{mac[0]} << 8 | mac[1];
        f.mac_lower = uint32_t{mac[2]} << 24 | uint32_t{mac[3]} << 16 | uint32_t{mac[4]} << 8 | mac[5];
        f.port_id = port_of(pf);
        f.mtu = DEFAULT_MTU;
        f.num_sbs = grant.num_sbs;
        f.num_rx_queues = grant.num_rx_queues;
        f.num_tx_queues = grant.num_tx_queues;
        f.num_vports = grant.num_vports;
        f.num_mac_filters = grant.num_mac_filters;
        f.num_vlan_filters = grant.num_vlan_filters;
        f.config = 1;
    }
}

bool Mfw::read(uint32_t addr, uint32_t& value) const
{
    if (addr == hsi::reg::MCP_PUBLIC_ADDR) {
        value = hsi::reg::MCP_SHMEM_BASE;
        return true;
    }
    if (addr < hsi::reg::MCP_SHMEM_BASE || addr >= hsi::reg::MCP_SHMEM_BASE + hsi::reg::MCP_SHMEM_SIZE)
        return false;
    uint32_t offset = shmem_offset(addr);
    value = 0;
    if (offset < sizeof(shmem_))
        std::memcpy(&value, reinterpret_cast<const uint8_t*>(&shmem_) + offset, sizeof(value));
    return true;
}

bool Mfw::write(uint32_t addr, uint32_t value)
{
    if (addr == hsi::reg::MCP_PUBLIC_ADDR)
        return true;
    if (addr < hsi::reg::MCP_SHMEM_BASE || addr >= hsi::reg::MCP_SHMEM_BASE + hsi::reg::MCP_SHMEM_SIZE)
        return false;
    uint32_t offset = shmem_offset(addr);
    if (offset >= sizeof(shmem_))
        return true;
    std::memcpy(reinterpret_cast<uint8_t*>(&shmem_) + offset, &value, sizeof(value));
    for (uint32_t pf = 0; pf < num_pfs_; pf++) {
        if (addr == drv_mb_addr(pf) + offsetof(DrvMailbox, drv_mb_header))
            pending_.fetch_or(1u << pf, std::memory_order_release);
    }
    return true;
}

void Mfw::poll(Link::Clock::time_point now)
{
    uint32_t pending = pending_.exchange(0, std::memory_order_acquire);
    for (uint32_t pf = 0; pf < num_pfs_; pf++) {
        if (pending & (1u << pf))
            handle_mailbox(pf);
    }
    if (link_.has_work())
        link_.poll(now);
}

void Mfw::handle_mailbox(uint32_t pf)
{
    DrvMailbox& mb = shmem_.drv_mb[pf];
    uint32_t header = mb.drv_mb_header;
    if (silent_) {
        log(LogLevel::debug, "mfw: pf%u command 0x%08x dropped (mfw_silent)", pf, header);
        return;
    }
    if ((header & DRV_MSG_CODE_MASK) == DRV_MSG_CODE_LOAD_REQ && others_loading(pf)) {
        /* Loads go one at a time: another PF's engine or port phase is not
         * done yet, and this PF's answer depends on it. Asked again at the
         * next poll. */
        pending_.fetch_or(1u << pf, std::memory_order_release);
        return;
    }
    Response response = execute(pf, header & DRV_MSG_CODE_MASK, mb.drv_mb_param);
    log(LogLevel::debug, "mfw: pf%u command 0x%08x -> 0x%08x/0x%x", pf, header, response.code, response.param);
    mb.fw_mb_param = response.param;
    mb.fw_mb_header = response.code | (header & DRV_MSG_SEQ_MASK);
}

Mfw::Response Mfw::execute(uint32_t pf, uint32_t command, uint32_t param)
{
    uint32_t port = port_of(pf);
    switch (command) {
    case DRV_MSG_CODE_LOAD_REQ: return load_req(pf, param);
    case DRV_MSG_CODE_LOAD_DONE:
        if (load_[pf] != LoadState::loading)
            return {FW_MSG_CODE_INVALID_SEQUENCE};
        load_[pf] = LoadState::loaded;
        return {FW_MSG_CODE_DRV_LOAD_DONE};
    case DRV_MSG_CODE_UNLOAD_REQ: return unload_req(pf);
    case DRV_MSG_CODE_UNLOAD_DONE: return unload_done(pf);
    case DRV_MSG_CODE_INIT_PHY: {
        DrvPhyCfg cfg;
        std::memcpy(&cfg, shmem_.drv_mb[pf].union_data, sizeof(cfg));
        link_.init_phy(port, cfg);
        wants_link_[pf] = true;
        /* Up already (another PF of the port brought it up): nothing will
         * change, and this PF hears of the link all the same. */
        if (link_.up(port))
            link_event(pf);
        return {FW_MSG_CODE_LINK_DONE};
    }
    case DRV_MSG_CODE_LINK_RESET: release_link(pf); return {FW_MSG_CODE_LINK_DONE};
    case DRV_MSG_CODE_GET_LINK: return {FW_MSG_CODE_LINK_DONE};
    case DRV_MSG_CODE_VF_DISABLED_DONE:
        return {events_.vf_flr_done(pf, param) ? FW_MSG_CODE_VF_DISABLED_DONE : FW_MSG_CODE_INVALID_SEQUENCE};
    default: return {FW_MSG_CODE_UNSUPPORTED};
    }
}

void Mfw::function_reset(uint32_t pf)
{
    pending_.fetch_and(~(1u << pf), std::memory_order_acq_rel);
    const bool was_loaded = load_[pf] != LoadState::unloaded;
    load_[pf] = LoadState::unloaded;
    if (was_loaded)
        release_link(pf);
}

void Mfw::release_link(uint32_t pf)
{
    wants_link_[pf] = false;
    for (uint32_t other = 0; other < num_pfs_; other++)
        if (port_of(other) == port_of(pf) &&
            ((wants_link_[other] && load_[other] != LoadState::unloaded) || events_.vfs_enabled(other)))
            return;
    link_.reset_phy(port_of(pf));
}

bool Mfw::others_loading(uint32_t pf) const
{
    for (uint32_t other = 0; other < num_pfs_; other++)
        if (other != pf && load_[other] == LoadState::loading)
            return true;
    return false;
}

bool Mfw::port_loaded(uint32_t port) const
{
    for (uint32_t pf = 0; pf < num_pfs_; pf++)
        if (port_of(pf) == port && load_[pf] != LoadState::unloaded)
            return true;
    return false;
}

uint32_t Mfw::others_loaded(uint32_t pf, bool same_port_only) const
{
    uint32_t count = 0;
    for (uint32_t other = 0; other < num_pfs_; other++) {
        if (other != pf && load_[other] != LoadState::unloaded &&
            (!same_port_only || port_of(other) == port_of(pf)))
            count++;
    }
    return count;
}

Mfw::Response Mfw::load_req(uint32_t pf, uint32_t param)
{
    if ((param & 0xff) != hsi::HSI_VERSION_MAJOR) {
        log(LogLevel::warning, "mfw: pf%u LOAD_REQ refused: driver HSI %u, MFW %u", pf, param & 0xff,
            hsi::HSI_VERSION_MAJOR);
        return {FW_MSG_CODE_DRV_LOAD_REFUSED, static_cast<uint32_t>(LoadRefusal::hsi_mismatch)};
    }
    if (load_[pf] != LoadState::unloaded)
        return {FW_MSG_CODE_DRV_LOAD_REFUSED, static_cast<uint32_t>(LoadRefusal::already_loaded)};
    uint32_t code = others_loaded(pf, false) == 0  ? FW_MSG_CODE_DRV_LOAD_ENGINE
                    : others_loaded(pf, true) == 0 ? FW_MSG_CODE_DRV_LOAD_PORT
                                                   : FW_MSG_CODE_DRV_LOAD_FUNCTION;
    load_[pf] = LoadState::loading;
    return {code};
}

Mfw::Response Mfw::unload_req(uint32_t pf)
{
    if (load_[pf] != LoadState::unloaded)
        load_[pf] = LoadState::unloading;
    uint32_t code = others_loaded(pf, false) == 0  ? FW_MSG_CODE_DRV_UNLOAD_ENGINE
                    : others_loaded(pf, true) == 0 ? FW_MSG_CODE_DRV_UNLOAD_PORT
                                                   : FW_MSG_CODE_DRV_UNLOAD_FUNCTION;
    return {code};
}

Mfw::Response Mfw::unload_done(uint32_t pf)
{
    load_[pf] = LoadState::unloaded;
    release_link(pf);
    events_.function_unloaded(pf);
    return {FW_MSG_CODE_DRV_UNLOAD_DONE};
}

void Mfw::link_changed(uint32_t port)
{
    for (uint32_t pf = 0; pf < num_pfs_; pf++)
        if (port_of(pf) == port && load_[pf] != LoadState::unloaded)
            link_event(pf);
}

void Mfw::link_event(uint32_t pf)
{
    shmem_.mfw_mb[pf].msg_prod[static_cast<uint32_t>(MfwMsg::link_change)]++;
    events_.mfw_event(pf);
}

} // namespace cna::fw
