/* SPDX-License-Identifier: BSD-3-Clause
 * CQs, SRQs and QPs: their rings in DMA memory, the device's objects
 * behind them, and the translation of verbs' attributes into ecore's.
 */
#include <bit>
#include <cerrno>
#include <cstring>

#include "cna_rdma_port.h"
#include "cna_rdma_log.h"
#include "cna_rdma_objects.h"

namespace cna::rdma {

namespace {

uint32_t pow2_at_least(uint32_t n, uint32_t min) { return std::bit_ceil(std::max(n, min)); }

/* The shift of the smallest slot of `unit` << shift bytes holding `bytes`. */
uint8_t slot_shift(uint32_t unit, uint32_t bytes)
{
    uint8_t shift = 0;
    while ((unit << shift) < bytes)
        shift++;
    return shift;
}

volatile uint32_t* db_word(Device* dev, uint32_t offset_in_dpi)
{
    return reinterpret_cast<volatile uint32_t*>(dev->user.doorbells + offset_in_dpi);
}

uint16_t path_mtu_bytes(ibv_mtu mtu) { return static_cast<uint16_t>(128u << mtu); }

ibv_mtu ibv_mtu_of(uint32_t bytes)
{
    return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048 : bytes >= 1024 ? IBV_MTU_1024
                                                      : bytes >= 512   ? IBV_MTU_512
                                                                       : IBV_MTU_256;
}

struct AttrName {
    int mask;
    uint32_t ecore;
    const char* name;
};
constexpr AttrName ATTRS[] = {
    {IBV_QP_CUR_STATE, ecore::rdma_qp_attr::CUR_STATE, "IBV_QP_CUR_STATE"},
    {IBV_QP_PKEY_INDEX, ecore::rdma_qp_attr::PKEY_INDEX, "IBV_QP_PKEY_INDEX"},
    {IBV_QP_PORT, ecore::rdma_qp_attr::PORT, "IBV_QP_PORT"},
    {IBV_QP_ACCESS_FLAGS, ecore::rdma_qp_attr::ACCESS, "IBV_QP_ACCESS_FLAGS"},
    {IBV_QP_AV, ecore::rdma_qp_attr::PATH, "IBV_QP_AV"},
    {IBV_QP_PATH_MTU, ecore::rdma_qp_attr::PATH_MTU, "IBV_QP_PATH_MTU"},
    {IBV_QP_DEST_QPN, ecore::rdma_qp_attr::DEST_QPN, "IBV_QP_DEST_QPN"},
    {IBV_QP_RQ_PSN, ecore::rdma_qp_attr::RQ_PSN, "IBV_QP_RQ_PSN"},
    {IBV_QP_SQ_PSN, ecore::rdma_qp_attr::SQ_PSN, "IBV_QP_SQ_PSN"},
    {IBV_QP_TIMEOUT, ecore::rdma_qp_attr::TIMEOUT, "IBV_QP_TIMEOUT"},
    {IBV_QP_RETRY_CNT, ecore::rdma_qp_attr::RETRY_CNT, "IBV_QP_RETRY_CNT"},
    {IBV_QP_RNR_RETRY, ecore::rdma_qp_attr::RNR_RETRY, "IBV_QP_RNR_RETRY"},
    {IBV_QP_MIN_RNR_TIMER, ecore::rdma_qp_attr::MIN_RNR_TIMER, "IBV_QP_MIN_RNR_TIMER"},
    {IBV_QP_MAX_QP_RD_ATOMIC, ecore::rdma_qp_attr::MAX_RD_ATOMIC, "IBV_QP_MAX_QP_RD_ATOMIC"},
    {IBV_QP_MAX_DEST_RD_ATOMIC, ecore::rdma_qp_attr::MAX_DEST_RD_ATOMIC, "IBV_QP_MAX_DEST_RD_ATOMIC"},
    {IBV_QP_EN_SQD_ASYNC_NOTIFY, ecore::rdma_qp_attr::SQD_ASYNC_NOTIFY, "IBV_QP_EN_SQD_ASYNC_NOTIFY"},
    {IBV_QP_QKEY, ecore::rdma_qp_attr::QKEY, "IBV_QP_QKEY"},
};

int fail(Device* dev, int err, const char* why)
{
    RDMA_LOG(ERR, dev, "%s", why);
    return err;
}

} // namespace

} // namespace cna::rdma

