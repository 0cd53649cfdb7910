/* SPDX-License-Identifier: BSD-3-Clause
 * Interrupts, ecore-internal part.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include "ecore_int_api.h"
#include "osal_mem.h"

namespace cna::ecore {


} // namespace cna::ecore
