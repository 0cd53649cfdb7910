/* SPDX-License-Identifier: BSD-3-Clause
 * cna-vm: runs QEMU with a VF of cna-adapterd's adapter as a PCI device of
 * the guest (the VM transport, vm_protocol.h).
 *
 *   cna-vm --socket PATH --pf N --vf M --memory MB [--slot S] -- qemu-system-x86_64 ARGS...
 *
 * It creates the guest's RAM (a memfd), attaches the VF for a VM with it,
 * and runs QEMU with the RAM and the VF's memory as memory-backend-file
 * objects (paths under /proc/self/fd: QEMU inherits both files), the VF's as
 * an ivshmem-plain device at slot S of the root bus. It holds the session
 * while QEMU runs: when QEMU exits, however it ends, the session closes and
 * the daemon resets the VF; if cna-vm itself is killed, the session closes
 * the same way and QEMU is killed with it. The exit status is QEMU's.
 */
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "daemon/daemon_connection.h"
#include "vm_protocol.h"

namespace {

using namespace cna::transport::daemon;
using VmHeader = cna::transport::vm::Header;

const char USAGE[] = "usage: cna-vm --socket PATH --pf N --vf M --memory MB [--slot S] -- QEMU [ARGS...]\n"
                     "  runs QEMU with VF M of PF N of cna-adapterd's adapter as the ivshmem device at\n"
                     "  slot S (default 0x10) of the guest's root bus, and MB MiB of RAM the daemon\n"
                     "  reaches by guest-physical address (QEMU is given -m and the RAM's backend)\n";

int fail(const std::string& why)
{
    std::fprintf(stderr, "cna-vm: %s\n", why.c_str());
    return 2;
}

bool number(const char* text, unsigned long* value)
{
    char* end;
    errno = 0;
    *value = std::strtoul(text, &end, 0);
    return *text != '\0' && *end == '\0' && errno == 0;
}

struct Options {
    std::string socket;
    unsigned long pf = 0, vf = 0, memory_mb = 0, slot = 0x10;
    bool pf_given = false, vf_given = false;
    std::vector<std::string> qemu;
};

/* Empty, or what is wrong with the command line. */
std::string parse(int argc, char** argv, Options* o)
{
    int i = 1;
    for (; i < argc && std::strcmp(argv[i], "--") != 0; i++) {
        const std::string opt = argv[i];
        if (i + 1 >= argc)
            return opt + " needs a value";
        const char* value = argv[++i];
        unsigned long n = 0;
        if (opt == "--socket")
            o->socket = value;
        else if (opt != "--pf" && opt != "--vf" && opt != "--memory" && opt != "--slot")
            return "unknown option " + opt;
        else if (!number(value, &n))
            return opt + ": not a number: " + value;
        else if (opt == "--pf")
            o->pf = n, o->pf_given = true;
        else if (opt == "--vf")
            o->vf = n, o->vf_given = true;
        else if (opt == "--memory")
            o->memory_mb = n;
        else
            o->slot = n;
    }
    for (i++; i < argc; i++)
        o->qemu.emplace_back(argv[i]);
    if (o->socket.empty() || !o->pf_given || !o->vf_given || o->memory_mb == 0 || o->qemu.empty())
        return "--socket, --pf, --vf, --memory and a QEMU command line are required";
    if (o->memory_mb << 20 > cna::transport::vm::MAX_GUEST_RAM)
        return "--memory: at most " + std::to_string(cna::transport::vm::MAX_GUEST_RAM >> 20) +
               " MiB (the daemon reaches guest RAM by guest-physical address, below the 32-bit PCI hole)";
    if (o->slot == 0 || o->slot > 0x1f)
        return "--slot: 1 to 0x1f";
    return {};
}

pid_t qemu_pid = 0;

void forward_signal(int signo)
{
    if (qemu_pid > 0)
        ::kill(qemu_pid, signo == SIGINT ? SIGTERM : signo);
}

/* The child: QEMU, with both files inherited, dying with this process. */
[[noreturn]] void exec_qemu(std::vector<std::string> argv, int ram_fd, int bar_fd)
{
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (int fd : {ram_fd, bar_fd})
        ::fcntl(fd, F_SETFD, 0);
    std::vector<char*> args;
    for (std::string& a : argv)
        args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cna-vm: cannot run %s: %s\n", args[0], std::strerror(errno));
    std::_Exit(127);
}

/* Until QEMU ends. A daemon that ends first (its socket hangs up) took the
 * VF with it: the guest's driver is told as the daemon's own detach tells
 * it, by the BAR's signature cleared, which it sees at once. */
void watch_until_qemu_ends(int daemon_fd, int bar_fd)
{
    const int qemu_fd = static_cast<int>(::syscall(SYS_pidfd_open, qemu_pid, 0));
    if (qemu_fd < 0)
        return; /* no pidfd: the caller's waitpid alone */
    for (bool daemon_up = true;;) {
        pollfd p[2] = {{qemu_fd, POLLIN, 0}, {daemon_up ? daemon_fd : -1, 0, 0}};
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (p[1].revents != 0) {
            daemon_up = false;
            if (void* bar = ::mmap(nullptr, sizeof(VmHeader), PROT_READ | PROT_WRITE, MAP_SHARED, bar_fd, 0);
                bar != MAP_FAILED) {
                std::atomic_ref<uint32_t>(static_cast<VmHeader*>(bar)->signature).store(0, std::memory_order_release);
                ::munmap(bar, sizeof(VmHeader));
            }
            std::fprintf(stderr, "cna-vm: the adapter daemon is gone: the guest's VF with it\n");
        }
        if (p[0].revents != 0)
            break;
    }
    ::close(qemu_fd);
}

} // namespace

