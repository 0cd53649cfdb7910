/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 encapsulation: a QP's path (hsi::rdma::RocePath) as the Ethernet,
 * optional 802.1Q, IPv4 or IPv6 and UDP headers in front of the BTH, and
 * the recognition of a received frame as RoCEv2.
 */
#pragma once

#include <cstdint>

#include "hsi_rdma.h"
#include "frame/frame.h"

namespace cna::fw::roce {

inline constexpr uint32_t UDP_HLEN = 8;

/* Bytes of headers in front of the BTH for the path. */
uint32_t encap_len(const hsi::rdma::RocePath& path);

/* Writes the headers of a frame carrying roce_len bytes of UDP payload
 * (BTH to ICRC inclusive) and returns its layout; the frame is
 * layout.l3_end bytes long. Its ICRC (roce/icrc.h) is written once the
 * BTH and payload are in place. The UDP checksum stays 0 over IPv6 too:
 * the ICRC covers the packet end to end, zero-checksum UDP tunnels over
 * IPv6 are allowed (RFC 6935), and RoCEv2 peers send and accept it so
 * (Linux's rxe does). */
FrameLayout write_encap(uint8_t* frame, const hsi::rdma::RocePath& path, uint32_t roce_len);

/* Whether a parsed frame is RoCEv2: UDP to port 4791 in an unfragmented
 * IP packet, an IPv4 header without options, and room for a BTH and an
 * ICRC. */
bool is_roce(const uint8_t* frame, const FrameLayout& layout);

} // namespace cna::fw::roce
