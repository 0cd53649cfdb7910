/* SPDX-License-Identifier: BSD-3-Clause
 * cna as an rdma-core provider: the driver libibverbs matches against the
 * devices it finds in sysfs (ibdev cna<N>), their contexts, what they can
 * do, and the events the host hands over.
 *
 * libibverbs opens the device's character device as every context's
 * command fd; cna needs no kernel command, so the provider never uses it,
 * and cna-rdma-run makes it a device that refuses writes, so that a kernel
 * command libibverbs still tries fails cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs_provider.h"

static struct verbs_device *cna_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
    unsigned index;
    char tail;
    if (sscanf(sysfs_dev->ibdev_name, CNA_PROVIDER_NAME "%u%c", &index, &tail) != 1)
        return NULL;
    struct cna_host_port *port = cna_host_probe(index, sysfs_dev->ibdev_path);
    struct cna_device *dev = port != NULL ? calloc(1, sizeof(*dev)) : NULL;
    if (dev == NULL)
        return NULL;
    dev->port = port;
    dev->rdma = cna_host_rdma(port);
    pthread_mutex_init(&dev->control, NULL);
    pthread_mutex_init(&dev->events, NULL);
    list_head_init(&dev->contexts);
    cna_host_attach(port, dev);
    return &dev->ibv_dev;
}

static void cna_uninit_device(struct verbs_device *vdev)
{
    struct cna_device *dev = container_of(vdev, struct cna_device, ibv_dev);
    cna_host_attach(dev->port, NULL);
    pthread_mutex_destroy(&dev->control);
    pthread_mutex_destroy(&dev->events);
    free(dev);
}

static const struct verbs_context_ops cna_device_context_ops;

static struct verbs_context *cna_alloc_context(struct ibv_device *ibdev, int cmd_fd, void *private_data)
{
    (void)private_data;
    struct cna_device *dev = to_cna_device(ibdev);
    struct cna_context *ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx, RDMA_DRIVER_UNKNOWN);
    if (ctx == NULL)
        return NULL;
    if (cna_event_pipe_open(&ctx->async_events) != 0) {
        verbs_uninit_context(&ctx->ibv_ctx);
        free(ctx);
        return NULL;
    }
    ctx->ibv_ctx.context.async_fd = ctx->async_events.read_fd;
    ctx->ibv_ctx.context.num_comp_vectors = 1; /* the device's one CNQ */
    list_head_init(&ctx->pds);
    list_head_init(&ctx->mrs);
    list_head_init(&ctx->cqs);
    list_head_init(&ctx->srqs);
    list_head_init(&ctx->qps);
    list_head_init(&ctx->ahs);
    verbs_set_ops(&ctx->ibv_ctx, &cna_device_context_ops);
    verbs_set_ops(&ctx->ibv_ctx, &cna_context_ops);
    pthread_mutex_lock(&dev->events);
    list_add_tail(&dev->contexts, &ctx->entry);
    pthread_mutex_unlock(&dev->events);
    return &ctx->ibv_ctx;
}

static void cna_free_context(struct ibv_context *ibctx)
{
    struct cna_context *ctx = to_cna_context(ibctx);
    struct cna_device *dev = device_of(ibctx);
    pthread_mutex_lock(&dev->control);
    if (!dev->gone)
        cna_release_objects(ctx, false);
    pthread_mutex_unlock(&dev->control);
    pthread_mutex_lock(&dev->events);
    list_del(&ctx->entry);
    pthread_mutex_unlock(&dev->events);
    cna_event_pipe_close(&ctx->async_events);
    verbs_uninit_context(&ctx->ibv_ctx);
    free(ctx);
}

static const struct verbs_match_ent cna_match_table[] = {
    VERBS_NAME_MATCH(CNA_PROVIDER_NAME, NULL),
    {},
};

static const struct verbs_device_ops cna_device_ops = {
    .name = CNA_PROVIDER_NAME,
    .match_min_abi_version = 1,
    .match_max_abi_version = 1,
    .match_table = cna_match_table,
    .alloc_device = cna_alloc_device,
    .uninit_device = cna_uninit_device,
    .alloc_context = cna_alloc_context,
};
PROVIDER_DRIVER(cna, cna_device_ops);

void cna_device_exit(struct cna_device *dev)
{
    /* The event thread and the link callbacks have stopped: the contexts
     * stay as they are. An exit handler the application registered before
     * the provider came may still destroy its objects. */
    /* One critical section: a destroy comes before (and unlinks its object
     * itself) or after (and only frees it). */
    struct cna_context *ctx;
    pthread_mutex_lock(&dev->control);
    list_for_each (&dev->contexts, ctx, entry)
        cna_release_objects(ctx, true);
    dev->gone = true;
    pthread_mutex_unlock(&dev->control);
}

/* ---- What the device can do -------------------------------------------- */

