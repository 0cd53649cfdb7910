/* SPDX-License-Identifier: BSD-3-Clause */
#include "cm_log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace cna::rdmacm {

bool cm_log_on()
{
    static const bool on = [] {
        const char* v = std::getenv("CNA_CM_LOG");
        return v != nullptr && *v != '\0' && *v != '0';
    }();
    return on;
}

void cm_log(const char* format, ...)
{
    if (!cm_log_on())
        return;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    char line[256];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof(line), format, args);
    va_end(args);
    /* One write per line: the CM thread's lines and the application's
     * threads' do not interleave. */
    std::fprintf(stderr, "cna rdmacm: %ld.%06ld %s\n", static_cast<long>(now.tv_sec), now.tv_nsec / 1000, line);
}

} // namespace cna::rdmacm
