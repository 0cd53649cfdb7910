/* SPDX-License-Identifier: BSD-3-Clause
 * Logging of the RDMA PMD: rte_log type pmd.rdma.cna, lines prefixed with
 * the ethdev port whose RDMA device speaks.
 */
#pragma once

#include <rte_log.h>

namespace cna::rdma {
extern int logtype_rdma;
}

#define RDMA_LOG_PORT(level, port_id, fmt, ...)                                                    \
    rte_log(RTE_LOG_##level, ::cna::rdma::logtype_rdma, "cna_rdma port %u: " fmt "\n",           \
            static_cast<unsigned>(port_id), ##__VA_ARGS__)

#define RDMA_LOG(level, dev, fmt, ...) RDMA_LOG_PORT(level, (dev)->port_id, fmt, ##__VA_ARGS__)
