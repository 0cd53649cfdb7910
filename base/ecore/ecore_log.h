/* SPDX-License-Identifier: BSD-3-Clause
 * ecore's prints (guide: DP_ERR, DP_NOTICE, DP_INFO, DP_VERBOSE), on the
 * pmd.net.cna.ecore log type, prefixed with the device name and function.
 * ecore-internal.
 */
#pragma once

#include "ecore.h"
#include "osal_log.h"

namespace cna::ecore {

inline const char* log_name(const Hwfn& hwfn) { return hwfn.dev ? hwfn.dev->name.c_str() : "ecore"; }

} // namespace cna::ecore

#define ECORE_DP(hwfn, level, module, ...)                                                               \
    do {                                                                                                 \
        if (::cna::osal::dp_enabled(level, module))                                                      \
            ::cna::osal::dp_log(::cna::osal::logtype_ecore, level, module, ::cna::ecore::log_name(hwfn), \
                                __func__, __VA_ARGS__);                                                  \
    } while (0)

#define DP_ERR(hwfn, ...) ECORE_DP(hwfn, ::cna::osal::DpLevel::err, 0, __VA_ARGS__)
#define DP_NOTICE(hwfn, ...) ECORE_DP(hwfn, ::cna::osal::DpLevel::notice, 0, __VA_ARGS__)
#define DP_INFO(hwfn, ...) ECORE_DP(hwfn, ::cna::osal::DpLevel::info, 0, __VA_ARGS__)
#define DP_VERBOSE(hwfn, module, ...) ECORE_DP(hwfn, ::cna::osal::DpLevel::verbose, module, __VA_ARGS__)
