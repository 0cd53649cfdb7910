/* SPDX-License-Identifier: BSD-3-Clause
 * The verbs of a cna context, each the RDMA PMD's own call on the PMD's
 * object behind the provider's: PDs, MRs, CQs, SRQs and RC QPs, and the
 * fastpath (post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq),
 * which adds one call to the PMD's and nothing else.
 *
 * The provider fills what a kernel provider's ibv_cmd_* calls fill, and
 * destroy waits, as the kernel does, until the application acknowledged
 * every event reported for the object.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_provider.h"

static void *fail_null(int err)
{
    errno = err;
    return NULL;
}

/* An object's async events still unread in its context's pipe, taken back
 * at its destroy (dev->events held). */
static void take_back_async(struct ibv_context *context, const void *object, uint32_t *reported)
{
    cna_take_back_unread(&to_cna_context(context)->async_events, sizeof(struct ib_uverbs_async_event_desc), object,
                         reported);
}

/* ---- Protection domains ------------------------------------------------------ */

static struct ibv_pd *cna_alloc_pd(struct ibv_context *context)
{
    struct cna_device *dev = device_of(context);
    struct cna_pd *pd = calloc(1, sizeof(*pd));
    if (pd == NULL)
        return fail_null(ENOMEM);
    pthread_mutex_lock(&dev->control);
    pd->pmd = cna_rdma_alloc_pd(dev->rdma);
    if (pd->pmd != NULL)
        list_add_tail(&to_cna_context(context)->pds, &pd->entry);
    pthread_mutex_unlock(&dev->control);
    if (pd->pmd == NULL) {
        int err = errno;
        free(pd);
        return fail_null(err);
    }
    pd->ibv_pd.handle = pd->pmd->handle;
    return &pd->ibv_pd;
}

static int unlink_pd(struct cna_pd *pd)
{
    int rc = cna_rdma_dealloc_pd(pd->pmd);
    if (rc == 0)
        list_del(&pd->entry);
    return rc;
}

static int cna_dealloc_pd(struct ibv_pd *ibpd)
{
    struct cna_pd *pd = to_cna_pd(ibpd);
    struct cna_device *dev = device_of(ibpd->context);
    pthread_mutex_lock(&dev->control);
    int rc = dev->gone ? 0 : unlink_pd(pd);
    pthread_mutex_unlock(&dev->control);
    if (rc == 0)
        free(pd);
    return rc;
}

/* ---- Memory regions ---------------------------------------------------------- */

static struct ibv_mr *cna_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t hca_va, int access)
{
    /* The device addresses a region at the application's own addresses. */
    if (hca_va != (uintptr_t)addr)
        return fail_null(EOPNOTSUPP);
    struct cna_device *dev = device_of(ibpd->context);
    struct cna_mr *mr = calloc(1, sizeof(*mr));
    if (mr == NULL)
        return fail_null(ENOMEM);
    pthread_mutex_lock(&dev->control);
    mr->pmd = cna_rdma_reg_mr(to_cna_pd(ibpd)->pmd, addr, length, access);
    if (mr->pmd != NULL)
        list_add_tail(&to_cna_context(ibpd->context)->mrs, &mr->entry);
    pthread_mutex_unlock(&dev->control);
    if (mr->pmd == NULL) {
        int err = errno;
        free(mr);
        return fail_null(err);
    }
    mr->vmr.ibv_mr.handle = mr->pmd->handle;
    mr->vmr.ibv_mr.lkey = mr->pmd->lkey;
    mr->vmr.ibv_mr.rkey = mr->pmd->rkey;
    mr->vmr.mr_type = IBV_MR_TYPE_MR;
    mr->vmr.access = access;
    return &mr->vmr.ibv_mr;
}

static int unlink_mr(struct cna_mr *mr)
{
    int rc = cna_rdma_dereg_mr(mr->pmd);
    if (rc == 0)
        list_del(&mr->entry);
    return rc;
}

