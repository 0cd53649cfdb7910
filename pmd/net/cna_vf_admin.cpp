/* SPDX-License-Identifier: BSD-3-Clause
 * rte_pmd_cna.h: a PF's administration of its VFs, over ecore's IOV API,
 * and the same as telemetry commands (/cna/vf/...).
 *
 * Built into librte_net_cna.so itself (not the archive the RDMA PMD shares):
 * these are the object's exported symbols.
 */
#include "rte_pmd_cna.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <functional>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <rte_telemetry.h>

#include "cna_eth_port.h"
#include "cna_ethdev_ops.h"
#include "cna_single_copy.h"
#include "cna_log.h"
#include "ecore_iov_api.h"

namespace cna::net {
namespace {

using hsi::eth::VportStats;

/* `call` on the PF of port_id and one of its enabled VFs. */
int with_vf(uint16_t port_id, uint16_t vf, const std::function<int(EthPort*)>& call)
{
    if (rte_eal_process_type() != RTE_PROC_PRIMARY)
        return -ENOTSUP;
    return with_pf(port_id, [&](EthPort* port) {
        return vf < ecore::iov_num_vfs(port->edev.hwfn) ? call(port) : -EINVAL;
    });
}

int done(EthPort* port, uint16_t vf, const char* what, ecore::Status st)
{
    if (st == ecore::Status::success) {
        PMD_LOG(INFO, port, "vf%u: %s", vf, what);
        return 0;
    }
    PMD_LOG(ERR, port, "vf%u: %s: %s", vf, what, ecore::status_name(st));
    return ecore::status_to_errno(st);
}

/* The VF's counters less the baseline of its last reset. */
int vf_counters(EthPort* port, uint16_t vf, VportStats* out)
{
    VportStats now;
    if (const ecore::Status st = ecore::iov_get_vf_stats(port->edev.hwfn, vf, &now); st != ecore::Status::success)
        return ecore::status_to_errno(st);
    std::lock_guard guard(port->stats_lock);
    VportStats& base = port->vf_stats_base[vf];
    constexpr std::size_t N = sizeof(VportStats) / sizeof(uint64_t);
    const auto* a = reinterpret_cast<const uint64_t*>(&now);
    const auto* b = reinterpret_cast<const uint64_t*>(&base);
    /* A counter below its baseline: the VF's reset (FLR) zeroed them all
     * since, and the baseline goes with them. */
    if (!std::equal(a, a + N, b, [](uint64_t x, uint64_t y) { return x >= y; }))
        base = VportStats{};
    *out = now;
    subtract_counters(out, base);
    return 0;
}

} // namespace
} // namespace cna::net

using namespace cna;
using namespace cna::net;

extern "C" {

int rte_pmd_cna_get_vf_count(uint16_t port_id, uint16_t* count)
{
    if (rte_eal_process_type() != RTE_PROC_PRIMARY)
        return -ENOTSUP;
    return with_pf(port_id, [&](EthPort* port) {
        if (count == nullptr)
            return -EINVAL;
        *count = static_cast<uint16_t>(ecore::iov_num_vfs(port->edev.hwfn));
        return 0;
    });
}

int rte_pmd_cna_set_vf_mac_addr(uint16_t port_id, uint16_t vf, const rte_ether_addr* mac)
{
    if (mac == nullptr || rte_is_multicast_ether_addr(mac))
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        std::array<uint8_t, 6> m;
        std::memcpy(m.data(), mac->addr_bytes, m.size());
        char text[RTE_ETHER_ADDR_FMT_SIZE];
        rte_ether_format_addr(text, sizeof text, mac);
        const std::string what = rte_is_zero_ether_addr(mac) ? "MAC no longer forced" : std::string("MAC forced to ") + text;
        return done(port, vf, what.c_str(), ecore::iov_set_vf_mac(port->edev.hwfn, vf, m));
    });
}

int rte_pmd_cna_set_vf_vlan(uint16_t port_id, uint16_t vf, uint16_t vlan_id)
{
    if (vlan_id > RTE_ETHER_MAX_VLAN_ID)
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        return done(port, vf, ("port VLAN " + std::to_string(vlan_id)).c_str(),
                    ecore::iov_set_vf_vlan(port->edev.hwfn, vf, vlan_id));
    });
}

