/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch/port_switch.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/clock.h"
#include "l2/classify.h"
#include "l2/function_firmware.h"
#include "roce/encap.h"
#include "roce/icrc.h"
#include "roce/roce_firmware.h"
#include "slowpath/storms.h"

namespace cna::fw {

void PortSwitch::receive(const FrameBurst& burst, RxEngine& rx)
{
    if (!storms_.running())
        return;
    const std::span<roce::RoceFirmware* const> engines = roce_.view();
    const bool roce = std::any_of(engines.begin(), engines.end(), [](roce::RoceFirmware* r) { return r->active(); });
    if (!roce) {
        roce::write_pending_icrcs(burst); /* another port's RoCE to this one's L2 */
        rx.receive(functions_.view(), burst);
        return;
    }
    l2_.clear();
    for (uint32_t i = 0; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        if (roce::RoceFirmware* owner = roce_owner(f)) {
            owner->receive(f, clock_.now());
            continue;
        }
        if (roce::Neighbours::is_neighbour_protocol(f))
            for (roce::RoceFirmware* r : engines)
                if (r->active())
                    r->neighbour_frame(f);
        roce::write_pending_icrc(f);
        l2_.push(f);
    }
    if (l2_.count != 0)
        rx.receive(functions_.view(), l2_);
}

roce::RoceFirmware* PortSwitch::roce_owner(const WireFrame& f) const
{
    if (!f.parsed || !roce::is_roce(f.data, f.layout))
        return nullptr;
    for (roce::RoceFirmware* r : roce_.view())
        if (r->active() && std::memcmp(f.data, r->mac().data(), 6) == 0)
            return r;
    return nullptr;
}

const FrameBurst& PortSwitch::switch_roce(const FrameBurst& sent, const roce::RoceFirmware& source,
                                          FrameBurst& uplink)
{
    if (roce_.view().size() < 2)
        return sent; /* the port's one RoCE function: all is for the wire */
    uplink.clear();
    for (uint32_t i = 0; i < sent.count; i++) {
        const WireFrame& f = sent.frames[i];
        roce::RoceFirmware* owner = roce_owner(f);
        if (owner != nullptr && owner != &source)
            owner->receive(f, clock_.now());
        else
            uplink.push(f);
    }
    return uplink;
}

const FrameBurst& PortSwitch::switch_frames(const FrameBurst& sent, const void* source, FrameBurst& uplink,
                                            RxEngine& rx)
{
    /* Most bursts have nothing for the port's functions: they go to the
     * wire as they are. */
    uint32_t first = 0;
    while (first < sent.count && !switched(sent.frames[first], source))
        first++;
    if (first == sent.count)
        return sent;
    local_.clear();
    uplink.clear();
    for (uint32_t i = 0; i < first; i++)
        uplink.push(sent.frames[i]);
    for (uint32_t i = first; i < sent.count; i++) {
        const WireFrame& f = sent.frames[i];
        if (!f.parsed) {
            uplink.push(f);
            continue;
        }
        if (f.data[0] & 1) { /* broadcast and multicast: the port's other functions and the wire */
            local_.push(f);
            uplink.push(f);
        } else if (addressed_here(f, source)) {
            local_.push(f);
        } else {
            uplink.push(f);
        }
    }
    if (storms_.running())
        rx.receive(functions_.view(), local_, static_cast<const FunctionFirmware*>(source));
    return uplink;
}

bool PortSwitch::switched(const WireFrame& f, const void* source) const
{
    return f.parsed && ((f.data[0] & 1) != 0 || addressed_here(f, source));
}

bool PortSwitch::addressed_here(const WireFrame& f, const void* source) const
{
    const bool tagged = f.layout.vlan_tags != 0;
    const uint16_t vid = f.layout.vlan_tci & 0x0fff;
    for (FunctionFirmware* fn : functions_.view()) {
        if (fn == source)
            continue;
        /* A function whose link is forced down still owns its address. */
        const uint32_t receiving = fn->l2().active_rx_vports | fn->l2().link_down_vports;
        for (uint32_t vports = receiving; vports != 0; vports &= vports - 1)
            if (mac_filter_match(fn->l2().vports[std::countr_zero(vports)], f.data, tagged, vid))
                return true;
    }
    return false;
}

} // namespace cna::fw
