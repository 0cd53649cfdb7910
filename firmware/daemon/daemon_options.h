/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd's command line: the socket it serves on and the adapter it
 * owns, with the embedded adapter's options (net_cna's devargs) as flags.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cna_fw/adapter.h"

namespace cna::fw::daemon {

struct DaemonOptions {
    std::string socket_path;
    AdapterConfig adapter;
    std::vector<uint32_t> engine_cpus; /* one per engine thread; empty: not pinned */
    LogLevel log_level = LogLevel::notice;
    /* Started on demand by a net_cna port: detach from the starter (a new
     * session, no CPU pinning inherited) and return to it once serving. */
    bool daemonize = false;
    /* Exit after this many seconds without a client; 0: serve forever. */
    uint32_t idle_exit_s = 0;
};

/* Parses argv (argv[0] is the program); false with a message naming the
 * offending option in *error. `--help` is an error whose message is the usage. */
bool parse_options(int argc, const char* const* argv, DaemonOptions* out, std::string* error);

std::string usage(const char* program);

} // namespace cna::fw::daemon
