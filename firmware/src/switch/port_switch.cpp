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
#include "l2/stats.h"
#include "slowpath/storms.h"
#include "switch/rewrite.h"

namespace cna::fw {

using namespace hsi::eswitch;

PortSwitch::PortSwitch(const roce::RoceList& roce, const FunctionList& functions, const Storms& storms,
                       EmbeddedSwitch& eswitch, PassClock& clock)
    : roce_(roce), functions_(functions), storms_(storms), eswitch_(eswitch), clock_(clock),
      rewritten_rx_(std::make_unique<uint8_t[]>(FrameBurst::MAX * REWRITE_MAX)),
      rewritten_tx_(std::make_unique<uint8_t[]>(FrameBurst::MAX * REWRITE_MAX))
{
}

void PortSwitch::receive(const FrameBurst& burst, RxEngine& rx)
{
    if (!storms_.running())
        return;
    const std::span<roce::RoceFirmware* const> engines = roce_.view();
    const bool roce = std::any_of(engines.begin(), engines.end(), [](roce::RoceFirmware* r) { return r->active(); });
    if (!roce) {
        roce::write_pending_icrcs(burst); /* another port's RoCE to this one's L2 */
        receive_l2(burst, rx);
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
        receive_l2(l2_, rx);
}

void PortSwitch::receive_l2(const FrameBurst& burst, RxEngine& rx)
{
    if (eswitch_.switchdev())
        forward(burst, endpoint::WIRE, nullptr, rx);
    else
        rx.receive(functions_.view(), burst);
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

const FrameBurst& PortSwitch::switch_frames(const FrameBurst& sent, const void* source, uint32_t source_vport,
                                            FrameBurst& uplink, RxEngine& rx)
{
    if (eswitch_.switchdev()) {
        const uint16_t from = eswitch_.source_endpoint(*static_cast<const FunctionFirmware*>(source), source_vport);
        if (from != EmbeddedSwitch::NOT_MANAGED) {
            uplink.clear();
            uplink.wire_time = sent.wire_time;
            forward(sent, from, &uplink, rx);
            return uplink;
        }
    }
    /* Most bursts have nothing for the port's functions: they go to the
     * wire as they are. */
    uint32_t first = 0;
    while (first < sent.count && !switched(sent.frames[first], source))
        first++;
    if (first == sent.count)
        return sent;
    local_.clear();
    uplink.clear();
    local_.wire_time = uplink.wire_time = sent.wire_time;
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

void PortSwitch::forward(const FrameBurst& burst, uint16_t source, FrameBurst* uplink, RxEngine& rx)
{
    SwitchStats& stats = eswitch_.stats();
    const SwitchTable& table = eswitch_.table();
    const uint16_t miss = eswitch_.miss_destination(source);
    uint8_t* const rewritten = (source == endpoint::WIRE ? rewritten_rx_ : rewritten_tx_).get();
    route_count_ = 0;
    for (uint32_t i = 0; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        const SwitchRule* r =
            !table.empty() && f.parsed ? table.lookup(switch_key(flow_key(f.data, f.layout), source)) : nullptr;
        if (r == nullptr) {
            counter_add(stats.misses, 1);
            route(miss).push(f);
            continue;
        }
        counter_add(stats.rule_hits, 1);
        if (r->actions & action::COUNT)
            eswitch_.count_hit(*r, f.len, rx.slot());
        if (r->fate == Fate::drop) {
            counter_add(stats.drop_pkts, 1);
            continue;
        }
        if (!rewrites(*r)) {
            route(r->destination).push(f);
            continue;
        }
        uint8_t* out = rewritten + i * REWRITE_MAX;
        if (const uint32_t len = rewrite(*r, f, out); len != 0) {
            route(r->destination).add(out, len);
        } else {
            counter_add(stats.exception_pkts, 1);
            route(miss).push(f);
        }
    }
    for (uint32_t k = 0; k < route_count_; k++)
        deliver(routes_[k].destination, routes_[k].frames, uplink, rx);
}

FrameBurst& PortSwitch::route(uint16_t destination)
{
    for (uint32_t k = 0; k < route_count_; k++)
        if (routes_[k].destination == destination)
            return routes_[k].frames;
    Route& r = routes_[route_count_++];
    r.destination = destination;
    r.frames.clear();
    return r.frames;
}

void PortSwitch::deliver(uint16_t destination, const FrameBurst& frames, FrameBurst* uplink, RxEngine& rx)
{
    SwitchStats& stats = eswitch_.stats();
    const uint32_t index = destination & ~endpoint::KIND;
    if (destination == EmbeddedSwitch::NOWHERE) {
        counter_add(stats.no_representor_pkts, frames.count);
        return;
    }
    if (destination == endpoint::WIRE) {
        if (uplink == nullptr) {
            counter_add(stats.unreachable_pkts, frames.count);
            return;
        }
        for (uint32_t i = 0; i < frames.count; i++)
            uplink->push(frames.frames[i]);
        return;
    }
    if (!storms_.running())
        return;
    if ((destination & endpoint::KIND) == endpoint::VF) {
        FunctionFirmware* vf = eswitch_.vf(index);
        if (vf == nullptr || !vf->started() || (vf->l2().active_rx_vports | vf->l2().link_down_vports) == 0) {
            counter_add(stats.unreachable_pkts, frames.count);
            return;
        }
        rx.receive(std::span<FunctionFirmware* const>(&vf, 1), frames);
        return;
    }
    FunctionFirmware& pf = eswitch_.manager();
    if (!(pf.l2().active_rx_vports & (1u << index))) {
        counter_add(stats.unreachable_pkts, frames.count);
        return;
    }
    rx.receive_at(pf, index, frames);
}

} // namespace cna::fw