static int cna_dereg_mr(struct verbs_mr *vmr)
{
    struct cna_mr *mr = to_cna_mr(vmr);
    struct cna_device *dev = device_of(vmr->ibv_mr.context);
    pthread_mutex_lock(&dev->control);
    int rc = dev->gone ? 0 : unlink_mr(mr);
    pthread_mutex_unlock(&dev->control);
    if (rc == 0)
        free(mr);
    return rc;
}

/* ---- Completion queues -------------------------------------------------------- */

static struct ibv_cq *cna_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
                                    int comp_vector)
{
    if (channel != NULL && channel->context != context)
        return fail_null(EINVAL);
    struct cna_device *dev = device_of(context);
    struct cna_cq *cq = calloc(1, sizeof(*cq));
    if (cq == NULL)
        return fail_null(ENOMEM);
    cq->channel = channel != NULL ? container_of(channel, struct cna_comp_channel, ibv) : NULL;
    pthread_mutex_lock(&dev->control);
    cq->pmd = cna_rdma_create_cq(dev->rdma, cqe, cq, comp_vector);
    if (cq->pmd != NULL)
        list_add_tail(&to_cna_context(context)->cqs, &cq->entry);
    pthread_mutex_unlock(&dev->control);
    if (cq->pmd == NULL) {
        int err = errno;
        free(cq);
        return fail_null(err);
    }
    cq->vcq.cq.cqe = cq->pmd->cqe;
    cq->vcq.cq.handle = cq->pmd->handle;
    return &cq->vcq.cq;
}

static int unlink_cq(struct cna_cq *cq)
{
    int rc = cna_rdma_destroy_cq(cq->pmd);
    if (rc == 0)
        list_del(&cq->entry);
    return rc;
}

static int cna_resize_cq(struct ibv_cq *ibcq, int cqe)
{
    struct cna_device *dev = device_of(ibcq->context);
    struct ibv_cq *pmd = to_cna_cq(ibcq)->pmd;
    pthread_mutex_lock(&dev->control);
    int rc = cna_rdma_resize_cq(pmd, cqe);
    if (rc == 0)
        ibcq->cqe = pmd->cqe;
    pthread_mutex_unlock(&dev->control);
    return rc;
}

static int cna_destroy_cq(struct ibv_cq *ibcq)
{
    struct cna_cq *cq = to_cna_cq(ibcq);
    struct cna_device *dev = device_of(ibcq->context);
    pthread_mutex_lock(&dev->control);
    if (dev->gone) {
        pthread_mutex_unlock(&dev->control);
        free(cq);
        return 0;
    }
    pthread_mutex_lock(&dev->events);
    int rc = unlink_cq(cq);
    if (rc == 0) {
        if (cq->channel != NULL)
            cna_take_back_unread(&cq->channel->pipe, sizeof(uint64_t), ibcq, &cq->comp_events_reported);
        take_back_async(ibcq->context, ibcq, &cq->async_events_reported);
    }
    const uint32_t comp = cq->comp_events_reported, async = cq->async_events_reported;
    pthread_mutex_unlock(&dev->events);
    pthread_mutex_unlock(&dev->control);
    if (rc != 0)
        return rc;
    cna_wait_events_acked(&ibcq->mutex, &ibcq->cond, &ibcq->comp_events_completed, comp);
    cna_wait_events_acked(&ibcq->mutex, &ibcq->cond, &ibcq->async_events_completed, async);
    free(cq);
    return 0;
}

/* ---- Shared receive queues ------------------------------------------------------ */

