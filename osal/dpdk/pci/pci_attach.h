/* SPDX-License-Identifier: BSD-3-Clause
 * A PCI function from the backend its parameters name: the embedded
 * adapter, the adapter daemon, or a VF in a VM.
 */
#pragma once

#include <memory>
#include <string>

#include "pci_function.h"

namespace cna::osal {

/* Attaches a PF or a VF: a PF creates the adapter on first attach; maps every
 * DPDK memory segment into the function's IOMMU and follows memory hotplug.
 * Detach by destroying the returned object (the adapter goes with its last
 * function, PF or VF). Returns nullptr and sets *err (-errno) and *msg on
 * failure. */
std::unique_ptr<PciFunction> pci_attach(const PciAttachParams& params, int* err, std::string* msg);

} // namespace cna::osal