int main(int argc, char** argv)
{
    Options o;
    if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::fputs(USAGE, stdout);
        return 0;
    }
    if (const std::string error = parse(argc, argv, &o); !error.empty()) {
        std::fputs(USAGE, stderr);
        return fail(error);
    }
    const uint64_t ram_bytes = static_cast<uint64_t>(o.memory_mb) << 20;
    const int ram_fd = ::memfd_create("cna-guest-ram", MFD_CLOEXEC);
    if (ram_fd < 0 || ::ftruncate(ram_fd, static_cast<off_t>(ram_bytes)) != 0)
        return fail(std::string("guest RAM: ") + std::strerror(errno));

    cna::adapterd::DaemonConnection daemon;
    if (const std::string error = daemon.open(o.socket); !error.empty())
        return fail(error);
    const AttachVm req{static_cast<uint32_t>(o.pf), static_cast<uint32_t>(o.vf), ram_bytes};
    AttachVmReply reply{};
    Message m;
    if (const int rc = daemon.request(MsgType::attach_vm, &req, sizeof req, &reply, sizeof reply, &ram_fd, 1, &m);
        rc != 0)
        return fail("the daemon at " + o.socket + " cannot give VF " + std::to_string(o.vf) + " of PF " +
                    std::to_string(o.pf) + " to a VM: " +
                    (rc == -ENODEV ? "its PF has not enabled it (the PF's vfs=)"
                     : rc == -EBUSY ? "another client has it"
                                    : std::strerror(-rc)));
    if (m.nfds != 1 || reply.bar_size == 0)
        return fail("the daemon's attach_vm reply gives no BAR");
    const int bar_fd = m.take_fd(0);

    auto fd_path = [](int fd) { return "/proc/self/fd/" + std::to_string(fd); };
    std::vector<std::string> argv_qemu = o.qemu;
    char slot[8];
    std::snprintf(slot, sizeof slot, "0x%lx", o.slot);
    argv_qemu.insert(argv_qemu.end(),
                     {"-m", std::to_string(o.memory_mb), "-object",
                      "memory-backend-file,id=cna-ram,share=on,size=" + std::to_string(o.memory_mb) +
                          "M,mem-path=" + fd_path(ram_fd),
                      "-machine", "memory-backend=cna-ram", "-object",
                      "memory-backend-file,id=cna-vf,share=on,size=" + std::to_string(reply.bar_size) +
                          ",mem-path=" + fd_path(bar_fd),
                      "-device", std::string("ivshmem-plain,memdev=cna-vf,bus=pcie.0,addr=") + slot});
    std::fprintf(stderr, "cna-vm: VF %lu of PF %lu of adapter %s is the guest's 0000:00:%02lx.0\n", o.vf, o.pf,
                 daemon.hello().adapter, o.slot);

    struct sigaction sa{};
    sa.sa_handler = forward_signal;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
    qemu_pid = ::fork();
    if (qemu_pid < 0)
        return fail(std::string("fork: ") + std::strerror(errno));
    if (qemu_pid == 0)
        exec_qemu(std::move(argv_qemu), ram_fd, bar_fd);
    watch_until_qemu_ends(daemon.fd(), bar_fd);
    int status = 0;
    while (::waitpid(qemu_pid, &status, 0) < 0 && errno == EINTR) {
    }
    /* The session ends here (the daemon resets the VF), before the caller
     * learns that QEMU is gone. */
    daemon.close();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
