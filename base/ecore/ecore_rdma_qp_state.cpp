/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_rdma_qp_state.h"

#include <bit>

namespace cna::ecore {

namespace {

using enum RdmaQpState;
using namespace rdma_qp_attr;

struct Rule {
    uint32_t required;
    uint32_t optional;
};

/* Path migration and alternate paths are out of scope, so their attributes
 * do not appear. Transitions to RESET and ERR take nothing. */
Rule rc_rule(RdmaQpState from, RdmaQpState to)
{
    if (to == reset || to == err)
        return {0, 0};
    switch (from) {
    case reset: return {PKEY_INDEX | PORT | ACCESS, 0};
    case init:
        if (to == init)
            return {0, PKEY_INDEX | PORT | ACCESS};
        return {PATH | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER, PKEY_INDEX | ACCESS};
    case rtr: return {SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_RD_ATOMIC, CUR_STATE | ACCESS | MIN_RNR_TIMER};
    case rts:
        if (to == sqd)
            return {0, SQD_ASYNC_NOTIFY};
        return {0, CUR_STATE | ACCESS | MIN_RNR_TIMER};
    case sqd:
        if (to == rts)
            return {0, CUR_STATE | ACCESS | MIN_RNR_TIMER};
        return {0, PKEY_INDEX | PORT | PATH | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_RD_ATOMIC | MAX_DEST_RD_ATOMIC |
                       ACCESS | MIN_RNR_TIMER};
    case sqe: return {0, CUR_STATE | ACCESS};
    case err: break;
    }
    return {0, 0};
}

/* A datagram's path comes with each send: a UD QP has a Q_Key instead. */
Rule ud_rule(RdmaQpState from, RdmaQpState to)
{
    if (to == reset || to == err)
        return {0, 0};
    switch (from) {
    case reset: return {PKEY_INDEX | PORT | QKEY, 0};
    case init: return to == init ? Rule{0, PKEY_INDEX | PORT | QKEY} : Rule{0, PKEY_INDEX | QKEY};
    case rtr: return {SQ_PSN, CUR_STATE | QKEY};
    case rts: return to == sqd ? Rule{0, SQD_ASYNC_NOTIFY} : Rule{0, CUR_STATE | QKEY};
    case sqd: return to == rts ? Rule{0, CUR_STATE | QKEY} : Rule{0, PKEY_INDEX | QKEY};
    case sqe: return {0, CUR_STATE | QKEY};
    case err: break;
    }
    return {0, 0};
}

} // namespace

RdmaQpTransitionCheck rdma_qp_check_transition(RdmaQpType type, RdmaQpState from, RdmaQpState to, uint32_t attrs)
{
    RdmaQpTransitionCheck c;
    c.allowed = hsi::rdma::qp_transition_allowed(from, to);
    if (!c.allowed)
        return c;
    const Rule r = hsi::rdma::is_datagram(type) ? ud_rule(from, to) : rc_rule(from, to);
    c.missing = r.required & ~attrs;
    c.unexpected = attrs & ~(r.required | r.optional);
    return c;
}

const char* rdma_qp_state_name(RdmaQpState state)
{
    static constexpr const char* names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    auto i = static_cast<uint32_t>(state);
    return i < hsi::rdma::QP_STATES ? names[i] : "invalid";
}

const char* rdma_qp_attr_name(uint32_t attr)
{
    static constexpr const char* names[COUNT] = {
        "cur_qp_state", "pkey_index", "port_num", "qp_access_flags", "ah_attr (path)", "path_mtu",
        "dest_qp_num",  "rq_psn",     "sq_psn",   "timeout",         "retry_cnt",      "rnr_retry",
        "min_rnr_timer", "max_rd_atomic", "max_dest_rd_atomic", "en_sqd_async_notify", "qkey"};
    if (attr == 0)
        return "none";
    auto bit = static_cast<uint32_t>(std::countr_zero(attr));
    return bit < COUNT ? names[bit] : "unknown";
}

} // namespace cna::ecore
