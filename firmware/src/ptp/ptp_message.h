/* SPDX-License-Identifier: BSD-3-Clause
 * Which frames are PTP messages (hsi_ptp.h): over Ethernet (ethertype
 * 0x88f7, after any VLAN tags), or over UDP to port 319 or 320 on IPv4 or
 * IPv6 (not a fragment). Event messages (messageType 0 to 3) are latched;
 * what the latches keep of them.
 */
#pragma once

#include <cstdint>

#include "base/bytes.h"
#include "frame/frame.h"
#include "hsi_ptp.h"

namespace cna::fw {

struct PtpMessage {
    uint32_t transport = 0; /* hsi::ptp::ctrl::RX_L2, RX_UDP4 or RX_UDP6; 0: not a PTP message */
    uint16_t sequence_id = 0;
    uint8_t msg_type = 0;

    bool event() const { return transport != 0 && msg_type <= hsi::ptp::LAST_EVENT_MSG; }

    /* A latch's SEQ register. */
    uint32_t latch_word() const
    {
        return sequence_id | uint32_t{msg_type} << hsi::ptp::latch::MSG_TYPE_SHIFT;
    }
};

inline bool is_ptp_port(uint16_t udp_port)
{
    return udp_port == hsi::ptp::UDP_EVENT_PORT || udp_port == hsi::ptp::UDP_GENERAL_PORT;
}

/* The frame's PTP message, if it is one of a transport in `transports`
 * (ctrl::RX_* bits). */
inline PtpMessage ptp_message(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint32_t transports)
{
    namespace ptp = hsi::ptp;
    PtpMessage message;
    uint32_t header = 0;
    uint32_t transport = 0;
    if (layout.l3 == L3::none && layout.l2_len >= ETH_HLEN && load_be16(frame + layout.l2_len - 2) == ptp::ETHERTYPE) {
        header = layout.l2_len;
        transport = ptp::ctrl::RX_L2;
    } else if (layout.l4 == L4::udp && !layout.fragment && layout.l4_len == 8 &&
               is_ptp_port(load_be16(frame + layout.l4_off + 2))) {
        header = layout.l4_off + 8u;
        transport = layout.l3 == L3::ipv4 ? ptp::ctrl::RX_UDP4 : ptp::ctrl::RX_UDP6;
    }
    if ((transport & transports) == 0 || len < header + ptp::HEADER_SIZE)
        return message;
    message.transport = transport;
    message.msg_type = frame[header + ptp::MSG_TYPE_OFFSET] & 0x0f;
    message.sequence_id = load_be16(frame + header + ptp::SEQUENCE_ID_OFFSET);
    return message;
}

} // namespace cna::fw
