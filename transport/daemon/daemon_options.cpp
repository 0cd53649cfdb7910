/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/daemon_options.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

namespace cna::adapterd {

using namespace fw;

namespace {

constexpr std::string_view TAP_PREFIX = "tap:";

bool parse_u32(std::string_view text, uint32_t* value)
{
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

/* "a,b,c" into its parts (none empty). */
bool split_list(std::string_view text, std::vector<std::string_view>* parts)
{
    parts->clear();
    for (;;) {
        const std::size_t comma = text.find(',');
        parts->push_back(text.substr(0, comma));
        if (parts->back().empty())
            return false;
        if (comma == std::string_view::npos)
            return true;
        text.remove_prefix(comma + 1);
    }
}

std::string bad(std::string_view option, std::string_view value, std::string_view expected)
{
    return "invalid " + std::string(option) + " '" + std::string(value) + "': expected " + std::string(expected);
}

/* Applies one setting, its key a long option's name without the dashes;
 * `dashes` is how the messages show the key: "--" for the command line,
 * "" for the configuration file. Returns an error message or "". */
std::string apply(std::string_view key, std::string_view value, std::string_view dashes, DaemonOptions* o,
                  uint32_t* fault_bits, std::vector<std::string>* taps)
{
    AdapterConfig& a = o->adapter;
    const std::string option = std::string(dashes) + std::string(key);
    if (key == "socket") {
        if (value.empty() || value.size() >= 108)
            return bad(option, value, "a unix socket path of 1 to 107 characters");
        o->socket_path = value;
    } else if (key == "name") {
        if (value.empty() || value.size() > 32)
            return bad(option, value, "a name of 1 to 32 characters");
        a.name = value;
    } else if (key == "ports") {
        if (!parse_u32(value, &a.ports) || (a.ports != 1 && a.ports != 2 && a.ports != 4))
            return bad(option, value, "1, 2 or 4");
    } else if (key == "pfs-per-port") {
        if (!parse_u32(value, &a.pfs_per_port) || (a.pfs_per_port != 1 && a.pfs_per_port != 2 && a.pfs_per_port != 4))
            return bad(option, value, "1, 2 or 4");
    } else if (key == "wire") {
        std::vector<std::string_view> names;
        if (value == "loopback" || value == "cable") {
            a.wire = value == "loopback" ? Wire::loopback : Wire::cable;
            taps->clear();
        } else if (value.starts_with(TAP_PREFIX) && split_list(value.substr(TAP_PREFIX.size()), &names) &&
                   std::all_of(names.begin(), names.end(), hsi::control::valid_tap_name)) {
            a.wire = Wire::loopback;
            taps->assign(names.begin(), names.end());
        } else {
            return bad(option, value, "loopback, cable or tap:<ifname>[,<ifname>...] (one per port)");
        }
    } else if (key == "engine-threads") {
        if (!parse_u32(value, &a.engine_threads) || a.engine_threads < 1 || a.engine_threads > hsi::MAX_PORTS)
            return bad(option, value, "1 to 4 (at most one per port group)");
    } else if (key == "engine-cpus") {
        std::vector<std::string_view> parts;
        o->engine_cpus.clear();
        uint32_t cpu;
        if (!split_list(value, &parts))
            return bad(option, value, "CPU numbers, one per engine thread, as 0,1");
        for (std::string_view p : parts) {
            if (!parse_u32(p, &cpu) || cpu >= CPU_SETSIZE)
                return bad(option, value, "CPU numbers, one per engine thread, as 0,1");
            o->engine_cpus.push_back(cpu);
        }
    } else if (key == "fault") {
        const Fault f = hsi::control::fault_named(value);
        if (f == Fault::none)
            return bad(option, value, hsi::control::FAULT_NAMES);
        *fault_bits |= static_cast<uint32_t>(f);
    } else if (key == "link-up-delay") {
        if (!parse_u32(value, &a.link_up_delay_ms) || a.link_up_delay_ms > 60'000)
            return bad(option, value, "milliseconds, 0 to 60000");
    } else if (key == "idle-exit") {
        if (!parse_u32(value, &o->idle_exit_s) || o->idle_exit_s > 86'400)
            return bad(option, value, "seconds, 0 (never) to 86400");
    } else if (key == "log-level") {
        static constexpr std::string_view levels[] = {"err", "warning", "notice", "info", "debug"};
        const auto* l = std::find(std::begin(levels), std::end(levels), value);
        if (l == std::end(levels))
            return bad(option, value, "err, warning, notice, info or debug");
        o->log_level = static_cast<LogLevel>(l - std::begin(levels));
    } else {
        return (dashes.empty() ? "unknown key '" : "unknown option '") + option + "'";
    }
    return {};
}

std::string_view trim(std::string_view text)
{
    constexpr std::string_view blanks = " \t\r\v\f";
    const std::size_t first = text.find_first_not_of(blanks);
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

/* Applies a configuration file's settings, the file's text in `text` and
 * its name, for the messages, in `file`. Returns an error message or "". */
std::string apply_config(std::string_view text, std::string_view file, DaemonOptions* o, uint32_t* fault_bits,
                         std::vector<std::string>* taps)
{
    for (uint32_t line_no = 1; !text.empty(); line_no++) {
        const std::size_t newline = text.find('\n');
        const std::string_view line = trim(text.substr(0, newline));
        text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
        if (line.empty() || line.front() == '#')
            continue;
        const std::string where = std::string(file) + ":" + std::to_string(line_no) + ": ";
        if (line.find('\0') != std::string_view::npos)
            return where + "a NUL character";
        const std::size_t eq = line.find('=');
        const std::string_view key = trim(line.substr(0, eq));
        if (eq == std::string_view::npos || key.empty())
            return where + "expected key = value, not '" + std::string(line) + "'";
        if (key == "config" || key == "daemonize")
            return where + std::string(key) + " is a command-line option only (--" + std::string(key) + ")";
        if (std::string msg = apply(key, trim(line.substr(eq + 1)), "", o, fault_bits, taps); !msg.empty())
            return where + msg;
    }
    return {};
}

/* The command line, read: --daemonize and --config taken, every other
 * option kept as a (key, value) setting to apply after the file's. */
struct CommandLine {
    std::vector<std::pair<std::string_view, std::string_view>> settings;
    std::string config; /* --config's FILE; empty: none */
};

bool read_command_line(int argc, const char* const* argv, DaemonOptions* out, CommandLine* line, std::string* error)
{
    for (int i = 1; i < argc; i++) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            *error = usage(argv[0]);
            return false;
        }
        if (arg == "--daemonize") {
            out->daemonize = true;
            continue;
        }
        if (!arg.starts_with("--") || arg.size() == 2) {
            *error = "unknown option '" + std::string(arg) + "'";
            return false;
        }
        std::string_view value;
        if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            *error = "option '" + std::string(arg) + "' needs a value";
            return false;
        }
        if (arg == "--config") {
            if (!line->config.empty() || value.empty()) {
                *error = line->config.empty() ? "invalid --config '': expected a file" : "--config given twice";
                return false;
            }
            line->config = value;
            continue;
        }
        line->settings.emplace_back(arg.substr(2), value);
    }
    return true;
}

/* What no single option decides: the settings together. */
bool check_whole(const std::string& config, const std::vector<std::string>& taps, DaemonOptions* out,
                 std::string* error)
{
    AdapterConfig& a = out->adapter;
    if (out->socket_path.empty()) {
        *error = "--socket PATH is required";
        if (!config.empty())
            *error += " (or socket = PATH in " + config + ")";
        return false;
    }
    if (a.ports * a.pfs_per_port > hsi::MAX_PFS) {
        *error = std::to_string(a.ports) + " ports of " + std::to_string(a.pfs_per_port) + " PFs: at most " +
                 std::to_string(hsi::MAX_PFS) + " PFs";
        return false;
    }
    if (taps.size() > a.ports) {
        *error = "--wire tap: " + std::to_string(taps.size()) + " interfaces for " + std::to_string(a.ports) +
                 " port(s)";
        return false;
    }
    for (std::size_t p = 0; p < taps.size(); p++)
        a.tap_names[p] = taps[p];
    if (!out->engine_cpus.empty() && out->engine_cpus.size() != a.engine_threads) {
        *error = "--engine-cpus: " + std::to_string(out->engine_cpus.size()) + " CPU(s) for " +
                 std::to_string(a.engine_threads) + " engine thread(s); give one per thread";
        return false;
    }
    return true;
}

} // namespace

std::string usage(const char* program)
{
    return std::string("usage: ") + program +
           " --socket PATH [--name NAME] [--ports 1|2|4] [--pfs-per-port 1|2|4]\n"
           "       [--wire loopback|cable|tap:IF[,IF...]] [--engine-threads N] [--engine-cpus C[,C...]]\n"
           "       [--fault F]... [--link-up-delay MS]\n"
           "       [--log-level err|warning|notice|info|debug] [--idle-exit S] [--daemonize]\n"
           "       [--config FILE]\n"
           "Serves the PCI functions of one software adapter to net_cna ports in other\n"
           "processes (--vdev net_cna0,daemon=PATH,pf=N). --idle-exit: leave after S seconds\n"
           "without a client. --daemonize: return once serving, in a session of its own and\n"
           "on every CPU (how a net_cna port starts it when nothing serves PATH).\n"
           "--config: read settings from FILE, one `key = value` a line, the key an option\n"
           "above without its dashes (not config or daemonize; # starts a comment line).\n"
           "The file is read first and the command line applies on top of it, wherever\n"
           "--config stands: an option given on the command line overrides the file's\n"
           "(its --fault options replace the file's faults).\n";
}

bool read_config_file(const std::string& path, std::string* text, std::string* error)
{
    constexpr std::size_t MAX_SIZE = 1 << 20;
    text->clear();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    while (err == 0) {
        char chunk[4096];
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = n < 0 ? errno : 0;
            break;
        }
        text->append(chunk, static_cast<std::size_t>(n));
        if (text->size() > MAX_SIZE)
            err = EFBIG;
    }
    if (fd >= 0)
        ::close(fd);
    if (err != 0) {
        *error = "cannot read " + path + ": " + std::strerror(err);
        return false;
    }
    return true;
}


bool parse_options(int argc, const char* const* argv, DaemonOptions* out, std::string* error,
                   const ConfigReader& read_file)
{
    *out = DaemonOptions{};
    out->adapter.name = "cna-adapterd";
    CommandLine line;
    if (!read_command_line(argc, argv, out, &line, error))
        return false;
    uint32_t file_faults = 0, faults = 0;
    std::vector<std::string> taps;
    if (!line.config.empty()) {
        std::string text;
        if (!read_file(line.config, &text, error))
            return false;
        if (std::string msg = apply_config(text, line.config, out, &file_faults, &taps); !msg.empty()) {
            *error = std::move(msg);
            return false;
        }
    }
    for (const auto& [key, value] : line.settings) {
        if (std::string msg = apply(key, value, "--", out, &faults, &taps); !msg.empty()) {
            *error = std::move(msg);
            return false;
        }
    }
    out->adapter.faults = faults != 0 ? faults : file_faults;
    return check_whole(line.config, taps, out, error);
}

} // namespace cna::adapterd
