/* SPDX-License-Identifier: BSD-3-Clause
 * Logging of the net PMD: rte_log type pmd.net.cna, lines prefixed with the
 * ethdev name so that two ports' messages can be told apart.
 */
#pragma once

#include <rte_log.h>

namespace cna::net {
extern int logtype_pmd;
}

#define PMD_LOG(level, port, fmt, ...)                                                            \
    rte_log(RTE_LOG_##level, ::cna::net::logtype_pmd, "%s: " fmt "\n", (port)->name.c_str(),   \
            ##__VA_ARGS__)

/* The same, for code that serves any net_cna ethdev (a port or a representor). */
#define PMD_DEV_LOG(level, dev, fmt, ...)                                                         \
    rte_log(RTE_LOG_##level, ::cna::net::logtype_pmd, "%s: " fmt "\n", (dev)->data->name, ##__VA_ARGS__)

#define PMD_DRV_LOG(level, fmt, ...)                                                              \
    rte_log(RTE_LOG_##level, ::cna::net::logtype_pmd, "net_cna: " fmt "\n", ##__VA_ARGS__)