static struct ibv_srq *cna_create_srq(struct ibv_pd *ibpd, struct ibv_srq_init_attr *attr)
{
    struct cna_device *dev = device_of(ibpd->context);
    struct cna_srq *srq = calloc(1, sizeof(*srq));
    if (srq == NULL)
        return fail_null(ENOMEM);
    struct ibv_srq_init_attr pmd_attr = *attr;
    pmd_attr.srq_context = srq;
    pthread_mutex_lock(&dev->control);
    srq->pmd = cna_rdma_create_srq(to_cna_pd(ibpd)->pmd, &pmd_attr);
    if (srq->pmd != NULL)
        list_add_tail(&to_cna_context(ibpd->context)->srqs, &srq->entry);
    pthread_mutex_unlock(&dev->control);
    if (srq->pmd == NULL) {
        int err = errno;
        free(srq);
        return fail_null(err);
    }
    attr->attr = pmd_attr.attr;
    srq->max_wr = pmd_attr.attr.max_wr;
    srq->max_sge = pmd_attr.attr.max_sge;
    srq->srq_limit = pmd_attr.attr.srq_limit;
    srq->vsrq.srq.handle = srq->pmd->handle;
    srq->vsrq.srq_type = IBV_SRQT_BASIC;
    return &srq->vsrq.srq;
}

static int cna_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
    struct cna_srq *srq = to_cna_srq(ibsrq);
    struct cna_device *dev = device_of(ibsrq->context);
    pthread_mutex_lock(&dev->control);
    int rc = cna_rdma_modify_srq(srq->pmd, attr, attr_mask);
    if (rc == 0 && (attr_mask & IBV_SRQ_LIMIT)) {
        pthread_mutex_lock(&dev->events);
        srq->srq_limit = attr->srq_limit;
        pthread_mutex_unlock(&dev->events);
    }
    pthread_mutex_unlock(&dev->control);
    return rc;
}

static int cna_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    struct cna_srq *srq = to_cna_srq(ibsrq);
    struct cna_device *dev = device_of(ibsrq->context);
    /* The limit changes with modify_srq and when it fires (the events'). */
    pthread_mutex_lock(&dev->events);
    *attr = (struct ibv_srq_attr){.max_wr = srq->max_wr, .max_sge = srq->max_sge, .srq_limit = srq->srq_limit};
    pthread_mutex_unlock(&dev->events);
    return 0;
}

static int unlink_srq(struct cna_srq *srq)
{
    int rc = cna_rdma_destroy_srq(srq->pmd);
    if (rc == 0)
        list_del(&srq->entry);
    return rc;
}

static int cna_destroy_srq(struct ibv_srq *ibsrq)
{
    struct cna_srq *srq = to_cna_srq(ibsrq);
    struct cna_device *dev = device_of(ibsrq->context);
    pthread_mutex_lock(&dev->control);
    if (dev->gone) {
        pthread_mutex_unlock(&dev->control);
        free(srq);
        return 0;
    }
    pthread_mutex_lock(&dev->events);
    int rc = unlink_srq(srq);
    if (rc == 0)
        take_back_async(ibsrq->context, ibsrq, &srq->events_reported);
    const uint32_t reported = srq->events_reported;
    pthread_mutex_unlock(&dev->events);
    pthread_mutex_unlock(&dev->control);
    if (rc != 0)
        return rc;
    cna_wait_events_acked(&ibsrq->mutex, &ibsrq->cond, &ibsrq->events_completed, reported);
    free(srq);
    return 0;
}

/* ---- Queue pairs ------------------------------------------------------------------ */

