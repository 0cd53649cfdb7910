/* SPDX-License-Identifier: BSD-3-Clause
 * One end of a reliable connection as the RDMA examples set it up: a
 * buffer and its MR, one CQ for both queues and an RC QP on a device the
 * caller opened; made in that order and taken down in the reverse, the QP
 * moved INIT -> RTR -> RTS towards the peer's address.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "rdma_api.h"

namespace cna::examples {

/* A QP's address as peers exchange it: ibv_rc_pingpong's fields. */
struct RcAddress {
    unsigned lid = 0;
    unsigned qpn = 0;
    unsigned psn = 0;
    ibv_gid gid{};
};

class RcEndpoint {
public:
    /* What the endpoint is made of. */
    struct Shape {
        size_t buf_len;               /* at least this much buffer, all of it registered */
        int access;                   /* the MR's; the QP grants the peer the same, bar LOCAL_WRITE */
        int cqe;
        uint32_t max_send_wr;
        uint32_t max_recv_wr;
        uint32_t max_inline_data;
        long initial_psn;             /* the first PSN sent; -1: random, as ibv_rc_pingpong */
    };
    /* Where the examples' RTR and RTS differ. */
    struct Path {
        ibv_mtu mtu;
        uint8_t max_rd_atomic;        /* READs and atomics outstanding, each way */
        uint8_t min_rnr_timer;
        bool global;                  /* with a GRH, to the peer's GID */
        uint8_t hop_limit;
        uint8_t sgid_index;
    };

    RcEndpoint() = default;
    ~RcEndpoint();
    RcEndpoint(const RcEndpoint&) = delete;
    RcEndpoint& operator=(const RcEndpoint&) = delete;

    /* Takes dev (closed last, whatever follows) and makes the rest: the
     * buffer zeroed, whole pages; the QP in INIT, so receives may be
     * posted before it connects. False (printed) if not. */
    bool create(api::Device* dev, const Shape& shape);
    /* RTR and RTS towards the peer. False (printed) if not. */
    bool connect(const RcAddress& peer, const Path& path);
    /* The port's GID of that index; false (printed) if there is none. */
    bool query_gid(int index, ibv_gid* gid) const;

    api::Device* dev() const { return dev_; }
    uint8_t* buf() const { return buf_; }
    uint32_t lkey() const { return mr_->lkey; }
    uint32_t rkey() const { return mr_->rkey; }
    ibv_cq* cq() const { return cq_; }
    ibv_qp* qp() const { return qp_; }
    unsigned qpn() const { return qp_->qp_num; }
    unsigned psn() const { return psn_; }

private:
    unsigned psn_ = 0;
    api::Device* dev_ = nullptr;
    uint8_t* buf_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_mr* mr_ = nullptr;
    ibv_cq* cq_ = nullptr;
    ibv_qp* qp_ = nullptr;
};

} // namespace cna::examples
