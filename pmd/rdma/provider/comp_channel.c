/* SPDX-License-Identifier: BSD-3-Clause
 * libcna-comp-channel.so: completion channels for cna devices, preloaded
 * by cna-rdma-run. libibverbs makes a completion channel with a kernel
 * command, which a cna device (no kernel part) cannot answer. These two
 * functions take libibverbs's place, under its symbol version, for cna's
 * contexts only: a channel is a pipe whose read end is the channel's fd,
 * so libibverbs's own ibv_get_cq_event and ibv_ack_cq_events work on it
 * unchanged. Every other device's channel is libibverbs's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/driver.h>

#include "comp_channel.h"

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
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(channel);
        return NULL;
    }
    /* The provider's event thread never waits for the application. */
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    channel->ibv.context = context;
    channel->ibv.fd = fds[0];
    channel->ibv.refcnt = 0;
    channel->write_fd = fds[1];
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
    close(channel->write_fd);
    free(channel);
    pthread_mutex_unlock(&context->mutex);
    return 0;
}
