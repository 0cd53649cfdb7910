/* SPDX-License-Identifier: BSD-3-Clause
 * Classification: the vport's rx mode (accept flags), its unicast and
 * multicast MAC filters and its VLAN filters, plus VLAN stripping. The
 * adapter drops what the vport does not accept.
 *
 * Every filter lives in the vport, which dev_start creates anew, so each op
 * records the configuration (in ethdev's data or the EthPort) and programs the
 * adapter only while the vport exists; restore_filters() replays it all.
 */
#include <cerrno>
#include <cstring>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_l2_api.h"

namespace cna::net {

namespace accept = hsi::eth::accept;
using ecore::FilterOpcode;
using ecore::FilterType;

uint16_t rx_accept_flags(const EthPort* port)
{
    uint16_t flags = accept::UCAST_MATCHED | accept::MCAST_MATCHED | accept::BCAST;
    if (port->promiscuous)
        flags |= accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED;
    if (port->allmulticast)
        flags |= accept::MCAST_UNMATCHED;
    return flags;
}

namespace {

int apply_rx_mode(EthPort* port)
{
    if (!port->vport_started)
        return 0;
    const ecore::Status st = ecore::filter_accept_cmd(port->edev.hwfn, VPORT_ID, rx_accept_flags(port));
    if (st != ecore::Status::success)
        PMD_LOG(ERR, port, "cannot set the rx mode: %s", ecore::status_name(st));
    return ecore::status_to_errno(st);
}

int set_rx_mode(rte_eth_dev* dev, bool EthPort::*flag, bool on)
{
    EthPort* port = port_of(dev);
    /* Not started, a VF is told now what its PF would tell it at start
     * (which would then fail): no promiscuous or all-multicast untrusted. */
    if (on && is_vf(port) && !port->vport_started && !vf_trusted(port)) {
        PMD_LOG(ERR, port, "cannot set the rx mode: not trusted by the PF");
        return -EPERM;
    }
    const bool before = port->*flag;
    port->*flag = on;
    const int rc = apply_rx_mode(port);
    if (rc != 0)
        port->*flag = before;
    return rc;
}

bool is_zero(const rte_ether_addr& mac)
{
    return rte_is_zero_ether_addr(&mac);
}

/* One filter command to the vport (which must exist). */
int filter_cmd(EthPort* port, FilterOpcode op, FilterType type, const rte_ether_addr* mac, uint16_t vlan)
{
    ecore::FilterUcast f;
    f.opcode = op;
    f.type = type;
    f.vport_to_add_to = f.vport_to_remove_from = VPORT_ID;
    if (mac != nullptr)
        std::memcpy(f.mac.data(), mac->addr_bytes, f.mac.size());
    f.vlan = vlan;
    const ecore::Status st = ecore::sp_eth_filter_ucast(port->edev.hwfn, f);
    if (st != ecore::Status::success && !(op == FilterOpcode::remove && st == ecore::Status::noent)) {
        if (mac != nullptr)
            PMD_LOG(ERR, port, "MAC filter %s " RTE_ETHER_ADDR_PRT_FMT ": %s", op == FilterOpcode::add ? "add" : "remove",
                    RTE_ETHER_ADDR_BYTES(mac), ecore::status_name(st));
        else
            PMD_LOG(ERR, port, "VLAN filter %s %u: %s", op == FilterOpcode::add ? "add" : "remove", vlan,
                    ecore::status_name(st));
        return ecore::status_to_errno(st);
    }
    return 0;
}

int mac_filter(EthPort* port, FilterOpcode op, const rte_ether_addr* mac)
{
    return port->vport_started ? filter_cmd(port, op, FilterType::mac, mac, 0) : 0;
}

bool vlan_filtering(const rte_eth_dev* dev)
{
    return dev->data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_VLAN_FILTER;
}

/* Calls fn(vlan_id) for every VLAN id ethdev recorded as filtered. */
template <class Fn> int for_each_vlan(const rte_eth_dev* dev, Fn fn)
{
    const rte_vlan_filter_conf& conf = dev->data->vlan_filter_conf;
    for (uint16_t word = 0; word < RTE_DIM(conf.ids); word++)
        for (uint64_t bits = conf.ids[word]; bits != 0; bits &= bits - 1)
            if (int rc = fn(static_cast<uint16_t>(word * 64 + __builtin_ctzll(bits))); rc != 0)
                return rc;
    return 0;
}

int vlan_strip_update(EthPort* port, bool strip)
{
    ecore::SpVportUpdateParams p;
    p.vport_id = VPORT_ID;
    p.update_vlan_strip = true;
    p.vlan_strip = strip;
    return ecore::status_to_errno(ecore::sp_vport_update(port->edev.hwfn, p));
}

} // namespace

int promiscuous_enable(rte_eth_dev* dev) { return set_rx_mode(dev, &EthPort::promiscuous, true); }
int promiscuous_disable(rte_eth_dev* dev) { return set_rx_mode(dev, &EthPort::promiscuous, false); }
int allmulticast_enable(rte_eth_dev* dev) { return set_rx_mode(dev, &EthPort::allmulticast, true); }
int allmulticast_disable(rte_eth_dev* dev) { return set_rx_mode(dev, &EthPort::allmulticast, false); }

/* ---- unicast MACs: ethdev's data->mac_addrs[] ------------------------------ */

int mac_addr_add(rte_eth_dev* dev, rte_ether_addr* mac, uint32_t index, uint32_t /* vmdq */)
{
    EthPort* port = port_of(dev);
    const rte_ether_addr& old = dev->data->mac_addrs[index];
    if (!is_zero(old) && !rte_is_same_ether_addr(&old, mac))
        if (int rc = mac_filter(port, FilterOpcode::remove, &old); rc != 0)
            return rc;
    return mac_filter(port, FilterOpcode::add, mac);
}

void mac_addr_remove(rte_eth_dev* dev, uint32_t index)
{
    mac_filter(port_of(dev), FilterOpcode::remove, &dev->data->mac_addrs[index]);
}

int mac_addr_set(rte_eth_dev* dev, rte_ether_addr* mac)
{
    return mac_addr_add(dev, mac, 0, 0);
}

/* ---- multicast list ----------------------------------------------------------- */

int set_mc_addr_list(rte_eth_dev* dev, rte_ether_addr* list, uint32_t count)
{
    EthPort* port = port_of(dev);
    for (uint32_t i = 0; i < count; i++) {
        if (!rte_is_multicast_ether_addr(&list[i])) {
            PMD_LOG(ERR, port, RTE_ETHER_ADDR_PRT_FMT " is not a multicast address", RTE_ETHER_ADDR_BYTES(&list[i]));
            return -EINVAL;
        }
    }
    for (const rte_ether_addr& mac : port->mc_addrs)
        mac_filter(port, FilterOpcode::remove, &mac);
    port->mc_addrs.assign(list, list + count);
    for (const rte_ether_addr& mac : port->mc_addrs)
        if (int rc = mac_filter(port, FilterOpcode::add, &mac); rc != 0)
            return rc;
    return 0;
}

/* ---- VLAN ------------------------------------------------------------------- */

int vlan_filter_set(rte_eth_dev* dev, uint16_t vlan_id, int on)
{
    EthPort* port = port_of(dev);
    if (!port->vport_started || !vlan_filtering(dev))
        return 0;
    return filter_cmd(port, on ? FilterOpcode::add : FilterOpcode::remove, FilterType::vlan, nullptr, vlan_id);
}

int vlan_offload_set(rte_eth_dev* dev, int mask)
{
    EthPort* port = port_of(dev);
    if (!port->vport_started)
        return 0;
    const uint64_t offloads = dev->data->dev_conf.rxmode.offloads;
    if (mask & RTE_ETH_VLAN_STRIP_MASK)
        if (int rc = vlan_strip_update(port, offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP); rc != 0)
            return rc;
    if (mask & RTE_ETH_VLAN_FILTER_MASK) {
        const FilterOpcode op = vlan_filtering(dev) ? FilterOpcode::add : FilterOpcode::remove;
        return for_each_vlan(dev, [&](uint16_t vlan) { return filter_cmd(port, op, FilterType::vlan, nullptr, vlan); });
    }
    return 0;
}

/* ---- after dev_start created the vport ------------------------------------------- */

int restore_filters(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    for (uint32_t i = 0; i < max_unicast_macs(port); i++)
        if (!is_zero(dev->data->mac_addrs[i]))
            if (int rc = mac_filter(port, FilterOpcode::add, &dev->data->mac_addrs[i]); rc != 0)
                return rc;
    for (const rte_ether_addr& mac : port->mc_addrs)
        if (int rc = mac_filter(port, FilterOpcode::add, &mac); rc != 0)
            return rc;
    if (vlan_filtering(dev))
        return for_each_vlan(dev, [&](uint16_t vlan) { return filter_cmd(port, FilterOpcode::add, FilterType::vlan, nullptr, vlan); });
    return 0;
}

} // namespace cna::net
