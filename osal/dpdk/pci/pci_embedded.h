/* SPDX-License-Identifier: BSD-3-Clause
 * The embedded backend: PCI functions of software adapters running in this
 * process (OSAL-internal).
 */
#pragma once

#include <memory>
#include <string>

#include "pci_function.h"

namespace cna::osal {

std::unique_ptr<PciFunction> embedded_attach(const PciAttachParams& params, int* err, std::string* msg);

} // namespace cna::osal
