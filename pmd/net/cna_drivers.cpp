/* SPDX-License-Identifier: BSD-3-Clause
 * The drivers this object registers on the vdev bus, net_cna (a PF) and
 * net_cna_vf (a VF of one), net_cna_vf on the PCI bus too (a VF in a QEMU
 * guest, an ivshmem device: vm_protocol.h), and what DPDK's build would embed for each
 * through buildtools/pmdinfogen.py, which only runs inside DPDK's own tree:
 * the PMD_INFO_STRING that dpdk-pmdinfo.py reads from the .rodata of a
 * binary (a NUL-terminated JSON object after the prefix; "pci_ids" is
 * required, empty for a vdev).
 */
#include <bus_pci_driver.h>
#include <bus_vdev_driver.h>

#include "cna_devargs.h"
#include "cna_ethdev_ops.h"
#include "cna_single_copy.h"
#include "vm_protocol.h"

namespace {

/* Constant-initialised: the registration's constructor fills in the rest
 * and must find the driver already there. */
constexpr rte_vdev_driver make_driver(int (*probe)(rte_vdev_device*))
{
    rte_vdev_driver drv{};
    drv.probe = probe;
    drv.remove = cna::net::cna_remove;
    return drv;
}

/* Every ivshmem device: the probe reads BAR2's signature and leaves the
 * others alone. The BARs are mapped (VFIO) before the probe. */
constexpr rte_pci_id make_ivshmem_id()
{
    rte_pci_id id{};
    id.class_id = RTE_CLASS_ANY_ID;
    id.vendor_id = cna::transport::vm::IVSHMEM_VENDOR_ID;
    id.device_id = cna::transport::vm::IVSHMEM_DEVICE_ID;
    id.subsystem_vendor_id = RTE_PCI_ANY_ID;
    id.subsystem_device_id = RTE_PCI_ANY_ID;
    return id;
}

constinit const rte_pci_id cna_vf_pci_ids[] = {make_ivshmem_id(), rte_pci_id{}};

constexpr rte_pci_driver make_pci_driver()
{
    rte_pci_driver drv{};
    drv.probe = cna::net::cna_vf_pci_probe;
    drv.remove = cna::net::cna_vf_pci_remove;
    drv.id_table = cna_vf_pci_ids;
    drv.drv_flags = RTE_PCI_DRV_NEED_MAPPING;
    return drv;
}

constinit rte_vdev_driver cna_vf_vdev_driver = make_driver(cna::net::cna_vf_probe);
constinit rte_pci_driver cna_vf_pci_driver = make_pci_driver();
constinit rte_vdev_driver cna_vdev_driver = make_driver(cna::net::cna_probe);

} // namespace

/* What RTE_PMD_REGISTER_VDEV and _PCI would do, in one constructor, by the
 * serving copy only (cna_single_copy.h). The vdev bus gives a device to the
 * first driver whose name begins its own: net_cna_vf, whose devices' names
 * also begin with "net_cna", goes first. */
RTE_INIT(cna_register_drivers)
{
    if (!cna::net::serving_copy())
        return;
    cna_vf_vdev_driver.driver.name = "net_cna_vf";
    rte_vdev_register(&cna_vf_vdev_driver);
    cna_vf_pci_driver.driver.name = "net_cna_vf";
    rte_pci_register(&cna_vf_pci_driver);
    cna_vdev_driver.driver.name = "net_cna";
    rte_vdev_register(&cna_vdev_driver);
}

/* app/test/integration/test_pmdinfo.py holds these to the user guide. */
[[gnu::used]] static const char cna_pmd_info[] =
    "PMD_INFO_STRING= {\"name\": \"net_cna\", \"params\": \"" CNA_DEVARGS_PARAM_STRING "\", \"pci_ids\": []}";
[[gnu::used]] static const char cna_vf_pmd_info[] =
    "PMD_INFO_STRING= {\"name\": \"net_cna_vf\", \"params\": \"" CNA_VF_DEVARGS_PARAM_STRING
    "\", \"kmod\": \"vfio-pci\", \"pci_ids\": [[6900, 4368, 65535, 65535]]}";
