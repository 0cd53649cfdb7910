/* SPDX-License-Identifier: BSD-3-Clause
 * rdma_hello: the cna RDMA PMD's verbs from plain C, in one process.
 *
 * The program creates an embedded adapter with two ports cabled to each
 * other, opens the RDMA device of each port and connects an RC QP on port 0
 * (the requester) to one on port 1 (the responder) over their IPv4 GIDs.
 * Then it does what every RDMA application does: a SEND into a posted
 * receive, an RDMA WRITE into the responder's buffer, an RDMA READ back out
 * of it, and, when the device has atomics, a fetch-and-add and a
 * compare-and-swap on a word of the responder's memory. Every byte and
 * value is checked. Last, everything is destroyed in order.
 *
 *   rdma_hello <EAL options> -- [--size BYTES] [--iterations N]
 *
 * Two hosts would exchange each QP's number, first PSN and GID, and the
 * buffer's address and rkey, over a side channel (rdma_pingpong uses TCP);
 * here both ends live in one process and simply read each other's.
 */

/* Strict C11 hides POSIX, and DPDK's inline functions use some (strnlen). */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_random.h>

#include "cna_rdma.h"

#define PROG "rdma_hello"

#define NB_SIDES 2
#define IB_PORT 1          /* an RDMA device has one port, numbered from 1 */
#define GID_INDEX 1        /* the port's IPv4 address as an IPv4-mapped GID */
#define LINK_TIMEOUT_MS 5000
#define COMPLETION_TIMEOUT_S 5
#define DEFAULT_SIZE 4096
#define MAX_SIZE (1u << 30)
#define MAX_ITERATIONS 1000000u

/* The adapter's two ports: the first creates the adapter, whose wire=cable
 * joins port 2k with port 2k+1, the second joins it. Each has an IPv4
 * address (from TEST-NET-1: it never leaves the cable) for RoCEv2. */
static const struct vdev {
    const char *name;
    const char *args;
} vdevs[NB_SIDES] = {
    {"net_cna0", "adapter=rdma_hello,ports=2,wire=cable,ipv4=192.0.2.1/24"},
    {"net_cna1", "adapter=rdma_hello,port=1,ipv4=192.0.2.2/24"},
};

/* One end of the connection: an ethdev port and the verbs objects on its
 * RDMA device. Zeroed, it owns nothing; teardown undoes what exists. */
struct side {
    const char *name;            /* the vdev's, for messages */
    uint16_t port_id;
    bool added, started;
    struct rte_mempool *pool;    /* the port's L2 receive buffers */
    struct cna_rdma_dev *dev;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct ibv_qp *qp;
    bool atomics;                /* the device executes atomics */
    enum ibv_mtu mtu;            /* the port's active MTU */
    uint8_t *buf;                /* the message, then the atomic word */
    size_t buf_len;
    uint64_t *word;
    union ibv_gid gid;           /* GID_INDEX's */
    uint32_t psn;                /* the first PSN this side sends */
};

struct options {
    uint32_t size;
    uint32_t iterations;
};

/* ---- messages ------------------------------------------------------------ */

/* Prints "rdma_hello: <what>: <strerror(err)>" and returns false, so that
 * a failing step reads `return fail(...)`. */
static bool fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, ": %s\n", strerror(err));
    va_end(ap);
    return false;
}

/* libibverbs has ibv_wc_status_str(), but an application of the PMD does
 * not link libibverbs: the enum's own names, which a driver engineer greps
 * for anyway. */
