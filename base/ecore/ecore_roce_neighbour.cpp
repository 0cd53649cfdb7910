/* SPDX-License-Identifier: BSD-3-Clause
 * RoCE addresses and neighbours: the PF's IP addresses for the device to
 * answer for, and the resolution of a destination address to a MAC (the
 * device asks the wire; ecore keeps what it learnt).
 */
#include <algorithm>
#include <cstring>

#include "ecore_log.h"
#include "ecore_rdma.h"

namespace cna::ecore {

using namespace hsi::rdma;

namespace {

/* What ecore learnt serves the paths made at once (an RC QP and the CM's
 * address handle to the same peer, a burst of connections); a path made
 * later asks the wire again. The peer behind an address can change within
 * a second (a process restarting on an adapter of its own, with its own
 * MAC), and the device reports answers to questions only, so a longer-lived
 * entry would send to a MAC nobody has any more. Asking costs one ARP or
 * neighbour solicitation round trip, at a path's making only. */
constexpr auto NEIGHBOUR_LIFETIME = std::chrono::milliseconds(200);
constexpr int TRIES = 3;

std::string text(const RoceIp& ip)
{
    char s[48];
    if (roce_is_ipv4(ip))
        std::snprintf(s, sizeof s, "%u.%u.%u.%u", ip[12], ip[13], ip[14], ip[15]);
    else
        std::snprintf(s, sizeof s, "%x:%x:%x:%x:%x:%x:%x:%x", ip[0] << 8 | ip[1], ip[2] << 8 | ip[3], ip[4] << 8 | ip[5],
                      ip[6] << 8 | ip[7], ip[8] << 8 | ip[9], ip[10] << 8 | ip[11], ip[12] << 8 | ip[13],
                      ip[14] << 8 | ip[15]);
    return s;
}

} // namespace

bool roce_is_ipv4(const RoceIp& ip)
{
    static constexpr uint8_t MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(ip.data(), MAPPED, 12) == 0;
}

Status roce_set_addresses(Hwfn& hwfn, const std::vector<RoceIp>& addresses)
{
    if (!rdma_started(hwfn))
        return Status::inval;
    SetAddressesRamrodData d{};
    for (const RoceIp& ip : addresses) {
        if (roce_is_ipv4(ip) && d.num_ipv4 < MAX_IPV4_ADDRESSES)
            std::memcpy(d.ipv4[d.num_ipv4++], ip.data() + 12, 4);
        else if (!roce_is_ipv4(ip) && d.num_ipv6 < MAX_IPV6_ADDRESSES)
            std::memcpy(d.ipv6[d.num_ipv6++], ip.data(), 16);
        else {
            DP_ERR(hwfn, "set_addresses: at most %u IPv4 and %u IPv6 addresses", MAX_IPV4_ADDRESSES,
                   MAX_IPV6_ADDRESSES);
            return Status::nospc;
        }
    }
    return post_rdma(hwfn, RdmaCmd::set_addresses, &d, sizeof(d));
}

void roce_neighbour_answered(Hwfn& hwfn, uint64_t data)
{
    if (!hwfn.rdma)
        return;
    RdmaInfo& rdma = *hwfn.rdma;
    std::lock_guard guard(rdma.lock);
    auto q = rdma.questions.find(neighbour_event_tag(data));
    if (q == rdma.questions.end())
        return;
    RdmaInfo::Neighbour& n = rdma.neighbours[q->second];
    uint8_t mac[6];
    neighbour_event_mac(data, mac);
    std::copy(std::begin(mac), std::end(mac), n.mac.begin());
    n.learnt = std::chrono::steady_clock::now();
    rdma.questions.erase(q);
    rdma.answered.notify_all();
}

Status roce_resolve_neighbour(Hwfn& hwfn, const RoceIp& target, const RoceIp& source, std::array<uint8_t, 6>* mac,
                              uint32_t timeout_ms)
{
    if (!rdma_started(hwfn))
        return Status::inval;
    RdmaInfo& rdma = *hwfn.rdma;
    const bool v4 = roce_is_ipv4(target);
    if (v4 != roce_is_ipv4(source)) {
        DP_ERR(hwfn, "resolve %s from %s: not the same family", text(target).c_str(), text(source).c_str());
        return Status::inval;
    }
    auto fresh = [&] {
        auto n = rdma.neighbours.find(target);
        return n != rdma.neighbours.end() && std::chrono::steady_clock::now() - n->second.learnt < NEIGHBOUR_LIFETIME;
    };
    for (int attempt = 0; attempt < TRIES; attempt++) {
        ResolveNeighbourRamrodData d{};
        {
            std::lock_guard guard(rdma.lock);
            if (fresh()) {
                *mac = rdma.neighbours[target].mac;
                return Status::success;
            }
            d.tag = rdma.next_tag++;
            rdma.questions[d.tag] = target;
        }
        d.ip_version = v4 ? IP_VERSION_4 : IP_VERSION_6;
        std::memcpy(d.target, target.data(), 16);
        std::memcpy(d.source, source.data(), 16);
        Status rc = post_rdma(hwfn, RdmaCmd::resolve_neighbour, &d, sizeof(d));
        std::unique_lock lock(rdma.lock);
        if (rc == Status::success &&
            rdma.answered.wait_for(lock, std::chrono::milliseconds(timeout_ms / TRIES), fresh)) {
            *mac = rdma.neighbours[target].mac;
            return Status::success;
        }
        rdma.questions.erase(d.tag);
        if (rc != Status::success)
            return rc;
    }
    DP_ERR(hwfn, "no answer from %s to %s in %u ms", text(target).c_str(), v4 ? "ARP" : "neighbour discovery",
           timeout_ms);
    return Status::timeout;
}

} // namespace cna::ecore
