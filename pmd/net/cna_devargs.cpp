/* SPDX-License-Identifier: BSD-3-Clause */
#include "cna_devargs.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <string_view>

#include <arpa/inet.h>
#include <sched.h>

#include <ethdev_driver.h>
#include <rte_kvargs.h>

#include "hsi_common.h"
#include "hsi_iov.h"

namespace cna::net {
namespace {

constexpr std::string_view TAP_PREFIX = "tap:";

using KvargsPtr = std::unique_ptr<rte_kvargs, decltype(&rte_kvargs_free)>;

bool parse_u32(std::string_view text, uint32_t* value)
{
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

/* "address/prefix" of one family, into the GID form (IPv4-mapped). */
bool parse_ip(std::string_view text, bool v4, std::optional<Devargs::IpAddress>* out)
{
    const size_t slash = text.find('/');
    uint32_t prefix;
    if (slash == std::string_view::npos || !parse_u32(text.substr(slash + 1), &prefix) || prefix > (v4 ? 32u : 128u))
        return false;
    const std::string addr(text.substr(0, slash));
    Devargs::IpAddress ip;
    ip.prefix = static_cast<uint8_t>(prefix);
    if (v4) {
        ip.addr[10] = ip.addr[11] = 0xff;
        if (inet_pton(AF_INET, addr.c_str(), ip.addr.data() + 12) != 1)
            return false;
    } else if (inet_pton(AF_INET6, addr.c_str(), ip.addr.data()) != 1) {
        return false;
    }
    *out = ip;
    return true;
}

/* "3" or "[0,1]": CPU numbers below CPU_SETSIZE. */
bool parse_cpu_list(std::string_view text, std::vector<uint32_t>* cpus)
{
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
        text = text.substr(1, text.size() - 2);
    cpus->clear();
    for (;;) {
        std::size_t comma = text.find(',');
        uint32_t cpu;
        if (!parse_u32(text.substr(0, comma), &cpu) || cpu >= CPU_SETSIZE)
            return false;
        cpus->push_back(cpu);
        if (comma == std::string_view::npos)
            return true;
        text.remove_prefix(comma + 1);
    }
}

std::string bad_value(std::string_view key, std::string_view value, std::string_view expected)
{
    return "invalid devarg '" + std::string(key) + "=" + std::string(value) + "': expected " +
           std::string(expected);
}

/* DPDK's representor syntax, read by ethdev's own parser: VFs of this PF. */
std::string parse_representors(std::string_view value, std::vector<uint16_t>* vfs)
{
    constexpr std::string_view EXPECTED = "VF representors of this PF, as [0-3], vf[0,2] or pf0vf1";
    const std::string devargs = "representor=" + std::string(value);
    rte_eth_devargs parsed{};
    if (value.empty() || rte_eth_devargs_parse(devargs.c_str(), &parsed) != 0)
        return bad_value("representor", value, EXPECTED);
    if (parsed.type != RTE_ETH_REPRESENTOR_VF || parsed.nb_mh_controllers != 0 ||
        (parsed.nb_ports != 0 && (parsed.nb_ports != 1 || parsed.ports[0] != 0)))
        return bad_value("representor", value, EXPECTED);
    vfs->assign(parsed.representor_ports, parsed.representor_ports + parsed.nb_representor_ports);
    std::sort(vfs->begin(), vfs->end());
    vfs->erase(std::unique(vfs->begin(), vfs->end()), vfs->end());
    return {};
}

/* Applies one key=value; returns an error message or an empty string. */
std::string apply(std::string_view key, std::string_view value, Devargs* d)
{
    if (key == "daemon") {
        if (value.empty() || value.size() > 107)
            return bad_value(key, value, "the path of cna-adapterd's socket (1 to 107 characters)");
        d->daemon = value;
    } else if (key == "pf") {
        if (!parse_u32(value, &d->port) || d->port >= hsi::MAX_PFS)
            return bad_value(key, value, "a PF number from 0 to " + std::to_string(hsi::MAX_PFS - 1));
    } else if (key == "adapter") {
        if (value.empty() || value.size() > 32)
            return bad_value(key, value, "a name of 1 to 32 characters");
        d->adapter = value;
    } else if (key == "ports") {
        if (!parse_u32(value, &d->ports) || (d->ports != 1 && d->ports != 2 && d->ports != 4))
            return bad_value(key, value, "1, 2 or 4");
        d->ports_given = true;
    } else if (key == "port") {
        if (!parse_u32(value, &d->port) || d->port > 3)
            return bad_value(key, value, "a port number from 0 to 3");
    } else if (key == "wire") {
        if (value == "loopback") {
            d->wire = Wire::loopback;
        } else if (value == "cable") {
            d->wire = Wire::cable;
        } else if (value.starts_with(TAP_PREFIX) && hsi::control::valid_tap_name(value.substr(TAP_PREFIX.size()))) {
            d->wire = Wire::tap;
            d->tap_name = value.substr(TAP_PREFIX.size());
        } else {
            return bad_value(key, value,
                             "loopback, cable or tap:<ifname> (1 to 15 characters of A-Z a-z 0-9 _ . -)");
        }
        d->wire_given = true;
    } else if (key == "mac") {
        rte_ether_addr mac;
        if (rte_ether_unformat_addr(std::string(value).c_str(), &mac) != 0 || !rte_is_valid_assigned_ether_addr(&mac))
            return bad_value(key, value, "a unicast MAC address other than zero, as xx:xx:xx:xx:xx:xx");
        d->mac = mac;
    } else if (key == "fw_file") {
        if (value.empty())
            return bad_value(key, value, "a file path");
        d->fw_file = value;
    } else if (key == "roce_loss") {
        if (!parse_u32(value, &d->roce_loss_ppm) || d->roce_loss_ppm > 1'000'000)
            return bad_value(key, value, "RoCE frames lost per million sent, 0 to 1000000");
    } else if (key == "engine") {
        if (value == "threads")
            d->engine = EnginePlacement::threads;
        else if (value == "inline")
            d->engine = EnginePlacement::inline_;
        else if (value == "service")
            d->engine = EnginePlacement::service;
        else
            return bad_value(key, value, "threads, inline or service");
        d->engine_given = true;
    } else if (key == "engine_threads") {
        if (!parse_u32(value, &d->engine_threads) || d->engine_threads < 1 || d->engine_threads > 4)
            return bad_value(key, value, "1 to 4 (at most one per port group)");
    } else if (key == "engine_cpu") {
        if (!parse_cpu_list(value, &d->engine_cpus))
            return bad_value(key, value, "a CPU number, or one per engine thread as [cpu,cpu,...]");
    } else if (key == "rdma") {
        if (value != "0" && value != "1")
            return bad_value(key, value, "0 or 1");
        d->rdma = value == "1";
    } else if (key == "ipv4" || key == "ipv6") {
        const bool v4 = key == "ipv4";
        if (!parse_ip(value, v4, v4 ? &d->ipv4 : &d->ipv6))
            return bad_value(key, value, v4 ? "an IPv4 address and prefix length, as 192.0.2.1/24"
                                            : "an IPv6 address and prefix length, as 2001:db8::1/64");
    } else if (key == "vfs" || key == "vf") {
        uint32_t* n = key == "vfs" ? &d->vfs : &d->vf;
        const uint32_t limit = key == "vfs" ? hsi::iov::MAX_VFS_PER_PF : hsi::iov::MAX_VFS_PER_PF - 1;
        if (!parse_u32(value, n) || *n > limit)
            return bad_value(key, value, (key == "vfs" ? "a number of VFs from 0 to " : "a VF number from 0 to ") +
                                             std::to_string(limit));
    } else if (key == "representor") {
        return parse_representors(value, &d->representors);
    } else if (key == "switch_rules") {
        if (!parse_u32(value, &d->switch_rules) || d->switch_rules == 0 ||
            d->switch_rules > hsi::eswitch::MAX_RULES)
            return bad_value(key, value, "a number of transfer rules from 1 to " +
                                             std::to_string(hsi::eswitch::MAX_RULES));
    } else if (key == "fault") {
        d->fault = hsi::control::fault_named(value);
        if (d->fault == Fault::none)
            return bad_value(key, value, hsi::control::FAULT_NAMES);
    } else {
        return "unknown devarg '" + std::string(key) + "' (known: " CNA_DEVARGS_PARAM_STRING ")";
    }
    return {};
}

} // namespace

int parse_devargs(const char* device_name, const char* args, Devargs* out, std::string* error)
{
    *out = Devargs{};
    out->adapter = device_name;
    if (args == nullptr || args[0] == '\0')
        return 0;

    const char* const vf_key[] = {"vf", nullptr};
    KvargsPtr kvlist(rte_kvargs_parse(args, nullptr), &rte_kvargs_free);
    if (kvlist && rte_kvargs_count(kvlist.get(), vf_key[0]) != 0) {
        *error = "invalid devarg 'vf' for net_cna: a VF is a net_cna_vf port";
        return -EINVAL;
    }
    if (!kvlist) {
        *error = std::string("malformed devargs '") + args + "': expected key=value pairs separated by ','";
        return -EINVAL;
    }
    bool has_pf = false;
    std::string embedded_key;
    for (unsigned i = 0; i < kvlist->count; i++) {
        const rte_kvargs_pair& pair = kvlist->pairs[i];
        std::string msg = apply(pair.key, pair.value ? pair.value : "", out);
        if (!msg.empty()) {
            *error = std::move(msg);
            return -EINVAL;
        }
        const std::string_view key = pair.key;
        has_pf |= key == "pf";
        /* The rest of the layout keys (ports, wire, engine threads, faults)
         * configure the daemon a port starts when none serves the socket. */
        for (std::string_view k : {"adapter", "port"})
            if (key == k && embedded_key.empty())
                embedded_key = k;
    }
    if (!out->daemon.empty() && !embedded_key.empty()) {
        *error = "invalid devarg '" + embedded_key + "' with 'daemon': a daemon's PF is its 'pf'";
        return -EINVAL;
    }
    if (!out->daemon.empty() && out->wire == Wire::tap) {
        *error = "invalid devarg 'wire=tap:" + out->tap_name +
                 "' with 'daemon': start cna-adapterd with --wire tap:<ifname> for its TAP wires";
        return -EINVAL;
    }
    if (has_pf && out->daemon.empty()) {
        *error = "invalid devarg 'pf' without 'daemon': an embedded adapter's PF is its 'port'";
        return -EINVAL;
    }
    if (out->engine != EnginePlacement::threads && !out->daemon.empty()) {
        *error = "invalid devarg 'engine' with 'daemon': cna-adapterd runs its adapter on its own engine threads";
        return -EINVAL;
    }
    if (out->engine != EnginePlacement::threads && out->engine_threads != 1) {
        *error = "invalid devarg 'engine_threads' with engine=inline or engine=service: the host's threads run the "
                 "dataplane, and the slowpath has one engine thread";
        return -EINVAL;
    }
    if (!out->engine_cpus.empty() && out->engine_cpus.size() != out->engine_threads) {
        *error = "invalid devarg 'engine_cpu': " + std::to_string(out->engine_cpus.size()) + " CPU(s) for " +
                 std::to_string(out->engine_threads) + " engine thread(s); give one per thread";
        return -EINVAL;
    }
    if (!out->representors.empty() && out->representors.back() >= out->vfs) {
        *error = "invalid devarg 'representor': VF " + std::to_string(out->representors.back()) +
                 " is not one of the " + std::to_string(out->vfs) + " VF(s) the PF enables (vfs=)";
        return -EINVAL;
    }
    if (out->ports_given && out->port >= out->ports) {
        *error = "invalid devarg 'port=" + std::to_string(out->port) + "': the adapter has " +
                 std::to_string(out->ports) + " port(s)";
        return -EINVAL;
    }
    return 0;
}

int parse_vf_devargs(const char* device_name, const char* args, Devargs* out, std::string* error)
{
    /* The keys that name a VF; the rest belong to its PF. */
    static constexpr std::string_view VF_KEYS[] = {"daemon", "pf", "adapter", "port", "vf", "rdma", "ipv4", "ipv6"};
    KvargsPtr kvlist(args != nullptr ? rte_kvargs_parse(args, nullptr) : nullptr, &rte_kvargs_free);
    if (args != nullptr && args[0] != '\0' && !kvlist) {
        *error = std::string("malformed devargs '") + args + "': expected key=value pairs separated by ','";
        return -EINVAL;
    }
    bool has_vf = false;
    for (unsigned i = 0; kvlist && i < kvlist->count; i++) {
        const std::string_view key = kvlist->pairs[i].key;
        if (std::find(std::begin(VF_KEYS), std::end(VF_KEYS), key) == std::end(VF_KEYS)) {
            *error = "unknown devarg '" + std::string(key) + "' for net_cna_vf (known: " CNA_VF_DEVARGS_PARAM_STRING
                     "; the port's layout is its PF's)";
            return -EINVAL;
        }
        has_vf |= key == "vf";
    }
    if (const int rc = parse_devargs(device_name, nullptr, out, error); rc != 0)
        return rc;
    out->rdma = false; /* its RDMA takes a status block from its queues: asked for */
    for (unsigned i = 0; kvlist && i < kvlist->count; i++) {
        const rte_kvargs_pair& pair = kvlist->pairs[i];
        if (std::string msg = apply(pair.key, pair.value ? pair.value : "", out); !msg.empty()) {
            *error = std::move(msg);
            return -EINVAL;
        }
    }
    if (!has_vf) {
        *error = std::string("missing devarg 'vf' (") + CNA_VF_DEVARGS_PARAM_STRING + ")";
        return -EINVAL;
    }
    const bool has_pf = kvlist && rte_kvargs_count(kvlist.get(), "pf") != 0;
    const bool has_embedded = kvlist && (rte_kvargs_count(kvlist.get(), "adapter") != 0 ||
                                         rte_kvargs_count(kvlist.get(), "port") != 0);
    if (out->daemon.empty() ? has_pf : has_embedded) {
        *error = out->daemon.empty() ? "invalid devarg 'pf' without 'daemon': an embedded adapter's PF is its 'port'"
                                     : "invalid devarg 'adapter' or 'port' with 'daemon': a daemon's PF is its 'pf'";
        return -EINVAL;
    }
    out->is_vf = true;
    return 0;
}

} // namespace cna::net