using namespace cna;
using namespace cna::rdma;

extern "C" {

/* ---- CQs -------------------------------------------------------------------- */

ibv_cq* cna_rdma_create_cq(cna_rdma_dev* handle, int cqe, void* cq_context, int comp_vector)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    if (cqe < 1 || static_cast<uint32_t>(cqe) >= hsi::rdma::MAX_CQES || comp_vector != 0) {
        RDMA_LOG(ERR, dev, "create_cq: cqe %d (1..%u), comp_vector %d (0)", cqe, hsi::rdma::MAX_CQES - 1,
                 comp_vector);
        errno = EINVAL;
        return nullptr;
    }
    auto cq = std::make_unique<Cq>();
    cq->dev = dev;
    const uint32_t size = pow2_at_least(static_cast<uint32_t>(cqe) + 1, 16);
    if (cq->ring.alloc(size * sizeof(hsi::rdma::RdmaCqe), "rdma_cq") != 0) {
        errno = ENOMEM;
        return nullptr;
    }
    cq->mask = size - 1;
    cq->shift = static_cast<uint32_t>(std::countr_zero(size));
    uint16_t id = 0;
    ecore::RdmaCreateCqParams p{dev->user.dpi, 0, cq->ring.iova(), size};
    ecore::Status st = ecore::rdma_create_cq(*dev->hwfn, p, &id);
    if (st != ecore::Status::success) {
        errno = -ecore::status_to_errno(st);
        return nullptr;
    }
    cq->id = id;
    cq->db_cons = db_word(dev, hsi::rdma::DPI_CQ_SLOTS + id * 8);
    cq->db_arm = db_word(dev, hsi::rdma::DPI_CQ_SLOTS + id * 8 + 4);
    cq->ibv.cq_context = cq_context;
    cq->ibv.cqe = static_cast<int>(size - 1);
    cq->ibv.handle = id;
    dev->cqs[id] = cq.get();
    dev->objects++;
    return &cq.release()->ibv;
}

