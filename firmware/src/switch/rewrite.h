/* SPDX-License-Identifier: BSD-3-Clause
 * A transfer rule's header changes (hsi::eswitch::action), made on a copy
 * of the frame: the sender's buffer is never written.
 */
#pragma once

#include <cstdint>

#include "frame/frame_burst.h"
#include "switch/switch_table.h"

namespace cna::fw {

/* The largest frame a rewrite makes: the largest the storms carry, and a
 * tag pushed. */
inline constexpr uint32_t REWRITE_MAX = hsi::eth::MAX_MTU + hsi::eth::ETH_OVERHEAD + 2 * VLAN_HLEN;
/* The shortest Ethernet frame, FCS aside. */
inline constexpr uint32_t MIN_FRAME = 60;

/* Whether the rule changes the frame at all (else it goes as it is). */
inline bool rewrites(const SwitchRule& r) { return (r.actions & ~hsi::eswitch::action::COUNT) != 0; }

/* The frame as the rule changes it, into out (REWRITE_MAX bytes): its
 * length, or 0 when it cannot be changed so (its TTL would reach 0; an IP
 * fragment's addresses or ports, whose transport checksum is in another
 * fragment or covers bytes of others; too long for a tag more), and then
 * goes where a frame no rule matched does. A frame shorter than the
 * shortest Ethernet frame after a pop is padded. */
uint32_t rewrite(const SwitchRule& r, const WireFrame& f, uint8_t* out);

} // namespace cna::fw
