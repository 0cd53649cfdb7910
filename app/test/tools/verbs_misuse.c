/* SPDX-License-Identifier: BSD-3-Clause
 * verbs_misuse: a verbs application (libibverbs only) that commits, one
 * after the other, the mistakes applications make, on two devices whose
 * ports are cabled (cna0 and cna1 of cna-rdma-run), and checks each gets
 * the answer verbs specify: an errno from the post, or an error completion.
 * After each, a pair of healthy QPs still exchanges a message: the device
 * carries on. Prints "<case>: ok" per case, or why not; exits 0 if all were.
 * Its last objects it destroys in an exit handler.
 *
 *   verbs_misuse <gid index>
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include <infiniband/verbs.h>

#define MSG 64
#define DEPTH 8

struct side {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    union ibv_gid gid;
    char buf[4096];
};

struct conn {
    struct ibv_qp *a, *b; /* a on side 0, b on side 1 */
};

static struct side sides[2];
static int gid_index;
static int failures;

static void check(const char *what, int ok, const char *detail)
{
    printf("%s: %s%s\n", what, ok ? "ok" : "FAILED ", ok ? "" : detail);
    failures += !ok;
}

static struct ibv_qp *make_qp(struct side *s, uint32_t depth)
{
    struct ibv_qp_init_attr attr = {
        .send_cq = s->cq,
        .recv_cq = s->cq,
        .cap = {.max_send_wr = depth, .max_recv_wr = depth, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
    };
    return ibv_create_qp(s->pd, &attr);
}

/* RESET -> INIT -> RTR -> RTS towards `peer`, with a short retry timer:
 * a peer that is gone is found out in milliseconds. */
static int connect_qp(struct ibv_qp *qp, struct side *self, uint32_t peer_qpn, const union ibv_gid *peer_gid)
{
    (void)self;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT,
                            .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = peer_qpn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 1;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = *peer_gid;
    a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return -1;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 8; /* 4.096 us << 8: about 1 ms */
    a.retry_cnt = 1;
    a.rnr_retry = 1;
    a.max_rd_atomic = 1;
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                             IBV_QP_MAX_QP_RD_ATOMIC);
}

static int make_conn(struct conn *c, uint32_t depth)
{
    c->a = make_qp(&sides[0], depth);
    c->b = make_qp(&sides[1], depth);
    if (c->a == NULL || c->b == NULL)
        return -1;
    return connect_qp(c->a, &sides[0], c->b->qp_num, &sides[1].gid) ||
           connect_qp(c->b, &sides[1], c->a->qp_num, &sides[0].gid);
}

static void drop_conn(struct conn *c)
{
    if (c->a)
        ibv_destroy_qp(c->a);
    if (c->b)
        ibv_destroy_qp(c->b);
}

/* The next completion of side `s`'s CQ, within 5 s. */
static int next_wc(struct side *s, struct ibv_wc *wc)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int n = ibv_poll_cq(s->cq, 1, wc);
        if (n != 0)
            return n;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 5)
            return 0;
    }
}

static void drain(struct side *s)
{
    struct ibv_wc wc;
    while (ibv_poll_cq(s->cq, 1, &wc) > 0)
        ;
}

static int post_recv(struct ibv_qp *qp, struct side *s, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)s->buf + 2048, .length = MSG, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, struct side *s, enum ibv_wr_opcode op, uint32_t lkey, uint32_t rkey,
                     uint64_t remote)
{
    struct ibv_sge sge = {.addr = (uintptr_t)s->buf, .length = MSG, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED},
                       *bad;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return ibv_post_send(qp, &wr, &bad);
}

