/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_function.h"

#include <cerrno>

#include "pci_embedded.h"

namespace cna::osal {

std::unique_ptr<PciFunction> pci_attach(const PciAttachParams& params, int* err, std::string* msg)
{
    switch (params.backend) {
    case Backend::embedded:
        return embedded_attach(params, err, msg);
    case Backend::remote:
        break;
    }
    *err = -ENOTSUP;
    *msg = "the remote adapter backend is not available yet";
    return nullptr;
}

} // namespace cna::osal