int cna_rdma_resize_cq(ibv_cq* ibv, int cqe)
{
    auto* cq = reinterpret_cast<Cq*>(ibv);
    Device* dev = cq->dev;
    if (cqe < 1 || static_cast<uint32_t>(cqe) >= hsi::rdma::MAX_CQES)
        return fail(dev, EINVAL, "resize_cq: cqe out of range");
    const uint32_t size = pow2_at_least(static_cast<uint32_t>(cqe) + 1, 16);
    osal::DmaMem ring;
    if (ring.alloc(size * sizeof(hsi::rdma::RdmaCqe), "rdma_cq") != 0)
        return ENOMEM;
    uint32_t written = 0;
    if (ecore::Status st = ecore::rdma_resize_cq(*dev->hwfn, cq->id, ring.iova(), size, &written);
        st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    /* The device went on in the new ring; what the old one holds past the
     * consumer is returned first, and the old ring goes. */
    const auto* old = cq->ring.as<hsi::rdma::RdmaCqe>();
    for (; cq->cons != written; cq->cons++) {
        ibv_wc w{};
        take_cqe(cq, old[(cq->cons - cq->ring_start) & cq->mask], w);
        cq->carried.push_back(w);
    }
    osal::publish(cq->db_cons, cq->cons);
    cq->ring = std::move(ring);
    cq->mask = size - 1;
    cq->shift = static_cast<uint32_t>(std::countr_zero(size));
    cq->ring_start = written;
    cq->ibv.cqe = static_cast<int>(size - 1);
    return 0;
}

int cna_rdma_destroy_cq(ibv_cq* ibv)
{
    auto* cq = reinterpret_cast<Cq*>(ibv);
    Device* dev = cq->dev;
    if (cq->users != 0)
        return fail(dev, EBUSY, "destroy_cq: QPs still complete on it");
    if (ecore::Status st = ecore::rdma_destroy_cq(*dev->hwfn, cq->id); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    {
        std::lock_guard guard(dev->events_lock);
        dev->cqs[cq->id] = nullptr;
        forget_events(dev, &cq->ibv);
    }
    dev->objects--;
    delete cq;
    return 0;
}

/* ---- SRQs ---------------------------------------------------------------------- */

ibv_srq* cna_rdma_create_srq(ibv_pd* ibv_pd, ibv_srq_init_attr* attr)
{
    auto* pd = reinterpret_cast<Pd*>(ibv_pd);
    Device* dev = pd->dev;
    ibv_srq_attr& a = attr->attr;
    if (a.max_wr == 0 || a.max_wr > hsi::rdma::MAX_WQES || a.max_sge > hsi::rdma::MAX_SGE || a.srq_limit > a.max_wr) {
        RDMA_LOG(ERR, dev, "create_srq: max_wr %u (1..%u), max_sge %u (..%u), srq_limit %u", a.max_wr,
                 hsi::rdma::MAX_WQES, a.max_sge, hsi::rdma::MAX_SGE, a.srq_limit);
        errno = EINVAL;
        return nullptr;
    }
    auto srq = std::make_unique<Srq>();
    srq->dev = dev;
    srq->pd = pd;
    const uint32_t size = pow2_at_least(a.max_wr, hsi::rdma::MIN_WQES);
    srq->wqe_shift = slot_shift(hsi::rdma::RQ_WQE_UNIT, sizeof(hsi::rdma::RqWqe) + a.max_sge * sizeof(hsi::rdma::Sge));
    srq->max_sge = a.max_sge;
    if (srq->ring.alloc(std::size_t{size} << (srq->wqe_shift + 4), "rdma_srq") != 0) {
        errno = ENOMEM;
        return nullptr;
    }
    srq->mask = size - 1;
    ecore::RdmaCreateSrqParams p{pd->id, dev->user.dpi, srq->ring.iova(), static_cast<uint16_t>(size), srq->wqe_shift,
                                 static_cast<uint8_t>(a.max_sge), a.srq_limit};
    if (ecore::Status st = ecore::rdma_create_srq(*dev->hwfn, p, &srq->id); st != ecore::Status::success) {
        errno = -ecore::status_to_errno(st);
        return nullptr;
    }
    srq->db = db_word(dev, hsi::rdma::DPI_SRQ_SLOTS + srq->id * 8);
    srq->ibv.srq_context = attr->srq_context;
    srq->ibv.pd = ibv_pd;
    srq->ibv.handle = srq->id;
    a.max_wr = size;
    dev->srqs[srq->id] = srq.get();
    pd->users++;
    dev->objects++;
    return &srq.release()->ibv;
}

int cna_rdma_modify_srq(ibv_srq* ibv, ibv_srq_attr* attr, int attr_mask)
{
    auto* srq = reinterpret_cast<Srq*>(ibv);
    if (attr_mask != IBV_SRQ_LIMIT)
        return fail(srq->dev, EINVAL, "modify_srq: only IBV_SRQ_LIMIT can change");
    if (attr->srq_limit > srq->mask + 1)
        return fail(srq->dev, EINVAL, "modify_srq: srq_limit beyond the ring");
    return -ecore::status_to_errno(ecore::rdma_modify_srq(*srq->dev->hwfn, srq->id, attr->srq_limit));
}

int cna_rdma_destroy_srq(ibv_srq* ibv)
{
    auto* srq = reinterpret_cast<Srq*>(ibv);
    Device* dev = srq->dev;
    if (srq->users != 0)
        return fail(dev, EBUSY, "destroy_srq: QPs still receive from it");
    if (ecore::Status st = ecore::rdma_destroy_srq(*dev->hwfn, srq->id); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    {
        std::lock_guard guard(dev->events_lock);
        dev->srqs[srq->id] = nullptr;
        forget_events(dev, &srq->ibv);
    }
    srq->pd->users--;
    dev->objects--;
    delete srq;
    return 0;
}

/* ---- QPs -------------------------------------------------------------------------- */

namespace {

ibv_qp* create_qp(ibv_pd* ibv_pd, ibv_qp_init_attr* attr, bool gsi)
{
    auto* pd = reinterpret_cast<Pd*>(ibv_pd);
    Device* dev = pd->dev;
    ibv_qp_cap& cap = attr->cap;
    const char* why = attr->send_cq == nullptr || attr->recv_cq == nullptr ? "send_cq and recv_cq are needed"
                      : cap.max_send_wr == 0 || cap.max_send_wr > hsi::rdma::MAX_WQES ? "max_send_wr out of range"
                      : !attr->srq && (cap.max_recv_wr == 0 || cap.max_recv_wr > hsi::rdma::MAX_WQES)
                          ? "max_recv_wr out of range"
                      : cap.max_send_sge > hsi::rdma::MAX_SGE || cap.max_recv_sge > hsi::rdma::MAX_SGE
                          ? "max_send_sge/max_recv_sge above the device's"
                      : cap.max_inline_data > hsi::rdma::MAX_INLINE ? "max_inline_data above the device's"
                                                                    : nullptr;
    if (why != nullptr) {
        RDMA_LOG(ERR, dev, "create_qp: %s", why);
        errno = EINVAL;
        return nullptr;
    }
    auto qp = std::make_unique<Qp>();
    qp->dev = dev;
    qp->pd = pd;
    qp->send_cq = reinterpret_cast<Cq*>(attr->send_cq);
    qp->recv_cq = reinterpret_cast<Cq*>(attr->recv_cq);
    qp->srq = reinterpret_cast<Srq*>(attr->srq);
    qp->ud = attr->qp_type == IBV_QPT_UD;
    qp->sq_sig_all = attr->sq_sig_all != 0;
    qp->max_send_sge = std::max(cap.max_send_sge, 1u);
    qp->max_recv_sge = std::max(cap.max_recv_sge, 1u);
    const uint32_t sq_size = pow2_at_least(cap.max_send_wr, hsi::rdma::MIN_WQES);
    const uint32_t rq_size = qp->srq ? 0 : pow2_at_least(cap.max_recv_wr, hsi::rdma::MIN_WQES);
    qp->sq_data = sizeof(hsi::rdma::SqWqe) + (qp->ud ? sizeof(hsi::rdma::UdAddress) : 0);
    qp->sq_shift = slot_shift(hsi::rdma::SQ_WQE_UNIT,
                              qp->sq_data + std::max<uint32_t>(qp->max_send_sge * sizeof(hsi::rdma::Sge), cap.max_inline_data));
    /* Inline data may fill the slot, as on hardware: 16 bytes fit whatever
     * max_inline_data asked (rdma_xclient asks none and sends inline). */
    qp->max_inline = std::min<uint32_t>(hsi::rdma::MAX_INLINE, (1u << (qp->sq_shift + 6)) - qp->sq_data);
    qp->rq_shift = slot_shift(hsi::rdma::RQ_WQE_UNIT, sizeof(hsi::rdma::RqWqe) + qp->max_recv_sge * sizeof(hsi::rdma::Sge));
    if (qp->sq.alloc(std::size_t{sq_size} << (qp->sq_shift + 6), "rdma_sq") != 0 ||
        (rq_size != 0 && qp->rq.alloc(std::size_t{rq_size} << (qp->rq_shift + 4), "rdma_rq") != 0)) {
        errno = ENOMEM;
        return nullptr;
    }
    qp->sq_mask = sq_size - 1;
    qp->rq_mask = rq_size == 0 ? 0 : rq_size - 1;

    ecore::RdmaCreateQpParams p;
    p.type = gsi ? ecore::RdmaQpType::gsi : qp->ud ? ecore::RdmaQpType::ud : ecore::RdmaQpType::rc;
    p.pd = pd->id;
    p.dpi = dev->user.dpi;
    p.sq_cq = qp->send_cq->id;
    p.rq_cq = qp->recv_cq->id;
    if (qp->srq)
        p.srq = qp->srq->id;
    p.sq_iova = qp->sq.iova();
    p.rq_iova = qp->rq ? qp->rq.iova() : 0;
    p.sq_size = static_cast<uint16_t>(sq_size);
    p.rq_size = static_cast<uint16_t>(rq_size);
    p.sq_wqe_shift = qp->sq_shift;
    p.rq_wqe_shift = qp->rq_shift;
    p.max_send_sge = static_cast<uint8_t>(qp->max_send_sge);
    p.max_recv_sge = static_cast<uint8_t>(qp->max_recv_sge);
    p.max_inline = static_cast<uint16_t>(qp->max_inline);
    p.signal_all = qp->sq_sig_all;
    uint32_t qpn = 0;
    if (ecore::Status st = ecore::rdma_create_qp(*dev->hwfn, p, &qp->id, &qpn); st != ecore::Status::success) {
        errno = -ecore::status_to_errno(st);
        return nullptr;
    }
    qp->sq_db = db_word(dev, hsi::rdma::DPI_QP_SLOTS + qp->id * 8);
    qp->rq_db = db_word(dev, hsi::rdma::DPI_QP_SLOTS + qp->id * 8 + 4);
    qp->ibv.qp_context = attr->qp_context;
    qp->ibv.pd = ibv_pd;
    qp->ibv.send_cq = attr->send_cq;
    qp->ibv.recv_cq = attr->recv_cq;
    qp->ibv.srq = attr->srq;
    qp->ibv.handle = qp->id;
    qp->ibv.qp_num = gsi ? hsi::rdma::GSI_QPN : qpn;
    qp->ibv.state = IBV_QPS_RESET;
    qp->ibv.qp_type = attr->qp_type;
    cap.max_send_wr = sq_size;
    cap.max_recv_wr = rq_size;
    cap.max_send_sge = qp->max_send_sge;
    cap.max_recv_sge = qp->max_recv_sge;
    cap.max_inline_data = qp->max_inline;
    qp->send_cq->users++;
    qp->recv_cq->users++;
    if (qp->srq)
        qp->srq->users++;
    pd->users++;
    {
        std::lock_guard guard(dev->events_lock);
        dev->qps[qp->id] = qp.get();
    }
    dev->objects++;
    return &qp.release()->ibv;
}

} // namespace

ibv_qp* cna_rdma_create_qp(ibv_pd* ibv_pd, ibv_qp_init_attr* attr)
{
    if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD) {
        /* A type the device does not have, as verbs say it. */
        RDMA_LOG(ERR, reinterpret_cast<Pd*>(ibv_pd)->dev, "create_qp: RC and UD QPs only, not type %d",
                 static_cast<int>(attr->qp_type));
        errno = EOPNOTSUPP;
        return nullptr;
    }
    return create_qp(ibv_pd, attr, false);
}

ibv_qp* cna_rdma_create_gsi_qp(ibv_pd* ibv_pd, ibv_qp_init_attr* attr)
{
    if (attr->qp_type != IBV_QPT_UD) {
        RDMA_LOG(ERR, reinterpret_cast<Pd*>(ibv_pd)->dev, "create_gsi_qp: the GSI QP is a UD QP, not type %d",
                 static_cast<int>(attr->qp_type));
        errno = EINVAL;
        return nullptr;
    }
    return create_qp(ibv_pd, attr, true);
}

int cna_rdma_modify_qp(ibv_qp* ibv, ibv_qp_attr* attr, int attr_mask)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    Device* dev = qp->dev;
    /* Without IBV_QP_STATE the QP stays where it is and takes what that
     * state allows (RTS to RTS: min_rnr_timer, access flags). */
    const ibv_qp_state to = attr_mask & IBV_QP_STATE ? attr->qp_state : qp->state.load(std::memory_order_relaxed);
    ecore::RdmaModifyQpParams p;
    int unknown = attr_mask & ~IBV_QP_STATE;
    for (const AttrName& a : ATTRS) {
        if (attr_mask & a.mask) {
            p.modify_flags |= a.ecore;
            unknown &= ~a.mask;
        }
    }
    if (unknown != 0) {
        RDMA_LOG(ERR, dev, "modify_qp: attribute mask 0x%x is not supported (alternate paths, path migration, "
                           "capabilities, rate limit)", unknown);
        return EINVAL;
    }
    p.new_state = static_cast<ecore::RdmaQpState>(to);
    p.cur_state = static_cast<ecore::RdmaQpState>(attr->cur_qp_state);
    p.access = static_cast<uint8_t>((attr->qp_access_flags & IBV_ACCESS_REMOTE_WRITE ? hsi::rdma::access::REMOTE_WRITE : 0) |
                                    (attr->qp_access_flags & IBV_ACCESS_REMOTE_READ ? hsi::rdma::access::REMOTE_READ : 0) |
                                    (attr->qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC ? hsi::rdma::access::REMOTE_ATOMIC : 0));
    p.pkey_index = attr->pkey_index;
    p.port = attr->port_num;
    if ((attr_mask & IBV_QP_AV) && !qp->ud) {
        if (int rc = roce_path(dev, attr->ah_attr, qp->id, "modify_qp: IBV_QP_AV", &p.path); rc != 0)
            return rc;
    }
    if (attr_mask & IBV_QP_PATH_MTU) {
        if (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096)
            return fail(dev, EINVAL, "modify_qp: IBV_QP_PATH_MTU out of range");
        p.path_mtu = path_mtu_bytes(attr->path_mtu);
    }
    p.dest_qpn = attr->dest_qp_num;
    p.rq_psn = attr->rq_psn;
    p.sq_psn = attr->sq_psn;
    p.timeout = attr->timeout;
    p.retry_cnt = attr->retry_cnt;
    p.rnr_retry = attr->rnr_retry;
    p.min_rnr_timer = attr->min_rnr_timer;
    p.max_rd_atomic = attr->max_rd_atomic;
    p.max_dest_rd_atomic = attr->max_dest_rd_atomic;
    p.sqd_async_notify = attr->en_sqd_async_notify != 0;
    p.qkey = attr->qkey;
    if ((attr_mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > hsi::rdma::MAX_RD_ATOMIC)
        return fail(dev, EINVAL, "modify_qp: IBV_QP_MAX_QP_RD_ATOMIC above the device's");
    if ((attr_mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr->max_dest_rd_atomic > hsi::rdma::MAX_RD_ATOMIC)
        return fail(dev, EINVAL, "modify_qp: IBV_QP_MAX_DEST_RD_ATOMIC above the device's");
    if (ecore::Status st = ecore::rdma_modify_qp(*dev->hwfn, qp->id, p); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    if (attr_mask & IBV_QP_AV)
        qp->ah = attr->ah_attr;
    if (to == IBV_QPS_RESET) {
        /* The rings are empty again: the device forgot them too. */
        qp->sq_prod = qp->rq_prod = 0;
        qp->sq_cons.store(0, std::memory_order_relaxed);
        qp->rq_cons.store(0, std::memory_order_relaxed);
    }
    qp->state.store(to, std::memory_order_release);
    qp->ibv.state = to;
    return 0;
}

int cna_rdma_query_qp(ibv_qp* ibv, ibv_qp_attr* attr, int, ibv_qp_init_attr* init)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    ecore::RdmaQueryQpOut q;
    if (ecore::Status st = ecore::rdma_query_qp(*qp->dev->hwfn, qp->id, &q); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    *attr = ibv_qp_attr{};
    attr->qp_state = static_cast<ibv_qp_state>(q.state);
    attr->cur_qp_state = attr->qp_state;
    attr->path_mtu = ibv_mtu_of(q.path_mtu);
    attr->path_mig_state = IBV_MIG_MIGRATED;
    attr->rq_psn = q.rq_psn;
    attr->sq_psn = q.sq_psn;
    attr->dest_qp_num = q.dest_qpn;
    attr->qp_access_flags = (q.access & hsi::rdma::access::REMOTE_WRITE ? IBV_ACCESS_REMOTE_WRITE : 0) |
                            (q.access & hsi::rdma::access::REMOTE_READ ? IBV_ACCESS_REMOTE_READ : 0) |
                            (q.access & hsi::rdma::access::REMOTE_ATOMIC ? IBV_ACCESS_REMOTE_ATOMIC : 0);
    attr->cap.max_send_wr = qp->sq_mask + 1;
    attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq_mask + 1;
    attr->cap.max_send_sge = qp->max_send_sge;
    attr->cap.max_recv_sge = qp->max_recv_sge;
    attr->cap.max_inline_data = qp->max_inline;
    attr->ah_attr = qp->ah;
    attr->max_rd_atomic = q.max_rd_atomic;
    attr->max_dest_rd_atomic = q.max_dest_rd_atomic;
    attr->min_rnr_timer = q.min_rnr_timer;
    attr->port_num = 1;
    attr->timeout = q.timeout;
    attr->retry_cnt = q.retry_cnt;
    attr->rnr_retry = q.rnr_retry;
    attr->qkey = q.qkey;
    qp->state.store(attr->qp_state, std::memory_order_relaxed);
    qp->ibv.state = attr->qp_state;
    if (init != nullptr) {
        *init = ibv_qp_init_attr{};
        init->qp_context = qp->ibv.qp_context;
        init->send_cq = qp->ibv.send_cq;
        init->recv_cq = qp->ibv.recv_cq;
        init->srq = qp->ibv.srq;
        init->cap = attr->cap;
        init->qp_type = qp->ibv.qp_type;
        init->sq_sig_all = qp->sq_sig_all;
    }
    return 0;
}

int cna_rdma_query_qp_counters(ibv_qp* ibv, cna_rdma_qp_counters* counters)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    ecore::RdmaQueryQpOut q;
    if (ecore::Status st = ecore::rdma_query_qp(*qp->dev->hwfn, qp->id, &q); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    const hsi::rdma::RoceRequesterContext& rq = q.requester;
    const hsi::rdma::RoceResponderContext& rs = q.responder;
    *counters = cna_rdma_qp_counters{
        .packets_sent = rq.packets_sent,
        .retransmitted = rq.retransmitted,
        .timeouts = rq.timeouts,
        .naks_received = rq.naks_received,
        .rnr_naks_received = rq.rnr_naks_received,
        .packets_received = rs.packets_received,
        .duplicates = rs.duplicates,
        .out_of_sequence = rs.out_of_sequence,
        .naks_sent = rs.naks_sent,
        .rnr_naks_sent = rs.rnr_naks_sent,
    };
    return 0;
}

int cna_rdma_destroy_qp(ibv_qp* ibv)
{
    auto* qp = reinterpret_cast<Qp*>(ibv);
    Device* dev = qp->dev;
    if (ecore::Status st = ecore::rdma_destroy_qp(*dev->hwfn, qp->id); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    {
        std::lock_guard guard(dev->events_lock);
        dev->qps[qp->id] = nullptr;
        forget_events(dev, &qp->ibv);
    }
    qp->send_cq->users--;
    qp->recv_cq->users--;
    if (qp->srq)
        qp->srq->users--;
    qp->pd->users--;
    dev->objects--;
    delete qp;
    return 0;
}

} // extern "C"
