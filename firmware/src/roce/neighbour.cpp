/* SPDX-License-Identifier: BSD-3-Clause
 * ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861: solicitations and
 * advertisements with link-layer address options), for the RoCE firmware.
 */
#include "roce/neighbour.h"

#include <algorithm>
#include <cstring>

#include "frame/checksum.h"
#include "frame/frame.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

constexpr uint16_t ETHERTYPE_ARP = 0x0806;
constexpr uint8_t IPPROTO_ICMPV6 = 58;
constexpr uint8_t ND_SOLICIT = 135;
constexpr uint8_t ND_ADVERT = 136;
constexpr uint8_t OPT_SOURCE_LL = 1;
constexpr uint8_t OPT_TARGET_LL = 2;
constexpr uint32_t ARP_LEN = 28;
constexpr uint32_t IPV6_HLEN = 40;
constexpr uint32_t ND_LEN = 24 + 8; /* the message and one link-layer option */
constexpr uint32_t MIN_FRAME = 60;
constexpr uint8_t BROADCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr uint8_t ZERO_MAC[6] = {};
constexpr uint8_t ALL_NODES[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

/* The ICMPv6 checksum: over the pseudo header and the message. */
uint16_t icmpv6_checksum(const uint8_t* src, const uint8_t* dst, const uint8_t* msg, uint32_t len)
{
    uint8_t tail[8] = {0, 0, static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len), 0, 0, 0, IPPROTO_ICMPV6};
    uint64_t sum = csum_add(0, src, 16);
    sum = csum_add(sum, dst, 16);
    sum = csum_add(sum, tail, sizeof tail);
    sum = csum_add(sum, msg, len);
    return csum_fold(sum);
}

bool all_zero(const uint8_t* p, uint32_t n)
{
    return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

} // namespace

void Neighbours::set_mac(const uint8_t (&mac)[6])
{
    std::memcpy(mac_, mac, 6);
    const uint8_t ll[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, static_cast<uint8_t>(mac[0] ^ 0x02), mac[1], mac[2], 0xff,
                            0xfe, mac[3], mac[4], mac[5]};
    std::memcpy(link_local_, ll, 16);
}

void Neighbours::set_addresses(const SetAddressesRamrodData& d)
{
    num_ipv4_ = std::min<uint8_t>(d.num_ipv4, MAX_IPV4_ADDRESSES);
    num_ipv6_ = std::min<uint8_t>(d.num_ipv6, MAX_IPV6_ADDRESSES);
    std::memcpy(ipv4_, d.ipv4, sizeof ipv4_);
    std::memcpy(ipv6_, d.ipv6, sizeof ipv6_);
    announce();
}

/* Each address the PF now answers for, told to the link unasked: an ARP
 * announcement (RFC 5227: our address as sender and target) and an
 * unsolicited neighbour advertisement with the override flag (RFC 4861
 * 7.2.6). A peer that knew the address at another MAC (an adapter of an
 * earlier process: each gets its own) updates its cache now, not minutes
 * later once its entry went stale and its REQs went to a MAC nobody has. */
void Neighbours::announce()
{
    static constexpr uint8_t ALL_NODES_MAC[6] = {0x33, 0x33, 0, 0, 0, 1};
    for (uint32_t i = 0; i < num_ipv4_; i++)
        owe_arp(1, BROADCAST, ipv4_[i], ZERO_MAC, ipv4_[i]);
    owe_nd(ND_ADVERT, ALL_NODES_MAC, link_local_, ALL_NODES, link_local_, false);
    for (uint32_t i = 0; i < num_ipv6_; i++)
        owe_nd(ND_ADVERT, ALL_NODES_MAC, ipv6_[i], ALL_NODES, ipv6_[i], false);
}

void Neighbours::clear() { *this = Neighbours{}; }

bool Neighbours::ours_v4(const uint8_t* ip) const
{
    for (uint32_t i = 0; i < num_ipv4_; i++)
        if (std::memcmp(ipv4_[i], ip, 4) == 0)
            return true;
    return false;
}

