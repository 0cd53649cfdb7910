/* SPDX-License-Identifier: BSD-3-Clause */
#include "cna_rdma_port.h"

#include <cstring>

#include <ethdev_driver.h>

#include "cna_eth_port.h"

namespace cna::net {

EthPort* rdma_port(uint16_t port_id)
{
    rte_eth_dev_info info;
    if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == nullptr ||
        (std::strcmp(info.driver_name, "net_cna") != 0 && std::strcmp(info.driver_name, "net_cna_vf") != 0))
        return nullptr;
    return port_of(&rte_eth_devices[port_id]);
}

osal::PciFunction& port_pci(EthPort* port) { return *port->pci; }

ecore::Hwfn& port_hwfn(EthPort* port) { return port->edev.hwfn; }

const Devargs& port_devargs(EthPort* port) { return port->devargs; }

osal::PciFunction* inline_adapter(EthPort* port)
{
    const bool on_lcores = port->pci->engine_on_host() && port->devargs.engine != EnginePlacement::service;
    return on_lcores ? port->pci.get() : nullptr;
}

std::function<void()>& rdma_teardown(EthPort* port) { return port->rdma_teardown; }

bool port_is_vf(EthPort* port) { return is_vf(port); }

uint32_t port_sb_vector(EthPort* port, uint32_t sb) { return sb_vector(port, sb); }

bool port_started(EthPort* port) { return port->eth_dev->data->dev_started != 0; }

} // namespace cna::net
