/* SPDX-License-Identifier: BSD-3-Clause
 * What DPDK's build embeds in every driver through buildtools/pmdinfogen.py,
 * which only runs inside DPDK's own tree: the PMD_INFO_STRING that
 * dpdk-pmdinfo.py reads from the .rodata of a binary (a NUL-terminated JSON
 * object after the prefix; "pci_ids" is required, empty for a vdev).
 */
#include "cna_devargs.h"

/* The name must be the one RTE_PMD_REGISTER_VDEV registers (cna_ethdev.cpp);
 * app/test/integration/test_pmdinfo.py holds both to the user guide. */
[[gnu::used]] static const char cna_pmd_info[] =
    "PMD_INFO_STRING= {\"name\": \"net_cna\", \"params\": \"" CNA_DEVARGS_PARAM_STRING "\", \"pci_ids\": []}";
