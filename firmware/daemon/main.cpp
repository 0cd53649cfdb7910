/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd: the software adapter as a daemon (see adapter_daemon.h).
 */
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "daemon/adapter_daemon.h"

int main(int argc, char** argv)
{
    using namespace cna::fw;
    daemon::DaemonOptions options;
    std::string error;
    if (!daemon::parse_options(argc, argv, &options, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return error.starts_with("usage:") ? 0 : 2;
    }
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
    auto d = daemon::AdapterDaemon::create(options, &error);
    if (!d) {
        std::fprintf(stderr, "cna-adapterd: %s\n", error.c_str());
        return 1;
    }
    d->run();
    return 0;
}
