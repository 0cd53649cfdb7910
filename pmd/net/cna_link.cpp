/* SPDX-License-Identifier: BSD-3-Clause
 * Link: the MFW owns the physical link. The port asks for it up or down
 * through ecore's mailbox, and learns the outcome from the link-change
 * attention, handled on the EAL interrupt thread, which raises the LSC event.
 */
#include <cerrno>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_mcp_api.h"

namespace cna::pmd {
namespace {

rte_eth_link link_from_mfw(Port* port)
{
    const ecore::McpLinkState st = ecore::mcp_get_link_state(port->edev.hwfn);
    rte_eth_link link{};
    link.link_status = st.link_up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
    link.link_speed = st.link_up ? st.speed_mbps : RTE_ETH_SPEED_NUM_NONE;
    link.link_duplex = st.full_duplex ? RTE_ETH_LINK_FULL_DUPLEX : RTE_ETH_LINK_HALF_DUPLEX;
    link.link_autoneg = st.autoneg ? RTE_ETH_LINK_AUTONEG : RTE_ETH_LINK_FIXED;
    return link;
}

} // namespace

int set_link(Port* port, bool up)
{
    ecore::PttGuard ptt(port->edev.hwfn);
    if (!ptt)
        return -EBUSY;
    const ecore::Status st = ecore::mcp_set_link(port->edev.hwfn, *ptt, up);
    if (st != ecore::Status::success) {
        PMD_LOG(ERR, port, "cannot set link %s: %s", up ? "up" : "down", ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    return 0;
}

void link_changed(Port* port)
{
    rte_eth_dev* dev = port->eth_dev;
    const rte_eth_link link = link_from_mfw(port);
    if (rte_eth_linkstatus_set(dev, &link) != 0)
        return; /* no change as far as the application knows */
    PMD_LOG(INFO, port, "link %s, %u Mbps", link.link_status ? "up" : "down", link.link_speed);
    if (dev->data->dev_conf.intr_conf.lsc)
        rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, nullptr);
}

int link_update(rte_eth_dev* dev, int wait_to_complete)
{
    Port* port = port_of(dev);
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

int dev_set_link_up(rte_eth_dev* dev)
{
    return set_link(port_of(dev), true);
}

int dev_set_link_down(rte_eth_dev* dev)
{
    return set_link(port_of(dev), false);
}

} // namespace cna::pmd
