/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/log.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace cna::fw {
namespace {

void stderr_sink(LogLevel level, const std::string& line)
{
    if (level <= LogLevel::warning)
        std::fprintf(stderr, "cna.adapter: %s\n", line.c_str());
}

/* The sink may be replaced while engine threads log: a mutex keeps the
 * std::function intact. Logging is slowpath only, so the cost is irrelevant. */
std::mutex sink_mutex;
LogSink& sink()
{
    static LogSink s = stderr_sink;
    return s;
}

} // namespace

void set_log_sink(LogSink new_sink)
{
    std::lock_guard lock(sink_mutex);
    sink() = new_sink ? std::move(new_sink) : LogSink(stderr_sink);
}

void log(LogLevel level, const char* fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    std::lock_guard lock(sink_mutex);
    sink()(level, line);
}

} // namespace cna::fw
