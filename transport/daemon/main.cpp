/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd: the software adapter as a daemon (see adapter_daemon.h).
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "daemon/adapter_daemon.h"

namespace {

/* --daemonize: the starter's process returns (its exit status: serving or
 * not) once the daemon, forked before any thread exists, is serving. Returns
 * the daemon's end of the readiness pipe; the starter's side never returns. */
int daemonize()
{
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) {
        std::perror("cna-adapterd: pipe");
        std::exit(1);
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::perror("cna-adapterd: fork");
        std::exit(1);
    }
    if (pid > 0) {
        ::close(ready[1]);
        char serving = 0;
        const bool ok = ::read(ready[0], &serving, 1) == 1 && serving == 1;
        std::_Exit(ok ? 0 : 1);
    }
    ::close(ready[0]);
    ::setsid();
    /* A process pinned to one CPU (a DPDK main lcore) must not pin the
     * adapter's engine threads with it: every CPU the cpuset allows. */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        CPU_SET(cpu, &all);
    ::sched_setaffinity(0, sizeof all, &all);
    return ready[1];
}

} // namespace

int main(int argc, char** argv)
{
    using namespace cna::fw;
    namespace adapterd = cna::adapterd;
    adapterd::DaemonOptions options;
    std::string error;
    if (!adapterd::parse_options(argc, argv, &options, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return error == adapterd::usage(argv[0]) ? 0 : 2; /* --help, or a bad option */
    }
    const int ready_fd = options.daemonize ? daemonize() : -1;
    static const char* const level_names[] = {"error", "warning", "notice", "info", "debug"};
    set_log_sink([max = options.log_level](LogLevel level, const std::string& line) {
        if (level > max)
            return;
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        tm t;
        localtime_r(&ts.tv_sec, &t);
        std::fprintf(stderr, "%02d:%02d:%02d.%03ld cna-adapterd %s: %s\n", t.tm_hour, t.tm_min, t.tm_sec,
                     ts.tv_nsec / 1'000'000, level_names[static_cast<int>(level)], line.c_str());
    });
    auto d = adapterd::AdapterDaemon::create(options, &error);
    if (!d) {
        std::fprintf(stderr, "cna-adapterd: %s\n", error.c_str());
        return 1;
    }
    if (ready_fd >= 0) {
        const char serving = 1;
        [[maybe_unused]] ssize_t n = ::write(ready_fd, &serving, 1);
        ::close(ready_fd);
    }
    d->run();
    return 0;
}
