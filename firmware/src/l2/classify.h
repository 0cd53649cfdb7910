/* SPDX-License-Identifier: BSD-3-Clause
 * Rx classification of a frame by one vport (hsi.md section 6, steps 1-3):
 * destination against the rx accept mode and MAC filters, VLAN against the
 * VLAN filters, length against the MTU.
 */
#pragma once

#include <cstdint>

#include "l2/frame.h"
#include "storm/l2_state.h"

namespace cna::fw {

enum class RxVerdict { accept, filtered, oversize };

RxVerdict classify(const Vport& vport, const uint8_t* frame, uint32_t len, const FrameLayout& layout,
                   Destination dst);

} // namespace cna::fw
