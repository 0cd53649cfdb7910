/* SPDX-License-Identifier: BSD-3-Clause
 * The remote backend: a PCI function of an adapter that cna-adapterd runs
 * in another process, reached over its socket (daemon_protocol.h; OSAL-internal).
 */
#pragma once

#include <memory>
#include <string>

#include "pci_function.h"

namespace cna::osal {

std::unique_ptr<PciFunction> remote_attach(const PciAttachParams& params, int* err, std::string* msg);

} // namespace cna::osal
