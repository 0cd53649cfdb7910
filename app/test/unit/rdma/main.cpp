/* SPDX-License-Identifier: BSD-3-Clause
 * EAL set-up for the RDMA PMD tests. The tests link librte_rdma_cna.so,
 * as an RDMA application does: net_cna comes with it (no -d).
 */
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rte_eal.h>

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    std::vector<std::string> args = {argv[0],    "-l",         "0",
                                     "--no-huge", "-m",         "256",
                                     "--no-pci",  "--no-shconf", "--no-telemetry",
                                     "--log-level=pmd.net.cna*:warning"};
    std::vector<char*> eal_argv;
    for (std::string& a : args)
        eal_argv.push_back(a.data());
    if (rte_eal_init(static_cast<int>(eal_argv.size()), eal_argv.data()) < 0) {
        std::fprintf(stderr, "EAL init failed\n");
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    return rc;
}
