/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_daemon_spawn.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

extern char** environ;

namespace cna::osal {
namespace {

constexpr char PROGRAM[] = "cna-adapterd";
/* The daemon powers its adapter on before it answers: milliseconds; the
 * bound is for one that hangs. */
constexpr int START_TIMEOUT_MS = 10'000;

bool executable(const std::string& path)
{
    return ::access(path.c_str(), X_OK) == 0;
}

/* In the build tree, the PMD is build/pmd/net/librte_net_cna.so and the
 * daemon build/transport/cna-adapterd; installed, the daemon is in the
 * system's sbin directory, which a user's PATH may lack. */
std::string program()
{
    if (const char* env = std::getenv("CNA_ADAPTERD"); env != nullptr && env[0] != '\0')
        return env;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&spawn_daemon), &info) != 0 && info.dli_fname != nullptr) {
        std::string dir = info.dli_fname;
        dir.erase(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
        for (const char* relative : {"/../../transport/", "/"})
            if (std::string candidate = dir + relative + PROGRAM; executable(candidate))
                return candidate;
    }
    if (executable(CNA_INSTALLED_ADAPTERD))
        return CNA_INSTALLED_ADAPTERD;
    return PROGRAM; /* from PATH */
}

std::string last_line(const std::string& path)
{
    std::ifstream in(path);
    std::string line, last;
    while (std::getline(in, line))
        if (!line.empty())
            last = line;
    return last;
}

/* The daemon's starter process exits once the daemon serves (0) or has
 * failed (1). */
int wait_started(pid_t pid, int* status)
{
    for (int waited = 0; waited < START_TIMEOUT_MS; waited += 10) {
        const pid_t r = ::waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 0;
        if (r < 0)
            return -errno;
        const timespec tick{0, 10'000'000};
        ::nanosleep(&tick, nullptr);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, status, 0);
    return -ETIMEDOUT;
}

} // namespace

int spawn_daemon(const std::string& socket, const std::vector<std::string>& options, std::string* msg)
{
    const std::string prog = program();
    const std::string log = socket + ".log";
    std::vector<std::string> args = {prog, "--socket", socket, "--daemonize", "--idle-exit",
                                     std::to_string(SPAWNED_DAEMON_IDLE_EXIT_S)};
    args.insert(args.end(), options.begin(), options.end());
    std::vector<char*> argv;
    for (std::string& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    /* Nothing of this process but the log: no DPDK memory or socket fds
     * kept alive by the daemon, default signal handling. */
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    posix_spawn_file_actions_addclosefrom_np(&files, 3);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = prog.find('/') == std::string::npos ? ::posix_spawnp(&pid, prog.c_str(), &files, &attr, argv.data(), environ)
                                                  : ::posix_spawn(&pid, prog.c_str(), &files, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&files);
    if (rc != 0) {
        *msg = "cannot start " + prog + ": " + std::strerror(rc);
        return -rc;
    }
    int status = 0;
    if (rc = wait_started(pid, &status); rc != 0) {
        *msg = prog + " did not start serving " + socket + " within " + std::to_string(START_TIMEOUT_MS / 1000) +
               " s (log: " + log + ")";
        return rc;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        *msg = prog + " could not start: " + last_line(log) + " (log: " + log + ")";
        return -EIO;
    }
    return 0;
}

} // namespace cna::osal