int rte_pmd_cna_set_vf_spoofchk(uint16_t port_id, uint16_t vf, uint8_t on)
{
    return with_vf(port_id, vf, [&](EthPort* port) {
        return done(port, vf, on ? "spoof checking on" : "spoof checking off",
                    ecore::iov_set_vf_spoofchk(port->edev.hwfn, vf, on != 0));
    });
}

int rte_pmd_cna_set_vf_trust(uint16_t port_id, uint16_t vf, uint8_t on)
{
    return with_vf(port_id, vf, [&](EthPort* port) {
        return done(port, vf, on ? "trusted" : "not trusted", ecore::iov_set_vf_trust(port->edev.hwfn, vf, on != 0));
    });
}

int rte_pmd_cna_set_vf_link_state(uint16_t port_id, uint16_t vf, enum rte_pmd_cna_vf_link_state state)
{
    static constexpr const char* NAMES[] = {"link state auto", "link forced up", "link forced down"};
    if (state != RTE_PMD_CNA_VF_LINK_AUTO && state != RTE_PMD_CNA_VF_LINK_UP && state != RTE_PMD_CNA_VF_LINK_DOWN)
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        return done(port, vf, NAMES[state],
                    ecore::iov_set_vf_link_state(port->edev.hwfn, vf, static_cast<ecore::VfLinkState>(state)));
    });
}

int rte_pmd_cna_set_vf_rate_limit(uint16_t port_id, uint16_t vf, uint32_t tx_rate_mbps)
{
    return with_vf(port_id, vf, [&](EthPort* port) {
        return done(port, vf, ("Tx rate limit " + std::to_string(tx_rate_mbps) + " Mbps").c_str(),
                    ecore::iov_set_vf_rate(port->edev.hwfn, vf, tx_rate_mbps));
    });
}

int rte_pmd_cna_get_vf_stats(uint16_t port_id, uint16_t vf, struct rte_eth_stats* stats)
{
    if (stats == nullptr)
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        VportStats s;
        if (const int rc = vf_counters(port, vf, &s); rc != 0)
            return rc;
        *stats = rte_eth_stats{};
        vport_eth_stats(s, stats);
        return 0;
    });
}

int rte_pmd_cna_get_vf_spoofed(uint16_t port_id, uint16_t vf, uint64_t* frames)
{
    if (frames == nullptr)
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        VportStats s;
        const int rc = vf_counters(port, vf, &s);
        if (rc == 0)
            *frames = s.tx_spoofed_pkts;
        return rc;
    });
}

int rte_pmd_cna_reset_vf_stats(uint16_t port_id, uint16_t vf)
{
    return with_vf(port_id, vf, [&](EthPort* port) {
        VportStats now;
        if (const ecore::Status st = ecore::iov_get_vf_stats(port->edev.hwfn, vf, &now); st != ecore::Status::success)
            return ecore::status_to_errno(st);
        std::lock_guard guard(port->stats_lock);
        port->vf_stats_base[vf] = now;
        return 0;
    });
}

int rte_pmd_cna_get_vf_info(uint16_t port_id, uint16_t vf, struct rte_pmd_cna_vf_info* info)
{
    if (info == nullptr)
        return -EINVAL;
    return with_vf(port_id, vf, [&](EthPort* port) {
        ecore::VfInfo v;
        if (const ecore::Status st = ecore::iov_vf_info(port->edev.hwfn, vf, &v); st != ecore::Status::success)
            return ecore::status_to_errno(st);
        *info = rte_pmd_cna_vf_info{};
        info->acquired = v.acquired;
        info->malicious = v.malicious;
        info->mac_forced = v.mac_forced;
        info->trusted = v.trusted;
        info->spoofchk = v.spoofchk;
        info->link_up = v.link_up;
        info->port_vlan = v.port_vlan;
        std::memcpy(info->mac.addr_bytes, v.mac.data(), RTE_ETHER_ADDR_LEN);
        info->link_state = static_cast<rte_pmd_cna_vf_link_state>(v.link_state);
        info->tx_rate_mbps = v.tx_rate_mbps;
        info->rx_queues = v.rx_queues;
        info->tx_queues = v.tx_queues;
        info->vport_started = v.vport_started;
        return 0;
    });
}

} // extern "C"