static struct ibv_qp *cna_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
    if (attr->send_cq == NULL || attr->recv_cq == NULL)
        return fail_null(EINVAL);
    struct cna_device *dev = device_of(ibpd->context);
    struct cna_qp *qp = calloc(1, sizeof(*qp));
    if (qp == NULL)
        return fail_null(ENOMEM);
    struct ibv_qp_init_attr pmd_attr = *attr;
    pmd_attr.qp_context = qp;
    pmd_attr.send_cq = to_cna_cq(attr->send_cq)->pmd;
    pmd_attr.recv_cq = to_cna_cq(attr->recv_cq)->pmd;
    pmd_attr.srq = attr->srq != NULL ? to_cna_srq(attr->srq)->pmd : NULL;
    const bool gsi = attr->qp_type == CNA_RDMA_QPT_GSI;
    if (gsi)
        pmd_attr.qp_type = IBV_QPT_UD;
    pthread_mutex_lock(&dev->control);
    qp->pmd = gsi ? cna_rdma_create_gsi_qp(to_cna_pd(ibpd)->pmd, &pmd_attr)
                  : cna_rdma_create_qp(to_cna_pd(ibpd)->pmd, &pmd_attr);
    if (qp->pmd != NULL)
        list_add_tail(&to_cna_context(ibpd->context)->qps, &qp->entry);
    pthread_mutex_unlock(&dev->control);
    if (qp->pmd == NULL) {
        int err = errno;
        free(qp);
        return fail_null(err);
    }
    attr->cap = pmd_attr.cap;
    struct ibv_qp *ibqp = &qp->vqp.qp;
    ibqp->context = ibpd->context;
    ibqp->qp_context = attr->qp_context;
    ibqp->pd = ibpd;
    ibqp->send_cq = attr->send_cq;
    ibqp->recv_cq = attr->recv_cq;
    ibqp->srq = attr->srq;
    ibqp->handle = qp->pmd->handle;
    ibqp->qp_num = qp->pmd->qp_num;
    ibqp->state = IBV_QPS_RESET;
    ibqp->qp_type = pmd_attr.qp_type;
    pthread_mutex_init(&ibqp->mutex, NULL);
    pthread_cond_init(&ibqp->cond, NULL);
    return ibqp;
}

static int cna_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
    struct cna_device *dev = device_of(ibqp->context);
    pthread_mutex_lock(&dev->control);
    int rc = cna_rdma_modify_qp(to_cna_qp(ibqp)->pmd, attr, attr_mask);
    pthread_mutex_unlock(&dev->control);
    return rc;
}

static int cna_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
                        struct ibv_qp_init_attr *init_attr)
{
    struct cna_device *dev = device_of(ibqp->context);
    pthread_mutex_lock(&dev->control);
    int rc = cna_rdma_query_qp(to_cna_qp(ibqp)->pmd, attr, attr_mask, init_attr);
    pthread_mutex_unlock(&dev->control);
    if (rc != 0)
        return rc;
    /* The application's objects, not the PMD's behind them. */
    init_attr->qp_context = ibqp->qp_context;
    init_attr->send_cq = ibqp->send_cq;
    init_attr->recv_cq = ibqp->recv_cq;
    init_attr->srq = ibqp->srq;
    return 0;
}

static int unlink_qp(struct cna_qp *qp)
{
    int rc = cna_rdma_destroy_qp(qp->pmd);
    if (rc == 0)
        list_del(&qp->entry);
    return rc;
}

static int cna_destroy_qp(struct ibv_qp *ibqp)
{
    struct cna_qp *qp = to_cna_qp(ibqp);
    struct cna_device *dev = device_of(ibqp->context);
    pthread_mutex_lock(&dev->control);
    if (dev->gone) {
        pthread_mutex_unlock(&dev->control);
        free(qp);
        return 0;
    }
    pthread_mutex_lock(&dev->events);
    int rc = unlink_qp(qp);
    if (rc == 0)
        take_back_async(ibqp->context, ibqp, &qp->events_reported);
    const uint32_t reported = qp->events_reported;
    pthread_mutex_unlock(&dev->events);
    pthread_mutex_unlock(&dev->control);
    if (rc != 0)
        return rc;
    cna_wait_events_acked(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed, reported);
    pthread_mutex_destroy(&ibqp->mutex);
    pthread_cond_destroy(&ibqp->cond);
    free(qp);
    return 0;
}

/* ---- Address handles ------------------------------------------------------------ */

static struct ibv_ah *cna_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
    struct cna_device *dev = device_of(ibpd->context);
    struct cna_ah *ah = calloc(1, sizeof(*ah));
    if (ah == NULL)
        return fail_null(ENOMEM);
    pthread_mutex_lock(&dev->control);
    int rc = cna_rdma_init_ah(to_cna_pd(ibpd)->pmd, attr, &ah->pmd);
    if (rc == 0)
        list_add_tail(&to_cna_context(ibpd->context)->ahs, &ah->entry);
    pthread_mutex_unlock(&dev->control);
    if (rc != 0) {
        free(ah);
        return fail_null(rc);
    }
    return &ah->pmd.ibv;
}

