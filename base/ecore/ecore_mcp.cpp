/* SPDX-License-Identifier: BSD-3-Clause
 * The MFW interface: SHMEM, the driver -> MFW mailbox, load/unload, the link
 * and MFW -> driver messages.
 */
#include "ecore_mcp.h"

#include <cstddef>

#include "ecore_log.h"

namespace cna::ecore {

using namespace hsi::mfw;

namespace {

/* GRC address of a SHMEM field, from the base the MCP published. */
uint32_t shmem_field(const McpInfo& mcp, std::size_t offset) { return mcp.shmem_base + static_cast<uint32_t>(offset); }

/* Link state from a port's SHMEM link_status word. */
McpLinkState decode_link_status(uint32_t status, uint32_t change_count)
{
    McpLinkState s;
    s.link_up = status & LINK_STATUS_LINK_UP;
    uint32_t speed = (status & LINK_STATUS_SPEED_MASK) >> LINK_STATUS_SPEED_SHIFT;
    if (s.link_up && speed <= static_cast<uint32_t>(LinkSpeed::s100g))
        s.speed_mbps = link_speed_mbps(static_cast<LinkSpeed>(speed));
    s.full_duplex = status & LINK_STATUS_FULL_DUPLEX;
    s.autoneg = status & LINK_STATUS_AUTONEG_ENABLED;
    s.autoneg_complete = status & LINK_STATUS_AUTONEG_COMPLETE;
    s.tx_pause = status & LINK_STATUS_TX_PAUSE;
    s.rx_pause = status & LINK_STATUS_RX_PAUSE;
    s.partner_detected = status & LINK_STATUS_PARTNER_DETECTED;
    s.change_count = change_count;
    return s;
}

/* Refreshes the link state from SHMEM. */
void mcp_read_link_state(Hwfn& hwfn, Ptt& ptt)
{
    McpInfo& mcp = *hwfn.mcp_info;
    uint32_t status = rd(hwfn, ptt, mcp.port_addr + offsetof(PublicPort, link_status));
    uint32_t changes = rd(hwfn, ptt, mcp.port_addr + offsetof(PublicPort, link_change_count));
    McpLinkState state = decode_link_status(status, changes);
    std::lock_guard guard(mcp.link_lock);
    mcp.link_state = state;
}

/* The mailbox exchange of mcp_cmd, with an optional union_data payload. */
Status mcp_cmd_payload(Hwfn& hwfn, Ptt& ptt, uint32_t cmd, uint32_t param, const void* payload,
                       std::size_t payload_len, uint32_t* resp, uint32_t* resp_param)
{
    if (device_gone(hwfn)) {
        DP_VERBOSE(hwfn, osal::dp_module::MCP, "%s not sent: the device is gone", mcp_cmd_name(cmd));
        return Status::nodev;
    }
    McpInfo& mcp = *hwfn.mcp_info;
    std::lock_guard guard(mcp.mb_lock);

    if (payload_len > 0)
        memcpy_to(hwfn, ptt, mcp.drv_mb_addr + offsetof(DrvMailbox, union_data), payload, payload_len);
    wr(hwfn, ptt, mcp.drv_mb_addr + offsetof(DrvMailbox, drv_mb_param), param);
    const uint16_t seq = ++mcp.drv_mb_seq;
    wr(hwfn, ptt, mcp.drv_mb_addr + offsetof(DrvMailbox, drv_mb_header), cmd | seq);
    DP_VERBOSE(hwfn, osal::dp_module::MCP, "%s param 0x%x seq %u", mcp_cmd_name(cmd), param, seq);

    osal::Deadline deadline(mcp.cmd_timeout_ms);
    for (;;) {
        uint32_t header = rd(hwfn, ptt, mcp.drv_mb_addr + offsetof(DrvMailbox, fw_mb_header));
        if ((header & FW_MSG_SEQ_MASK) == seq) {
            *resp = header & FW_MSG_CODE_MASK;
            *resp_param = rd(hwfn, ptt, mcp.drv_mb_addr + offsetof(DrvMailbox, fw_mb_param));
            DP_VERBOSE(hwfn, osal::dp_module::MCP, "%s answered 0x%08x param 0x%x", mcp_cmd_name(cmd),
                       *resp, *resp_param);
            return Status::success;
        }
        if (device_gone(hwfn)) {
            DP_ERR(hwfn, "%s: the device is gone", mcp_cmd_name(cmd));
            return Status::nodev;
        }
        if (deadline.expired())
            break;
        osal::usleep(100);
    }
    DP_ERR(hwfn, "MFW did not answer %s within %u ms (seq %u)", mcp_cmd_name(cmd), mcp.cmd_timeout_ms, seq);
    return Status::timeout;
}

Status expect_response(Hwfn& hwfn, uint32_t cmd, uint32_t resp, uint32_t expected)
{
    if (resp == expected)
        return Status::success;
    DP_ERR(hwfn, "MFW answered %s with 0x%08x, expected 0x%08x", mcp_cmd_name(cmd), resp, expected);
    return Status::io;
}

} // namespace

const char* mcp_cmd_name(uint32_t cmd)
{
    switch (cmd & DRV_MSG_CODE_MASK) {
    case DRV_MSG_CODE_LOAD_REQ: return "LOAD_REQ";
    case DRV_MSG_CODE_LOAD_DONE: return "LOAD_DONE";
    case DRV_MSG_CODE_UNLOAD_REQ: return "UNLOAD_REQ";
    case DRV_MSG_CODE_UNLOAD_DONE: return "UNLOAD_DONE";
    case DRV_MSG_CODE_INIT_PHY: return "INIT_PHY";
    case DRV_MSG_CODE_LINK_RESET: return "LINK_RESET";
    case DRV_MSG_CODE_GET_LINK: return "GET_LINK";
    case DRV_MSG_CODE_VF_DISABLED_DONE: return "VF_DISABLED_DONE";
    }
    return "unknown command";
}

Status mcp_info_init(Hwfn& hwfn, Ptt& ptt)
{
    auto mcp = std::make_unique<McpInfo>();
    HwInfo& info = hwfn.hw_info;

    mcp->shmem_base = rd(hwfn, ptt, hsi::reg::MCP_PUBLIC_ADDR);
    const uint32_t magic = rd(hwfn, ptt, shmem_field(*mcp, offsetof(Shmem, magic)));
    if (magic != SHMEM_MAGIC) {
        DP_ERR(hwfn, "SHMEM at 0x%06x has magic 0x%08x, expected 0x%08x: the MFW is not running",
               mcp->shmem_base, magic, SHMEM_MAGIC);
        return Status::nodev;
    }
    info.mfw_version = rd(hwfn, ptt, shmem_field(*mcp, offsetof(Shmem, mfw_version)));
    info.num_ports = rd(hwfn, ptt, shmem_field(*mcp, offsetof(Shmem, num_ports)));
    info.num_pfs = rd(hwfn, ptt, shmem_field(*mcp, offsetof(Shmem, num_pfs)));
    if (info.pf_id >= hsi::MAX_PFS || info.num_ports == 0 || info.num_ports > hsi::MAX_PORTS) {
        DP_ERR(hwfn, "SHMEM is inconsistent: PF %u, %u ports", info.pf_id, info.num_ports);
        return Status::io;
    }

    mcp->func_addr = shmem_field(*mcp, offsetof(Shmem, func) + info.pf_id * sizeof(PublicFunc));
    mcp->drv_mb_addr = shmem_field(*mcp, offsetof(Shmem, drv_mb) + info.pf_id * sizeof(DrvMailbox));
    mcp->mfw_mb_addr = shmem_field(*mcp, offsetof(Shmem, mfw_mb) + info.pf_id * sizeof(MfwMailbox));

    PublicFunc func;
    memcpy_from(hwfn, ptt, &func, mcp->func_addr, sizeof(func));
    if (func.port_id >= info.num_ports) {
        DP_ERR(hwfn, "SHMEM puts PF %u on port %u of %u", info.pf_id, func.port_id, info.num_ports);
        return Status::io;
    }
    info.port_id = func.port_id;
    info.mac = {uint8_t(func.mac_upper >> 8), uint8_t(func.mac_upper), uint8_t(func.mac_lower >> 24),
                uint8_t(func.mac_lower >> 16), uint8_t(func.mac_lower >> 8), uint8_t(func.mac_lower)};
    info.mtu = static_cast<uint16_t>(func.mtu);
    info.resc = Resources{func.num_sbs,     func.num_rx_queues,   func.num_tx_queues,
                          func.num_vports,  func.num_mac_filters, func.num_vlan_filters};

    mcp->port_addr = shmem_field(*mcp, offsetof(Shmem, port) + info.port_id * sizeof(PublicPort));
    PublicPort port;
    memcpy_from(hwfn, ptt, &port, mcp->port_addr, sizeof(port));
    info.speed_capabilities = port.speed_capabilities;
    mcp->link_params.adv_speeds = port.speed_capabilities;
    mcp->link_state = decode_link_status(port.link_status, port.link_change_count);

    /* Continue the mailbox sequence where the previous driver left it, and
     * consider messages posted before this load as handled. */
    mcp->drv_mb_seq = static_cast<uint16_t>(
        rd(hwfn, ptt, mcp->drv_mb_addr + offsetof(DrvMailbox, drv_mb_header)) & DRV_MSG_SEQ_MASK);
    memcpy_from(hwfn, ptt, mcp->mfw_msg_shadow.data(), mcp->mfw_mb_addr + offsetof(MfwMailbox, msg_prod),
                sizeof(mcp->mfw_msg_shadow));

    hwfn.mcp_info = std::move(mcp);
    DP_INFO(hwfn, "MFW %u.%u.%u.%u, PF %u on port %u of %u, MTU %u", info.mfw_version >> 24,
            (info.mfw_version >> 16) & 0xff, (info.mfw_version >> 8) & 0xff, info.mfw_version & 0xff,
            info.pf_id, info.port_id, info.num_ports, info.mtu);
    return Status::success;
}

void mcp_info_free(Hwfn& hwfn) { hwfn.mcp_info.reset(); }

Status mcp_cmd(Hwfn& hwfn, Ptt& ptt, uint32_t cmd, uint32_t param, uint32_t* resp, uint32_t* resp_param)
{
    return mcp_cmd_payload(hwfn, ptt, cmd, param, nullptr, 0, resp, resp_param);
}

Status mcp_load_req(Hwfn& hwfn, Ptt& ptt, uint32_t* load_code)
{
    uint32_t resp = 0, param = 0;
    Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_LOAD_REQ, hsi::HSI_VERSION_MAJOR, &resp, &param);
    if (rc != Status::success)
        return rc;
    switch (resp) {
    case FW_MSG_CODE_DRV_LOAD_ENGINE:
    case FW_MSG_CODE_DRV_LOAD_PORT:
    case FW_MSG_CODE_DRV_LOAD_FUNCTION:
        hwfn.mcp_info->loaded = true;
        *load_code = resp;
        return Status::success;
    case FW_MSG_CODE_DRV_LOAD_REFUSED:
        if (param == static_cast<uint32_t>(LoadRefusal::already_loaded)) {
            DP_ERR(hwfn, "MFW refused LOAD_REQ: PF %u is already loaded", hwfn.hw_info.pf_id);
            return Status::busy;
        }
        DP_ERR(hwfn, "MFW refused LOAD_REQ: it does not speak HSI %u (reason %u)", hsi::HSI_VERSION_MAJOR, param);
        return Status::notimpl;
    }
    DP_ERR(hwfn, "MFW answered LOAD_REQ with unexpected 0x%08x", resp);
    return Status::io;
}

