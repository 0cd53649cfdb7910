/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA IP CM service's service IDs and private-data header.
 */
#include "cm_ip_service.h"

#include <algorithm>

namespace cna::cm {

std::optional<std::pair<PortSpace, uint16_t>> ip_service_of(uint64_t service_id)
{
    const auto space = static_cast<PortSpace>(service_id >> 16);
    if (service_id >> 32 != 0)
        return std::nullopt;
    switch (space) {
    case PortSpace::ipoib:
    case PortSpace::tcp:
    case PortSpace::udp:
    case PortSpace::ib:
        return std::pair{space, static_cast<uint16_t>(service_id)};
    }
    return std::nullopt;
}

PrivateData with_ip_cm_header(const IpCmHeader& h, std::span<const uint8_t> consumer_data, std::size_t room)
{
    const std::size_t taken = std::min(consumer_data.size(), room - std::min(room, IP_CM_HEADER_SIZE));
    PrivateData data(IP_CM_HEADER_SIZE + taken);
    data[0] = IP_CM_VERSION;
    data[1] = static_cast<uint8_t>(h.ip_version << 4);
    data[2] = static_cast<uint8_t>(h.source_port >> 8);
    data[3] = static_cast<uint8_t>(h.source_port);
    std::copy(h.source.begin(), h.source.end(), data.begin() + 4);
    std::copy(h.destination.begin(), h.destination.end(), data.begin() + 20);
    std::copy_n(consumer_data.begin(), taken, data.begin() + IP_CM_HEADER_SIZE);
    return data;
}

std::optional<IpCmHeader> parse_ip_cm_header(std::span<const uint8_t> d)
{
    if (d.size() < IP_CM_HEADER_SIZE || d[0] != IP_CM_VERSION)
        return std::nullopt;
    IpCmHeader h;
    h.ip_version = d[1] >> 4;
    if (h.ip_version != 4 && h.ip_version != 6)
        return std::nullopt;
    h.source_port = static_cast<uint16_t>(d[2] << 8 | d[3]);
    std::copy(d.begin() + 4, d.begin() + 20, h.source.begin());
    std::copy(d.begin() + 20, d.begin() + 36, h.destination.begin());
    if (h.ip_version == 4) { /* only the last four bytes are the address */
        std::fill(h.source.begin(), h.source.begin() + 12, 0);
        std::fill(h.destination.begin(), h.destination.begin() + 12, 0);
    }
    return h;
}

} // namespace cna::cm
