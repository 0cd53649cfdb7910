/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: the adapter's frame parser, which sees every frame from the
 * wire (a TAP interface hands it whatever the kernel sends). The layout it
 * returns must lie within the frame, and the common-frame shortcut must
 * describe a frame as the full parse does.
 */
#include <cstdlib>
#include <initializer_list>

#include "frame/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > 0xffff)
        return 0;
    const auto len = static_cast<uint32_t>(size);
    cna::fw::FrameLayout shortcut, full;
    if (cna::fw::parse_udp_tcp_ipv4(data, len, shortcut) &&
        (!cna::fw::parse_any_frame(data, len, full) || !(shortcut == full)))
        std::abort();
    for (bool from_frame : {false, true}) {
        cna::fw::FrameLayout l;
        if (!cna::fw::parse_frame(data, len, l, from_frame))
            continue;
        if (l.l2_len > len || l.l3_end > len || (l.l3 != cna::fw::L3::none && l.l2_len + l.l3_len > len) ||
            (l.l4 == cna::fw::L4::tcp || l.l4 == cna::fw::L4::udp ? l.l4_off + l.l4_len > len : false))
            std::abort();
    }
    return 0;
}
