/* SPDX-License-Identifier: BSD-3-Clause
 * An RDMA CM application (librdmacm and libibverbs only, as any would be)
 * for what rdmacm-utils do not show: many connections made and ended in a
 * row with nothing left behind and how long each took, and a survivor's
 * view of a peer killed mid-connection. test_rdma_cm and the bench run it
 * under cna-rdma-run.
 *
 *   cm_probe serve ADDR PORT [events]  accepts connections until killed,
 *                                      ending each as its peer does, or
 *                                      as it fails; with "events", says
 *                                      "event NAME STATUS" for each event
 *                                      and "rejected" for a request it had
 *                                      no QP for
 *   cm_probe cycles ADDR PORT N        N times: connect, disconnect, destroy;
 *                                      then "cycles N fds B A" (open fds
 *                                      before and after) and "connect mean
 *                                      U us handshake mean H us cycle mean V
 *                                      us" (from rdma_resolve_addr, and from
 *                                      rdma_connect, to ESTABLISHED; the
 *                                      whole cycle)
 *   cm_probe resolve ADDR PORT         resolves the address: the event's name
 *                                      and status
 *   cm_probe hold ADDR PORT            connects with a receive posted, says
 *                                      "established", waits for a line on
 *                                      stdin, disconnects: "disconnected
 *                                      after S s", "flushed N"
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void die(const char *what)
{
    fprintf(stderr, "cm_probe: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (d == NULL)
        die("/proc/self/fd");
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The next event, which must be `want`; acknowledged. */
static void expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want, struct rdma_cm_id **id)
{
    struct rdma_cm_event *e;
    if (rdma_get_cm_event(ch, &e) != 0)
        die("rdma_get_cm_event");
    if (e->event != want) {
        fprintf(stderr, "cm_probe: %s (status %d) where %s was due\n", rdma_event_str(e->event), e->status,
                rdma_event_str(want));
        exit(1);
    }
    if (id != NULL)
        *id = e->id;
    rdma_ack_cm_event(e);
}

struct conn {
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    char buf[64];
};

static void free_qp(struct rdma_cm_id *id, struct conn *c)
{
    if (id->qp != NULL)
        rdma_destroy_qp(id);
    if (c->mr != NULL)
        ibv_dereg_mr(c->mr);
    if (c->cq != NULL)
        ibv_destroy_cq(c->cq);
    if (c->pd != NULL)
        ibv_dealloc_pd(c->pd);
}

/* The connection's PD, CQ, QP and MR; 0, or -1 with none of them left. */
static int try_make_qp(struct rdma_cm_id *id, struct conn *c)
{
    struct ibv_qp_init_attr attr = {0};
    memset(c, 0, sizeof(*c));
    c->pd = ibv_alloc_pd(id->verbs);
    c->cq = c->pd != NULL ? ibv_create_cq(id->verbs, 8, NULL, NULL, 0) : NULL;
    attr.send_cq = attr.recv_cq = c->cq;
    attr.cap.max_send_wr = attr.cap.max_recv_wr = 4;
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    attr.qp_type = IBV_QPT_RC;
    if (c->cq != NULL && rdma_create_qp(id, c->pd, &attr) == 0)
        c->mr = ibv_reg_mr(c->pd, c->buf, sizeof(c->buf), IBV_ACCESS_LOCAL_WRITE);
    if (c->mr != NULL)
        return 0;
    const int saved = errno;
    free_qp(id, c);
    errno = saved;
    return -1;
}

static void make_qp(struct rdma_cm_id *id, struct conn *c)
{
    if (try_make_qp(id, c) != 0)
        die("PD, CQ, QP and MR");
}

static void address(const char *host, const char *port, struct sockaddr_storage *out)
{
    struct addrinfo *ai;
    if (getaddrinfo(host, port, NULL, &ai) != 0)
        die("getaddrinfo");
    memcpy(out, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
}

/* A connection from this side, its QP in RTS; *handshake: the seconds
 * from rdma_connect to ESTABLISHED. */
static struct rdma_cm_id *connect_to(struct rdma_event_channel *ch, struct sockaddr_storage *dst, struct conn *c,
                                     double *handshake)
{
    struct rdma_cm_id *id;
    if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
        die("rdma_create_id");
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000) != 0)
        die("rdma_resolve_addr");
    expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
    if (rdma_resolve_route(id, 2000) != 0)
        die("rdma_resolve_route");
    expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
    make_qp(id, c);
    struct rdma_conn_param param = {.responder_resources = 1, .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
    const double asked = now();
    if (rdma_connect(id, &param) != 0)
        die("rdma_connect");
    expect(ch, RDMA_CM_EVENT_ESTABLISHED, NULL);
    *handshake = now() - asked;
    return id;
}

