/* SPDX-License-Identifier: BSD-3-Clause
 * cna-rdma-run -- COMMAND [ARG...]: runs an unmodified verbs application
 * on cna's provider, without kernel RDMA and without changing the host.
 *
 * libibverbs finds devices in sysfs (class/infiniband_verbs, then
 * class/infiniband) and opens each one's character device under
 * /dev/infiniband. In a mount namespace of its own, the command sees:
 *  - /sys/class and /dev as they are, each shadowed by a tmpfs that holds
 *    every original entry (bound back in) and, beside them, what cna adds;
 *  - class/infiniband_verbs/uverbs<N> and class/infiniband/cna<N>, one per
 *    entry of CNA_RDMA_DEVARGS, whose attributes the provider completes
 *    once its device is up;
 *  - /dev/infiniband/uverbs<N>: /dev/full bound in, a character device
 *    that refuses every write, so a kernel command libibverbs still tries
 *    fails (ENOSPC, or ENOTTY for an ioctl) instead of pretending.
 * RDMAV_DRIVERS names the provider, LD_PRELOAD adds libcna-comp-channel.so
 * (completion channels), SYSFS_PATH is /sys, and IBV_SHOW_WARNINGS makes
 * libibverbs say when no provider took a device. Nothing is written
 * outside the namespace's own tmpfs mounts, which end with it.
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)
const std::string PROVIDER_FILE = "libcna-rdmav" STRINGIFY(CNA_VERBS_PABI) ".so";
const std::string PROVIDER_SUFFIX = "-rdmav" STRINGIFY(CNA_VERBS_PABI) ".so";
constexpr const char* COMP_CHANNEL_FILE = "libcna-comp-channel.so";
constexpr const char* REFUSING_DEVICE = "/dev/full";

[[noreturn]] void die(const std::string& why)
{
    std::fprintf(stderr, "cna-rdma-run: %s\n", why.c_str());
    std::exit(125);
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

/* The provider and the channel library: beside this program in the build
 * tree, else where the package installs them. */
void find_libraries(std::string* provider, std::string* comp_channel)
{
    std::error_code ec;
    const fs::path here = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec && fs::exists(here / PROVIDER_FILE)) {
        *provider = here / PROVIDER_FILE;
        *comp_channel = here / COMP_CHANNEL_FILE;
    } else {
        *provider = std::string(CNA_PROVIDER_DIR) + "/" + PROVIDER_FILE;
        *comp_channel = CNA_COMP_CHANNEL_LIB;
    }
    for (const std::string* f : {provider, comp_channel})
        if (!fs::exists(*f))
            die(*f + " is missing: build cna (./cna build) or install the ibverbs-provider-cna package");
}

unsigned device_count()
{
    const char* devargs = std::getenv("CNA_RDMA_DEVARGS");
    if (devargs == nullptr || *devargs == '\0')
        return 1;
    unsigned n = 1;
    for (const char* p = devargs; *p != '\0'; p++)
        n += *p == ';';
    return n;
}

void write_file(const fs::path& file, const std::string& text)
{
    std::ofstream out(file);
    out << text << '\n';
    if (!out.flush())
        die(errno_text(file.string()));
}

/* Replaces `dir`, in this mount namespace, by a tmpfs holding every entry
 * the original had: subdirectories, files and devices bound in from it
 * (mounts below them come along), symlinks copied. */
