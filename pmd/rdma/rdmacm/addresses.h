/* SPDX-License-Identifier: BSD-3-Clause
 * IP addresses as RDMA CM carries them: in sockaddrs for the application,
 * as GIDs for RoCEv2 (IPv4-mapped for IPv4), and in the IP CM header.
 */
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>

#include "cm_ip_service.h"
#include "cm_mad.h"

namespace cna::rdmacm {

using cm::Gid;

bool is_ipv4_mapped(const Gid& gid);
bool is_link_local(const Gid& gid); /* fe80::/10 */
/* AF_INET, AF_INET6 (an IPv4-mapped IPv6 address is taken as IPv4), or 0
 * for what is neither. */
int family_of(const sockaddr* addr);
Gid gid_of(const sockaddr* addr);
bool is_wildcard(const sockaddr* addr);
uint16_t port_of(const sockaddr* addr); /* host order */
void set_port(sockaddr_storage* addr, uint16_t port);
/* The sockaddr of `gid` (AF_INET for an IPv4-mapped one) and `port`. */
void to_sockaddr(const Gid& gid, uint16_t port, sockaddr_storage* out);
socklen_t length_of(const sockaddr* addr);

cm::IpBytes ip_bytes_of(const Gid& gid);
Gid gid_of(const cm::IpBytes& ip, uint8_t ip_version);

} // namespace cna::rdmacm
