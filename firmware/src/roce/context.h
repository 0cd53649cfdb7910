/* SPDX-License-Identifier: BSD-3-Clause
 * What the RoCE engines of one function share: its hardware (DMA and the
 * doorbells the driver rings), its counters, and the RDMA
 * objects the ramrods create (CNQs, CQs, SRQs, QPs, memory regions), which
 * the requester, the responder and the completer all work on. The RoCE
 * storm owns it and runs the ramrods on it; the engines take it by
 * reference and keep only what they alone use.
 */
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hsi_rdma.h"
#include "roce/mr_table.h"
#include "roce/objects.h"

namespace cna::fw {
class FunctionHw;
}

namespace cna::fw::roce {

struct Context {
    Context(FunctionHw& hw_, hsi::rdma::RoceStats& stats_) : hw(hw_), stats(stats_) {}

    FunctionHw& hw;
    hsi::rdma::RoceStats& stats;   /* the function's counters */
    std::array<Cnq, hsi::rdma::MAX_CNQS> cnqs{};
    std::vector<Cq> cqs;
    std::vector<Srq> srqs;
    std::vector<Qp> qps;
    MrTable mrs;

    /* The producers as the driver last rang them. */
    uint32_t sq_prod(const Qp& qp) const;
    uint32_t rq_prod(const Qp& qp) const;
    uint32_t srq_prod(const Srq& srq) const;
};

} // namespace cna::fw::roce