void shadow(const fs::path& dir)
{
    struct Entry {
        std::string name;
        bool is_dir;
        int tree;  /* a detached bind of the entry, or -1 for a symlink */
        std::string link;
    };
    std::vector<Entry> entries;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        Entry entry{e.path().filename(), false, -1, {}};
        if (e.is_symlink()) {
            entry.link = fs::read_symlink(e.path());
        } else {
            entry.is_dir = e.is_directory();
            entry.tree = open_tree(AT_FDCWD, e.path().c_str(), OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
            if (entry.tree < 0)
                die(errno_text("open_tree " + e.path().string()));
        }
        entries.push_back(entry);
    }
    if (mount("cna-rdma-run", dir.c_str(), "tmpfs", MS_NOSUID, "mode=755") != 0)
        die(errno_text("mount tmpfs on " + dir.string()));
    for (const Entry& e : entries) {
        const fs::path at = dir / e.name;
        if (e.tree < 0) {
            fs::create_symlink(e.link, at);
            continue;
        }
        if (e.is_dir)
            fs::create_directory(at);
        else
            close(open(at.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
        if (move_mount(e.tree, "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            die(errno_text("move_mount to " + at.string()));
        close(e.tree);
    }
}

/* Binds `device` at `at` (a new empty file). */
void bind_device(const char* device, const fs::path& at)
{
    close(open(at.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    if (mount(device, at.c_str(), nullptr, MS_BIND, nullptr) != 0)
        die(errno_text(std::string("bind ") + device + " at " + at.string()));
}

void make_devices(unsigned count)
{
    struct stat refusing;
    if (stat(REFUSING_DEVICE, &refusing) != 0 || !S_ISCHR(refusing.st_mode))
        die(std::string(REFUSING_DEVICE) + " is not a character device");
    const std::string dev_numbers =
        std::to_string(major(refusing.st_rdev)) + ":" + std::to_string(minor(refusing.st_rdev));

    shadow("/dev");
    fs::create_directory("/dev/infiniband");
    shadow("/sys/class");
    const fs::path verbs_class = "/sys/class/infiniband_verbs", ib_class = "/sys/class/infiniband";
    fs::create_directories(verbs_class);
    fs::create_directories(ib_class);
    write_file(verbs_class / "abi_version", "6"); /* the kernel's uverbs ABI */
    for (unsigned i = 0; i < count; i++) {
        const std::string uverbs = "uverbs" + std::to_string(i), ibdev = "cna" + std::to_string(i);
        bind_device(REFUSING_DEVICE, fs::path("/dev/infiniband") / uverbs);
        fs::create_directory(verbs_class / uverbs);
        write_file(verbs_class / uverbs / "ibdev", ibdev);
        write_file(verbs_class / uverbs / "dev", dev_numbers);
        write_file(verbs_class / uverbs / "abi_version", "1"); /* the provider's */
        fs::create_directory(ib_class / ibdev);
        write_file(ib_class / ibdev / "node_type", "1: CA");
    }
}

void set_environment(const std::string& provider, const std::string& comp_channel)
{
    setenv("SYSFS_PATH", "/sys", 1);
    setenv("RDMAV_DRIVERS", provider.substr(0, provider.size() - PROVIDER_SUFFIX.size()).c_str(), 1);
    /* After what is preloaded already: a sanitizer's runtime must come first. */
    const char* preload = std::getenv("LD_PRELOAD");
    const std::string preloads = (preload != nullptr && *preload != '\0' ? std::string(preload) + " " : "") + comp_channel;
    setenv("LD_PRELOAD", preloads.c_str(), 1);
    setenv("IBV_SHOW_WARNINGS", "1", 0);
}

} // namespace

int main(int argc, char** argv)
{
    int first = 1;
    if (first < argc && std::strcmp(argv[first], "--") == 0)
        first++;
    if (first >= argc || argv[first][0] == '-') {
        std::fprintf(stderr,
                     "usage: cna-rdma-run [--] COMMAND [ARG...]\n"
                     "  runs COMMAND with cna's RDMA devices (one per CNA_RDMA_DEVARGS entry, ';'-separated)\n");
        return 2;
    }
    std::string provider, comp_channel;
    find_libraries(&provider, &comp_channel);
    if (geteuid() != 0)
        die("needs root: it makes a mount namespace (and a TAP wire needs CAP_NET_ADMIN)");
    if (unshare(CLONE_NEWNS) != 0)
        die(errno_text("unshare(CLONE_NEWNS)"));
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        die(errno_text("making / private"));
    try {
        make_devices(device_count());
    } catch (const fs::filesystem_error& e) {
        die(e.what());
    }
    set_environment(provider, comp_channel);
    execvp(argv[first], argv + first);
    die(errno_text(argv[first]));
}
