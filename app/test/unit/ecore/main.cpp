/* SPDX-License-Identifier: BSD-3-Clause
 * ecore unit tests: the EAL runs without hugepages, shared config or PCI, so
 * memzones and the interrupt thread behave as in the PMD. */
#include <gtest/gtest.h>

#include <rte_eal.h>

int main(int argc, char** argv)
{
    testing::InitGoogleTest(&argc, argv);
    char prog[] = "cna_ecore_tests";
    char* eal_args[] = {prog,
                        const_cast<char*>("--no-huge"),
                        const_cast<char*>("-m"),
                        const_cast<char*>("512"),
                        const_cast<char*>("--no-pci"),
                        const_cast<char*>("--no-shconf"), /* --in-memory conflicts with --no-huge */
                        const_cast<char*>("--no-telemetry"),
                        const_cast<char*>("--iova-mode=va"),
                        const_cast<char*>("--log-level=lib.*:error"),
                        const_cast<char*>("--log-level=pmd.net.cna.ecore:error"),
                        const_cast<char*>("--log-level=cna.adapter:error")};
    if (rte_eal_init(static_cast<int>(std::size(eal_args)), eal_args) < 0) {
        fprintf(stderr, "cannot initialise the EAL\n");
        return 1;
    }
    int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    return rc;
}