#define WC_STATUS(s) [s] = #s
static const char *const wc_status_names[] = {
    WC_STATUS(IBV_WC_SUCCESS),            WC_STATUS(IBV_WC_LOC_LEN_ERR),
    WC_STATUS(IBV_WC_LOC_QP_OP_ERR),      WC_STATUS(IBV_WC_LOC_EEC_OP_ERR),
    WC_STATUS(IBV_WC_LOC_PROT_ERR),       WC_STATUS(IBV_WC_WR_FLUSH_ERR),
    WC_STATUS(IBV_WC_MW_BIND_ERR),        WC_STATUS(IBV_WC_BAD_RESP_ERR),
    WC_STATUS(IBV_WC_LOC_ACCESS_ERR),     WC_STATUS(IBV_WC_REM_INV_REQ_ERR),
    WC_STATUS(IBV_WC_REM_ACCESS_ERR),     WC_STATUS(IBV_WC_REM_OP_ERR),
    WC_STATUS(IBV_WC_RETRY_EXC_ERR),      WC_STATUS(IBV_WC_RNR_RETRY_EXC_ERR),
    WC_STATUS(IBV_WC_LOC_RDD_VIOL_ERR),   WC_STATUS(IBV_WC_REM_INV_RD_REQ_ERR),
    WC_STATUS(IBV_WC_REM_ABORT_ERR),      WC_STATUS(IBV_WC_INV_EECN_ERR),
    WC_STATUS(IBV_WC_INV_EEC_STATE_ERR),  WC_STATUS(IBV_WC_FATAL_ERR),
    WC_STATUS(IBV_WC_RESP_TIMEOUT_ERR),   WC_STATUS(IBV_WC_GENERAL_ERR),
};

static const char *wc_status_name(enum ibv_wc_status status)
{
    const size_t n = sizeof wc_status_names / sizeof wc_status_names[0];
    return (size_t)status < n && wc_status_names[status] ? wc_status_names[status] : "unknown status";
}

static const char *gid_text(const union ibv_gid *gid, char text[INET6_ADDRSTRLEN])
{
    return inet_ntop(AF_INET6, gid->raw, text, INET6_ADDRSTRLEN);
}

/* ---- the ports ----------------------------------------------------------- */

/* Probes the vdev (as --vdev would have) and finds its ethdev port. A
 * device of that name from the command line would be taken for ours by
 * the probe: refused. */
static bool add_port(struct side *s, const struct vdev *v)
{
    s->name = v->name;
    if (rte_eth_dev_get_port_by_name(v->name, &s->port_id) == 0)
        return fail(EEXIST, "%s already exists (" PROG " creates its own ports: no --vdev)", v->name);
    int rc = rte_eal_hotplug_add("vdev", v->name, v->args);
    if (rc != 0)
        return fail(-rc, "cannot create port %s,%s", v->name, v->args);
    s->added = true;
    rc = rte_eth_dev_get_port_by_name(v->name, &s->port_id);
    return rc == 0 || fail(-rc, "%s: no ethdev port", v->name);
}

/* Started, the port's link comes up and carries RoCE. ethdev starts a port
 * configured with queues: one Rx and one Tx queue, on which this program
 * sends and receives nothing. */
