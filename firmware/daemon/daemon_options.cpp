/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/daemon_options.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <string_view>

namespace cna::fw::daemon {
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

/* Applies one option; returns an error message or an empty string. */
std::string apply(std::string_view option, std::string_view value, DaemonOptions* o, uint32_t* fault_bits,
                  std::vector<std::string_view>* taps)
{
    AdapterConfig& a = o->adapter;
    if (option == "--socket") {
        if (value.empty() || value.size() >= 108)
            return bad(option, value, "a unix socket path of 1 to 107 characters");
        o->socket_path = value;
    } else if (option == "--name") {
        if (value.empty() || value.size() > 32)
            return bad(option, value, "a name of 1 to 32 characters");
        a.name = value;
    } else if (option == "--ports") {
        if (!parse_u32(value, &a.ports) || (a.ports != 1 && a.ports != 2 && a.ports != 4))
            return bad(option, value, "1, 2 or 4");
    } else if (option == "--wire") {
        if (value == "loopback") {
            a.wire = Wire::loopback;
        } else if (value == "cable") {
            a.wire = Wire::cable;
        } else if (value.starts_with(TAP_PREFIX) && split_list(value.substr(TAP_PREFIX.size()), taps) &&
                   std::all_of(taps->begin(), taps->end(), hsi::control::valid_tap_name)) {
            a.wire = Wire::loopback;
        } else {
            return bad(option, value, "loopback, cable or tap:<ifname>[,<ifname>...] (one per port)");
        }
    } else if (option == "--engine-threads") {
        if (!parse_u32(value, &a.engine_threads) || a.engine_threads < 1 || a.engine_threads > hsi::MAX_PORTS)
            return bad(option, value, "1 to 4 (at most one per port group)");
    } else if (option == "--engine-cpus") {
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
    } else if (option == "--fault") {
        const Fault f = hsi::control::fault_named(value);
        if (f == Fault::none)
            return bad(option, value, hsi::control::FAULT_NAMES);
        *fault_bits |= static_cast<uint32_t>(f);
    } else if (option == "--link-up-delay") {
        if (!parse_u32(value, &a.link_up_delay_ms) || a.link_up_delay_ms > 60'000)
            return bad(option, value, "milliseconds, 0 to 60000");
    } else if (option == "--idle-exit") {
        if (!parse_u32(value, &o->idle_exit_s) || o->idle_exit_s > 86'400)
            return bad(option, value, "seconds, 0 (never) to 86400");
    } else if (option == "--log-level") {
        static constexpr std::string_view levels[] = {"err", "warning", "notice", "info", "debug"};
        const auto* l = std::find(std::begin(levels), std::end(levels), value);
        if (l == std::end(levels))
            return bad(option, value, "err, warning, notice, info or debug");
        o->log_level = static_cast<LogLevel>(l - std::begin(levels));
    } else {
        return "unknown option '" + std::string(option) + "'";
    }
    return {};
}

} // namespace

std::string usage(const char* program)
{
    return std::string("usage: ") + program +
           " --socket PATH [--name NAME] [--ports 1|2|4] [--wire loopback|cable|tap:IF[,IF...]]\n"
           "       [--engine-threads N] [--engine-cpus C[,C...]] [--fault F]... [--link-up-delay MS]\n"
           "       [--log-level err|warning|notice|info|debug] [--idle-exit S] [--daemonize]\n"
           "Serves the PCI functions of one software adapter to net_cna ports in other\n"
           "processes (--vdev net_cna0,daemon=PATH,pf=N). --idle-exit: leave after S seconds\n"
           "without a client. --daemonize: return once serving, in a session of its own and\n"
           "on every CPU (how a net_cna port starts it when nothing serves PATH).\n";
}

bool parse_options(int argc, const char* const* argv, DaemonOptions* out, std::string* error)
{
    *out = DaemonOptions{};
    out->adapter.name = "cna-adapterd";
    uint32_t fault_bits = 0;
    std::vector<std::string_view> taps;
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
        std::string_view value;
        if (const std::size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            *error = "option '" + std::string(arg) + "' needs a value";
            return false;
        }
        if (std::string msg = apply(arg, value, out, &fault_bits, &taps); !msg.empty()) {
            *error = std::move(msg);
            return false;
        }
    }
    AdapterConfig& a = out->adapter;
    a.faults = fault_bits;
    if (out->socket_path.empty()) {
        *error = "--socket PATH is required";
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

} // namespace cna::fw::daemon