/* ---- telemetry ------------------------------------------------------------ */

namespace cna::net {
namespace {

/* "<port>,<vf>[,<value>]" */
struct VfParams {
    uint16_t port = 0;
    uint16_t vf = 0;
    std::string value;
};

bool parse_u16(std::string_view text, uint16_t* out)
{
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool parse_params(const char* params, bool with_value, VfParams* out)
{
    std::vector<std::string_view> fields;
    for (std::string_view rest = params != nullptr ? params : ""; !rest.empty();) {
        const std::size_t comma = rest.find(',');
        fields.push_back(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    if (fields.size() != (with_value ? 3u : 2u) || !parse_u16(fields[0], &out->port) ||
        !parse_u16(fields[1], &out->vf))
        return false;
    if (with_value)
        out->value = fields[2];
    return true;
}

void add_result(rte_tel_data* d, int rc)
{
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_int(d, "status", rc);
    if (rc != 0)
        rte_tel_data_add_dict_string(d, "error", strerror(-rc));
}

int tel_info(const char*, const char* params, rte_tel_data* d)
{
    VfParams p;
    rte_pmd_cna_vf_info info;
    if (!parse_params(params, false, &p))
        return -EINVAL;
    if (const int rc = rte_pmd_cna_get_vf_info(p.port, p.vf, &info); rc != 0) {
        add_result(d, rc);
        return 0;
    }
    static constexpr const char* LINK[] = {"auto", "up", "down"};
    char mac[RTE_ETHER_ADDR_FMT_SIZE];
    rte_ether_format_addr(mac, sizeof mac, &info.mac);
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_int(d, "acquired", info.acquired);
    rte_tel_data_add_dict_int(d, "malicious", info.malicious);
    rte_tel_data_add_dict_string(d, "mac", mac);
    rte_tel_data_add_dict_int(d, "mac_forced", info.mac_forced);
    rte_tel_data_add_dict_int(d, "vlan", info.port_vlan);
    rte_tel_data_add_dict_int(d, "trusted", info.trusted);
    rte_tel_data_add_dict_int(d, "spoofchk", info.spoofchk);
    rte_tel_data_add_dict_string(d, "link_state", LINK[info.link_state]);
    rte_tel_data_add_dict_int(d, "link_up", info.link_up);
    rte_tel_data_add_dict_u64(d, "tx_rate_mbps", info.tx_rate_mbps);
    rte_tel_data_add_dict_int(d, "rx_queues", info.rx_queues);
    rte_tel_data_add_dict_int(d, "tx_queues", info.tx_queues);
    return 0;
}

int tel_stats(const char*, const char* params, rte_tel_data* d)
{
    VfParams p;
    rte_eth_stats s;
    uint64_t spoofed = 0;
    if (!parse_params(params, false, &p))
        return -EINVAL;
    int rc = rte_pmd_cna_get_vf_stats(p.port, p.vf, &s);
    if (rc == 0)
        rc = rte_pmd_cna_get_vf_spoofed(p.port, p.vf, &spoofed);
    if (rc != 0) {
        add_result(d, rc);
        return 0;
    }
    rte_tel_data_start_dict(d);
    rte_tel_data_add_dict_u64(d, "ipackets", s.ipackets);
    rte_tel_data_add_dict_u64(d, "ibytes", s.ibytes);
    rte_tel_data_add_dict_u64(d, "imissed", s.imissed);
    rte_tel_data_add_dict_u64(d, "ierrors", s.ierrors);
    rte_tel_data_add_dict_u64(d, "opackets", s.opackets);
    rte_tel_data_add_dict_u64(d, "obytes", s.obytes);
    rte_tel_data_add_dict_u64(d, "oerrors", s.oerrors);
    rte_tel_data_add_dict_u64(d, "tx_spoofed", spoofed);
    return 0;
}

int tel_reset_stats(const char*, const char* params, rte_tel_data* d)
{
    VfParams p;
    if (!parse_params(params, false, &p))
        return -EINVAL;
    add_result(d, rte_pmd_cna_reset_vf_stats(p.port, p.vf));
    return 0;
}

bool parse_flag(const std::string& v, uint8_t* on)
{
    if (v != "0" && v != "1")
        return false;
    *on = v == "1";
    return true;
}

int tel_set(const char* cmd, const char* params, rte_tel_data* d)
{
    VfParams p;
    if (!parse_params(params, true, &p))
        return -EINVAL;
    const std::string_view what = std::string_view(cmd).substr(std::string_view("/cna/vf/set_").size());
    uint8_t on = 0;
    uint16_t n16 = 0;
    uint32_t n32 = 0;
    int rc = -EINVAL;
    if (what == "mac") {
        rte_ether_addr mac;
        if (rte_ether_unformat_addr(p.value.c_str(), &mac) == 0)
            rc = rte_pmd_cna_set_vf_mac_addr(p.port, p.vf, &mac);
    } else if (what == "vlan") {
        if (parse_u16(p.value, &n16))
            rc = rte_pmd_cna_set_vf_vlan(p.port, p.vf, n16);
    } else if (what == "spoofchk") {
        if (parse_flag(p.value, &on))
            rc = rte_pmd_cna_set_vf_spoofchk(p.port, p.vf, on);
    } else if (what == "trust") {
        if (parse_flag(p.value, &on))
            rc = rte_pmd_cna_set_vf_trust(p.port, p.vf, on);
    } else if (what == "link_state") {
        static constexpr std::string_view STATES[] = {"auto", "up", "down"};
        for (uint32_t s = 0; s < 3; s++)
            if (p.value == STATES[s])
                rc = rte_pmd_cna_set_vf_link_state(p.port, p.vf, static_cast<rte_pmd_cna_vf_link_state>(s));
    } else if (what == "rate") {
        auto [end, ec] = std::from_chars(p.value.data(), p.value.data() + p.value.size(), n32);
        if (ec == std::errc() && end == p.value.data() + p.value.size())
            rc = rte_pmd_cna_set_vf_rate_limit(p.port, p.vf, n32);
    }
    add_result(d, rc);
    return 0;
}

/* By the serving copy only: of two registrations of a command, telemetry
 * answers with the later (cna_single_copy.h). */
RTE_INIT(cna_vf_telemetry)
{
    if (!serving_copy())
        return;
    rte_telemetry_register_cmd("/cna/vf/info", tel_info, "A net_cna PF's VF. Parameters: int port_id, int vf");
    rte_telemetry_register_cmd("/cna/vf/stats", tel_stats, "A VF's statistics. Parameters: int port_id, int vf");
    rte_telemetry_register_cmd("/cna/vf/reset_stats", tel_reset_stats,
                               "Resets a VF's statistics. Parameters: int port_id, int vf");
    rte_telemetry_register_cmd("/cna/vf/set_mac", tel_set,
                               "Forces a VF's MAC (zero: none). Parameters: int port_id, int vf, MAC");
    rte_telemetry_register_cmd("/cna/vf/set_vlan", tel_set,
                               "A VF's port VLAN (0: none). Parameters: int port_id, int vf, int vlan");
    rte_telemetry_register_cmd("/cna/vf/set_spoofchk", tel_set,
                               "A VF's anti-spoofing. Parameters: int port_id, int vf, 0|1");
    rte_telemetry_register_cmd("/cna/vf/set_trust", tel_set, "Trusts a VF. Parameters: int port_id, int vf, 0|1");
    rte_telemetry_register_cmd("/cna/vf/set_link_state", tel_set,
                               "A VF's link. Parameters: int port_id, int vf, auto|up|down");
    rte_telemetry_register_cmd("/cna/vf/set_rate", tel_set,
                               "A VF's Tx rate limit in Mbps (0: none). Parameters: int port_id, int vf, int");
}

} // namespace
} // namespace cna::net