static bool start_port(struct side *s)
{
    char pool_name[RTE_MEMPOOL_NAMESIZE];
    snprintf(pool_name, sizeof pool_name, PROG "_%u", s->port_id);
    s->pool = rte_pktmbuf_pool_create(pool_name, 1023, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
    if (s->pool == NULL)
        return fail(rte_errno, "%s: rte_pktmbuf_pool_create", s->name);

    const struct rte_eth_conf conf = {0};
    const unsigned int socket = rte_socket_id();
    int rc = rte_eth_dev_configure(s->port_id, 1, 1, &conf);
    if (rc == 0)
        rc = rte_eth_rx_queue_setup(s->port_id, 0, 256, socket, NULL, s->pool);
    if (rc == 0)
        rc = rte_eth_tx_queue_setup(s->port_id, 0, 256, socket, NULL);
    if (rc == 0)
        rc = rte_eth_dev_start(s->port_id);
    if (rc != 0)
        return fail(-rc, "%s: cannot configure and start port %u", s->name, s->port_id);
    s->started = true;
    return true;
}

/* A cabled port's link comes up once the port at the cable's other end
 * has started too. */
static bool wait_link_up(const struct side *s)
{
    struct rte_eth_link link = {0};
    for (int ms = 0; ms < LINK_TIMEOUT_MS; ms += 10) {
        if (rte_eth_link_get_nowait(s->port_id, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
            return true;
        rte_delay_ms(10);
    }
    return fail(ETIMEDOUT, "%s: link still down after %d ms", s->name, LINK_TIMEOUT_MS);
}

static bool close_port(struct side *s)
{
    bool ok = true;
    int rc;
    if (s->started && (rc = rte_eth_dev_stop(s->port_id)) != 0)
        ok = fail(-rc, "%s: rte_eth_dev_stop", s->name);
    if (s->added && (rc = rte_eth_dev_close(s->port_id)) != 0)
        ok = fail(-rc, "%s: rte_eth_dev_close", s->name);
    /* The ethdev is closed: removing the vdev detaches it from its bus. */
    if (s->added && (rc = rte_eal_hotplug_remove("vdev", s->name)) != 0)
        ok = fail(-rc, "%s: rte_eal_hotplug_remove", s->name);
    rte_mempool_free(s->pool);
    return ok;
}

/* ---- the verbs objects ---------------------------------------------------- */

static size_t round_up(size_t n, size_t align)
{
    return (n + align - 1) / align * align;
}

/* The buffer holds a message of `size` bytes and, 8-byte aligned after it,
 * the word atomics act on (the responder's) or return into (the
 * requester's). Ordinary process memory: the PMD maps an MR's pages for its
 * device, no DPDK memory needed. */
static bool alloc_buffer(struct side *s, uint32_t size)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t word_offset = round_up(size, sizeof(uint64_t));
    s->buf_len = word_offset + sizeof(uint64_t);
    s->buf = aligned_alloc(page, round_up(s->buf_len, page));
    if (s->buf == NULL)
        return fail(ENOMEM, "%s: a buffer of %" PRIu32 " bytes", s->name, size);
    s->word = (uint64_t *)(s->buf + word_offset);
    return true;
}

/* Remote access the MR and the QP grant the peer. */
static int remote_access(const struct side *s)
{
    return IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | (s->atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
}

/* The device, its PD, a CQ for both queues of the QP, the MR, and the QP
 * taken to INIT, where it can take receives already. */
static bool open_rdma(struct side *s, uint32_t size)
{
    s->dev = cna_rdma_open(s->port_id);
    if (s->dev == NULL)
        return fail(errno, "%s: cna_rdma_open(%u)", s->name, s->port_id);

    struct ibv_device_attr dev_attr;
    int rc = cna_rdma_query_device(s->dev, &dev_attr);
    if (rc != 0)
        return fail(rc, "%s: cna_rdma_query_device", s->name);
    s->atomics = dev_attr.atomic_cap != IBV_ATOMIC_NONE;
    struct ibv_port_attr port_attr;
    rc = cna_rdma_query_port(s->dev, IB_PORT, &port_attr);
    if (rc != 0)
        return fail(rc, "%s: cna_rdma_query_port", s->name);
    s->mtu = port_attr.active_mtu;

    s->pd = cna_rdma_alloc_pd(s->dev);
    if (s->pd == NULL)
        return fail(errno, "%s: cna_rdma_alloc_pd", s->name);
    /* One work request in flight at a time: a few CQEs are plenty. */
    s->cq = cna_rdma_create_cq(s->dev, 16, NULL, 0);
    if (s->cq == NULL)
        return fail(errno, "%s: cna_rdma_create_cq", s->name);
    if (!alloc_buffer(s, size))
        return false;
    s->mr = cna_rdma_reg_mr(s->pd, s->buf, s->buf_len, IBV_ACCESS_LOCAL_WRITE | remote_access(s));
    if (s->mr == NULL)
        return fail(errno, "%s: cna_rdma_reg_mr", s->name);

    struct ibv_qp_init_attr init = {
        .send_cq = s->cq,
        .recv_cq = s->cq,
        .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
    };
    s->qp = cna_rdma_create_qp(s->pd, &init);
    if (s->qp == NULL)
        return fail(errno, "%s: cna_rdma_create_qp", s->name);

    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_INIT,
        .pkey_index = 0,
        .port_num = IB_PORT,
        .qp_access_flags = (unsigned int)remote_access(s),
    };
    rc = cna_rdma_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    if (rc != 0)
        return fail(rc, "%s: cna_rdma_modify_qp(INIT)", s->name);

    if (cna_rdma_query_gid(s->dev, IB_PORT, GID_INDEX, &s->gid) != 0)
        return fail(errno, "%s: cna_rdma_query_gid(%d)", s->name, GID_INDEX);
    s->psn = (uint32_t)rte_rand() & 0xffffff;  /* PSNs have 24 bits */
    return true;
}

/* The path MTU both ends can carry: the smaller of their ports'. */
static enum ibv_mtu path_mtu(const struct side *a, const struct side *b)
{
    return a->mtu < b->mtu ? a->mtu : b->mtu;
}

/* INIT -> RTR (the peer's QPN, its first PSN and its GID as the GRH's
 * destination, which the adapter resolves to a MAC by ARP on the cable),
 * then RTR -> RTS (our own first PSN, and how patient to be). */
static bool connect_qp(struct side *s, const struct side *peer)
{
    struct ibv_qp_attr attr = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = path_mtu(s, peer),
        .dest_qp_num = peer->qp->qp_num,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = 1,     /* one READ or atomic in flight */
        .min_rnr_timer = 12,         /* 0.64 ms */
        .ah_attr = {
            .is_global = 1,          /* RoCE routes by GID: a GRH always */
            .grh = {.dgid = peer->gid, .sgid_index = GID_INDEX, .hop_limit = 64},
            .port_num = IB_PORT,
        },
    };
    int rc = cna_rdma_modify_qp(s->qp, &attr,
                                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    if (rc != 0)
        return fail(rc, "%s: cna_rdma_modify_qp(RTR)", s->name);

    attr = (struct ibv_qp_attr){
        .qp_state = IBV_QPS_RTS,
        .sq_psn = s->psn,
        .timeout = 14,               /* ACK timeout 4.096 us << 14: 67 ms */
        .retry_cnt = 7,
        .rnr_retry = 7,              /* an RNR NAK is retried for ever */
        .max_rd_atomic = 1,
    };
    rc = cna_rdma_modify_qp(s->qp, &attr,
                            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_MAX_QP_RD_ATOMIC);
    return rc == 0 || fail(rc, "%s: cna_rdma_modify_qp(RTS)", s->name);
}

/* Reverse order of creation: the QP uses the CQ, the MR and the PD; the
 * device must be empty to close. */
static bool close_rdma(struct side *s)
{
    bool ok = true;
    int rc;
    if (s->qp != NULL && (rc = cna_rdma_destroy_qp(s->qp)) != 0)
        ok = fail(rc, "%s: cna_rdma_destroy_qp", s->name);
    if (s->mr != NULL && (rc = cna_rdma_dereg_mr(s->mr)) != 0)
        ok = fail(rc, "%s: cna_rdma_dereg_mr", s->name);
    if (s->cq != NULL && (rc = cna_rdma_destroy_cq(s->cq)) != 0)
        ok = fail(rc, "%s: cna_rdma_destroy_cq", s->name);
    if (s->pd != NULL && (rc = cna_rdma_dealloc_pd(s->pd)) != 0)
        ok = fail(rc, "%s: cna_rdma_dealloc_pd", s->name);
    if (s->dev != NULL && cna_rdma_close(s->dev) != 0)
        ok = fail(errno, "%s: cna_rdma_close", s->name);
    free(s->buf);
    return ok;
}

/* ---- data and completions ---------------------------------------------------- */

/* Byte i of transfer `seed`: every transfer has its own bytes, and a packet
 * landing at the wrong offset does not repeat the right ones. */
static uint8_t pattern(uint32_t seed, uint32_t i)
{
    return (uint8_t)((i * 2654435761u + seed * 40503u) >> 24);
}

static void fill(uint8_t *buf, uint32_t size, uint32_t seed)
{
    for (uint32_t i = 0; i < size; i++)
        buf[i] = pattern(seed, i);
}

/* Where a transfer lands first holds the complement of what it brings:
 * every byte it fails to place shows. */
static void poison(uint8_t *buf, uint32_t size, uint32_t seed)
{
    for (uint32_t i = 0; i < size; i++)
        buf[i] = (uint8_t)~pattern(seed, i);
}

static bool verify(const char *what, const uint8_t *buf, uint32_t size, uint32_t seed)
{
    for (uint32_t i = 0; i < size; i++)
        if (buf[i] != pattern(seed, i)) {
            fprintf(stderr, PROG ": %s: byte %" PRIu32 " of %" PRIu32 " is 0x%02x, not 0x%02x\n", what, i, size,
                    buf[i], pattern(seed, i));
            return false;
        }
    return true;
}

/* The 8-byte value of transfer `seed`, for the atomics. */
static uint64_t word_value(uint32_t seed)
{
    return 0x0123456789abcdefull ^ (seed * 0x9e3779b97f4a7c15ull);
}

static bool verify_word(const char *what, const char *which, uint64_t got, uint64_t want)
{
    if (got == want)
        return true;
    fprintf(stderr, PROG ": %s: %s is 0x%016" PRIx64 ", not 0x%016" PRIx64 "\n", what, which, got, want);
    return false;
}

/* The next completion on `s`'s CQ, which must be the successful `opcode`
 * of work request `wr_id`: only one is ever outstanding per CQ here. */
static bool complete(struct side *s, const char *what, uint64_t wr_id, enum ibv_wc_opcode opcode,
                     struct ibv_wc *wc)
{
    const uint64_t deadline = rte_get_timer_cycles() + COMPLETION_TIMEOUT_S * rte_get_timer_hz();
    int n;
    while ((n = cna_rdma_poll_cq(s->cq, 1, wc)) == 0) {
        if (rte_get_timer_cycles() > deadline)
            return fail(ETIMEDOUT, "%s: %s: no completion in %d s", what, s->name, COMPLETION_TIMEOUT_S);
        rte_pause();
    }
    if (n < 0)
        return fail(EIO, "%s: %s: cna_rdma_poll_cq returned %d", what, s->name, n);
    if (wc->status != IBV_WC_SUCCESS) {
        fprintf(stderr, PROG ": %s: %s: completion %s (status %d, vendor error 0x%x)\n", what, s->name,
                wc_status_name(wc->status), (int)wc->status, wc->vendor_err);
        return false;
    }
    if (wc->wr_id != wr_id || wc->opcode != opcode) {
        fprintf(stderr, PROG ": %s: %s: completion of WR %" PRIu64 " opcode %d, expected WR %" PRIu64 " opcode %d\n",
                what, s->name, wc->wr_id, (int)wc->opcode, wr_id, (int)opcode);
        return false;
    }
    return true;
}

static struct ibv_sge sge(const struct side *s, void *addr, uint32_t length)
{
    return (struct ibv_sge){.addr = (uintptr_t)addr, .length = length, .lkey = s->mr->lkey};
}

/* Posts one signalled WR on the requester and waits for its completion. */
static bool execute(struct side *req, const char *what, struct ibv_send_wr *wr, enum ibv_wc_opcode opcode)
{
    struct ibv_send_wr *bad_wr;
    wr->send_flags = IBV_SEND_SIGNALED;
    int rc = cna_rdma_post_send(req->qp, wr, &bad_wr);
    if (rc != 0)
        return fail(rc, "%s: %s: cna_rdma_post_send", what, req->name);
    struct ibv_wc wc;
    return complete(req, what, wr->wr_id, opcode, &wc);
}

/* ---- the operations ------------------------------------------------------ */

/* Each takes the requester, the responder, the message size and the seed
 * of this transfer (also its WR ID), and checks the outcome. */

static bool op_send(struct side *req, struct side *resp, uint32_t size, uint32_t seed)
{
    fill(req->buf, size, seed);
    poison(resp->buf, size, seed);

    /* The receive first: a SEND that finds none is RNR-NAKed and retried. */
    struct ibv_sge recv_sge = sge(resp, resp->buf, size);
    struct ibv_recv_wr recv_wr = {.wr_id = seed, .sg_list = &recv_sge, .num_sge = 1};
    struct ibv_recv_wr *bad_recv;
    int rc = cna_rdma_post_recv(resp->qp, &recv_wr, &bad_recv);
    if (rc != 0)
        return fail(rc, "send: %s: cna_rdma_post_recv", resp->name);

    struct ibv_sge send_sge = sge(req, req->buf, size);
    struct ibv_send_wr wr = {.wr_id = seed, .sg_list = &send_sge, .num_sge = 1, .opcode = IBV_WR_SEND};
    struct ibv_wc wc;
    if (!execute(req, "send", &wr, IBV_WC_SEND) || !complete(resp, "send", seed, IBV_WC_RECV, &wc))
        return false;
    if (wc.byte_len != size) {
        fprintf(stderr, PROG ": send: %" PRIu32 " bytes received, not %" PRIu32 "\n", wc.byte_len, size);
        return false;
    }
    return verify("send", resp->buf, size, seed);
}

static bool op_write(struct side *req, struct side *resp, uint32_t size, uint32_t seed)
{
    fill(req->buf, size, seed);
    poison(resp->buf, size, seed);
    struct ibv_sge local = sge(req, req->buf, size);
    struct ibv_send_wr wr = {
        .wr_id = seed, .sg_list = &local, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
        .wr.rdma = {.remote_addr = (uintptr_t)resp->buf, .rkey = resp->mr->rkey},
    };
    /* Its completion means the responder acknowledged: the data is there. */
    return execute(req, "rdma write", &wr, IBV_WC_RDMA_WRITE) && verify("rdma write", resp->buf, size, seed);
}

static bool op_read(struct side *req, struct side *resp, uint32_t size, uint32_t seed)
{
    fill(resp->buf, size, seed);
    poison(req->buf, size, seed);
    struct ibv_sge local = sge(req, req->buf, size);
    struct ibv_send_wr wr = {
        .wr_id = seed, .sg_list = &local, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
        .wr.rdma = {.remote_addr = (uintptr_t)resp->buf, .rkey = resp->mr->rkey},
    };
    return execute(req, "rdma read", &wr, IBV_WC_RDMA_READ) && verify("rdma read", req->buf, size, seed);
}

/* An atomic on the responder's word, holding `before`; the requester's word
 * receives the value the word had, and the responder's must hold `after`. */
static bool run_atomic(struct side *req, struct side *resp, const char *what, struct ibv_send_wr *wr,
                   enum ibv_wc_opcode opcode, uint64_t before, uint64_t after)
{
    *resp->word = before;
    *req->word = ~before;
    struct ibv_sge local = sge(req, req->word, sizeof(uint64_t));
    wr->sg_list = &local;
    wr->num_sge = 1;
    wr->wr.atomic.remote_addr = (uintptr_t)resp->word;
    wr->wr.atomic.rkey = resp->mr->rkey;
    return execute(req, what, wr, opcode) && verify_word(what, "the value returned", *req->word, before) &&
           verify_word(what, "the responder's word", *resp->word, after);
}

static bool op_fetch_add(struct side *req, struct side *resp, uint32_t size, uint32_t seed)
{
    (void)size;
    const uint64_t before = word_value(seed), add = seed;
    struct ibv_send_wr wr = {.wr_id = seed, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .wr.atomic.compare_add = add};
    return run_atomic(req, resp, "fetch-and-add", &wr, IBV_WC_FETCH_ADD, before, before + add);
}

static bool op_cmp_swap(struct side *req, struct side *resp, uint32_t size, uint32_t seed)
{
    (void)size;
    const uint64_t before = word_value(seed), swap = ~before;
    struct ibv_send_wr wr = {
        .wr_id = seed, .opcode = IBV_WR_ATOMIC_CMP_AND_SWP,
        .wr.atomic = {.compare_add = before, .swap = swap},
    };
    return run_atomic(req, resp, "compare-and-swap", &wr, IBV_WC_COMP_SWAP, before, swap);
}

static const struct operation {
    const char *name;
    bool atomic;                 /* needs atomic_cap; moves 8 bytes */
    bool (*run)(struct side *req, struct side *resp, uint32_t size, uint32_t seed);
} operations[] = {
    {"send", false, op_send},
    {"rdma write", false, op_write},
    {"rdma read", false, op_read},
    {"fetch-and-add", true, op_fetch_add},
    {"compare-and-swap", true, op_cmp_swap},
};
#define NB_OPERATIONS (sizeof operations / sizeof operations[0])

/* Every operation `iterations` times, each transfer with its own seed; a
 * line for each operation once all its iterations checked out. */
static bool run_operations(struct side *req, struct side *resp, const struct options *o)
{
    for (uint32_t k = 0; k < NB_OPERATIONS; k++) {
        const struct operation *op = &operations[k];
        if (op->atomic && !(req->atomics && resp->atomics)) {
            printf(PROG ": %s skipped: the device has no atomics (atomic_cap IBV_ATOMIC_NONE)\n", op->name);
            continue;
        }
        for (uint32_t i = 0; i < o->iterations; i++) {
            const uint32_t seed = (uint32_t)(i * NB_OPERATIONS + k + 1);
            if (!op->run(req, resp, o->size, seed))
                return false;
        }
        const uint32_t bytes = op->atomic ? (uint32_t)sizeof(uint64_t) : o->size;
        printf(PROG ": %s %" PRIu32 " byte%s ok (%" PRIu32 " iteration%s)\n", op->name, bytes, bytes == 1 ? "" : "s",
               o->iterations, o->iterations == 1 ? "" : "s");
    }
    return true;
}

/* ---- the program ----------------------------------------------------------- */

static void print_side(const struct side *s)
{
    char gid[INET6_ADDRSTRLEN];
    printf(PROG ": %s: port %u, GID %d %s, QPN 0x%06" PRIx32 ", PSN 0x%06" PRIx32 "\n", s->name, s->port_id,
           GID_INDEX, gid_text(&s->gid, gid), s->qp->qp_num, s->psn);
}

static bool run(const struct options *o)
{
    struct side sides[NB_SIDES] = {{0}};
    struct side *req = &sides[0], *resp = &sides[1];
    bool ok = true;

    /* Both ports start before either link is awaited: each link needs the
     * other end. */
    for (int i = 0; ok && i < NB_SIDES; i++)
        ok = add_port(&sides[i], &vdevs[i]) && start_port(&sides[i]);
    for (int i = 0; ok && i < NB_SIDES; i++)
        ok = wait_link_up(&sides[i]);
    for (int i = 0; ok && i < NB_SIDES; i++)
        ok = open_rdma(&sides[i], o->size);
    ok = ok && connect_qp(req, resp) && connect_qp(resp, req);
    if (ok) {
        print_side(req);
        print_side(resp);
        printf(PROG ": connected, path MTU %d\n", 128 << path_mtu(req, resp));  /* IBV_MTU_256 is 1 */
        ok = run_operations(req, resp, o);
    }

    /* Whatever happened, undo what was done: RDMA before the ports. */
    for (int i = 0; i < NB_SIDES; i++)
        ok = close_rdma(&sides[i]) && ok;
    for (int i = 0; i < NB_SIDES; i++)
        ok = close_port(&sides[i]) && ok;
    return ok;
}

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s <EAL options> -- [options]\n"
            "  -s, --size BYTES      message size of the send, write and read (1..%u; default %u)\n"
            "  -n, --iterations N    times each operation runs (1..%u; default 1)\n"
            "  -h, --help            this text\n",
            prog, MAX_SIZE, DEFAULT_SIZE, MAX_ITERATIONS);
}