static _Noreturn void serve(struct sockaddr_storage *at, int say_events)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    struct rdma_cm_id *listen_id;
    if (ch == NULL || rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP) != 0)
        die("channel and listening ID");
    if (rdma_bind_addr(listen_id, (struct sockaddr *)at) != 0 || rdma_listen(listen_id, 16) != 0)
        die("bind and listen");
    printf("listening\n");
    fflush(stdout);
    for (;;) {
        struct rdma_cm_event *e;
        if (rdma_get_cm_event(ch, &e) != 0)
            die("rdma_get_cm_event");
        struct rdma_cm_id *id = e->id;
        enum rdma_cm_event_type type = e->event;
        if (say_events)
            printf("event %s %d\n", rdma_event_str(type), e->status);
        rdma_ack_cm_event(e);
        if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
            struct conn *c = malloc(sizeof(*c));
            if (c == NULL || try_make_qp(id, c) != 0) {
                if (say_events)
                    printf("rejected\n");
                free(c);
                rdma_reject(id, NULL, 0);
                rdma_destroy_id(id);
                continue;
            }
            id->context = c;
            struct rdma_conn_param param = {.responder_resources = 1, .initiator_depth = 1, .rnr_retry_count = 7};
            if (rdma_accept(id, &param) != 0)
                die("rdma_accept");
        } else if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_UNREACHABLE ||
                   type == RDMA_CM_EVENT_CONNECT_ERROR || type == RDMA_CM_EVENT_REJECTED) {
            struct conn *c = id->context;
            if (type == RDMA_CM_EVENT_DISCONNECTED)
                rdma_disconnect(id);
            free_qp(id, c);
            free(c);
            rdma_destroy_id(id);
        }
    }
}

static int cycles(struct sockaddr_storage *dst, int n)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (ch == NULL)
        die("rdma_create_event_channel");
    int before = -1;
    double connecting = 0, handshakes = 0;
    const double start = now();
    for (int i = 0; i < n; i++) {
        struct conn c;
        const double asked = now();
        double handshake;
        struct rdma_cm_id *id = connect_to(ch, dst, &c, &handshake);
        connecting += now() - asked;
        handshakes += handshake;
        if (rdma_disconnect(id) != 0)
            die("rdma_disconnect");
        expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
        free_qp(id, &c);
        if (rdma_destroy_id(id) != 0)
            die("rdma_destroy_id");
        if (i == 0)
            before = open_fds(); /* once the library and the device are up */
    }
    printf("cycles %d fds %d %d\n", n, before, open_fds());
    printf("connect mean %.0f us handshake mean %.0f us cycle mean %.0f us\n", connecting / n * 1e6,
           handshakes / n * 1e6, (now() - start) / n * 1e6);
    rdma_destroy_event_channel(ch);
    return 0;
}

static int hold(struct sockaddr_storage *dst)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    struct conn c;
    double handshake;
    if (ch == NULL)
        die("rdma_create_event_channel");
    struct rdma_cm_id *id = connect_to(ch, dst, &c, &handshake);
    struct ibv_sge sge = {(uintptr_t)c.buf, sizeof(c.buf), c.mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_recv(id->qp, &wr, &bad) != 0)
        die("ibv_post_recv");
    printf("established\n");
    fflush(stdout);
    char line[64];
    if (fgets(line, sizeof(line), stdin) == NULL)
        die("stdin");
    const double start = now();
    if (rdma_disconnect(id) != 0)
        die("rdma_disconnect");
    expect(ch, RDMA_CM_EVENT_DISCONNECTED, NULL);
    printf("disconnected after %.2f s\n", now() - start);
    struct ibv_wc wc;
    int flushed = 0;
    while (ibv_poll_cq(c.cq, 1, &wc) == 1)
        flushed += wc.wr_id == 7 && wc.status == IBV_WC_WR_FLUSH_ERR;
    printf("flushed %d\n", flushed);
    free_qp(id, &c);
    rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    return 0;
}

static int resolve(struct sockaddr_storage *dst)
{
    struct rdma_event_channel *ch = rdma_create_event_channel();
    struct rdma_cm_id *id;
    struct rdma_cm_event *e;
    if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
        die("channel and ID");
    if (rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000) != 0)
        die("rdma_resolve_addr");
    if (rdma_get_cm_event(ch, &e) != 0)
        die("rdma_get_cm_event");
    printf("%s %d\n", rdma_event_str(e->event), e->status);
    rdma_ack_cm_event(e);
    rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cm_probe serve|cycles|resolve|hold ADDR PORT [N|events]\n");
        return 2;
    }
    struct sockaddr_storage addr;
    address(argv[2], argv[3], &addr);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(argv[1], "serve") == 0)
        serve(&addr, argc == 5 && strcmp(argv[4], "events") == 0);
    if (strcmp(argv[1], "cycles") == 0 && argc == 5)
        return cycles(&addr, atoi(argv[4]));
    if (strcmp(argv[1], "hold") == 0)
        return hold(&addr);
    if (strcmp(argv[1], "resolve") == 0)
        return resolve(&addr);
    fprintf(stderr, "cm_probe: %s: not a mode\n", argv[1]);
    return 2;
}
