/* SPDX-License-Identifier: BSD-3-Clause
 * What the RDMA examples share around the verbs: the port's L2 side (its
 * link carries RoCE), the TCP connection peers exchange addresses over,
 * and GIDs as text.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

namespace cna::examples {

/* The port configured with one queue pair (and the MTU, unless 0) and
 * started. */
bool start_port(uint16_t port, uint16_t mtu = 0);
/* True once the port's link is up (within 5 s): a cabled port's comes up
 * when its peer's port has started too. */
bool wait_link_up(uint16_t port);
void stop_port(uint16_t port);

/* A connected TCP socket, or -1 with the reason printed: a client connects
 * to `server`, a server (server == nullptr) accepts one connection. */
int tcp_connect(const char* server, unsigned tcp_port);
bool read_all(int fd, void* buf, size_t len);
bool write_all(int fd, const void* buf, size_t len);

/* GID bytes as 32 hex digits and back; and as an IPv6 address. */
std::string gid_hex(const ibv_gid& gid);
bool gid_from_hex(const char* hex, ibv_gid* gid);
std::string gid_text(const ibv_gid& gid);

} // namespace cna::examples