static void unlink_ah(struct cna_ah *ah)
{
    cna_rdma_fini_ah(&ah->pmd);
    list_del(&ah->entry);
}

static int cna_destroy_ah(struct ibv_ah *ibah)
{
    struct cna_ah *ah = to_cna_ah(ibah);
    struct cna_device *dev = device_of(ibah->context);
    pthread_mutex_lock(&dev->control);
    if (!dev->gone)
        unlink_ah(ah);
    pthread_mutex_unlock(&dev->control);
    free(ah);
    return 0;
}

/* ---- What a closing context leaves ------------------------------------------------- */

void cna_release_objects(struct cna_context *ctx, bool keep_memory)
{
    struct cna_device *dev = device_of(&ctx->ibv_ctx.context);
    struct cna_qp *qp, *next_qp;
    struct cna_ah *ah, *next_ah;
    struct cna_srq *srq, *next_srq;
    struct cna_cq *cq, *next_cq;
    struct cna_mr *mr, *next_mr;
    struct cna_pd *pd, *next_pd;
    /* In the order verbs destroy them: what uses an object goes first. The
     * context's events go with it. */
    pthread_mutex_lock(&dev->events);
    list_for_each_safe (&ctx->qps, qp, next_qp, entry)
        if (unlink_qp(qp) == 0 && !keep_memory)
            free(qp);
    list_for_each_safe (&ctx->ahs, ah, next_ah, entry) {
        unlink_ah(ah);
        if (!keep_memory)
            free(ah);
    }
    list_for_each_safe (&ctx->srqs, srq, next_srq, entry)
        if (unlink_srq(srq) == 0 && !keep_memory)
            free(srq);
    list_for_each_safe (&ctx->cqs, cq, next_cq, entry)
        if (unlink_cq(cq) == 0 && !keep_memory)
            free(cq);
    list_for_each_safe (&ctx->mrs, mr, next_mr, entry)
        if (unlink_mr(mr) == 0 && !keep_memory)
            free(mr);
    list_for_each_safe (&ctx->pds, pd, next_pd, entry)
        if (unlink_pd(pd) == 0 && !keep_memory)
            free(pd);
    pthread_mutex_unlock(&dev->events);
}

/* ---- The fastpath ---------------------------------------------------------------- */

static int cna_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
    return cna_rdma_post_send(to_cna_qp(qp)->pmd, wr, bad_wr);
}

static int cna_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    return cna_rdma_post_recv(to_cna_qp(qp)->pmd, wr, bad_wr);
}

static int cna_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
    return cna_rdma_post_srq_recv(to_cna_srq(srq)->pmd, wr, bad_wr);
}

static int cna_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
    return cna_rdma_poll_cq(to_cna_cq(cq)->pmd, num_entries, wc);
}

static int cna_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    return cna_rdma_req_notify_cq(to_cna_cq(cq)->pmd, solicited_only);
}

const struct verbs_context_ops cna_context_ops = {
    .alloc_pd = cna_alloc_pd,
    .dealloc_pd = cna_dealloc_pd,
    .reg_mr = cna_reg_mr,
    .dereg_mr = cna_dereg_mr,
    .create_cq = cna_create_cq,
    .resize_cq = cna_resize_cq,
    .destroy_cq = cna_destroy_cq,
    .poll_cq = cna_poll_cq,
    .req_notify_cq = cna_req_notify_cq,
    .create_srq = cna_create_srq,
    .modify_srq = cna_modify_srq,
    .query_srq = cna_query_srq,
    .destroy_srq = cna_destroy_srq,
    .post_srq_recv = cna_post_srq_recv,
    .create_qp = cna_create_qp,
    .modify_qp = cna_modify_qp,
    .query_qp = cna_query_qp,
    .destroy_qp = cna_destroy_qp,
    .post_send = cna_post_send,
    .post_recv = cna_post_recv,
    .create_ah = cna_create_ah,
    .destroy_ah = cna_destroy_ah,
};
