/* SPDX-License-Identifier: BSD-3-Clause
 * The init tool (ecore-internal): runs a phase of the firmware image with
 * the init modes ecore computed, taking run-time values from the runtime
 * array that resc_setup filled.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "ecore_init_image.h"

namespace cna::ecore {

struct RtData {
    std::array<uint32_t, hsi::init::rt::SIZE> values{};
    std::array<bool, hsi::init::rt::SIZE> valid{};
};

Status rt_data_alloc(Hwfn& hwfn);
void rt_data_free(Hwfn& hwfn);
/* The guide's STORE_RT_REG: value for write_rt ops of entry idx. */
void store_rt_reg(Hwfn& hwfn, uint32_t idx, uint32_t value);

Status init_run(Hwfn& hwfn, Ptt& ptt, const InitImage& image, hsi::init::Phase phase, uint32_t modes);

} // namespace cna::ecore