/* What every case ends with: fresh QPs exchange a SEND. */
static void healthy_exchange(const char *after)
{
    struct conn c = {0};
    char what[128];
    struct ibv_wc wc;
    snprintf(what, sizeof(what), "after %s, a healthy SEND", after);
    int ok = make_conn(&c, DEPTH) == 0 && post_recv(c.b, &sides[1], sides[1].mr->lkey) == 0 &&
             post_send(c.a, &sides[0], IBV_WR_SEND, sides[0].mr->lkey, 0, 0) == 0 && next_wc(&sides[0], &wc) == 1 &&
             wc.status == IBV_WC_SUCCESS && next_wc(&sides[1], &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
             wc.byte_len == MSG;
    check(what, ok, "");
    drop_conn(&c);
    drain(&sides[0]);
    drain(&sides[1]);
}

/* A post that must fail with `err` and name the first WR it refused. */
static void posting_past_the_queues(void)
{
    struct conn c = {0};
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr attr;
    if (make_conn(&c, DEPTH) != 0 || ibv_query_qp(c.a, &attr, IBV_QP_CAP, &init) != 0) {
        check("posting past the send queue", 0, "(no QP)");
        return;
    }
    const uint32_t sq = init.cap.max_send_wr, rq = init.cap.max_recv_wr;
    struct ibv_sge sge = {.addr = (uintptr_t)sides[0].buf, .length = MSG, .lkey = sides[0].mr->lkey};
    struct ibv_send_wr *swr = calloc(sq + 1, sizeof(*swr)), *sbad = NULL;
    struct ibv_recv_wr *rwr = calloc(rq + 1, sizeof(*rwr)), *rbad = NULL;
    for (uint32_t i = 0; i <= sq; i++)
        swr[i] = (struct ibv_send_wr){.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                      .next = i < sq ? &swr[i + 1] : NULL};
    for (uint32_t i = 0; i <= sq; i++) {
        swr[i].wr.rdma.remote_addr = (uintptr_t)sides[1].buf;
        swr[i].wr.rdma.rkey = sides[1].mr->rkey;
    }
    for (uint32_t i = 0; i <= rq; i++)
        rwr[i] = (struct ibv_recv_wr){.wr_id = i, .sg_list = &sge, .num_sge = 1, .next = i < rq ? &rwr[i + 1] : NULL};
    /* Nothing signaled and nothing polled: the first sq WRs fill the SQ. */
    int rc = ibv_post_send(c.a, swr, &sbad);
    check("posting past the send queue", rc == ENOMEM && sbad == &swr[sq], "(expected ENOMEM at the WR past it)");
    rc = ibv_post_recv(c.b, rwr, &rbad);
    check("posting past the receive queue", rc == ENOMEM && rbad == &rwr[rq], "(expected ENOMEM at the WR past it)");
    struct ibv_sge two[2] = {sge, sge};
    struct ibv_send_wr too_many = {.sg_list = two, .num_sge = 2, .opcode = IBV_WR_SEND};
    struct conn d = {0};
    rc = make_conn(&d, DEPTH) == 0 ? ibv_post_send(d.a, &too_many, &sbad) : -1;
    check("more SGEs than the QP has", rc == EINVAL && sbad == &too_many, "(expected EINVAL)");
    struct ibv_send_wr bad_op = {.sg_list = &sge, .num_sge = 1, .opcode = (enum ibv_wr_opcode)77};
    rc = d.a ? ibv_post_send(d.a, &bad_op, &sbad) : -1;
    check("an opcode verbs do not know", rc == EINVAL && sbad == &bad_op, "(expected EINVAL)");
    free(swr);
    free(rwr);
    drop_conn(&c);
    drop_conn(&d);
    drain(&sides[0]);
    drain(&sides[1]);
    healthy_exchange("posting past the queues");
}

/* A local key the device does not know: a local protection error, and the
 * QP's other work flushed. */
static void local_key_case(const char *what, uint32_t lkey)
{
    struct conn c = {0};
    struct ibv_wc wc;
    int ok = make_conn(&c, DEPTH) == 0 && post_send(c.a, &sides[0], IBV_WR_SEND, lkey, 0, 0) == 0 &&
             next_wc(&sides[0], &wc) == 1 && wc.status == IBV_WC_LOC_PROT_ERR;
    char detail[96];
    snprintf(detail, sizeof(detail), "(status %s)", ok ? "" : ibv_wc_status_str(wc.status));
    check(what, ok, detail);
    drop_conn(&c);
    drain(&sides[0]);
    drain(&sides[1]);
    healthy_exchange(what);
}

static void remote_key_of_a_deregistered_mr(void)
{
    struct conn c = {0};
    struct ibv_wc wc = {0};
    struct ibv_mr *gone = ibv_reg_mr(sides[1].pd, sides[1].buf, sizeof(sides[1].buf), IBV_ACCESS_LOCAL_WRITE |
                                                                                        IBV_ACCESS_REMOTE_WRITE);
    const uint32_t rkey = gone ? gone->rkey : 0;
    int ok = gone != NULL && ibv_dereg_mr(gone) == 0 && make_conn(&c, DEPTH) == 0 &&
             post_send(c.a, &sides[0], IBV_WR_RDMA_WRITE, sides[0].mr->lkey, rkey, (uintptr_t)sides[1].buf) == 0 &&
             next_wc(&sides[0], &wc) == 1 && wc.status == IBV_WC_REM_ACCESS_ERR;
    check("an RDMA WRITE to a deregistered MR", ok, ibv_wc_status_str(wc.status));
    /* The responder's QP reports it; the application reads the event and
     * acknowledges it, which its destroy waits for. (The other cases leave
     * theirs unread: a destroy takes them back, as the kernel's does.) */
    struct ibv_async_event event;
    struct pollfd pfd = {.fd = sides[1].ctx->async_fd, .events = POLLIN};
    ok = c.b != NULL && poll(&pfd, 1, 2000) == 1 && ibv_get_async_event(sides[1].ctx, &event) == 0;
    check("the responder's async event", ok && event.event_type == IBV_EVENT_QP_ACCESS_ERR && event.element.qp == c.b,
          ok ? ibv_event_type_str(event.event_type) : "(none)");
    if (ok)
        ibv_ack_async_event(&event);
    drop_conn(&c);
    drain(&sides[0]);
    drain(&sides[1]);
    healthy_exchange("an RDMA WRITE to a deregistered MR");
}

static void sending_to_a_destroyed_qp(void)
{
    struct conn c = {0};
    struct ibv_wc wc = {0};
    int ok = make_conn(&c, DEPTH) == 0 && ibv_destroy_qp(c.b) == 0;
    c.b = NULL;
    ok = ok && post_send(c.a, &sides[0], IBV_WR_SEND, sides[0].mr->lkey, 0, 0) == 0 && next_wc(&sides[0], &wc) == 1 &&
         wc.status == IBV_WC_RETRY_EXC_ERR;
    check("a SEND to a destroyed QP", ok, ibv_wc_status_str(wc.status));
    drop_conn(&c);
    drain(&sides[0]);
    drain(&sides[1]);
    healthy_exchange("a SEND to a destroyed QP");
}

static int open_side(struct side *s, const char *name)
{
    int n;
    struct ibv_device **list = ibv_get_device_list(&n);
    for (int i = 0; list && i < n; i++)
        if (strcmp(ibv_get_device_name(list[i]), name) == 0)
            s->ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (s->ctx == NULL)
        return -1;
    s->pd = ibv_alloc_pd(s->ctx);
    s->cq = s->pd ? ibv_create_cq(s->ctx, 4 * DEPTH + 64, NULL, NULL, 0) : NULL;
    s->mr = s->cq ? ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
                               IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
                  : NULL;
    return s->mr != NULL && ibv_query_gid(s->ctx, 1, gid_index, &s->gid) == 0 ? 0 : -1;
}

static int close_side(struct side *s)
{
    return ibv_dereg_mr(s->mr) | ibv_destroy_cq(s->cq) | ibv_dealloc_pd(s->pd) | ibv_close_device(s->ctx);
}

/* Registered before libibverbs loads the provider, so it runs after the
 * provider's own exit handler: the objects are destroyed there, as an
 * application may. */
static void close_sides_at_exit(void)
{
    const int rc = close_side(&sides[1]) | close_side(&sides[0]);
    printf("at exit, every destroy: %s\n", rc == 0 ? "ok" : "FAILED");
    fflush(stdout);
    if (rc != 0)
        _exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: verbs_misuse <gid index>\n");
        return 2;
    }
    gid_index = atoi(argv[1]);
    atexit(close_sides_at_exit);
    if (open_side(&sides[0], "cna0") != 0 || open_side(&sides[1], "cna1") != 0) {
        fprintf(stderr, "verbs_misuse: cannot open cna0 and cna1: %s\n", strerror(errno));
        return 1;
    }
    healthy_exchange("opening");
    posting_past_the_queues();
    local_key_case("a SEND with a key no MR has", 0xdead00);
    struct ibv_mr *gone = ibv_reg_mr(sides[0].pd, sides[0].buf, sizeof(sides[0].buf), IBV_ACCESS_LOCAL_WRITE);
    const uint32_t lkey = gone ? gone->lkey : 0;
    if (gone)
        ibv_dereg_mr(gone);
    local_key_case("a SEND from a deregistered MR", lkey);
    remote_key_of_a_deregistered_mr();
    sending_to_a_destroyed_qp();
    printf("%d failed\n", failures);
    return failures == 0 ? 0 : 1;
}
