/* SPDX-License-Identifier: BSD-3-Clause */
#include "cna_rdma_log.h"

namespace cna::rdma {

RTE_LOG_REGISTER(logtype_rdma, pmd.rdma.cna, NOTICE);

} // namespace cna::rdma
