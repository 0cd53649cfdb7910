/* SPDX-License-Identifier: BSD-3-Clause
 * The attributes each QP state transition needs (the InfiniBand "modify
 * QP" rules for reliable connections and for unreliable datagrams): which
 * must come with it and which may. The transitions themselves are the device's (hsi::rdma::
 * qp_transition_allowed); this is what ecore checks before it asks.
 */
#pragma once

#include <cstdint>

#include "hsi_rdma.h"

namespace cna::ecore {

using RdmaQpState = hsi::rdma::QpState;
using RdmaQpType = hsi::rdma::QpType;

/* RdmaModifyQpParams::modify_flags: the attributes a modify carries. */
namespace rdma_qp_attr {
inline constexpr uint32_t CUR_STATE = 1u << 0;
inline constexpr uint32_t PKEY_INDEX = 1u << 1;
inline constexpr uint32_t PORT = 1u << 2;
inline constexpr uint32_t ACCESS = 1u << 3;
inline constexpr uint32_t PATH = 1u << 4;  /* destination GID, source GID index, hop limit, TC, flow label */
inline constexpr uint32_t PATH_MTU = 1u << 5;
inline constexpr uint32_t DEST_QPN = 1u << 6;
inline constexpr uint32_t RQ_PSN = 1u << 7;
inline constexpr uint32_t SQ_PSN = 1u << 8;
inline constexpr uint32_t TIMEOUT = 1u << 9;
inline constexpr uint32_t RETRY_CNT = 1u << 10;
inline constexpr uint32_t RNR_RETRY = 1u << 11;
inline constexpr uint32_t MIN_RNR_TIMER = 1u << 12;
inline constexpr uint32_t MAX_RD_ATOMIC = 1u << 13;
inline constexpr uint32_t MAX_DEST_RD_ATOMIC = 1u << 14;
inline constexpr uint32_t SQD_ASYNC_NOTIFY = 1u << 15;
inline constexpr uint32_t QKEY = 1u << 16;
inline constexpr uint32_t COUNT = 17;
} // namespace rdma_qp_attr

struct RdmaQpTransitionCheck {
    bool allowed = false;   /* the state change itself */
    uint32_t missing = 0;   /* required attributes not given */
    uint32_t unexpected = 0;/* attributes the transition does not take */
    bool ok() const { return allowed && missing == 0 && unexpected == 0; }
};

RdmaQpTransitionCheck rdma_qp_check_transition(RdmaQpType type, RdmaQpState from, RdmaQpState to, uint32_t attrs);

const char* rdma_qp_state_name(RdmaQpState state);
/* The name of one rdma_qp_attr bit (the lowest set, if several). */
const char* rdma_qp_attr_name(uint32_t attr);

} // namespace cna::ecore
