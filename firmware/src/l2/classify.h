/* SPDX-License-Identifier: BSD-3-Clause
 * Rx classification of a frame by one vport (hsi.md section 6, steps 1-3):
 * destination against the rx accept mode and MAC filters, VLAN against the
 * VLAN filters, length against the MTU.
 */
#pragma once

#include <cstdint>

#include "frame/frame.h"
#include "l2/filters.h"
#include "l2/l2_state.h"

namespace cna::fw {

enum class RxVerdict { accept, filtered, oversize };

/* Inline: every frame of every vport comes here. */
inline RxVerdict classify(const Vport& vport, const uint8_t* frame, uint32_t len, const FrameLayout& layout,
                          Destination dst)
{
    using namespace hsi::eth;
    bool tagged = layout.vlan_tags != 0;
    uint16_t vid = layout.vlan_tci & 0x0fff;
    uint16_t needed;
    switch (dst) {
    case Destination::broadcast: needed = accept::BCAST; break;
    case Destination::multicast:
        needed = mac_filter_match(vport, frame, tagged, vid) ? accept::MCAST_MATCHED : accept::MCAST_UNMATCHED;
        break;
    default:
        needed = mac_filter_match(vport, frame, tagged, vid) ? accept::UCAST_MATCHED : accept::UCAST_UNMATCHED;
        break;
    }
    if (!(vport.rx_accept & needed))
        return RxVerdict::filtered;
    if (tagged && vport.vlan_filters != 0 && !vlan_filter_match(vport, vid))
        return RxVerdict::filtered;
    if (len > max_frame_len(vport.mtu, layout.vlan_tags))
        return RxVerdict::oversize;
    return RxVerdict::accept;
}

} // namespace cna::fw
