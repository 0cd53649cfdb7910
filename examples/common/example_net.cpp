/* SPDX-License-Identifier: BSD-3-Clause */
#include "example_net.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

namespace cna::examples {

bool start_port(uint16_t port, uint16_t mtu)
{
    const std::string name = "example_pool" + std::to_string(port);
    rte_mempool* pool = rte_pktmbuf_pool_create(name.c_str(), 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    rte_eth_conf conf{};
    /* A jumbo MTU (the RDMA examples' 4096-byte path MTU) needs frames
     * spread over several mbufs. */
    const uint32_t frame = uint32_t{mtu} + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 2 * RTE_VLAN_HLEN;
    if (frame > RTE_MBUF_DEFAULT_DATAROOM)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    if (pool == nullptr || rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
        (mtu != 0 && rte_eth_dev_set_mtu(port, mtu) != 0) ||
        rte_eth_rx_queue_setup(port, 0, 256, rte_socket_id(), nullptr, pool) != 0 ||
        rte_eth_tx_queue_setup(port, 0, 256, rte_socket_id(), nullptr) != 0 || rte_eth_dev_start(port) != 0)
        return false;
    return true;
}

bool wait_link_up(uint16_t port)
{
    rte_eth_link link{};
    for (int i = 0; i < 500 && link.link_status != RTE_ETH_LINK_UP; i++) {
        rte_delay_ms(10);
        rte_eth_link_get_nowait(port, &link);
    }
    return link.link_status == RTE_ETH_LINK_UP;
}

void stop_port(uint16_t port)
{
    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
}

int tcp_connect(const char* server, unsigned tcp_port)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = server ? 0 : AI_PASSIVE;
    const std::string service = std::to_string(tcp_port);
    addrinfo* res = nullptr;
    if (int rc = getaddrinfo(server, service.c_str(), &hints, &res); rc != 0) {
        std::fprintf(stderr, "%s for port %u\n", gai_strerror(rc), tcp_port);
        return -1;
    }
    int fd = -1;
    for (addrinfo* t = res; t != nullptr && fd < 0; t = t->ai_next) {
        fd = socket(t->ai_family, t->ai_socktype, t->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        const bool ok = server ? connect(fd, t->ai_addr, t->ai_addrlen) == 0
                               : bind(fd, t->ai_addr, t->ai_addrlen) == 0 && listen(fd, 1) == 0;
        if (!ok) {
            ::close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        std::fprintf(stderr, "Couldn't %s %s:%u\n", server ? "connect to" : "listen to port", server ? server : "",
                     tcp_port);
        return -1;
    }
    if (server != nullptr)
        return fd;
    const int conn = accept(fd, nullptr, nullptr);
    ::close(fd);
    if (conn < 0)
        std::fprintf(stderr, "accept() failed\n");
    return conn;
}

bool read_all(int fd, void* buf, size_t len)
{
    auto* p = static_cast<char*>(buf);
    while (len != 0) {
        ssize_t n = ::read(fd, p, len);
        if (n <= 0)
            return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

bool write_all(int fd, const void* buf, size_t len) { return ::write(fd, buf, len) == static_cast<ssize_t>(len); }

std::string gid_hex(const ibv_gid& gid)
{
    char hex[33];
    for (int i = 0; i < 16; i++)
        std::snprintf(hex + 2 * i, 3, "%02x", gid.raw[i]);
    return hex;
}

bool gid_from_hex(const char* hex, ibv_gid* gid)
{
    if (std::strlen(hex) != 32)
        return false;
    for (int i = 0; i < 16; i++) {
        unsigned byte;
        if (std::sscanf(hex + 2 * i, "%2x", &byte) != 1)
            return false;
        gid->raw[i] = static_cast<uint8_t>(byte);
    }
    return true;
}

std::string gid_text(const ibv_gid& gid)
{
    char s[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, gid.raw, s, sizeof s);
    return s;
}

} // namespace cna::examples
