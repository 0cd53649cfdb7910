/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA IP CM service: service IDs of librdmacm's port spaces and the
 * private-data header of Annex A11.
 */
#include <gtest/gtest.h>

#include "cm_ip_service.h"

namespace cna::cm {
namespace {

TEST(IpCmService, ServiceIdsArePortSpaceAndPort)
{
    EXPECT_EQ(service_id_of(PortSpace::tcp, 7471), 0x0000000001061d2fu);
    EXPECT_EQ(service_id_of(PortSpace::udp, 7174), 0x0000000001111c06u);
    EXPECT_EQ(service_id_of(PortSpace::ib, 1), 0x00000000013f0001u);
    const auto tcp = ip_service_of(0x0000000001061d2f);
    ASSERT_TRUE(tcp);
    EXPECT_EQ(tcp->first, PortSpace::tcp);
    EXPECT_EQ(tcp->second, 7471);
    EXPECT_FALSE(ip_service_of(0x0000000001071d2f)) << "no such port space";
    EXPECT_FALSE(ip_service_of(0x1000000001061d2f)) << "not the IP CM prefix";
}

TEST(IpCmService, TheHeaderCarriesBothAddressesAndTheSourcePort)
{
    IpCmHeader h;
    h.ip_version = 4;
    h.source_port = 0xabcd;
    h.source[12] = 10, h.source[15] = 1;
    h.destination[12] = 10, h.destination[15] = 2;
    const uint8_t mine[] = {0xde, 0xad};
    const PrivateData d = with_ip_cm_header(h, mine, REQ_PRIVATE_DATA);
    ASSERT_EQ(d.size(), IP_CM_HEADER_SIZE + 2);
    EXPECT_EQ(d[0], 0x00);
    EXPECT_EQ(d[1], 0x40);
    EXPECT_EQ(d[2], 0xab);
    EXPECT_EQ(d[3], 0xcd);
    EXPECT_EQ(d[4 + 12], 10);
    EXPECT_EQ(d[4 + 15], 1);
    EXPECT_EQ(d[20 + 15], 2);
    EXPECT_EQ(d[36], 0xde);
    const auto back = parse_ip_cm_header(d);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->ip_version, 4);
    EXPECT_EQ(back->source_port, 0xabcd);
    EXPECT_EQ(back->source, h.source);
    EXPECT_EQ(back->destination, h.destination);
}

TEST(IpCmService, ConsumerDataIsCutToTheMessagesRoom)
{
    const PrivateData big(200, 7);
    EXPECT_EQ(with_ip_cm_header({}, big, REQ_PRIVATE_DATA).size(), REQ_PRIVATE_DATA);
    EXPECT_EQ(with_ip_cm_header({}, big, SIDR_REQ_PRIVATE_DATA).size(), SIDR_REQ_PRIVATE_DATA);
}

TEST(IpCmService, AHeaderOfAnotherVersionOrFamilyIsNotOne)
{
    PrivateData d = with_ip_cm_header({}, {}, REQ_PRIVATE_DATA);
    EXPECT_TRUE(parse_ip_cm_header(d));
    EXPECT_FALSE(parse_ip_cm_header(std::span(d).first(35)));
    PrivateData other_version = d;
    other_version[0] = 1;
    EXPECT_FALSE(parse_ip_cm_header(other_version));
    PrivateData other_family = d;
    other_family[1] = 0x50;
    EXPECT_FALSE(parse_ip_cm_header(other_family));
    PrivateData v6 = d;
    v6[1] = 0x60;
    v6[4] = 0xfe;
    const auto h = parse_ip_cm_header(v6);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->source[0], 0xfe) << "an IPv6 address is all sixteen bytes";
    PrivateData v4_padded = d;
    v4_padded[4 + 10] = v4_padded[4 + 11] = 0xff;
    EXPECT_EQ(parse_ip_cm_header(v4_padded)->source, IpBytes{}) << "IPv4: the last four bytes alone";
}

} // namespace
} // namespace cna::cm