bool Neighbours::ours_v6(const uint8_t* ip) const
{
    if (std::memcmp(link_local_, ip, 16) == 0)
        return true;
    for (uint32_t i = 0; i < num_ipv6_; i++)
        if (std::memcmp(ipv6_[i], ip, 16) == 0)
            return true;
    return false;
}

bool Neighbours::is_neighbour_protocol(const WireFrame& f)
{
    if (!f.parsed || f.layout.l2_len < ETH_HLEN)
        return false;
    if (load_be16(f.data + f.layout.l2_len - 2) == ETHERTYPE_ARP)
        return true;
    return f.layout.l3 == L3::ipv6 && f.data[f.layout.l2_len + 6] == IPPROTO_ICMPV6;
}

bool Neighbours::take(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag)
{
    if (load_be16(f.data + f.layout.l2_len - 2) == ETHERTYPE_ARP)
        return on_arp(f, mac, tag);
    return on_icmpv6(f, mac, tag);
}

bool Neighbours::answered(uint8_t ip_version, const uint8_t* target, uint16_t* tag)
{
    for (Pending& p : pending_) {
        if (p.valid && p.ip_version == ip_version && std::memcmp(p.target, target, ip_version == IP_VERSION_4 ? 4 : 16) == 0) {
            p.valid = false;
            *tag = p.tag;
            return true;
        }
    }
    return false;
}

bool Neighbours::on_arp(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag)
{
    const uint8_t* a = f.data + f.layout.l2_len;
    if (f.len < f.layout.l2_len + ARP_LEN || load_be16(a) != 1 || load_be16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 ||
        a[5] != 4)
        return false;
    const uint16_t op = load_be16(a + 6);
    const uint8_t *sha = a + 8, *spa = a + 14, *tpa = a + 24;
    if (op == 1 && ours_v4(tpa))
        owe_arp(2, sha, tpa, sha, spa);
    if (op == 2 || op == 1) {
        /* An answer (or the peer's own question, which tells as much). */
        if (answered(IP_VERSION_4, spa, tag)) {
            std::memcpy(mac, sha, 6);
            return true;
        }
    }
    return false;
}

bool Neighbours::on_icmpv6(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag)
{
    const uint8_t* ip = f.data + f.layout.l2_len;
    const uint32_t at = f.layout.l2_len + IPV6_HLEN;
    /* RFC 4861: hop limit 255 (the message was not forwarded), code 0. */
    if (f.len < at + 24 || ip[7] != 255)
        return false;
    const uint8_t* m = f.data + at;
    const uint32_t m_len = std::min<uint32_t>(load_be16(ip + 4), f.len - at);
    if ((m[0] != ND_SOLICIT && m[0] != ND_ADVERT) || m[1] != 0 || m_len < 24)
        return false;
    const uint8_t* target = m + 8;
    /* The link-layer address option, if there is one. */
    const uint8_t* ll = nullptr;
    for (uint32_t o = 24; o + 8 <= m_len && m[o + 1] != 0; o += m[o + 1] * 8u)
        if (m[o] == (m[0] == ND_SOLICIT ? OPT_SOURCE_LL : OPT_TARGET_LL))
            ll = m + o + 2;
    if (m[0] == ND_SOLICIT) {
        if (ours_v6(target)) {
            const uint8_t* src = ip + 8;
            const bool dad = all_zero(src, 16);
            owe_nd(ND_ADVERT, ll != nullptr ? ll : f.data + 6, target, dad ? ALL_NODES : src, target, !dad);
        }
        return false;
    }
    if (!answered(IP_VERSION_6, target, tag))
        return false;
    std::memcpy(mac, ll != nullptr ? ll : f.data + 6, 6);
    return true;
}

