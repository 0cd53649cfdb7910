/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/filters.h"

#include <algorithm>
#include <cstring>

namespace cna::fw {

using hsi::FwReturn;
using hsi::eth::FilterOpcode;
using hsi::eth::FilterType;

namespace {

constexpr uint16_t VID_MASK = 0x0fff;

bool same(const Filter& a, const Filter& b)
{
    if (a.type != b.type)
        return false;
    bool mac_equal = std::memcmp(a.mac, b.mac, sizeof(a.mac)) == 0;
    switch (a.type) {
    case FilterType::mac: return mac_equal;
    case FilterType::vlan: return a.vlan == b.vlan;
    case FilterType::mac_vlan: return mac_equal && a.vlan == b.vlan;
    }
    return false;
}

bool counts_as_vlan(FilterType type) { return type != FilterType::mac; }

} // namespace

void FilterTable::account(const Filter& filter, int delta)
{
    if (filter.type == FilterType::vlan)
        l2_.vlan_filters_used += delta;
    else
        l2_.mac_filters_used += delta;
}

bool FilterTable::table_full(const Filter& filter) const
{
    return filter.type == FilterType::vlan ? l2_.vlan_filters_used >= grant_.num_vlan_filters
                                           : l2_.mac_filters_used >= grant_.num_mac_filters;
}

void FilterTable::index(Vport& vport)
{
    bool sole_mac = vport.filters.size() == 1 && vport.filters[0].type == FilterType::mac;
    vport.sole_mac = sole_mac ? mac_key(vport.filters[0].mac) : Vport::WALK_FILTERS;
}

FwReturn FilterTable::add(Vport& vport, const Filter& filter)
{
    if (std::any_of(vport.filters.begin(), vport.filters.end(), [&](const Filter& f) { return same(f, filter); }))
        return FwReturn::ok;
    if (table_full(filter))
        return FwReturn::no_resource;
    /* Capacity was reserved for the whole grant at PF_START: no allocation. */
    vport.filters.push_back(filter);
    vport.vlan_filters += counts_as_vlan(filter.type);
    account(filter, +1);
    index(vport);
    return FwReturn::ok;
}

FwReturn FilterTable::remove(Vport& vport, const Filter& filter)
{
    auto it = std::find_if(vport.filters.begin(), vport.filters.end(), [&](const Filter& f) { return same(f, filter); });
    if (it == vport.filters.end())
        return FwReturn::not_found;
    vport.filters.erase(it);
    vport.vlan_filters -= counts_as_vlan(filter.type);
    account(filter, -1);
    index(vport);
    return FwReturn::ok;
}

FwReturn FilterTable::update(const hsi::eth::FiltersUpdateRamrodData& data)
{
    auto type = static_cast<FilterType>(data.type);
    if (type != FilterType::mac && type != FilterType::vlan && type != FilterType::mac_vlan)
        return FwReturn::invalid_param;
    Filter filter{type, {}, static_cast<uint16_t>(data.vlan & VID_MASK)};
    std::memcpy(filter.mac, data.mac, sizeof(filter.mac));
    Vport& vport = l2_.vports[data.vport_id];

    switch (static_cast<FilterOpcode>(data.opcode)) {
    case FilterOpcode::add: return add(vport, filter);
    case FilterOpcode::remove: return remove(vport, filter);
    case FilterOpcode::replace: {
        /* Every filter of this type goes, then the new one is added. */
        for (auto it = vport.filters.begin(); it != vport.filters.end();) {
            if (it->type != type) {
                ++it;
                continue;
            }
            account(*it, -1);
            vport.vlan_filters -= counts_as_vlan(type);
            it = vport.filters.erase(it);
        }
        index(vport); /* in case add() finds the table full */
        return add(vport, filter);
    }
    case FilterOpcode::move: {
        Vport& dst = l2_.vports[data.dst_vport_id];
        FwReturn rc = remove(vport, filter);
        return rc == FwReturn::ok ? add(dst, filter) : rc;
    }
    }
    return FwReturn::invalid_param;
}

void FilterTable::clear(Vport& vport)
{
    for (const Filter& f : vport.filters)
        account(f, -1);
    vport.filters.clear();
    vport.vlan_filters = 0;
    index(vport);
}

bool mac_filter_walk(const Vport& vport, const uint8_t* dst_mac, bool tagged, uint16_t vid)
{
    for (const Filter& f : vport.filters) {
        if (f.type == FilterType::vlan || std::memcmp(f.mac, dst_mac, sizeof(f.mac)) != 0)
            continue;
        if (f.type == FilterType::mac || (tagged ? f.vlan == vid : f.vlan == 0))
            return true;
    }
    return false;
}

bool vlan_filter_match(const Vport& vport, uint16_t vid)
{
    return std::any_of(vport.filters.begin(), vport.filters.end(),
                       [&](const Filter& f) { return f.type != FilterType::mac && f.vlan == vid; });
}

} // namespace cna::fw
