/* SPDX-License-Identifier: BSD-3-Clause
 * Link: the MFW owns the physical link. The port asks for it up or down
 * through ecore's mailbox, and learns the outcome from the link-change
 * attention, handled on the EAL interrupt thread, which raises the LSC event.
 */
#include <cerrno>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_mcp_api.h"
#include "hsi_mfw.h"

namespace cna::net {
namespace {

rte_eth_link link_from_mfw(EthPort* port)
{
    const ecore::McpLinkState st = ecore::mcp_get_link_state(port->edev.hwfn);
    rte_eth_link link{};
    link.link_status = st.link_up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
    link.link_speed = st.link_up ? st.speed_mbps : RTE_ETH_SPEED_NUM_NONE;
    link.link_duplex = st.full_duplex ? RTE_ETH_LINK_FULL_DUPLEX : RTE_ETH_LINK_HALF_DUPLEX;
    link.link_autoneg = st.autoneg ? RTE_ETH_LINK_AUTONEG : RTE_ETH_LINK_FIXED;
    return link;
}

namespace mfw = hsi::mfw;

/* The MFW's speeds as ethdev's link_speeds flags; their Mbps are the HSI's. */
struct SpeedMap {
    mfw::LinkSpeed mfw;
    uint32_t ethdev_flag;
};
constexpr SpeedMap SPEEDS[] = {
    {mfw::LinkSpeed::s1g, RTE_ETH_LINK_SPEED_1G},   {mfw::LinkSpeed::s10g, RTE_ETH_LINK_SPEED_10G},
    {mfw::LinkSpeed::s25g, RTE_ETH_LINK_SPEED_25G}, {mfw::LinkSpeed::s40g, RTE_ETH_LINK_SPEED_40G},
    {mfw::LinkSpeed::s50g, RTE_ETH_LINK_SPEED_50G}, {mfw::LinkSpeed::s100g, RTE_ETH_LINK_SPEED_100G},
};

/* ethdev's link_speeds (autonegotiate, or one fixed speed) as MFW link params. */
int link_params_from_conf(EthPort* port, uint32_t link_speeds, ecore::McpLinkParams* params)
{
    params->forced_speed_mbps = 0;
    if (!(link_speeds & RTE_ETH_LINK_SPEED_FIXED))
        return 0;
    for (const SpeedMap& s : SPEEDS) {
        if ((link_speeds & ~RTE_ETH_LINK_SPEED_FIXED) == s.ethdev_flag) {
            params->forced_speed_mbps = mfw::link_speed_mbps(s.mfw);
            return 0;
        }
    }
    PMD_LOG(ERR, port, "link_speeds 0x%x: a fixed speed must name exactly one supported speed", link_speeds);
    return -EINVAL;
}

} // namespace

uint32_t ethdev_speed_capa(uint32_t mfw_caps)
{
    uint32_t capa = 0;
    for (const SpeedMap& s : SPEEDS)
        if (mfw_caps & mfw::speed_cap(s.mfw))
            capa |= s.ethdev_flag;
    return capa;
}

int set_link(EthPort* port, bool up)
{
    ecore::PttGuard ptt(port->edev.hwfn);
    if (!ptt)
        return -EBUSY;
    if (up) {
        ecore::McpLinkParams& params = ecore::mcp_get_link_params(port->edev.hwfn);
        if (int rc = link_params_from_conf(port, port->eth_dev->data->dev_conf.link_speeds, &params); rc != 0)
            return rc;
    }
    const ecore::Status st = ecore::mcp_set_link(port->edev.hwfn, *ptt, up);
    if (st != ecore::Status::success) {
        PMD_LOG(ERR, port, "cannot set link %s: %s", up ? "up" : "down", ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    return 0;
}

void link_changed(EthPort* port)
{
    rte_eth_dev* dev = port->eth_dev;
    const rte_eth_link link = link_from_mfw(port);
    if (rte_eth_linkstatus_set(dev, &link) != 0)
        return; /* no change as far as the application knows */
    PMD_LOG(INFO, port, "link %s, %u Mbps", link.link_status ? "up" : "down", link.link_speed);
    if (port->lsc_events.load(std::memory_order_relaxed))
        rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, nullptr);
}

int link_update(rte_eth_dev* dev, int wait_to_complete)
{
    EthPort* port = port_of(dev);
    if (removed(port))
        return set_link_gone(dev);
    /* Waiting covers autonegotiation after a start: bounded, as ethdev expects. */
    constexpr int WAIT_MS = 1000, STEP_MS = 10;
    rte_eth_link link = link_from_mfw(port);
    for (int waited = 0; wait_to_complete && !link.link_status && dev->data->dev_started && waited < WAIT_MS;
         waited += STEP_MS) {
        rte_delay_ms(STEP_MS);
        link = link_from_mfw(port);
    }
    return rte_eth_linkstatus_set(dev, &link);
}

int flow_ctrl_get(rte_eth_dev* dev, rte_eth_fc_conf* fc)
{
    const ecore::McpLinkParams& p = ecore::mcp_get_link_params(port_of(dev)->edev.hwfn);
    *fc = rte_eth_fc_conf{};
    fc->autoneg = p.pause_autoneg;
    fc->mode = p.pause_rx ? (p.pause_tx ? RTE_ETH_FC_FULL : RTE_ETH_FC_RX_PAUSE)
                          : (p.pause_tx ? RTE_ETH_FC_TX_PAUSE : RTE_ETH_FC_NONE);
    return 0;
}

/* Pause is negotiated by the MFW: the new setting takes effect by
 * re-initialising the PHY when the port is running. */
int flow_ctrl_set(rte_eth_dev* dev, rte_eth_fc_conf* fc)
{
    EthPort* port = port_of(dev);
    if (fc->high_water || fc->low_water || fc->pause_time || fc->send_xon || fc->mac_ctrl_frame_fwd) {
        PMD_LOG(ERR, port, "flow control: only the mode and autonegotiation can be set");
        return -ENOTSUP;
    }
    ecore::McpLinkParams& p = ecore::mcp_get_link_params(port->edev.hwfn);
    p.pause_autoneg = fc->autoneg;
    p.pause_rx = fc->mode == RTE_ETH_FC_FULL || fc->mode == RTE_ETH_FC_RX_PAUSE;
    p.pause_tx = fc->mode == RTE_ETH_FC_FULL || fc->mode == RTE_ETH_FC_TX_PAUSE;
    return dev->data->dev_started ? set_link(port, true) : 0;
}

int dev_set_link_up(rte_eth_dev* dev)
{
    return set_link(port_of(dev), true);
}

int dev_set_link_down(rte_eth_dev* dev)
{
    return set_link(port_of(dev), false);
}

} // namespace cna::net
