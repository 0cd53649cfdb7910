/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL logging: the ecore guide's DP_LEVEL/DP_MODULE print scheme on rte_log.
 *
 * Each component logs to its own rte_log type; the urgency levels of the
 * guide (error, notice, info, verbose) map onto rte_log levels, and verbose
 * prints are further filtered by a DP_MODULE bit mask, settable at runtime, so
 * one flow (say the SPQ) can be traced without drowning in the others.
 */
#pragma once

#include <cstdarg>
#include <cstdint>

namespace cna::osal {

/* rte_log types registered by the OSAL. */
extern int logtype_ecore;   /* pmd.net.cna.ecore */
extern int logtype_adapter; /* cna.adapter: lines of the embedded adapter */

/* Guide urgency levels, most urgent first. */
enum class DpLevel : uint32_t { err, notice, info, verbose };

/* DP_MODULE bits: which flows verbose prints are shown for. */
namespace dp_module {
inline constexpr uint32_t HW = 1u << 0;    /* register access, PTTs */
inline constexpr uint32_t INIT = 1u << 1;  /* hw_prepare/hw_init/init tool */
inline constexpr uint32_t INTR = 1u << 2;  /* status blocks, IGU, DPC */
inline constexpr uint32_t MCP = 1u << 3;   /* MFW mailbox, link */
inline constexpr uint32_t SPQ = 1u << 4;   /* ramrods, event queue */
inline constexpr uint32_t L2 = 1u << 5;    /* vports, queues, filters */
inline constexpr uint32_t ILT = 1u << 6;   /* context memory */
inline constexpr uint32_t IOMMU = 1u << 7; /* DMA mappings */
inline constexpr uint32_t RDMA = 1u << 8;  /* RDMA objects and events */
inline constexpr uint32_t ALL = 0xffffffff;
} // namespace dp_module

/* The mask verbose prints are filtered with (default: none). */
void set_dp_module(uint32_t mask);
uint32_t get_dp_module();

/* Sets the rte_log level of logtype_ecore from a guide level. */
void set_dp_level(DpLevel level);
/* The guide level logtype_ecore is at (EAL's --log-level=pmd.net.cna.ecore:...). */
DpLevel get_dp_level();

/* Whether a print of this level (and module, for verbose) would be emitted:
 * callers use it to skip formatting work. */
bool dp_enabled(DpLevel level, uint32_t module);

/* One log line on `logtype`: "<prefix>: <func>: <message>". */
void dp_log(int logtype, DpLevel level, uint32_t module, const char* prefix, const char* func,
            const char* fmt, ...) __attribute__((format(printf, 6, 7)));

} // namespace cna::osal
