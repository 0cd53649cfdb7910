/* SPDX-License-Identifier: BSD-3-Clause */
#include "rc_endpoint.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cna::examples {

bool RcEndpoint::create(api::Device* dev, const Shape& shape)
{
    dev_ = dev;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t len = (shape.buf_len + page - 1) / page * page;
    buf_ = static_cast<uint8_t*>(std::aligned_alloc(page, len));
    if (buf_ == nullptr)
        return false;
    std::memset(buf_, 0, len);
    pd_ = api::alloc_pd(dev_);
    mr_ = pd_ ? api::reg_mr(pd_, buf_, len, shape.access) : nullptr;
    cq_ = mr_ ? api::create_cq(dev_, shape.cqe) : nullptr;
    if (cq_ == nullptr) {
        std::fprintf(stderr, "Couldn't create the PD, MR or CQ: %s\n", std::strerror(errno));
        return false;
    }
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq_;
    init.cap.max_send_wr = shape.max_send_wr;
    init.cap.max_recv_wr = shape.max_recv_wr;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.cap.max_inline_data = shape.max_inline_data;
    init.qp_type = IBV_QPT_RC;
    qp_ = api::create_qp(pd_, &init);
    if (qp_ == nullptr) {
        std::fprintf(stderr, "Couldn't create QP: %s\n", std::strerror(errno));
        return false;
    }
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qp_access_flags = shape.access & ~IBV_ACCESS_LOCAL_WRITE;
    if (api::modify_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
        std::fprintf(stderr, "Failed to modify QP to INIT\n");
        return false;
    }
    psn_ = static_cast<unsigned>((shape.initial_psn >= 0 ? shape.initial_psn : lrand48()) & 0xffffff);
    return true;
}

bool RcEndpoint::connect(const RcAddress& peer, const Path& path)
{
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = path.mtu;
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = peer.psn;
    attr.ah_attr.dlid = static_cast<uint16_t>(peer.lid);
    attr.ah_attr.port_num = 1;
    if (path.global) {
        attr.ah_attr.is_global = 1;
        attr.ah_attr.grh.dgid = peer.gid;
        attr.ah_attr.grh.sgid_index = path.sgid_index;
        attr.ah_attr.grh.hop_limit = path.hop_limit;
    }
    attr.max_dest_rd_atomic = path.max_rd_atomic;
    attr.min_rnr_timer = path.min_rnr_timer;
    if (api::modify_qp(qp_, &attr,
                       IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
        std::fprintf(stderr, "Failed to modify QP to RTR: %s\n", std::strerror(errno));
        return false;
    }
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = 14;
    attr.retry_cnt = 7;
    attr.rnr_retry = 7;
    attr.sq_psn = psn_;
    attr.max_rd_atomic = path.max_rd_atomic;
    if (api::modify_qp(qp_, &attr,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                           IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        std::fprintf(stderr, "Failed to modify QP to RTS: %s\n", std::strerror(errno));
        return false;
    }
    return true;
}

bool RcEndpoint::query_gid(int index, ibv_gid* gid) const
{
    if (api::query_gid(dev_, index, gid) == 0)
        return true;
    std::fprintf(stderr, "can't read sgid of index %d\n", index);
    return false;
}

RcEndpoint::~RcEndpoint()
{
    if (qp_ != nullptr)
        api::destroy_qp(qp_);
    if (cq_ != nullptr)
        api::destroy_cq(cq_);
    if (mr_ != nullptr)
        api::dereg_mr(mr_);
    if (pd_ != nullptr)
        api::dealloc_pd(pd_);
    if (dev_ != nullptr)
        api::close(dev_);
    std::free(buf_);
}

} // namespace cna::examples
