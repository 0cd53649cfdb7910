/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_log.h"

#include <atomic>
#include <cstdio>

#include <rte_log.h>

namespace cna::osal {

RTE_LOG_REGISTER(logtype_ecore, pmd.net.cna.ecore, NOTICE);
RTE_LOG_REGISTER(logtype_adapter, cna.adapter, NOTICE);

namespace {

std::atomic<uint32_t> g_dp_module{0};

uint32_t rte_level(DpLevel level)
{
    switch (level) {
    case DpLevel::err:
        return RTE_LOG_ERR;
    case DpLevel::notice:
        return RTE_LOG_NOTICE;
    case DpLevel::info:
        return RTE_LOG_INFO;
    case DpLevel::verbose:
        break;
    }
    return RTE_LOG_DEBUG;
}

} // namespace

void set_dp_module(uint32_t mask) { g_dp_module.store(mask, std::memory_order_relaxed); }

uint32_t get_dp_module() { return g_dp_module.load(std::memory_order_relaxed); }

void set_dp_level(DpLevel level) { rte_log_set_level(logtype_ecore, rte_level(level)); }

DpLevel get_dp_level()
{
    for (DpLevel level : {DpLevel::verbose, DpLevel::info, DpLevel::notice})
        if (rte_log_can_log(logtype_ecore, rte_level(level)))
            return level;
    return DpLevel::err;
}

bool dp_enabled(DpLevel level, uint32_t module)
{
    if (level == DpLevel::verbose && (get_dp_module() & module) == 0)
        return false;
    return rte_log_can_log(logtype_ecore, rte_level(level));
}

void dp_log(int logtype, DpLevel level, uint32_t module, const char* prefix, const char* func,
            const char* fmt, ...)
{
    if (level == DpLevel::verbose && (get_dp_module() & module) == 0)
        return;
    if (!rte_log_can_log(logtype, rte_level(level)))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    rte_log(rte_level(level), logtype, "%s: %s: %s\n", prefix, func, msg);
}

} // namespace cna::osal
