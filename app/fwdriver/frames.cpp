/* SPDX-License-Identifier: BSD-3-Clause
 * Test frames, and reference checksums written independently of the
 * adapter's (bytewise RFC 1071).
 */
#include <algorithm>

#include "fake_driver.h"

namespace cna::fw::test {
namespace {

void put16(std::vector<uint8_t>& f, std::size_t at, uint16_t v)
{
    f[at] = static_cast<uint8_t>(v >> 8);
    f[at + 1] = static_cast<uint8_t>(v);
}
void put32(std::vector<uint8_t>& f, std::size_t at, uint32_t v)
{
    put16(f, at, static_cast<uint16_t>(v >> 16));
    put16(f, at + 2, static_cast<uint16_t>(v));
}
uint16_t get16(const std::vector<uint8_t>& f, std::size_t at) { return static_cast<uint16_t>(f[at] << 8 | f[at + 1]); }

uint32_t sum16(const uint8_t* data, std::size_t len, uint32_t sum)
{
    for (std::size_t i = 0; i + 1 < len; i += 2)
        sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
    if (len & 1)
        sum += static_cast<uint32_t>(data[len - 1] << 8);
    return sum;
}

std::vector<uint8_t> ipv4_frame(const uint8_t* dst, const uint8_t* src, uint8_t proto, uint32_t sip, uint32_t dip,
                                std::size_t l4_len)
{
    std::vector<uint8_t> f = eth_frame(dst, src, 0x0800, 20 + l4_len);
    std::fill(f.begin() + 14, f.begin() + 34, 0);
    f[14] = 0x45;
    f[20] = 0x40; /* DF, no fragment */
    put16(f, 16, static_cast<uint16_t>(20 + l4_len));
    put16(f, 18, 0x1234);
    f[22] = 64;
    f[23] = proto;
    put32(f, 26, sip);
    put32(f, 30, dip);
    return f;
}

uint32_t pseudo_sum(const std::vector<uint8_t>& f, std::size_t l3, uint8_t proto, std::size_t l4_len, bool v6)
{
    uint32_t sum = v6 ? sum16(&f[l3 + 8], 32, 0) : sum16(&f[l3 + 12], 8, 0);
    return sum + proto + static_cast<uint32_t>(l4_len);
}

} // namespace

uint16_t ref_checksum(const uint8_t* data, std::size_t len, uint32_t initial)
{
    uint32_t sum = sum16(data, len, initial);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

std::vector<uint8_t> eth_frame(const uint8_t* dst, const uint8_t* src, uint16_t ethertype, std::size_t payload_len)
{
    std::vector<uint8_t> f(14 + payload_len);
    std::memcpy(&f[0], dst, 6);
    std::memcpy(&f[6], src, 6);
    put16(f, 12, ethertype);
    for (std::size_t i = 14; i < f.size(); i++)
        f[i] = static_cast<uint8_t>(i * 7);
    return f;
}

std::vector<uint8_t> udp4_frame(const uint8_t* dst, const uint8_t* src, uint32_t sip, uint32_t dip, uint16_t sport,
                                uint16_t dport, std::size_t payload_len, bool checksums)
{
    std::vector<uint8_t> f = ipv4_frame(dst, src, 17, sip, dip, 8 + payload_len);
    put16(f, 34, sport);
    put16(f, 36, dport);
    put16(f, 38, static_cast<uint16_t>(8 + payload_len));
    put16(f, 40, 0);
    if (checksums) {
        put16(f, 24, ref_checksum(&f[14], 20));
        put16(f, 40, ref_checksum(&f[34], 8 + payload_len, pseudo_sum(f, 14, 17, 8 + payload_len, false)));
    }
    return f;
}

std::vector<uint8_t> tcp4_frame(const uint8_t* dst, const uint8_t* src, uint32_t sip, uint32_t dip, uint16_t sport,
                                uint16_t dport, std::size_t payload_len, uint8_t tcp_flags)
{
    std::vector<uint8_t> f = ipv4_frame(dst, src, 6, sip, dip, 20 + payload_len);
    put16(f, 34, sport);
    put16(f, 36, dport);
    put32(f, 38, 1000);
    f[46] = 5 << 4;
    f[47] = tcp_flags;
    put16(f, 48, 8192);
    put16(f, 50, 0);
    put16(f, 24, ref_checksum(&f[14], 20));
    put16(f, 50, ref_checksum(&f[34], 20 + payload_len, pseudo_sum(f, 14, 6, 20 + payload_len, false)));
    return f;
}

std::vector<uint8_t> tcp6_frame(const uint8_t* dst, const uint8_t* src, uint16_t sport, uint16_t dport,
                                std::size_t payload_len)
{
    std::vector<uint8_t> f = eth_frame(dst, src, 0x86dd, 40 + 20 + payload_len);
    std::fill(f.begin() + 14, f.begin() + 54, 0);
    f[14] = 0x60;
    put16(f, 18, static_cast<uint16_t>(20 + payload_len));
    f[20] = 6;
    f[21] = 64;
    for (int i = 0; i < 32; i++)
        f[22 + i] = static_cast<uint8_t>(0x20 + i);
    put16(f, 54, sport);
    put16(f, 56, dport);
    f[66] = 5 << 4;
    f[67] = 0x10;
    put16(f, 70, 0);
    put16(f, 70, ref_checksum(&f[54], 20 + payload_len, pseudo_sum(f, 14, 6, 20 + payload_len, true)));
    return f;
}

std::vector<uint8_t> with_vlan(const std::vector<uint8_t>& frame, uint16_t tci)
{
    std::vector<uint8_t> f(frame.begin(), frame.begin() + 12);
    f.push_back(0x81);
    f.push_back(0x00);
    f.push_back(static_cast<uint8_t>(tci >> 8));
    f.push_back(static_cast<uint8_t>(tci));
    f.insert(f.end(), frame.begin() + 12, frame.end());
    return f;
}

bool ipv4_header_valid(const std::vector<uint8_t>& f, std::size_t l3)
{
    return ref_checksum(&f[l3], (f[l3] & 0xf) * 4u) == 0;
}

bool l4_valid(const std::vector<uint8_t>& f, std::size_t l3)
{
    bool v6 = (f[l3] >> 4) == 6;
    std::size_t ihl = v6 ? 40 : (f[l3] & 0xf) * 4u;
    std::size_t l4_len = v6 ? get16(f, l3 + 4) : get16(f, l3 + 2) - ihl;
    uint8_t proto = v6 ? f[l3 + 6] : f[l3 + 9];
    return ref_checksum(&f[l3 + ihl], l4_len, pseudo_sum(f, l3, proto, l4_len, v6)) == 0;
}

} // namespace cna::fw::test
