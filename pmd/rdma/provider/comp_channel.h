/* SPDX-License-Identifier: BSD-3-Clause
 * A completion channel of a cna device. libibverbs makes a channel with a
 * kernel command; cna has no kernel part, so cna-rdma-run preloads
 * libcna-comp-channel.so, whose ibv_create_comp_channel makes cna's
 * channels itself (and passes every other device's to libibverbs).
 * ibv_get_cq_event stays libibverbs's: it reads a CQ handle (the CQ's
 * address, as the kernel reports it) from the channel's fd, the read end
 * of a pipe whose write end the provider's event thread writes to.
 */
#ifndef CNA_COMP_CHANNEL_H
#define CNA_COMP_CHANNEL_H

#include <infiniband/verbs.h>

struct cna_comp_channel {
    struct ibv_comp_channel ibv;
    int write_fd;
};

/* The provider's name in libibverbs (verbs_device_ops.name). */
#define CNA_PROVIDER_NAME "cna"

#endif /* CNA_COMP_CHANNEL_H */
