/* SPDX-License-Identifier: BSD-3-Clause
 * engine=service: the adapter's dataplane as a DPDK service
 * (cna_engine_service.cpp).
 */
#pragma once

#include "cna_eth_port.h"

namespace cna::net {

/* At probe, in the primary: the service, its component running. 0 or -errno. */
int engine_service_register(EthPort* port);
/* At dev_start: a warning while no service core runs the service. */
void engine_service_check(EthPort* port);
/* Before the PCI function goes: the service stopped, no call in flight. */
void engine_service_unregister(EthPort* port);

} // namespace cna::net
