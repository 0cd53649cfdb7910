/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/frame.h"

namespace cna::fw {

VlanTags parse_vlan_tags(const uint8_t* frame, uint32_t len)
{
    VlanTags tags{0, 0, 12};
    uint16_t type = load_be16(frame + tags.type_off);
    while ((type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ) && tags.count < 2 && tags.type_off + 6 <= len) {
        if (tags.count == 0)
            tags.outer_tci = load_be16(frame + tags.type_off + 2);
        tags.count++;
        tags.type_off += VLAN_HLEN;
        type = load_be16(frame + tags.type_off);
    }
    return tags;
}

} // namespace cna::fw
