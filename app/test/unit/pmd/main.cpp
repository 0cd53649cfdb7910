/* SPDX-License-Identifier: BSD-3-Clause
 * EAL set-up for the PMD tests: argv[1] is the PMD's .so, loaded with -d;
 * CNA_TEST_EAL_EXTRA adds EAL options (--force-max-simd-bitwidth=64: the
 * scalar fastpath).
 */
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>
#include <rte_eal.h>

namespace {

namespace fs = std::filesystem;

bool world_writable_ancestor(const fs::path& file)
{
    for (fs::path dir = fs::absolute(file).parent_path();; dir = dir.parent_path()) {
        struct stat st;
        if (stat(dir.c_str(), &st) == 0 && (st.st_mode & S_IWOTH))
            return true;
        if (dir == dir.root_path())
            return false;
    }
}

/* EAL refuses a plugin below a world-writable directory (a checkout in
 * /tmp, say): such a .so is loaded from a private copy, removed at exit. */
std::string loadable_plugin(const std::string& so, fs::path& private_dir)
{
    if (!world_writable_ancestor(so))
        return so;
    const char* home = std::getenv("HOME");
    std::string tmpl = std::string(home != nullptr ? home : "/root") + "/.cna-pmd-tests-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr)
        return so; /* EAL will say why it refuses the original */
    private_dir = tmpl;
    fs::path copy = private_dir / fs::path(so).filename();
    std::error_code ec;
    fs::copy_file(so, copy, ec);
    return ec ? so : copy.string();
}

} // namespace

int main(int argc, char** argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <librte_net_cna.so> [gtest options]\n", argv[0]);
        return 2;
    }
    fs::path private_dir;
    const std::string plugin = loadable_plugin(argv[1], private_dir);
    std::vector<std::string> args = {argv[0], "-l", "0", "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
                                     "--no-telemetry", "--log-level=pmd.net.cna*:warning", "-d", plugin};
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
        if (!private_dir.empty())
            fs::remove_all(private_dir);
        return 1;
    }
    const int rc = RUN_ALL_TESTS();
    rte_eal_cleanup();
    if (!private_dir.empty()) {
        std::error_code ec;
        fs::remove_all(private_dir, ec);
    }
    return rc;
}
