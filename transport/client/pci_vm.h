/* SPDX-License-Identifier: BSD-3-Clause
 * The VM backend: inside a QEMU guest, a VF that cna-adapterd gave the guest
 * as an ivshmem PCI device (vm_protocol.h), reached through its BAR2 as EAL
 * mapped it (VFIO).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "pci_function.h"

namespace cna::osal {

/* Whether a BAR is a cna VF's in the VM layout: 0, -ENODEV (no signature:
 * another ivshmem device, or one whose VF its daemon took back) or
 * -EPROTONOSUPPORT (another version or layout); *why says which. */
int vm_bar_check(const volatile uint8_t* bar, std::size_t len, std::string* why);

std::unique_ptr<PciFunction> vm_attach(const PciAttachParams& params, int* err, std::string* msg);

} // namespace cna::osal
