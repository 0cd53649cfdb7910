/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/context.h"

#include "function/function.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

uint32_t Context::sq_prod(const Qp& qp) const { return hw.doorbell_word(qp_db_offset(qp.dpi, qp.id)); }
uint32_t Context::rq_prod(const Qp& qp) const { return hw.doorbell_word(qp_db_offset(qp.dpi, qp.id) + 4); }

uint32_t Context::srq_prod(const Srq& srq) const
{
    return hw.doorbell_word(srq_db_offset(srq.dpi, static_cast<uint32_t>(&srq - srqs.data())));
}

} // namespace cna::fw::roce
