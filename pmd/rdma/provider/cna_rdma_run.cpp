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
 * (completion channels), LD_LIBRARY_PATH starts with the folder of cna's
 * librdmacm.so.1 (RDMA CM without the kernel's rdma_cm), SYSFS_PATH is /sys, and IBV_SHOW_WARNINGS makes
 * libibverbs say when no provider took a device; the kernel's RDMA netlink
 * is refused (a seccomp filter), so that libibverbs reads sysfs even where
 * the kernel has RDMA. Nothing is written outside the namespace's own
 * tmpfs mounts, which end with it.
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstddef>
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
constexpr const char* RDMACM_FILE = "librdmacm.so.1";
constexpr const char* REFUSING_DEVICE = "/dev/full";

[[noreturn]] void die(const std::string& why)
{
    std::fprintf(stderr, "cna-rdma-run: %s\n", why.c_str());
    std::exit(125);
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

/* The provider and the channel library: beside this program in the build
 * tree, else where the package installs them; librdmacm's folder (cna's
 * librdmacm.so.1 alone) likewise. */
void find_libraries(std::string* provider, std::string* comp_channel, std::string* rdmacm_dir)
{
    std::error_code ec;
    const fs::path here = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec && fs::exists(here / PROVIDER_FILE)) {
        *provider = here / PROVIDER_FILE;
        *comp_channel = here / COMP_CHANNEL_FILE;
        *rdmacm_dir = here.parent_path() / "rdmacm";
    } else {
        *provider = std::string(CNA_PROVIDER_DIR) + "/" + PROVIDER_FILE;
        *comp_channel = CNA_COMP_CHANNEL_LIB;
        *rdmacm_dir = CNA_RDMACM_DIR;
    }
    for (const std::string& f : {*provider, *comp_channel, *rdmacm_dir + "/" + RDMACM_FILE})
        if (!fs::exists(f))
            die(f + " is missing: build cna (./cna build) or install the ibverbs-provider-cna package");
}

/* One device per entry of CNA_RDMA_DEVARGS, as the provider reads it. */
unsigned device_count()
{
    const char* devargs = std::getenv("CNA_RDMA_DEVARGS");
    if (devargs == nullptr || *devargs == '\0')
        return 1;
    const std::string text = devargs;
    if (text.front() == ';' || text.back() == ';' || text.find(";;") != std::string::npos)
        die("CNA_RDMA_DEVARGS='" + text + "': an empty entry (entries are separated by ';')");
    return static_cast<unsigned>(std::count(text.begin(), text.end(), ';')) + 1;
}

void write_file(const fs::path& file, const std::string& text)
{
    std::ofstream out(file);
    out << text << '\n';
    if (!out.flush())
        die(errno_text(file.string()));
}

/* Replaces `dir`, in this mount namespace, by a tmpfs holding every entry
 * the original had but `fresh` (left to be made anew): subdirectories,
 * files and devices bound in from it (mounts below them come along),
 * symlinks copied. An entry gone meanwhile is passed over. */
void shadow(const fs::path& dir, const std::vector<std::string>& fresh)
{
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
        names.push_back(e.path().filename());
    /* The original, still reachable through this fd once the tmpfs hides it. */
    const int original = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (original < 0)
        die(errno_text(dir.string()));
    if (mount("cna-rdma-run", dir.c_str(), "tmpfs", MS_NOSUID, "mode=755") != 0)
        die(errno_text("mount tmpfs on " + dir.string()));
    for (const std::string& name : names) {
        if (std::find(fresh.begin(), fresh.end(), name) != fresh.end())
            continue;
        const fs::path at = dir / name;
        struct stat st;
        if (fstatat(original, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            const ssize_t n = readlinkat(original, name.c_str(), target, sizeof(target) - 1);
            if (n >= 0)
                fs::create_symlink(std::string(target, static_cast<size_t>(n)), at);
            continue;
        }
        const int tree = open_tree(original, name.c_str(), OPEN_TREE_CLONE | AT_RECURSIVE | OPEN_TREE_CLOEXEC);
        if (tree < 0) {
            if (errno == ENOENT)
                continue;
            die(errno_text("open_tree " + (dir / name).string()));
        }
        if (S_ISDIR(st.st_mode))
            fs::create_directory(at);
        else
            close(open(at.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
        if (move_mount(tree, "", AT_FDCWD, at.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            die(errno_text("move_mount to " + at.string()));
        close(tree);
    }
    close(original);
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

    /* A host with kernel RDMA has these: here they hold cna's devices alone. */
    shadow("/dev", {"infiniband"});
    fs::create_directory("/dev/infiniband");
    shadow("/sys/class", {"infiniband", "infiniband_verbs"});
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

/* libibverbs lists devices through the kernel's RDMA netlink first and
 * reads sysfs only when that socket cannot be made. On a host whose kernel
 * has RDMA (or loads ib_core to make the socket) it would list the kernel's
 * devices alone, never cna's: the command cannot make that socket. */
void refuse_rdma_netlink()
{
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* The arguments' low 32 bits: the domain, then the protocol. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NETLINK_RDMA, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPROTONOSUPPORT),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    const sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
        die(errno_text("a seccomp filter for the kernel's RDMA netlink"));
}

void set_environment(const std::string& provider, const std::string& comp_channel, const std::string& rdmacm_dir)
{
    /* First on the path: the command's librdmacm is cna's. */
    const char* path = std::getenv("LD_LIBRARY_PATH");
    setenv("LD_LIBRARY_PATH", (rdmacm_dir + (path != nullptr && *path != '\0' ? ":" + std::string(path) : "")).c_str(), 1);
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
    std::string provider, comp_channel, rdmacm_dir;
    find_libraries(&provider, &comp_channel, &rdmacm_dir);
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
    set_environment(provider, comp_channel, rdmacm_dir);
    refuse_rdma_netlink();
    execvp(argv[first], argv + first);
    die(errno_text(argv[first]));
}
