/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch/rewrite.h"

#include <cstring>

#include "base/bytes.h"

namespace cna::fw {

using namespace hsi::eswitch;

namespace {

/* Where the frame's headers are, as the changes move them. */
struct Headers {
    uint32_t ip;       /* offset of the IP header, 0 for none */
    uint32_t l4;       /* offset of a whole TCP/UDP header, 0 for none */
    bool ipv4;
    bool tcp;
};

/* RFC 1624's incremental update (eqn. 3): HC' = ~(~HC + ~m + m'), for a
 * 16-bit word of the summed data changing from m to m'. */
void checksum_replace(uint8_t* field, uint16_t from, uint16_t to)
{
    uint32_t sum = static_cast<uint16_t>(~load_be16(field)) + static_cast<uint32_t>(static_cast<uint16_t>(~from)) + to;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    store_be16(field, static_cast<uint16_t>(~sum));
}

/* The transport checksum a change of a pseudo-header or L4 word touches:
 * TCP's always, UDP's unless the sender left it out (0, IPv4 only). */
uint8_t* l4_checksum(uint8_t* frame, const Headers& h)
{
    if (h.l4 == 0)
        return nullptr;
    uint8_t* field = frame + h.l4 + (h.tcp ? 16 : 6);
    return h.tcp || load_be16(field) != 0 ? field : nullptr;
}

void replace_l4_word(uint8_t* frame, const Headers& h, uint16_t from, uint16_t to)
{
    if (uint8_t* field = l4_checksum(frame, h)) {
        checksum_replace(field, from, to);
        if (!h.tcp && load_be16(field) == 0)
            store_be16(field, 0xffff); /* UDP's 0 says "no checksum" */
    }
}

/* A 16-bit field of the L4 header (a port). */
void set_l4_port(uint8_t* frame, const Headers& h, uint32_t offset, uint16_t value)
{
    uint8_t* field = frame + h.l4 + offset;
    const uint16_t from = load_be16(field);
    store_be16(field, value);
    replace_l4_word(frame, h, from, value);
}

/* An IPv4 address: the header's checksum and the pseudo-header's. */
void set_ipv4_address(uint8_t* frame, const Headers& h, uint32_t offset, const uint8_t address[4])
{
    uint8_t* field = frame + h.ip + offset;
    for (uint32_t half = 0; half < 4; half += 2) {
        const uint16_t from = load_be16(field + half);
        const uint16_t to = load_be16(address + half);
        checksum_replace(frame + h.ip + 10, from, to);
        replace_l4_word(frame, h, from, to);
    }
    std::memcpy(field, address, 4);
}

/* The TTL (IPv4, in the header checksum with the protocol beside it) or
 * the hop limit (IPv6, in no checksum). */
void set_ttl(uint8_t* frame, const Headers& h, uint8_t ttl)
{
    if (!h.ipv4) {
        frame[h.ip + 7] = ttl;
        return;
    }
    uint8_t* word = frame + h.ip + 8;
    const uint16_t from = load_be16(word);
    word[0] = ttl;
    checksum_replace(frame + h.ip + 10, from, load_be16(word));
}

bool tagged(const uint8_t* frame, uint32_t len)
{
    if (len < ETH_HLEN + VLAN_HLEN)
        return false;
    const uint16_t type = load_be16(frame + 12);
    return type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ;
}

} // namespace

uint32_t rewrite(const SwitchRule& r, const WireFrame& f, uint8_t* out)
{
    const uint16_t a = r.actions;
    const FrameLayout& layout = f.layout;
    constexpr uint16_t PSEUDO_HEADER =
        action::SET_IPV4_SRC | action::SET_IPV4_DST | action::SET_TP_SRC | action::SET_TP_DST;
    if (f.len > REWRITE_MAX - VLAN_HLEN || (layout.fragment && (a & PSEUDO_HEADER)))
        return 0;
    uint32_t len = f.len;
    uint32_t shift = 0; /* bytes the headers moved back by a pop */
    if ((a & action::POP_VLAN) && layout.vlan_tags != 0) {
        std::memcpy(out, f.data, 12);
        std::memcpy(out + 12, f.data + 12 + VLAN_HLEN, len - 12 - VLAN_HLEN);
        len -= VLAN_HLEN;
        shift = VLAN_HLEN;
        if (len < MIN_FRAME) {
            std::memset(out + len, 0, MIN_FRAME - len);
            len = MIN_FRAME;
        }
    } else {
        std::memcpy(out, f.data, len);
    }
    const bool whole_l4 = layout.l4 == L4::tcp || layout.l4 == L4::udp;
    const Headers h{.ip = layout.l3 != L3::none ? layout.l2_len - shift : 0,
                    .l4 = whole_l4 ? layout.l4_off - shift : 0,
                    .ipv4 = layout.l3 == L3::ipv4,
                    .tcp = layout.l4 == L4::tcp};

    if (a & action::SET_MAC_SRC)
        std::memcpy(out + 6, r.mac_src, 6);
    if (a & action::SET_MAC_DST)
        std::memcpy(out, r.mac_dst, 6);
    if (h.ipv4 && (a & action::SET_IPV4_SRC))
        set_ipv4_address(out, h, 12, r.ipv4_src);
    if (h.ipv4 && (a & action::SET_IPV4_DST))
        set_ipv4_address(out, h, 16, r.ipv4_dst);
    if (h.l4 != 0 && (a & action::SET_TP_SRC))
        set_l4_port(out, h, 0, r.tp_src);
    if (h.l4 != 0 && (a & action::SET_TP_DST))
        set_l4_port(out, h, 2, r.tp_dst);
    if (h.ip != 0 && (a & action::SET_TTL))
        set_ttl(out, h, r.ttl);
    if (h.ip != 0 && (a & action::DEC_TTL)) {
        const uint8_t ttl = out[h.ip + (h.ipv4 ? 8 : 7)];
        if (ttl <= 1)
            return 0; /* expired: software decides (the exception path) */
        set_ttl(out, h, static_cast<uint8_t>(ttl - 1));
    }
    if (a & action::PUSH_VLAN) {
        std::memmove(out + 12 + VLAN_HLEN, out + 12, len - 12);
        store_be16(out + 12, r.vlan_tpid);
        store_be16(out + 14, 0);
        len += VLAN_HLEN;
    }
    if ((a & (action::SET_VLAN_VID | action::SET_VLAN_PCP)) && tagged(out, len)) {
        uint16_t tci = load_be16(out + 14);
        if (a & action::SET_VLAN_VID)
            tci = static_cast<uint16_t>((tci & 0xf000) | (r.vlan_tci & 0x0fff));
        if (a & action::SET_VLAN_PCP)
            tci = static_cast<uint16_t>((tci & 0x1fff) | (r.vlan_tci & 0xe000));
        store_be16(out + 14, tci);
    }
    return len;
}

} // namespace cna::fw
