/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_attach.h"

#include <cerrno>

#include "pci_embedded.h"
#include "pci_remote.h"
#include "pci_vm.h"

namespace cna::osal {

std::unique_ptr<PciFunction> pci_attach(const PciAttachParams& params, int* err, std::string* msg)
{
    switch (params.backend) {
    case Backend::embedded:
        return embedded_attach(params, err, msg);
    case Backend::remote:
        return remote_attach(params, err, msg);
    case Backend::vm:
        return vm_attach(params, err, msg);
    }
    *err = -EINVAL;
    *msg = "unknown adapter backend";
    return nullptr;
}

} // namespace cna::osal
