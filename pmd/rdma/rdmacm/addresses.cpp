/* SPDX-License-Identifier: BSD-3-Clause
 * Between sockaddrs, GIDs and the IP CM header's addresses.
 */
#include "addresses.h"

#include <algorithm>
#include <cstring>

namespace cna::rdmacm {

namespace {
constexpr uint8_t V4_MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
}

bool is_ipv4_mapped(const Gid& gid) { return std::memcmp(gid.data(), V4_MAPPED, sizeof(V4_MAPPED)) == 0; }

bool is_link_local(const Gid& gid) { return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80; }

int family_of(const sockaddr* addr)
{
    if (addr == nullptr)
        return 0;
    if (addr->sa_family == AF_INET)
        return AF_INET;
    if (addr->sa_family != AF_INET6)
        return 0;
    return is_ipv4_mapped(gid_of(addr)) ? AF_INET : AF_INET6;
}

Gid gid_of(const sockaddr* addr)
{
    Gid g{};
    if (addr->sa_family == AF_INET) {
        std::memcpy(g.data(), V4_MAPPED, sizeof(V4_MAPPED));
        std::memcpy(g.data() + 12, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, 4);
    } else if (addr->sa_family == AF_INET6) {
        std::memcpy(g.data(), &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, 16);
    }
    return g;
}

bool is_wildcard(const sockaddr* addr)
{
    const Gid g = gid_of(addr);
    if (addr->sa_family == AF_INET)
        return std::all_of(g.begin() + 12, g.end(), [](uint8_t b) { return b == 0; });
    return std::all_of(g.begin(), g.end(), [](uint8_t b) { return b == 0; });
}

uint16_t port_of(const sockaddr* addr)
{
    if (addr->sa_family == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
    if (addr->sa_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
    return 0;
}

void set_port(sockaddr_storage* addr, uint16_t port)
{
    if (addr->ss_family == AF_INET)
        reinterpret_cast<sockaddr_in*>(addr)->sin_port = htons(port);
    else if (addr->ss_family == AF_INET6)
        reinterpret_cast<sockaddr_in6*>(addr)->sin6_port = htons(port);
}

void to_sockaddr(const Gid& gid, uint16_t port, sockaddr_storage* out)
{
    std::memset(out, 0, sizeof(*out));
    if (is_ipv4_mapped(gid)) {
        auto* in = reinterpret_cast<sockaddr_in*>(out);
        in->sin_family = AF_INET;
        std::memcpy(&in->sin_addr, gid.data() + 12, 4);
        in->sin_port = htons(port);
    } else {
        auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
        in6->sin6_family = AF_INET6;
        std::memcpy(&in6->sin6_addr, gid.data(), 16);
        in6->sin6_port = htons(port);
    }
}

socklen_t length_of(const sockaddr* addr)
{
    return addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

cm::IpBytes ip_bytes_of(const Gid& gid)
{
    cm::IpBytes ip{};
    if (is_ipv4_mapped(gid))
        std::copy(gid.begin() + 12, gid.end(), ip.begin() + 12);
    else
        ip = gid;
    return ip;
}

Gid gid_of(const cm::IpBytes& ip, uint8_t ip_version)
{
    if (ip_version == 6)
        return ip;
    Gid g{};
    std::memcpy(g.data(), V4_MAPPED, sizeof(V4_MAPPED));
    std::copy(ip.begin() + 12, ip.end(), g.begin() + 12);
    return g;
}

} // namespace cna::rdmacm