Status mcp_load_done(Hwfn& hwfn, Ptt& ptt)
{
    uint32_t resp = 0, param = 0;
    Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_LOAD_DONE, 0, &resp, &param);
    return rc != Status::success ? rc : expect_response(hwfn, DRV_MSG_CODE_LOAD_DONE, resp, FW_MSG_CODE_DRV_LOAD_DONE);
}

Status mcp_ack_vf_flr(Hwfn& hwfn, Ptt& ptt, uint32_t vf)
{
    uint32_t resp = 0, param = 0;
    Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_VF_DISABLED_DONE, vf, &resp, &param);
    return rc != Status::success ? rc
                                 : expect_response(hwfn, DRV_MSG_CODE_VF_DISABLED_DONE, resp, FW_MSG_CODE_VF_DISABLED_DONE);
}

Status mcp_unload(Hwfn& hwfn, Ptt& ptt)
{
    uint32_t resp = 0, param = 0;
    Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_UNLOAD_REQ, 0, &resp, &param);
    if (rc != Status::success)
        return rc;
    if (resp != FW_MSG_CODE_DRV_UNLOAD_ENGINE && resp != FW_MSG_CODE_DRV_UNLOAD_PORT &&
        resp != FW_MSG_CODE_DRV_UNLOAD_FUNCTION) {
        DP_ERR(hwfn, "MFW answered UNLOAD_REQ with unexpected 0x%08x", resp);
        return Status::io;
    }
    rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_UNLOAD_DONE, 0, &resp, &param);
    if (rc == Status::success)
        rc = expect_response(hwfn, DRV_MSG_CODE_UNLOAD_DONE, resp, FW_MSG_CODE_DRV_UNLOAD_DONE);
    if (rc == Status::success)
        hwfn.mcp_info->loaded = false;
    return rc;
}

