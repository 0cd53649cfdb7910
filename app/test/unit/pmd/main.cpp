/* SPDX-License-Identifier: BSD-3-Clause
 * EAL set-up for the PMD tests: argv[1] is the PMD's .so, loaded with -d;
 * CNA_TEST_EAL_EXTRA adds EAL options (--force-max-simd-bitwidth=64: the
 * scalar fastpath).
 */
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rte_eal.h>

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <librte_net_cna.so> [gtest options]\n", argv[0]);
        return 2;
    }
    std::vector<std::string> args = {argv[0], "-l", "0", "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
                                     "--no-telemetry", "--log-level=pmd.net.cna*:warning", "-d", argv[1]};
    if (const char* extra = std::getenv("CNA_TEST_EAL_EXTRA")) {
        std::istringstream words(extra);
        for (std::string w; words >> w;)
            args.push_back(w);
    }
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
