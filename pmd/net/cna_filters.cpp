/* SPDX-License-Identifier: BSD-3-Clause
 * Classification: the vport's rx mode (accept flags) and its primary MAC
 * filter. The adapter drops what the vport does not accept.
 */
#include <cerrno>
#include <cstring>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_l2_api.h"

namespace cna::pmd {

namespace accept = hsi::eth::accept;

uint16_t rx_accept_flags(const Port* port)
{
    uint16_t flags = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::BCAST;
    if (port->promiscuous)
        flags |= accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED;
    if (port->allmulticast)
        flags |= accept::MCAST_UNMATCHED;
    return flags;
}

namespace {

int apply_rx_mode(Port* port)
{
    if (!port->vport_started)
        return 0; /* dev_start programs it */
    const ecore::Status st = ecore::filter_accept_cmd(port->edev.hwfn, 0, rx_accept_flags(port));
    if (st != ecore::Status::success)
        PMD_LOG(ERR, port, "cannot set the rx mode: %s", ecore::status_name(st));
    return ecore::status_to_errno(st);
}

int set_rx_mode(rte_eth_dev* dev, bool Port::*flag, bool on)
{
    Port* port = port_of(dev);
    const bool before = port->*flag;
    port->*flag = on;
    const int rc = apply_rx_mode(port);
    if (rc != 0)
        port->*flag = before;
    return rc;
}

} // namespace

int promiscuous_enable(rte_eth_dev* dev) { return set_rx_mode(dev, &Port::promiscuous, true); }
int promiscuous_disable(rte_eth_dev* dev) { return set_rx_mode(dev, &Port::promiscuous, false); }
int allmulticast_enable(rte_eth_dev* dev) { return set_rx_mode(dev, &Port::allmulticast, true); }
int allmulticast_disable(rte_eth_dev* dev) { return set_rx_mode(dev, &Port::allmulticast, false); }

int set_primary_mac_filter(Port* port, const std::array<uint8_t, 6>& mac)
{
    ecore::FilterUcast filter;
    filter.opcode = port->mac_filter_set ? ecore::FilterOpcode::replace : ecore::FilterOpcode::add;
    filter.type = ecore::FilterType::mac;
    filter.mac = mac;
    const ecore::Status st = ecore::sp_eth_filter_ucast(port->edev.hwfn, filter);
    if (st != ecore::Status::success) {
        PMD_LOG(ERR, port, "cannot program MAC filter " RTE_ETHER_ADDR_PRT_FMT ": %s", mac[0], mac[1], mac[2],
                mac[3], mac[4], mac[5], ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    port->mac_filter = mac;
    port->mac_filter_set = true;
    return 0;
}

int mac_addr_set(rte_eth_dev* dev, rte_ether_addr* addr)
{
    Port* port = port_of(dev);
    if (!port->vport_started)
        return 0; /* dev_start programs dev->data->mac_addrs[0] */
    std::array<uint8_t, 6> mac;
    std::memcpy(mac.data(), addr->addr_bytes, mac.size());
    return set_primary_mac_filter(port, mac);
}

} // namespace cna::pmd
