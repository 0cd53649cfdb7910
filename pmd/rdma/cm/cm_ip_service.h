/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA IP CM service (IBTA Vol 1, Annex A11): how RDMA CM names an IP
 * port in a CM service ID, and the header its REQ and SIDR REQ private
 * data start with, which carries both IP addresses and the source port.
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "cm_mad.h"

namespace cna::cm {

/* librdmacm's port spaces (enum rdma_port_space): the service ID's bits
 * 16-31 under the IP CM prefix, the port below. */
enum class PortSpace : uint16_t {
    ipoib = 0x0002,
    tcp = 0x0106,
    udp = 0x0111,
    ib = 0x013f,
};

constexpr uint64_t service_id_of(PortSpace space, uint16_t port)
{
    return uint64_t{static_cast<uint16_t>(space)} << 16 | port;
}

/* The port space and port of an IP CM service ID, if it is one. */
std::optional<std::pair<PortSpace, uint16_t>> ip_service_of(uint64_t service_id);

inline constexpr std::size_t IP_CM_HEADER_SIZE = 36;
inline constexpr uint8_t IP_CM_VERSION = 0;

/* An IP address as the header carries it: 16 bytes, an IPv4 address in
 * the last four with zeros before. */
using IpBytes = std::array<uint8_t, 16>;

struct IpCmHeader {
    uint8_t ip_version = 4; /* 4 or 6 */
    uint16_t source_port = 0;
    IpBytes source{};
    IpBytes destination{};
};

/* The header, then the consumer's private data (at most `room` bytes in
 * all: the REQ's or the SIDR REQ's). */
PrivateData with_ip_cm_header(const IpCmHeader& header, std::span<const uint8_t> consumer_data, std::size_t room);
/* The header at the start of a REQ's or SIDR REQ's private data, if it is
 * one this version of the service knows. */
std::optional<IpCmHeader> parse_ip_cm_header(std::span<const uint8_t> private_data);

} // namespace cna::cm
