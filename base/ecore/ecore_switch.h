/* SPDX-License-Identifier: BSD-3-Clause
 * The PF's record of its port's switch in switchdev mode.
 */
#pragma once

#include <cstdint>

#include "ecore_switch_api.h"
#include "osal_mem.h"

namespace cna::ecore {

struct SwitchInfo {
    uint32_t max_rules = 0;
    osal::DmaMem counters; /* max_rules SwitchCounters, the adapter's to write */
};

} // namespace cna::ecore