McpLinkParams& mcp_get_link_params(Hwfn& hwfn) { return hwfn.mcp_info->link_params; }

McpLinkState mcp_get_link_state(Hwfn& hwfn)
{
    McpInfo& mcp = *hwfn.mcp_info;
    std::lock_guard guard(mcp.link_lock);
    return mcp.link_state;
}

Status mcp_set_link(Hwfn& hwfn, Ptt& ptt, bool link_up)
{
    uint32_t resp = 0, param = 0;
    if (!link_up) {
        Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_LINK_RESET, 0, &resp, &param);
        if (rc == Status::success)
            rc = expect_response(hwfn, DRV_MSG_CODE_LINK_RESET, resp, FW_MSG_CODE_LINK_DONE);
        /* The link is down once the MFW answers; its link-change attention
         * may be handled later. Read now, so that a start that follows does
         * not take the link of before for the new one. */
        if (rc == Status::success)
            mcp_read_link_state(hwfn, ptt);
        return rc;
    }

    const McpLinkParams& p = hwfn.mcp_info->link_params;
    DrvPhyCfg cfg{};
    if (p.forced_speed_mbps != 0) {
        for (uint32_t s = static_cast<uint32_t>(LinkSpeed::s1g); s <= static_cast<uint32_t>(LinkSpeed::s100g); s++)
            if (link_speed_mbps(static_cast<LinkSpeed>(s)) == p.forced_speed_mbps)
                cfg.forced_speed = s;
        if (cfg.forced_speed == 0) {
            DP_ERR(hwfn, "cannot force link speed %u Mbps: not an Ethernet speed", p.forced_speed_mbps);
            return Status::inval;
        }
    }
    cfg.adv_speeds = p.adv_speeds;
    cfg.pause = (p.pause_autoneg ? PHY_PAUSE_AUTONEG : 0) | (p.pause_rx ? PHY_PAUSE_RX : 0) | (p.pause_tx ? PHY_PAUSE_TX : 0);
    cfg.loopback_mode = p.loopback_mode;
    Status rc = mcp_cmd_payload(hwfn, ptt, DRV_MSG_CODE_INIT_PHY, 0, &cfg, sizeof(cfg), &resp, &param);
    return rc != Status::success ? rc : expect_response(hwfn, DRV_MSG_CODE_INIT_PHY, resp, FW_MSG_CODE_LINK_DONE);
}

