/* SPDX-License-Identifier: BSD-3-Clause
 * The verbs provider's two halves. libibverbs's side (C: rdma-core's
 * driver.h is C only) keeps the verbs objects and their contract; the host
 * (C++) keeps the process's adapter: DPDK's EAL, the net_cna ports named by
 * CNA_RDMA_DEVARGS, their RDMA devices, and the thread that hands the
 * devices' events over.
 */
#ifndef CNA_VERBS_HOST_H
#define CNA_VERBS_HOST_H

#include <infiniband/verbs.h>

#include "cna_rdma.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cna_device;   /* libibverbs's side of one device */
struct cna_host_port;

/* Device `index` (ibdev cna<index>): on the first call, the process's
 * adapter comes up with every port CNA_RDMA_DEVARGS names; the device's
 * attributes are published in its sysfs directory `ibdev_path`, as a
 * kernel driver's are. NULL, with the reason on stderr, if it cannot be. */
struct cna_host_port *cna_host_probe(unsigned index, const char *ibdev_path);
/* libibverbs's side of the port's device, ready for its events, or NULL
 * once libibverbs let go of the device. */
void cna_host_attach(struct cna_host_port *port, struct cna_device *device);
struct cna_rdma_dev *cna_host_rdma(struct cna_host_port *port);

/* On the host's event thread, when the device's event fd is readable: its
 * completion events go to their CQs' channels, its async events to their
 * objects' contexts (the PMD's objects carry the provider's as their
 * *_context). On the EAL interrupt thread: a link change, as a port event
 * to every context of the device. */
void cna_device_hand_over(struct cna_device *device);
void cna_device_port_event(struct cna_device *device, enum ibv_event_type type);
/* The process exits with the device's contexts open: the PMD's objects
 * behind what the application did not destroy go, so the device closes
 * cleanly; the provider's stay, for destroys the application's own exit
 * handlers still make. */
void cna_device_exit(struct cna_device *device);

#ifdef __cplusplus
}
#endif

#endif /* CNA_VERBS_HOST_H */
