/* SPDX-License-Identifier: BSD-3-Clause
 * libcna-comp-channel.so: completion channels for cna devices, preloaded
 * by cna-rdma-run. libibverbs makes a completion channel with a kernel
 * command, which a cna device (no kernel part) cannot answer. These two
 * functions take libibverbs's place, under its symbol version, for cna's
 * contexts only (event_pipe.h). Every other device's channel is
 * libibverbs's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/driver.h>

#include "event_pipe.h"

#define IBVERBS_VERSION "IBVERBS_1.0"

static int is_cna(struct ibv_context *context)
{
    return strcmp(verbs_get_device(context->device)->ops->name, CNA_PROVIDER_NAME) == 0;
}

static void *libibverbs_own(const char *name)
{
    return dlvsym(RTLD_NEXT, name, IBVERBS_VERSION);
}

__attribute__((visibility("default"))) struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
    if (!is_cna(context)) {
        struct ibv_comp_channel *(*create)(struct ibv_context *) = libibverbs_own(__func__);
        if (create == NULL) {
            errno = ENOSYS;
            return NULL;
        }
        return create(context);
    }
    struct cna_comp_channel *channel = calloc(1, sizeof(*channel));
    if (channel == NULL)
        return NULL;
    if (cna_event_pipe_open(&channel->pipe) != 0) {
        free(channel);
        return NULL;
    }
    channel->ibv.context = context;
    channel->ibv.fd = channel->pipe.read_fd;
    return &channel->ibv;
}

__attribute__((visibility("default"))) int ibv_destroy_comp_channel(struct ibv_comp_channel *ibv)
{
    struct ibv_context *context = ibv->context;
    if (!is_cna(context)) {
        int (*destroy)(struct ibv_comp_channel *) = libibverbs_own(__func__);
        return destroy != NULL ? destroy(ibv) : ENOSYS;
    }
    struct cna_comp_channel *channel = container_of(ibv, struct cna_comp_channel, ibv);
    pthread_mutex_lock(&context->mutex);
    if (ibv->refcnt != 0) {
        pthread_mutex_unlock(&context->mutex);
        return EBUSY;
    }
    close(ibv->fd);
    cna_event_pipe_close(&channel->pipe);
    free(channel);
    pthread_mutex_unlock(&context->mutex);
    return 0;
}
