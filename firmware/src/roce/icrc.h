/* SPDX-License-Identifier: BSD-3-Clause
 * The RoCEv2 invariant CRC: a CRC-32 (the Ethernet polynomial) over the
 * packet from the IP header to the end of the payload, with the fields
 * routers may change taken as all ones — eight bytes standing for IB's
 * local route header, then IPv4 TOS, TTL and header checksum (IPv6
 * traffic class, flow label and hop limit), the UDP checksum, and the BTH
 * byte holding FECN, BECN and reserved bits. It follows the payload in
 * the four bytes before the FCS, least significant byte first.
 */
#pragma once

#include <cstdint>

#include "frame/frame.h"
#include "frame/frame_burst.h"

namespace cna::fw::roce {

/* The ICRC of a RoCEv2 frame whose UDP payload (BTH on) ends with the
 * ICRC's four bytes at layout.l3_end. */
uint32_t icrc(const uint8_t* frame, const FrameLayout& layout);
inline bool icrc_ok(const uint8_t* frame, const FrameLayout& layout)
{
    return load_le32(frame + layout.l3_end - 4) == icrc(frame, layout);
}
inline void icrc_insert(uint8_t* frame, const FrameLayout& layout)
{
    store_le32(frame + layout.l3_end - 4, icrc(frame, layout));
}
/* The ICRC of a frame the RoCE engine left it pending in, written before
 * the frame is seen anywhere but by a RoCE engine of the adapter. */
inline void write_pending_icrc(const WireFrame& f)
{
    if (f.pending_icrc != nullptr) [[unlikely]]
        store_le32(f.pending_icrc, icrc(f.data, f.layout));
}
/* Those of every frame of a burst (FrameBurst::icrcs_pending). */
inline void write_pending_icrcs(const FrameBurst& burst)
{
    if (burst.icrcs_pending)
        for (uint32_t i = 0; i < burst.count; i++)
            write_pending_icrc(burst.frames[i]);
}

} // namespace cna::fw::roce
