/* SPDX-License-Identifier: BSD-3-Clause
 * How a cna device's events reach libibverbs, which reads them from file
 * descriptors as the kernel writes them: an async event
 * (ib_uverbs_async_event_desc) from the context's async_fd, a completion
 * event (the CQ's address, as its handle) from a completion channel's fd.
 * Each is the read end of a pipe the provider's event thread writes to.
 *
 * When an object is destroyed, the kernel discards its events the
 * application has not read yet, and waits for the application to
 * acknowledge those it has. The provider does the same: a second,
 * non-blocking reader of the pipe (its own open file description, so the
 * application's reads keep their mode) takes back what is unread.
 *
 * Completion channels: libibverbs makes one with a kernel command, which a
 * cna device cannot answer; cna-rdma-run preloads libcna-comp-channel.so,
 * whose ibv_create_comp_channel makes cna's channels on such a pipe (and
 * passes every other device's to libibverbs). ibv_get_cq_event and
 * ibv_ack_cq_events stay libibverbs's.
 */
#ifndef CNA_EVENT_PIPE_H
#define CNA_EVENT_PIPE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <infiniband/verbs.h>

struct cna_event_pipe {
    int read_fd;  /* the application's */
    int write_fd; /* non-blocking: the event thread never waits for the application */
    int drain_fd; /* non-blocking, for taking events back */
    uint8_t *scratch; /* what the pipe can hold, for taking events back */
    size_t scratch_size;
};

static inline int cna_event_pipe_open(struct cna_event_pipe *p)
{
    int fds[2];
    char path[32];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
    p->read_fd = fds[0];
    p->write_fd = fds[1];
    p->drain_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const int capacity = fcntl(fds[0], F_GETPIPE_SZ);
    p->scratch_size = capacity > 0 ? (size_t)capacity : 0;
    p->scratch = malloc(p->scratch_size);
    if (p->drain_fd < 0 || p->scratch == NULL || fcntl(p->write_fd, F_SETFL, O_NONBLOCK) != 0) {
        close(fds[0]);
        close(fds[1]);
        if (p->drain_fd >= 0)
            close(p->drain_fd);
        free(p->scratch);
        return -1;
    }
    return 0;
}

/* The provider's ends; the read end is closed with what owns it. */
static inline void cna_event_pipe_close(struct cna_event_pipe *p)
{
    close(p->write_fd);
    close(p->drain_fd);
    free(p->scratch);
}

struct cna_comp_channel {
    struct ibv_comp_channel ibv; /* ibv.fd: pipe.read_fd */
    struct cna_event_pipe pipe;
};

/* The provider's name in libibverbs (verbs_device_ops.name). */
#define CNA_PROVIDER_NAME "cna"

#endif /* CNA_EVENT_PIPE_H */
