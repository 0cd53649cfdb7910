/* SPDX-License-Identifier: BSD-3-Clause
 * The drivers this object registers on the vdev bus, net_cna (a PF) and
 * net_cna_vf (a VF of one), and what DPDK's build would embed for each
 * through buildtools/pmdinfogen.py, which only runs inside DPDK's own tree:
 * the PMD_INFO_STRING that dpdk-pmdinfo.py reads from the .rodata of a
 * binary (a NUL-terminated JSON object after the prefix; "pci_ids" is
 * required, empty for a vdev).
 */
#include <bus_vdev_driver.h>

#include "cna_devargs.h"
#include "cna_ethdev_ops.h"

namespace {

/* Constant-initialised: the registration's constructor fills in the rest
 * and must find the driver already there. */
constexpr rte_vdev_driver make_driver(int (*probe)(rte_vdev_device*))
{
    rte_vdev_driver drv{};
    drv.probe = probe;
    drv.remove = cna::pmd::cna_remove;
    return drv;
}

} // namespace

/* The registration macros paste the drivers' names into identifiers:
 * unqualified names at file scope. The vdev bus gives a device to the first
 * driver whose name begins its own: net_cna_vf, whose devices' names also
 * begin with "net_cna", must come first (constructors of one file run in
 * their order). */
constinit static rte_vdev_driver cna_vf_vdev_driver = make_driver(cna::pmd::cna_vf_probe);
RTE_PMD_REGISTER_VDEV(net_cna_vf, cna_vf_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_cna_vf, CNA_VF_DEVARGS_PARAM_STRING);

constinit static rte_vdev_driver cna_vdev_driver = make_driver(cna::pmd::cna_probe);
RTE_PMD_REGISTER_VDEV(net_cna, cna_vdev_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_cna, CNA_DEVARGS_PARAM_STRING);

/* app/test/integration/test_pmdinfo.py holds these to the user guide. */
[[gnu::used]] static const char cna_pmd_info[] =
    "PMD_INFO_STRING= {\"name\": \"net_cna\", \"params\": \"" CNA_DEVARGS_PARAM_STRING "\", \"pci_ids\": []}";
[[gnu::used]] static const char cna_vf_pmd_info[] =
    "PMD_INFO_STRING= {\"name\": \"net_cna_vf\", \"params\": \"" CNA_VF_DEVARGS_PARAM_STRING
    "\", \"pci_ids\": []}";
