/* SPDX-License-Identifier: BSD-3-Clause
 * Which frames are PTP event messages (hsi_ptp.h): over Ethernet (ethertype
 * 0x88f7, after any VLAN tags), or over UDP to port 319 on IPv4 or IPv6
 * (not a fragment); messageType 0 to 3. What the latches keep of them.
 */
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "frame/frame.h"
#include "hsi_ptp.h"

namespace cna::fw {

struct PtpEvent {
    uint32_t transport = 0; /* hsi::ptp::ctrl::RX_L2, RX_UDP4 or RX_UDP6; 0: not an event message */
    uint16_t sequence_id = 0;
    uint8_t msg_type = 0;

    /* A latch's SEQ register. */
    uint32_t latch_word() const
    {
        return sequence_id | uint32_t{msg_type} << hsi::ptp::latch::MSG_TYPE_SHIFT;
    }
};

/* The frame's event message, if it is one of a transport in `transports`
 * (ctrl::RX_* bits). */
inline PtpEvent ptp_event(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint32_t transports)
{
    namespace ptp = hsi::ptp;
    PtpEvent event;
    uint32_t header = 0;
    uint32_t transport = 0;
    if (layout.l3 == L3::none && layout.l2_len >= ETH_HLEN && load_be16(frame + layout.l2_len - 2) == ptp::ETHERTYPE) {
        header = layout.l2_len;
        transport = ptp::ctrl::RX_L2;
    } else if (layout.l4 == L4::udp && !layout.fragment && layout.l4_len == 8 &&
               load_be16(frame + layout.l4_off + 2) == ptp::UDP_EVENT_PORT) {
        header = layout.l4_off + 8u;
        transport = layout.l3 == L3::ipv4 ? ptp::ctrl::RX_UDP4 : ptp::ctrl::RX_UDP6;
    }
    if ((transport & transports) == 0 || len < header + ptp::HEADER_SIZE)
        return event;
    const uint8_t msg_type = frame[header + ptp::MSG_TYPE_OFFSET] & 0x0f;
    if (msg_type > ptp::LAST_EVENT_MSG)
        return event;
    event.transport = transport;
    event.msg_type = msg_type;
    event.sequence_id = load_be16(frame + header + ptp::SEQUENCE_ID_OFFSET);
    return event;
}

} // namespace cna::fw
