/* SPDX-License-Identifier: BSD-3-Clause
 * The verbs provider's objects, as libibverbs sees them: each verbs
 * structure libibverbs expects (verbs_device, verbs_context, verbs_mr,
 * verbs_cq, verbs_qp, verbs_srq) first, then the RDMA PMD's object that
 * does the work; an address handle is the PMD's own, embedded. The PMD's objects carry the provider's as their
 * *_context, so an event the PMD reports leads back here.
 */
#ifndef CNA_VERBS_PROVIDER_H
#define CNA_VERBS_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <ccan/list.h>
#include <infiniband/driver.h>

#include "event_pipe.h"
#include "verbs_host.h"

struct cna_device {
    struct verbs_device ibv_dev;
    struct cna_host_port *port;
    struct cna_rdma_dev *rdma;
    /* Control calls, one at a time per RDMA device, as the PMD asks. */
    pthread_mutex_t control;
    /* The process exits: the PMD's objects and ports went, an object's
     * destroy only frees the provider's memory (control held). */
    bool gone;
    /* The contexts, and every object's count of events reported: taken by
     * the event thread to hand an event over and by destroy to learn how
     * many events it must see acknowledged. */
    pthread_mutex_t events;
    struct list_head contexts;
};

struct cna_context {
    struct verbs_context ibv_ctx;
    struct list_node entry;
    struct cna_event_pipe async_events; /* read_fd: the context's async_fd */
    /* What free_context destroys if the application did not. */
    struct list_head pds, mrs, cqs, srqs, qps, ahs;
};

struct cna_pd {
    struct ibv_pd ibv_pd;
    struct list_node entry;
    struct ibv_pd *pmd;
};

struct cna_mr {
    struct verbs_mr vmr;
    struct list_node entry;
    struct ibv_mr *pmd;
};

struct cna_cq {
    struct verbs_cq vcq;
    struct list_node entry;
    struct ibv_cq *pmd;
    struct cna_comp_channel *channel;
    uint32_t comp_events_reported;
    uint32_t async_events_reported;
};

struct cna_srq {
    struct verbs_srq vsrq;
    struct list_node entry;
    struct ibv_srq *pmd;
    uint32_t max_wr, max_sge, srq_limit;
    uint32_t events_reported;
};

/* The PMD's address handle first: the ibv_ah the application passes in a
 * UD work request is one the PMD's post_send reads as it is. */
struct cna_ah {
    struct cna_rdma_ah pmd;
    struct list_node entry;
};

struct cna_qp {
    struct verbs_qp vqp;
    struct list_node entry;
    struct ibv_qp *pmd;
    uint32_t events_reported;
};

static inline struct cna_device *to_cna_device(struct ibv_device *ibdev)
{
    return container_of(ibdev, struct cna_device, ibv_dev.device);
}
static inline struct cna_context *to_cna_context(struct ibv_context *ctx)
{
    return container_of(ctx, struct cna_context, ibv_ctx.context);
}
static inline struct cna_device *device_of(struct ibv_context *ctx) { return to_cna_device(ctx->device); }
static inline struct cna_pd *to_cna_pd(struct ibv_pd *pd) { return container_of(pd, struct cna_pd, ibv_pd); }
static inline struct cna_mr *to_cna_mr(struct verbs_mr *vmr) { return container_of(vmr, struct cna_mr, vmr); }
static inline struct cna_cq *to_cna_cq(struct ibv_cq *cq) { return container_of(cq, struct cna_cq, vcq.cq); }
static inline struct cna_srq *to_cna_srq(struct ibv_srq *srq) { return container_of(srq, struct cna_srq, vsrq.srq); }
static inline struct cna_qp *to_cna_qp(struct ibv_qp *qp) { return container_of(qp, struct cna_qp, vqp.qp); }
static inline struct cna_ah *to_cna_ah(struct ibv_ah *ah) { return container_of(ah, struct cna_ah, pmd.ibv); }

/* The verbs of a context (verbs_objects.c). */
extern const struct verbs_context_ops cna_context_ops;
/* The PMD's objects behind what the application left of a context: when
 * it closes the context, with the provider's too; at exit (keep_memory),
 * the provider's stay for the application's destroys, which then only
 * free them. */
void cna_release_objects(struct cna_context *ctx, bool keep_memory); /* control held */

/* An object's events at its destroy (event_pipe.h): those still unread in
 * `pipe` (whose descriptors of `size` bytes start with the object's
 * handle) are taken back from it and from *reported; dev->events held. */
void cna_take_back_unread(struct cna_event_pipe *pipe, size_t size, const void *object, uint32_t *reported);
/* Waits until the application acknowledged every event it read for an
 * object (ibv_ack_*_events), as the kernel's destroy does. */
void cna_wait_events_acked(pthread_mutex_t *mutex, pthread_cond_t *cond, const uint32_t *completed,
                           uint32_t reported);

#endif /* CNA_VERBS_PROVIDER_H */