Status mcp_update_link_state(Hwfn& hwfn, Ptt& ptt)
{
    uint32_t resp = 0, param = 0;
    Status rc = mcp_cmd(hwfn, ptt, DRV_MSG_CODE_GET_LINK, 0, &resp, &param);
    if (rc == Status::success)
        rc = expect_response(hwfn, DRV_MSG_CODE_GET_LINK, resp, FW_MSG_CODE_LINK_DONE);
    if (rc == Status::success)
        mcp_read_link_state(hwfn, ptt);
    return rc;
}

bool mcp_handle_events(Hwfn& hwfn, Ptt& ptt)
{
    McpInfo& mcp = *hwfn.mcp_info;
    std::array<uint32_t, MFW_MSG_COUNT> prod;
    memcpy_from(hwfn, ptt, prod.data(), mcp.mfw_mb_addr + offsetof(MfwMailbox, msg_prod), sizeof(prod));

    bool link_changed = false;
    for (uint32_t msg = 0; msg < MFW_MSG_COUNT; msg++) {
        if (prod[msg] == mcp.mfw_msg_shadow[msg])
            continue;
        switch (static_cast<MfwMsg>(msg)) {
        case MfwMsg::link_change:
            link_changed = true;
            mcp_read_link_state(hwfn, ptt);
            break;
        default:
            DP_NOTICE(hwfn, "unhandled MFW message %u", msg);
            break;
        }
        mcp.mfw_msg_shadow[msg] = prod[msg];
        wr(hwfn, ptt, mcp.mfw_mb_addr + offsetof(MfwMailbox, msg_ack) + msg * 4, prod[msg]);
    }

    if (link_changed) {
        McpLinkState state = mcp_get_link_state(hwfn);
        DP_INFO(hwfn, "link %s, %u Mbps", state.link_up ? "up" : "down", state.speed_mbps);
    }
    return link_changed;
}

} // namespace cna::ecore