void Neighbours::ask(const ResolveNeighbourRamrodData& d)
{
    /* The question kept as answered() matches it: an IPv4 target in its
     * first four bytes. */
    uint8_t target[16]{};
    const bool v4 = d.ip_version == IP_VERSION_4;
    std::memcpy(target, v4 ? d.target + 12 : d.target, v4 ? 4 : 16);
    /* The same target asked again takes its question's slot (ecore asks
     * again when no answer came); a question nobody answers makes room,
     * the oldest first, for new ones (its asker gave up long ago). */
    Pending* slot = nullptr;
    for (Pending& p : pending_) {
        if (p.valid && p.ip_version == d.ip_version && std::memcmp(p.target, target, 16) == 0) {
            slot = &p;
            break;
        }
        if (slot == nullptr || (slot->valid && (!p.valid || p.asked < slot->asked)))
            slot = &p;
    }
    *slot = Pending{.valid = true, .ip_version = d.ip_version, .tag = d.tag, .asked = ++questions_asked_};
    std::memcpy(slot->target, target, 16);
    if (v4) {
        owe_arp(1, BROADCAST, d.source + 12, ZERO_MAC, d.target + 12);
    } else {
        const uint8_t group_mac[6] = {0x33, 0x33, 0xff, d.target[13], d.target[14], d.target[15]};
        const uint8_t group[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, d.target[13], d.target[14],
                                   d.target[15]};
        owe_nd(ND_SOLICIT, group_mac, d.source, group, d.target, false);
    }
}

uint8_t* Neighbours::owe(uint32_t len)
{
    if (out_tail_ - out_head_ == MAX_FRAMES)
        return nullptr;
    const uint32_t i = out_tail_++ % MAX_FRAMES;
    lengths_[i] = std::max(len, MIN_FRAME);
    frames_[i].fill(0);
    return frames_[i].data();
}

void Neighbours::owe_arp(uint16_t op, const uint8_t* dst_mac, const uint8_t* sender_ip, const uint8_t* target_mac,
                         const uint8_t* target_ip)
{
    uint8_t* f = owe(ETH_HLEN + ARP_LEN);
    if (f == nullptr)
        return;
    std::memcpy(f, dst_mac, 6);
    std::memcpy(f + 6, mac_, 6);
    store_be16(f + 12, ETHERTYPE_ARP);
    uint8_t* a = f + ETH_HLEN;
    store_be16(a, 1);
    store_be16(a + 2, ETHERTYPE_IPV4);
    a[4] = 6;
    a[5] = 4;
    store_be16(a + 6, op);
    std::memcpy(a + 8, mac_, 6);
    std::memcpy(a + 14, sender_ip, 4);
    std::memcpy(a + 18, target_mac, 6);
    std::memcpy(a + 24, target_ip, 4);
}

void Neighbours::owe_nd(uint8_t type, const uint8_t* dst_mac, const uint8_t* src, const uint8_t* dst,
                        const uint8_t* target, bool solicited)
{
    uint8_t* f = owe(ETH_HLEN + IPV6_HLEN + ND_LEN);
    if (f == nullptr)
        return;
    std::memcpy(f, dst_mac, 6);
    std::memcpy(f + 6, mac_, 6);
    store_be16(f + 12, ETHERTYPE_IPV6);
    uint8_t* ip = f + ETH_HLEN;
    ip[0] = 0x60;
    store_be16(ip + 4, ND_LEN);
    ip[6] = IPPROTO_ICMPV6;
    ip[7] = 255;
    std::memcpy(ip + 8, src, 16);
    std::memcpy(ip + 24, dst, 16);
    uint8_t* m = ip + IPV6_HLEN;
    m[0] = type;
    if (type == ND_ADVERT)
        m[4] = static_cast<uint8_t>((solicited ? 0x40 : 0) | 0x20); /* S, O */
    std::memcpy(m + 8, target, 16);
    m[24] = type == ND_ADVERT ? OPT_TARGET_LL : OPT_SOURCE_LL;
    m[25] = 1;
    std::memcpy(m + 26, mac_, 6);
    store_be16(m + 2, icmpv6_checksum(src, dst, m, ND_LEN));
}

bool Neighbours::poll(FrameBurst& out, uint8_t* buffers, uint32_t buffer)
{
    bool work = false;
    while (out_head_ != out_tail_ && !out.full()) {
        const uint32_t i = out_head_++ % MAX_FRAMES;
        uint8_t* frame = buffers + out.count * buffer;
        std::memcpy(frame, frames_[i].data(), lengths_[i]);
        out.add(frame, lengths_[i]);
        work = true;
    }
    return work;
}

} // namespace cna::fw::roce
