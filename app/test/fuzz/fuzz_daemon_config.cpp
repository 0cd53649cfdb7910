/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: cna-adapterd's configuration file (--config), read from the
 * input instead of a file, under one of a few command lines that set
 * options of their own. The first byte picks the command line and where
 * --config stands in it; the rest is the file. Any file either parses into
 * settings within their documented ranges, where every option of the
 * command line has the command line's value, or fails with a message that
 * names a line of the file, or one of the checks that need every setting.
 */
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/daemon_options.h"

using namespace cna::fw;
using namespace cna::adapterd;

namespace {

constexpr std::string_view FILE_NAME = "fuzz.conf";

/* Options the command line adds to --config FILE (all valid on their own). */
const std::vector<std::vector<const char*>> COMMAND_LINES = {
    {},
    {"--ports", "4"},
    {"--wire", "cable", "--socket=/tmp/fuzz-cli.sock"},
    {"--fault", "dma_fault"},
    {"--socket", "/tmp/fuzz-cli.sock", "--daemonize"},
    {"--engine-threads", "2", "--engine-cpus", "0,1", "--ports", "2"},
    {"--wire", "tap:fz0,fz1,fz2"},
    {"--log-level", "debug", "--idle-exit", "5", "--name=cli"},
};

[[noreturn]] void broken() { std::abort(); }

/* The value the command line gives an option ("--x V" or "--x=V"), or nullptr. */
const char* given(const std::vector<const char*>& args, std::string_view option)
{
    for (std::size_t i = 0; i < args.size(); i++) {
        const std::string_view a = args[i];
        if (a == option)
            return i + 1 < args.size() ? args[i + 1] : "";
        if (a.starts_with(option) && a.size() > option.size() && a[option.size()] == '=')
            return args[i] + option.size() + 1;
    }
    return nullptr;
}

bool has(const std::vector<const char*>& args, std::string_view option) { return given(args, option) != nullptr; }

/* The number of the line an error message names ("fuzz.conf:N: ..."), or 0. */
uint32_t line_named(const std::string& error)
{
    if (!error.starts_with(std::string(FILE_NAME) + ":"))
        return 0;
    uint32_t line = 0;
    const std::size_t first = FILE_NAME.size() + 1;
    std::size_t i = first;
    for (; i < error.size() && error[i] >= '0' && error[i] <= '9' && line < 100'000'000; i++)
        line = line * 10 + static_cast<uint32_t>(error[i] - '0');
    return i > first && error.compare(i, 2, ": ") == 0 ? line : 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t pick = data[0];
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::vector<const char*>& cli = COMMAND_LINES[(pick >> 1) % COMMAND_LINES.size()];

    /* --config first or last: the command line applies on top either way. */
    std::vector<const char*> argv{"cna-adapterd"};
    if (pick & 1)
        argv.insert(argv.end(), cli.begin(), cli.end());
    argv.insert(argv.end(), {"--config", FILE_NAME.data()});
    if (!(pick & 1))
        argv.insert(argv.end(), cli.begin(), cli.end());

    const ConfigReader reader = [&](const std::string& path, std::string* out, std::string*) {
        if (path != FILE_NAME)
            broken();
        *out = text;
        return true;
    };
    DaemonOptions o;
    std::string error;
    if (!parse_options(static_cast<int>(argv.size()), argv.data(), &o, &error, reader)) {
        if (error.empty())
            broken();
        /* A line of the file that exists, or a check of all the settings. */
        const uint32_t lines = 1 + static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n'));
        const uint32_t line = line_named(error);
        if (line == 0 ? !error.starts_with("--") : line > lines)
            broken();
        return 0;
    }

    const AdapterConfig& a = o.adapter;
    if (o.socket_path.empty() || o.socket_path.size() > 107 || o.socket_path.find('\0') != std::string::npos)
        broken();
    if (a.name.empty() || a.name.size() > 32)
        broken();
    if (a.ports != 1 && a.ports != 2 && a.ports != 4)
        broken();
    if (a.wire != Wire::loopback && a.wire != Wire::cable)
        broken();
    for (uint32_t p = 0; p < a.tap_names.size(); p++) {
        if (!a.tap_names[p].empty() && (p >= a.ports || a.wire != Wire::loopback ||
                                        !cna::hsi::control::valid_tap_name(a.tap_names[p])))
            broken();
    }
    if (a.engine_threads < 1 || a.engine_threads > 4)
        broken();
    if (!o.engine_cpus.empty() && o.engine_cpus.size() != a.engine_threads)
        broken();
    for (uint32_t cpu : o.engine_cpus)
        if (cpu >= CPU_SETSIZE)
            broken();
    uint32_t known = 0;
    for (const auto& f : cna::hsi::control::FAULTS)
        known |= static_cast<uint32_t>(f.fault);
    if ((a.faults & ~known) != 0)
        broken();
    if (a.link_up_delay_ms > 60'000 || o.idle_exit_s > 86'400)
        broken();
    if (static_cast<int>(o.log_level) < 0 || static_cast<int>(o.log_level) > 4)
        broken();
    /* The file cannot daemonize; the command line can. */
    if (o.daemonize != has(cli, "--daemonize"))
        broken();

    /* Whatever the file says, the command line's options are the command line's. */
    if (const char* ports = given(cli, "--ports"); ports != nullptr && a.ports != std::strtoul(ports, nullptr, 10))
        broken();
    if (const char* socket = given(cli, "--socket"); socket != nullptr && o.socket_path != socket)
        broken();
    if (const char* wire = given(cli, "--wire"); wire != nullptr && std::string_view(wire) == "cable") {
        if (a.wire != Wire::cable || !a.tap_names[0].empty())
            broken();
    } else if (wire != nullptr) { /* three TAPs: the file must have made the ports 4 */
        if (a.wire != Wire::loopback || a.tap_names[0] != "fz0" || a.tap_names[2] != "fz2" ||
            !a.tap_names[3].empty() || a.ports != 4)
            broken();
    }
    if (has(cli, "--fault") && a.faults != static_cast<uint32_t>(cna::hsi::control::Fault::dma_fault))
        broken();
    if (has(cli, "--engine-cpus") && (a.engine_threads != 2 || o.engine_cpus != std::vector<uint32_t>{0, 1}))
        broken();
    if (has(cli, "--log-level") &&
        (o.log_level != LogLevel::debug || o.idle_exit_s != 5 || a.name != "cli"))
        broken();
    return 0;
}
