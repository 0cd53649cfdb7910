/* SPDX-License-Identifier: BSD-3-Clause
 * What a net_cna port lends the RDMA PMD (pmd/rdma), which opens an RDMA
 * device on it: its PCI function and hwfn, its devargs, and the hook the
 * port calls to tear the RDMA device down before it closes. The port itself
 * (cna_eth_port.h) stays net_cna's.
 */
#pragma once

#include <cstdint>
#include <functional>

#include "cna_devargs.h"

namespace cna::osal {
class PciFunction;
}
namespace cna::ecore {
struct Hwfn;
}

namespace cna::net {

struct EthPort;

/* The net_cna or net_cna_vf port behind ethdev port port_id; nullptr if
 * another driver drives it. */
EthPort* rdma_port(uint16_t port_id);
osal::PciFunction& port_pci(EthPort* port);
ecore::Hwfn& port_hwfn(EthPort* port);
const Devargs& port_devargs(EthPort* port);
/* Where the port's lcores run the adapter's dataplane (engine=inline, or
 * a VF of an adapter whose dataplane runs on the host's threads, which
 * engine=service leaves to its service): the function whose passes their
 * polls and doorbells give; else nullptr. */
osal::PciFunction* inline_adapter(EthPort* port);
/* Set while an RDMA device is open on the port: dev_close calls it first. */
std::function<void()>& rdma_teardown(EthPort* port);
/* A VF's RoCE takes the MAC its started vport filters (its PF's policy). */
bool port_is_vf(EthPort* port);
bool port_started(EthPort* port);
/* The MSI-X vector its status block sb raises. */
uint32_t port_sb_vector(EthPort* port, uint32_t sb);

} // namespace cna::net
