/* SPDX-License-Identifier: BSD-3-Clause
 * The cna RDMA PMD: RoCEv2 reliable connections and unreliable datagrams
 * on a net_cna port, with rdma-core's verbs types.
 *
 * An application links librte_rdma_cna.so (which carries net_cna too: no
 * -d), creates net_cna ports with --vdev as usual, and opens the RDMA
 * device of a port. From there the calls are verbs' with a cna_rdma_
 * prefix and the same arguments, results and errors: porting a verbs
 * program is a matter of renaming.
 *
 * Threads: the control calls (open, create, modify, register, destroy)
 * from any thread, one at a time per device. post_send/post_recv/
 * post_srq_recv/poll_cq/req_notify_cq on lcores: no locks shared between
 * queues, no syscalls, no allocation; one thread per QP (send side and
 * receive side may be two) and per CQ. Completion events arrive on the
 * device's eventfd (cna_rdma_event_fd), which an application can epoll;
 * cna_rdma_get_cq_event then names the CQ.
 *
 * Not here (yet): UC QPs, multicast, memory windows, RDMA CM (the GSI QP
 * it needs is), XRC, ODP.
 */
#ifndef CNA_RDMA_H
#define CNA_RDMA_H

#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CNA_RDMA_API __attribute__((visibility("default")))

struct cna_rdma_dev;

/* The RDMA device of ethdev port `port_id` (a net_cna port with RDMA
 * enabled: devarg rdma=1, the default). NULL with errno set: ENODEV (not a
 * net_cna port), ENOTSUP (rdma=0), EBUSY (already open), ENOSPC (no DPI).
 * The port need not be started; RDMA traffic flows while its link is up. */
CNA_RDMA_API struct cna_rdma_dev *cna_rdma_open(uint16_t port_id);
/* Every object must be destroyed first (EBUSY). */
CNA_RDMA_API int cna_rdma_close(struct cna_rdma_dev *dev);

CNA_RDMA_API int cna_rdma_query_device(struct cna_rdma_dev *dev, struct ibv_device_attr *attr);
CNA_RDMA_API int cna_rdma_query_port(struct cna_rdma_dev *dev, uint8_t port_num, struct ibv_port_attr *attr);
/* The GID table (RoCEv2, as rxe lays it out): index 0 the port's link-local
 * IPv6 address from its MAC, then its IPv4 address as an IPv4-mapped GID
 * and its IPv6 address (net_cna's ipv4= and ipv6=), then those added. */
CNA_RDMA_API int cna_rdma_query_gid(struct cna_rdma_dev *dev, uint8_t port_num, int index, union ibv_gid *gid);
/* Adds an address at run time (IPv4-mapped for IPv4); its index, or -1
 * with errno (ENOSPC: 8 GIDs at most; EEXIST). */
CNA_RDMA_API int cna_rdma_add_gid(struct cna_rdma_dev *dev, const union ibv_gid *gid);

CNA_RDMA_API struct ibv_pd *cna_rdma_alloc_pd(struct cna_rdma_dev *dev);
CNA_RDMA_API int cna_rdma_dealloc_pd(struct ibv_pd *pd);

/* Any memory of the process: DPDK's, or the application's own (mapped for
 * the device for the MR's life). */
CNA_RDMA_API struct ibv_mr *cna_rdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
CNA_RDMA_API int cna_rdma_dereg_mr(struct ibv_mr *mr);

/* comp_vector: the CNQ (0). Completion events of an armed CQ come through
 * the device's event fd. */
CNA_RDMA_API struct ibv_cq *cna_rdma_create_cq(struct cna_rdma_dev *dev, int cqe, void *cq_context, int comp_vector);
/* To at least cqe entries; EINVAL if fewer than the completions it holds
 * (those are kept and polled first). Not while another thread polls it. */
CNA_RDMA_API int cna_rdma_resize_cq(struct ibv_cq *cq, int cqe);
CNA_RDMA_API int cna_rdma_destroy_cq(struct ibv_cq *cq);

CNA_RDMA_API struct ibv_srq *cna_rdma_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
CNA_RDMA_API int cna_rdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask);
CNA_RDMA_API int cna_rdma_destroy_srq(struct ibv_srq *srq);

/* IBV_QPT_RC or IBV_QPT_UD. A UD QP sends SENDs of up to the port's
 * active MTU, each to the address handle, remote QPN and Q_Key of its WR;
 * a receive gets the datagram's 40-byte GRH first (IBV_WC_GRH), then its
 * payload. A UD QP whose SEND cannot go (too long, a bad key) completes it
 * in error and moves to SQE, where its later sends flush and receiving
 * goes on; modify it back to RTS. */
CNA_RDMA_API struct ibv_qp *cna_rdma_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* The port's GSI QP (InfiniBand's QP1), for a connection manager: a UD QP
 * (attr->qp_type IBV_QPT_UD) that receives the datagrams sent to QPN 1 and
 * sends as QPN 1 (its qp_num), with the GSI Q_Key 0x80010000 whatever the
 * WR or a modify says. It receives MADs: the adapter drops any other
 * datagram to it (cna_rdma_port_counters.mads_dropped). One per port:
 * EBUSY while the port has one. */
