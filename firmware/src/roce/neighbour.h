/* SPDX-License-Identifier: BSD-3-Clause
 * The neighbour protocols the RoCE firmware speak for their PF: ARP and IPv6
 * neighbour discovery. They answer questions about the PF's addresses (so
 * a RoCE peer, a Linux host's included, finds the PF's RDMA MAC), ask the
 * wire about a peer's address when ecore resolves a destination GID, and
 * report the answers.
 *
 * Engine thread of the PF (frames) and the slowpath (addresses,
 * questions), ordered by the pass locks like the rest of the RoCE firmware.
 * No allocation: frames owed wait in a small ring; a full ring drops the
 * newest, as a busy NIC would (the asker asks again).
 */
#pragma once

#include <array>
#include <cstdint>

#include "hsi_rdma.h"
#include "frame/frame_burst.h"

namespace cna::fw::roce {

class Neighbours {
public:
    /* The RDMA MAC (FUNC_INIT): its link-local IPv6 address is answered for too. */
    void set_mac(const uint8_t (&mac)[6]);
    /* SET_ADDRESSES: the addresses answered for, each announced to the link. */
    void set_addresses(const hsi::rdma::SetAddressesRamrodData& d);
    void clear();
    /* RESOLVE_NEIGHBOUR: the question goes out at the next poll. */
    void ask(const hsi::rdma::ResolveNeighbourRamrodData& d);

    /* An ARP or ICMPv6 frame from the wire. Answers to our questions come
     * back as answered(mac, tag); questions about our addresses queue an
     * answer. */
    template <typename Answered> void receive(const WireFrame& f, Answered&& answered)
    {
        uint8_t mac[6];
        uint16_t tag;
        if (take(f, mac, &tag))
            answered(mac, tag);
    }
    /* Whether a frame is one of ours to look at (cheap: the ethertype, or
     * IPv6 carrying ICMPv6). */
    static bool is_neighbour_protocol(const WireFrame& f);

    /* The frames owed, into out (while it has room), each copied into
     * buffers[i] of at most `buffer` bytes. */
    bool poll(FrameBurst& out, uint8_t* buffers, uint32_t buffer);

    bool owes() const { return out_head_ != out_tail_; }
    /* Each address answered for, told to the link unasked. */
    void announce();

private:
    struct Pending {
        bool valid = false;
        uint8_t ip_version = 0;
        uint16_t tag = 0;
        uint32_t asked = 0; /* questions_asked_ when it was asked */
        uint8_t target[16]{};
    };
    static constexpr uint32_t MAX_PENDING = 16;
    static constexpr uint32_t MAX_FRAMES = 16;
    static constexpr uint32_t FRAME_MAX = 96;

    /* true and the answer's MAC and tag when f answers a pending question. */
    bool take(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag);
    bool on_arp(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag);
    bool on_icmpv6(const WireFrame& f, uint8_t (&mac)[6], uint16_t* tag);
    bool ours_v4(const uint8_t* ip) const;
    bool ours_v6(const uint8_t* ip) const;
    bool answered(uint8_t ip_version, const uint8_t* target, uint16_t* tag);
    uint8_t* owe(uint32_t len);
    void owe_arp(uint16_t op, const uint8_t* dst_mac, const uint8_t* sender_ip, const uint8_t* target_mac,
                 const uint8_t* target_ip);
    /* An NS (type 135) or NA (type 136) from `src` to `dst`. */
    void owe_nd(uint8_t type, const uint8_t* dst_mac, const uint8_t* src, const uint8_t* dst, const uint8_t* target,
                bool solicited);

    uint8_t mac_[6]{};
    uint8_t link_local_[16]{};
    uint8_t num_ipv4_ = 0, num_ipv6_ = 0;
    uint8_t ipv4_[hsi::rdma::MAX_IPV4_ADDRESSES][4]{};
    uint8_t ipv6_[hsi::rdma::MAX_IPV6_ADDRESSES][16]{};
    std::array<Pending, MAX_PENDING> pending_{};
    uint32_t questions_asked_ = 0;
    std::array<std::array<uint8_t, FRAME_MAX>, MAX_FRAMES> frames_{};
    std::array<uint32_t, MAX_FRAMES> lengths_{};
    uint32_t out_head_ = 0, out_tail_ = 0;
};

} // namespace cna::fw::roce
