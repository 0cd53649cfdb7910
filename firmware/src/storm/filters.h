/* SPDX-License-Identifier: BSD-3-Clause
 * MAC, VLAN and MAC+VLAN classification filters of a PF's vports
 * (FILTERS_UPDATE) and the lookups the Rx classification makes.
 * MAC and MAC+VLAN entries count against the PF's MAC filter grant, VLAN
 * entries against its VLAN filter grant.
 */
#pragma once

#include <cstdint>

#include "hsi_spq.h"
#include "mfw/resources.h"
#include "storm/l2_state.h"

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

    L2State& l2_;
    const Grant& grant_;
};

/* Rx lookups. */
bool mac_filter_match(const Vport& vport, const uint8_t* dst_mac, bool tagged, uint16_t vid);
bool vlan_filter_match(const Vport& vport, uint16_t vid);

} // namespace cna::fw
