/* SPDX-License-Identifier: BSD-3-Clause
 * MAC, VLAN and MAC+VLAN classification filters of a PF's vports
 * (FILTERS_UPDATE) and the lookups the Rx classification makes.
 * MAC and MAC+VLAN entries count against the PF's MAC filter grant, VLAN
 * entries against its VLAN filter grant.
 */
#pragma once

#include <cstdint>
#include <cstring>

#include "hsi_spq.h"
#include "l2/l2_state.h"
#include "slowpath/resources.h"

namespace cna::fw {

class FilterTable {
public:
    FilterTable(L2State& l2, const Grant& grant) : l2_(l2), grant_(grant) {}

    /* The FILTERS_UPDATE ramrod; the vports are already validated. */
    hsi::FwReturn update(const hsi::eth::FiltersUpdateRamrodData& data);
    /* VPORT_STOP and PF teardown. */
    void clear(Vport& vport);

private:
    hsi::FwReturn add(Vport& vport, const Filter& filter);
    hsi::FwReturn remove(Vport& vport, const Filter& filter);
    void account(const Filter& filter, int delta);
    bool table_full(const Filter& filter) const;
    static void index(Vport& vport);

    L2State& l2_;
    const Grant& grant_;
};

/* A MAC address as one number (never Vport::WALK_FILTERS). */
inline uint64_t mac_key(const uint8_t* mac)
{
    uint32_t lo;
    uint16_t hi;
    std::memcpy(&lo, mac, sizeof(lo));
    std::memcpy(&hi, mac + sizeof(lo), sizeof(hi));
    return uint64_t{hi} << 32 | lo;
}

/* Rx lookups. Inline up to the single-MAC compare, which most vports need. */
bool mac_filter_walk(const Vport& vport, const uint8_t* dst_mac, bool tagged, uint16_t vid);
inline bool mac_filter_match(const Vport& vport, const uint8_t* dst_mac, bool tagged, uint16_t vid)
{
    if (vport.sole_mac != Vport::WALK_FILTERS)
        return mac_key(dst_mac) == vport.sole_mac;
    return mac_filter_walk(vport, dst_mac, tagged, vid);
}
bool vlan_filter_match(const Vport& vport, uint16_t vid);

} // namespace cna::fw
