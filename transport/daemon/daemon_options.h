/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd's command line: the socket it serves on and the adapter it
 * owns, with the embedded adapter's options (net_cna's devargs) as flags,
 * and the configuration file (--config) that holds the same settings.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cna_fw/adapter.h"

namespace cna::adapterd {

struct DaemonOptions {
    std::string socket_path;
    fw::AdapterConfig adapter;
    std::vector<uint32_t> engine_cpus; /* one per engine thread; empty: not pinned */
    fw::LogLevel log_level = fw::LogLevel::notice;
    /* Started on demand by a net_cna port: detach from the starter (a new
     * session, no CPU pinning inherited) and return to it once serving. */
    bool daemonize = false;
    /* Exit after this many seconds without a client; 0: serve forever. */
    uint32_t idle_exit_s = 0;
};

/* Reads a whole file into *text; false with "cannot read PATH: <reason>"
 * in *error. parse_options reads --config's file through one of these. */
using ConfigReader = std::function<bool(const std::string& path, std::string* text, std::string* error)>;
bool read_config_file(const std::string& path, std::string* text, std::string* error);

/* Parses argv (argv[0] is the program); false with a message naming the
 * offending option in *error. `--help` is an error whose message is the usage.
 *
 * `--config FILE` names a configuration file: one setting a line, `key =
 * value`, the key a long option's name without its dashes (all but config
 * and daemonize), whitespace around either trimmed; blank lines and lines
 * whose first non-blank character is `#` are skipped. The file is applied
 * first, then every other option of the command line on top of it, wherever
 * --config stands among them: a key the command line gives is the command
 * line's (for fault, the command line's faults replace the file's). An error
 * in the file is named `FILE:LINE: message`; an unknown key is an error. */
bool parse_options(int argc, const char* const* argv, DaemonOptions* out, std::string* error,
                   const ConfigReader& read_file = read_config_file);

std::string usage(const char* program);

} // namespace cna::adapterd