static int cna_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
                               struct ibv_device_attr_ex *attr, size_t attr_size)
{
    if (input != NULL && input->comp_mask != 0)
        return EINVAL;
    if (attr_size < sizeof(attr->orig_attr))
        return EINVAL;
    struct ibv_device_attr_ex ex;
    memset(&ex, 0, sizeof(ex));
    if (cna_rdma_query_device(device_of(context)->rdma, &ex.orig_attr) != 0)
        return errno;
    ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
    memset(attr, 0, attr_size);
    memcpy(attr, &ex, attr_size < sizeof(ex) ? attr_size : sizeof(ex));
    return 0;
}

static int cna_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr)
{
    return cna_rdma_query_port(device_of(context)->rdma, port_num, attr);
}

/* ---- Events --------------------------------------------------------------- */

void cna_wait_events_acked(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
                           uint32_t reported)
{
    pthread_mutex_lock(mutex);
    while (*completed != reported)
        pthread_cond_wait(cond, mutex);
    pthread_mutex_unlock(mutex);
}

static void cq_event(void *cq_context)
{
    struct cna_cq *cq = cq_context;
    const uint64_t handle = (uintptr_t)&cq->vcq.cq;
    if (cq->channel != NULL && write(cq->channel->pipe.write_fd, &handle, sizeof(handle)) == sizeof(handle))
        cq->comp_events_reported++;
}

static void report(struct cna_context *ctx, const void *element, enum ibv_event_type type, uint32_t *reported)
{
    const struct ib_uverbs_async_event_desc desc = {.element = (uintptr_t)element, .event_type = type};
    if (write(ctx->async_events.write_fd, &desc, sizeof(desc)) == sizeof(desc) && reported != NULL)
        (*reported)++;
}

void cna_take_back_unread(struct cna_event_pipe *pipe, size_t size, const void *object, uint32_t *reported)
{
    const uint64_t handle = (uintptr_t)object;
    size_t kept = 0;
    /* All the pipe holds fits its scratch buffer, which is the pipe's size. */
    while (kept + size <= pipe->scratch_size && read(pipe->drain_fd, pipe->scratch + kept, size) == (ssize_t)size) {
        if (memcmp(pipe->scratch + kept, &handle, sizeof(handle)) == 0)
            (*reported)--;
        else
            kept += size;
    }
    /* The others go back, in their order (the event thread waits on the
     * lock the caller holds). */
    if (kept != 0 && write(pipe->write_fd, pipe->scratch, kept) != (ssize_t)kept)
        fprintf(stderr, "cna: %zu bytes of events lost taking back a destroyed object's\n", kept);
}

/* A port's event reaches every context of the device. */
static void report_port_event(struct cna_device *dev, uint32_t port_num, enum ibv_event_type type)
{
    struct cna_context *ctx;
    list_for_each (&dev->contexts, ctx, entry)
        report(ctx, (void *)(uintptr_t)port_num, type, NULL);
}

static void async_event(struct cna_device *dev, const struct ibv_async_event *event)
{
    switch (event->event_type) {
    case IBV_EVENT_CQ_ERR: {
        struct cna_cq *cq = event->element.cq->cq_context;
        report(to_cna_context(cq->vcq.cq.context), &cq->vcq.cq, event->event_type,
               &cq->async_events_reported);
        break;
    }
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: {
        struct cna_srq *srq = event->element.srq->srq_context;
        /* The limit fired and the device disarmed it (verbs: it reads 0). */
        if (event->event_type == IBV_EVENT_SRQ_LIMIT_REACHED)
            srq->srq_limit = 0;
        report(to_cna_context(srq->vsrq.srq.context), &srq->vsrq.srq, event->event_type,
               &srq->events_reported);
        break;
    }
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: {
        struct cna_qp *qp = event->element.qp->qp_context;
        report(to_cna_context(qp->vqp.qp.context), &qp->vqp.qp, event->event_type,
               &qp->events_reported);
        break;
    }
    default:
        report_port_event(dev, event->element.port_num, event->event_type);
        break;
    }
}

void cna_device_hand_over(struct cna_device *dev)
{
    struct ibv_cq *cq;
    void *cq_context;
    struct ibv_async_event event;
    /* Taken from the PMD and handed over under the lock a destroy takes
     * around the PMD's destroy: an object is never freed in between. */
    pthread_mutex_lock(&dev->events);
    while (cna_rdma_get_cq_event(dev->rdma, &cq, &cq_context) == 0) {
        cna_rdma_ack_cq_events(cq, 1);
        cq_event(cq_context);
    }
    while (cna_rdma_get_async_event(dev->rdma, &event) == 0)
        async_event(dev, &event);
    pthread_mutex_unlock(&dev->events);
}

void cna_device_port_event(struct cna_device *dev, enum ibv_event_type type)
{
    pthread_mutex_lock(&dev->events);
    report_port_event(dev, 1, type);
    pthread_mutex_unlock(&dev->events);
}

static const struct verbs_context_ops cna_device_context_ops = {
    .query_device_ex = cna_query_device_ex,
    .query_port = cna_query_port,
    .free_context = cna_free_context,
};
