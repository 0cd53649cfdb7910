/* SPDX-License-Identifier: BSD-3-Clause
 * EAL set-up for the OSAL tests: hugepages in IOVA-as-PA mode, private to
 * the process (--in-memory), with memory preallocated (-m) as an
 * application asking for a fixed amount gets it. Hugepages and a hugetlbfs
 * mount are set up here if missing (the tests run as root).
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <rte_eal.h>

namespace {

constexpr long PREALLOCATED_MB = 64;
constexpr long PAGES_NEEDED = PREALLOCATED_MB / 2 + 64; /* 2 MiB pages: the tests allocate 96 MiB more */

long meminfo(const char* key)
{
    std::ifstream f("/proc/meminfo");
    const std::string text{std::istreambuf_iterator<char>(f), {}};
    std::smatch m;
    if (!std::regex_search(text, m, std::regex(std::string("\n") + key + R"(:\s+(\d+))")))
        return -1;
    return std::stol(m[1]);
}

bool hugetlbfs_mounted()
{
    std::ifstream f("/proc/mounts");
    for (std::string line; std::getline(f, line);) {
        std::istringstream words(line);
        std::string dev, dir, type;
        if (words >> dev >> dir >> type && type == "hugetlbfs")
            return true;
    }
    return false;
}

/* Free 2 MiB hugepages enough for the EAL and a hugetlbfs, or a reason. */
std::string reserve_hugepages()
{
    if (meminfo("Hugepagesize") != 2048)
        return "the default hugepage size is not 2 MiB";
    if (!hugetlbfs_mounted()) {
        mkdir("/dev/hugepages", 0755);
        if (mount("nodev", "/dev/hugepages", "hugetlbfs", 0, nullptr) != 0)
            return "cannot mount a hugetlbfs on /dev/hugepages";
    }
    const long free_pages = meminfo("HugePages_Free");
    if (free_pages < PAGES_NEEDED) {
        long total = 0;
        std::ifstream("/proc/sys/vm/nr_hugepages") >> total;
        std::ofstream("/proc/sys/vm/nr_hugepages") << total + PAGES_NEEDED - free_pages;
    }
    if (meminfo("HugePages_Free") < PAGES_NEEDED)
        return "fewer than " + std::to_string(PAGES_NEEDED) + " free hugepages, and no more can be reserved";
    return {};
}

} // namespace

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    if (const std::string why = reserve_hugepages(); !why.empty()) {
        std::fprintf(stderr, "OSAL tests need hugepages: %s\n", why.c_str());
        return 1;
    }
    std::string args[] = {argv[0], "-l", "0", "--in-memory", "-m", std::to_string(PREALLOCATED_MB),
                          "--iova-mode=pa", "--no-pci", "--no-telemetry", "--log-level=pmd.net.cna*:info"};
    char* eal_argv[std::size(args)];
    for (std::size_t i = 0; i < std::size(args); i++)
        eal_argv[i] = args[i].data();
    if (rte_eal_init(static_cast<int>(std::size(eal_argv)), eal_argv) < 0) {
        std::fprintf(stderr, "EAL init on hugepages in IOVA-as-PA mode failed\n");
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    return rc;
}