/* A decimal number in [min, max]. */
static bool parse_number(const char *text, uint32_t min, uint32_t max, uint32_t *value)
{
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max)
        return false;
    *value = (uint32_t)v;
    return true;
}

enum parse_result { PARSE_RUN, PARSE_HELP, PARSE_BAD };

static enum parse_result parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {
        {"size", required_argument, NULL, 's'},
        {"iterations", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct options){.size = DEFAULT_SIZE, .iterations = 1};
    int c;
    while ((c = getopt_long(argc, argv, "s:n:h", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (!parse_number(optarg, 1, MAX_SIZE, &o->size)) {
                fprintf(stderr, PROG ": invalid size '%s'\n", optarg);
                return PARSE_BAD;
            }
            break;
        case 'n':
            if (!parse_number(optarg, 1, MAX_ITERATIONS, &o->iterations)) {
                fprintf(stderr, PROG ": invalid iteration count '%s'\n", optarg);
                return PARSE_BAD;
            }
            break;
        case 'h':
            return PARSE_HELP;
        default:                 /* getopt_long said what it did not like */
            return PARSE_BAD;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        return PARSE_BAD;
    }
    return PARSE_RUN;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);  /* each line as it is printed, into a pipe too */
    const int eal_args = rte_eal_init(argc, argv);
    if (eal_args < 0) {
        fprintf(stderr, PROG ": EAL initialisation failed: %s\n", rte_strerror(rte_errno));
        return 1;
    }
    /* EAL left the program's name before the application's arguments. */
    struct options o;
    const enum parse_result parsed = parse_options(argc - eal_args, argv + eal_args, &o);
    if (parsed != PARSE_RUN) {
        usage(parsed == PARSE_HELP ? stdout : stderr, argv[0]);
        rte_eal_cleanup();
        return parsed == PARSE_HELP ? 0 : 2;
    }

    bool ok = run(&o);
    if (rte_eal_cleanup() != 0)
        ok = fail(rte_errno, "rte_eal_cleanup");
    if (ok)
        printf(PROG ": done\n");
    return ok ? 0 : 1;
}