CNA_RDMA_API struct ibv_qp *cna_rdma_create_gsi_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
/* Through the verbs provider, ibv_create_qp of this type (rdma-core's
 * driver-specific type) makes the GSI QP; libibverbs then sees a UD QP. */
#define CNA_RDMA_QPT_GSI IBV_QPT_DRIVER
CNA_RDMA_API int cna_rdma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
CNA_RDMA_API int cna_rdma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr *init);
CNA_RDMA_API int cna_rdma_destroy_qp(struct ibv_qp *qp);

/* An address handle for UD sends: its GRH (is_global) names the
 * destination GID and the source GID index, as for an RC QP's path; the
 * destination's MAC is resolved now (ARP or neighbour discovery, unless
 * the GID is a link-local one made from a MAC). NULL with errno: EINVAL,
 * EHOSTUNREACH (no answer), ENOMEM. */
CNA_RDMA_API struct ibv_ah *cna_rdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
CNA_RDMA_API int cna_rdma_destroy_ah(struct ibv_ah *ah);

/* An address handle in the caller's memory, for a verbs provider whose
 * own object embeds it first: its ibv_ah is then one post_send takes as
 * it is. init: 0 or an errno, as create_ah's; fini before the memory goes
 * (the PD is free of it then). */
struct cna_rdma_ah {
    struct ibv_ah ibv;
    struct ibv_pd *pd;
    uint8_t path[64];   /* where the device sends: its format */
};
CNA_RDMA_API int cna_rdma_init_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr, struct cna_rdma_ah *ah);
CNA_RDMA_API void cna_rdma_fini_ah(struct cna_rdma_ah *ah);

/* Fastpath. */
CNA_RDMA_API int cna_rdma_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
CNA_RDMA_API int cna_rdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
CNA_RDMA_API int cna_rdma_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
CNA_RDMA_API int cna_rdma_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
CNA_RDMA_API int cna_rdma_req_notify_cq(struct ibv_cq *cq, int solicited_only);

/* Completion events: the fd is readable while events wait; get_cq_event
 * takes one (0, or -1 with errno EAGAIN when none). As with verbs, each
 * event is acknowledged before its CQ is destroyed. */
CNA_RDMA_API int cna_rdma_event_fd(struct cna_rdma_dev *dev);
CNA_RDMA_API int cna_rdma_get_cq_event(struct cna_rdma_dev *dev, struct ibv_cq **cq, void **cq_context);
CNA_RDMA_API void cna_rdma_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);

/* Counters of the port's RoCE engine, from the start of the port's PF (the
 * same figures are net_cna's roce_* xstats, which a stats reset clears). */
struct cna_rdma_port_counters {
    uint64_t rx_packets;          /* RoCEv2 frames received, dropped ones too */
    uint64_t tx_packets;
    uint64_t rx_bytes;
    uint64_t tx_bytes;
    uint64_t icrc_errors;         /* dropped: ICRC wrong */
    uint64_t bad_packets;         /* dropped: malformed, no such QP, not its peer */
    uint64_t retransmitted;       /* packets sent again (ACK timeout, sequence NAK) */
    uint64_t timeouts;            /* ACK timer expiries */
    uint64_t naks_sent;
    uint64_t naks_received;
    uint64_t rnr_naks_sent;
    uint64_t rnr_naks_received;
    uint64_t duplicates;          /* requests with a PSN already executed */
    uint64_t out_of_sequence;     /* requests with a PSN beyond the expected one */
    uint64_t qkey_violations;     /* datagrams dropped: a Q_Key not their QP's */
    uint64_t ud_dropped;          /* datagrams dropped: no receive posted */
    uint64_t mads_dropped;        /* datagrams to the GSI QP dropped: not a MAD */
    uint64_t pkey_violations;     /* dropped: a P_Key not of the port's partition */
};
CNA_RDMA_API int cna_rdma_query_port_counters(struct cna_rdma_dev *dev, struct cna_rdma_port_counters *counters);

/* Counters of one QP, from its creation. */
struct cna_rdma_qp_counters {
    uint64_t packets_sent;
    uint64_t retransmitted;
    uint64_t timeouts;
    uint64_t naks_received;
    uint64_t rnr_naks_received;
    uint64_t packets_received;
    uint64_t duplicates;
    uint64_t out_of_sequence;
    uint64_t naks_sent;
    uint64_t rnr_naks_sent;
};
CNA_RDMA_API int cna_rdma_query_qp_counters(struct ibv_qp *qp, struct cna_rdma_qp_counters *counters);

/* Asynchronous events (QP fatal, access and request errors, CQ errors,
 * SRQ limit, port active/down): 0 and the event, or -1 with errno EAGAIN. */
CNA_RDMA_API int cna_rdma_get_async_event(struct cna_rdma_dev *dev, struct ibv_async_event *event);

#ifdef __cplusplus
}
#endif

#endif /* CNA_RDMA_H */
