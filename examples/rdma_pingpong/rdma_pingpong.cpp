/* SPDX-License-Identifier: BSD-3-Clause
 * rdma_pingpong: RC SEND/RECV ping-pong between two RDMA devices, on a
 * net_cna port. It speaks ibv_rc_pingpong's connection protocol (a TCP
 * exchange of "LID:QPN:PSN:GID", then "done") and prints its lines, so
 * either end may be Debian's ibv_rc_pingpong on another RoCE stack.
 *
 *   rdma_pingpong <EAL options> -- [options]            server
 *   rdma_pingpong <EAL options> -- [options] <host>     client
 *
 * Every message received is checked: without --chk it must be the 0x7b
 * fill ibv_rc_pingpong sends; with --chk (both ends rdma_pingpong) the
 * sender writes a pattern of the message's number, the receiver checks it.
 */
#include <getopt.h>
#include <poll.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cna_rdma.h"
#include "example_net.h"
#include "rc_endpoint.h"

namespace {

using namespace cna::examples;

constexpr uint64_t RECV_WRID = 1;
constexpr uint64_t SEND_WRID = 2;
constexpr uint8_t FILL = 0x7b;

struct Options {
    unsigned tcp_port = 18515;
    uint16_t eth_port = 0;
    unsigned size = 4096;
    ibv_mtu mtu = IBV_MTU_1024;
    unsigned rx_depth = 500;
    unsigned iters = 1000;
    int gid_index = -1;
    bool events = false;
    bool check_pattern = false;
    long initial_psn = -1;      /* -1: random, as ibv_rc_pingpong */
    const char* server = nullptr;
};

/* The exchange message: "LLLL:QQQQQQ:PPPPPP:" and the GID's 16 bytes as 32
 * hex digits, NUL-terminated: 52 bytes each way. */
constexpr size_t MSG_LEN = sizeof "0000:000000:000000:00000000000000000000000000000000";

void encode(const RcAddress& d, char (&msg)[MSG_LEN])
{
    std::snprintf(msg, MSG_LEN, "%04x:%06x:%06x:%s", d.lid, d.qpn, d.psn, gid_hex(d.gid).c_str());
}

bool decode(const char (&msg)[MSG_LEN], RcAddress* d)
{
    char gid[33] = {};
    return std::sscanf(msg, "%x:%x:%x:%32s", &d->lid, &d->qpn, &d->psn, gid) == 4 && gid_from_hex(gid, &d->gid);
}

void print_dest(const char* what, const RcAddress& d)
{
    std::printf("  %s address: %sLID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s\n", what,
                std::strcmp(what, "local") == 0 ? " " : "", d.lid, d.qpn, d.psn, gid_text(d.gid).c_str());
}

class Pingpong {
public:
    explicit Pingpong(const Options& o) : o_(o) {}

    bool open();
    bool exchange_and_connect();
    bool run();

private:
    bool connect_qp();
    bool post_recvs(unsigned n);
    bool post_send();
    bool complete(const ibv_wc& wc);
    bool check(unsigned message) const;

    const Options& o_;
    RcEndpoint ep_;  /* its buffer: the receive buffer, then the send buffer */
    RcAddress me_, peer_;
    unsigned routs_ = 0, rcnt_ = 0, scnt_ = 0;
    uint64_t pending_ = 0;
    unsigned events_ = 0;
};

bool Pingpong::open()
{
    cna_rdma_dev* dev = cna_rdma_open(o_.eth_port);
    if (dev == nullptr) {
        std::fprintf(stderr, "Couldn't open the RDMA device of port %u: %s\n", o_.eth_port, std::strerror(errno));
        return false;
    }
    const RcEndpoint::Shape shape{
        .buf_len = 2 * size_t{o_.size},
        .access = IBV_ACCESS_LOCAL_WRITE,
        .cqe = static_cast<int>(o_.rx_depth + 1),
        .max_send_wr = 1,
        .max_recv_wr = o_.rx_depth,
        .max_inline_data = 0,
        .initial_psn = o_.initial_psn,
    };
    if (!ep_.create(dev, shape))
        return false;
    std::memset(ep_.buf(), FILL, 2 * o_.size);
    if (!post_recvs(o_.rx_depth))
        return false;
    if (o_.events && cna_rdma_req_notify_cq(ep_.cq(), 0) != 0) {
        std::fprintf(stderr, "Couldn't request CQ notification\n");
        return false;
    }
    me_.qpn = ep_.qpn();
    me_.psn = ep_.psn();
    if (o_.gid_index >= 0 && !ep_.query_gid(o_.gid_index, &me_.gid))
        return false;
    print_dest("local", me_);
    return true;
}

/* ibv_rc_pingpong's path: a GRH only to a peer with a GID (one given
 * -g), one hop. */
bool Pingpong::connect_qp()
{
    uint64_t interface_id;
    std::memcpy(&interface_id, peer_.gid.raw + 8, 8);
    return ep_.connect(peer_, {.mtu = o_.mtu,
                               .max_rd_atomic = 1,
                               .min_rnr_timer = 12,
                               .global = interface_id != 0,
                               .hop_limit = 1,
                               .sgid_index = static_cast<uint8_t>(o_.gid_index < 0 ? 0 : o_.gid_index)});
}

bool Pingpong::exchange_and_connect()
{
    int fd = tcp_connect(o_.server, o_.tcp_port);
    if (fd < 0)
        return false;
    char mine[MSG_LEN], theirs[MSG_LEN];
    encode(me_, mine);
    bool ok;
    if (o_.server) {
        /* Client: ours, theirs, then "done". */
        ok = write_all(fd, mine, sizeof mine) && read_all(fd, theirs, sizeof theirs) && decode(theirs, &peer_) &&
             write_all(fd, "done", sizeof "done");
    } else {
        /* Server: theirs, connect, ours, then wait for "done". */
        char done[sizeof "done"];
        ok = read_all(fd, theirs, sizeof theirs) && decode(theirs, &peer_) && connect_qp() &&
             write_all(fd, mine, sizeof mine) && read_all(fd, done, sizeof done);
    }
    ::close(fd);
    if (!ok) {
        std::fprintf(stderr, "Couldn't exchange addresses with the peer\n");
        return false;
    }
    print_dest("remote", peer_);
    return !o_.server || connect_qp();
}

bool Pingpong::post_recvs(unsigned n)
{
    ibv_sge sge{reinterpret_cast<uint64_t>(ep_.buf()), o_.size, ep_.lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = RECV_WRID;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad;
    for (unsigned i = 0; i < n; i++) {
        if (cna_rdma_post_recv(ep_.qp(), &wr, &bad) != 0) {
            std::fprintf(stderr, "Couldn't post receive (%u)\n", routs_ + i);
            return false;
        }
    }
    routs_ += n;
    return true;
}

bool Pingpong::post_send()
{
    uint8_t* out = ep_.buf() + o_.size;
    if (o_.check_pattern)
        for (unsigned j = 0; j < o_.size; j++)
            out[j] = static_cast<uint8_t>(scnt_ * 31 + j);
    ibv_sge sge{reinterpret_cast<uint64_t>(out), o_.size, ep_.lkey()};
    ibv_send_wr wr{};
    wr.wr_id = SEND_WRID;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad;
    if (cna_rdma_post_send(ep_.qp(), &wr, &bad) != 0) {
        std::fprintf(stderr, "Couldn't post send\n");
        return false;
    }
    pending_ |= SEND_WRID;
    return true;
}

bool Pingpong::check(unsigned message) const
{
    for (unsigned j = 0; j < o_.size; j++) {
        const uint8_t want = o_.check_pattern ? static_cast<uint8_t>(message * 31 + j) : FILL;
        if (ep_.buf()[j] != want) {
            std::fprintf(stderr, "Message %u: byte %u is 0x%02x, not 0x%02x\n", message, j, ep_.buf()[j], want);
            return false;
        }
    }
    return true;
}

bool Pingpong::complete(const ibv_wc& wc)
{
    if (wc.status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "Failed status %d for wr_id %d\n", wc.status, static_cast<int>(wc.wr_id));
        return false;
    }
    if (wc.wr_id == SEND_WRID) {
        scnt_++;
    } else if (wc.wr_id == RECV_WRID) {
        if (wc.byte_len != o_.size || !check(rcnt_)) {
            std::fprintf(stderr, "Message %u: %u bytes, or not what was sent\n", rcnt_, wc.byte_len);
            return false;
        }
        if (--routs_ <= 1 && !post_recvs(o_.rx_depth - routs_))
            return false;
        rcnt_++;
    } else {
        std::fprintf(stderr, "Completion for unknown wr_id %d\n", static_cast<int>(wc.wr_id));
        return false;
    }
    pending_ &= ~wc.wr_id;
    if (scnt_ < o_.iters && pending_ == 0) {
        pending_ = RECV_WRID;
        return post_send();
    }
    return true;
}

bool Pingpong::run()
{
    pending_ = RECV_WRID;
    if (o_.server && !post_send())
        return false;
    timeval start, end;
    gettimeofday(&start, nullptr);
    while (rcnt_ < o_.iters || scnt_ < o_.iters) {
        if (o_.events) {
            pollfd pfd{cna_rdma_event_fd(ep_.dev()), POLLIN, 0};
            ibv_cq* cq;
            void* ctx;
            while (cna_rdma_get_cq_event(ep_.dev(), &cq, &ctx) != 0)
                if (poll(&pfd, 1, 5000) == 0) {
                    std::fprintf(stderr, "Failed to get cq_event\n");
                    return false;
                }
            events_++;
            cna_rdma_req_notify_cq(ep_.cq(), 0);
        }
        ibv_wc wc[2];
        int n;
        do {
            n = cna_rdma_poll_cq(ep_.cq(), 2, wc);
        } while (!o_.events && n == 0);
        for (int i = 0; i < n; i++)
            if (!complete(wc[i]))
                return false;
    }
    gettimeofday(&end, nullptr);
    const double usec = (end.tv_sec - start.tv_sec) * 1e6 + (end.tv_usec - start.tv_usec);
    const long long bytes = static_cast<long long>(o_.size) * o_.iters * 2;
    std::printf("%lld bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, usec / 1e6, bytes * 8. / usec);
    std::printf("%u iters in %.2f seconds = %.2f usec/iter\n", o_.iters, usec / 1e6, usec / o_.iters);
    cna_rdma_ack_cq_events(ep_.cq(), events_);
    return true;
}

bool parse(int argc, char** argv, Options* o)
{
    static const option longs[] = {{"port", 1, nullptr, 'p'},    {"eth-port", 1, nullptr, 'P'},
                                   {"size", 1, nullptr, 's'},    {"mtu", 1, nullptr, 'm'},
                                   {"rx-depth", 1, nullptr, 'r'}, {"iters", 1, nullptr, 'n'},
                                   {"gid-idx", 1, nullptr, 'g'}, {"events", 0, nullptr, 'e'},
                                   {"chk", 0, nullptr, 'c'},     {"psn", 1, nullptr, 'S'},
                                   {nullptr, 0, nullptr, 0}};
    for (int c; (c = getopt_long(argc, argv, "p:P:s:m:r:n:g:ecS:", longs, nullptr)) != -1;) {
        switch (c) {
        case 'p': o->tcp_port = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case 'P': o->eth_port = static_cast<uint16_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 's': o->size = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case 'm': {
            const long m = std::strtol(optarg, nullptr, 0);
            if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)
                return false;
            o->mtu = static_cast<ibv_mtu>(__builtin_ctz(static_cast<unsigned>(m)) - 7);
            break;
        }
        case 'r': o->rx_depth = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case 'n': o->iters = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case 'g': o->gid_index = static_cast<int>(std::strtol(optarg, nullptr, 0)); break;
        case 'e': o->events = true; break;
        case 'c': o->check_pattern = true; break;
        case 'S': o->initial_psn = std::strtol(optarg, nullptr, 0); break;
        default: return false;
        }
    }
    if (optind == argc - 1)
        o->server = argv[optind];
    else if (optind < argc)
        return false;
    return o->size != 0 && o->rx_depth >= 2 && o->iters != 0;
}

} // namespace

int main(int argc, char** argv)
{
    api::Environment env(argc, argv);
    if (env.args() < 0)
        return 1;
    Options o;
    argv[env.args()] = argv[0];
    if (!parse(argc - env.args(), argv + env.args(), &o)) {
        std::printf("Usage:\n  %s <EAL options> -- [options]          start a server\n"
                    "  %s <EAL options> -- [options] <host>   connect to the server at <host>\n"
                    "Options: -p/--port, -P/--eth-port, -s/--size, -m/--mtu, -r/--rx-depth, -n/--iters,\n"
                    "         -g/--gid-idx, -e/--events, -c/--chk (a pattern per message, checked),\n"
                    "         -S/--psn (the first PSN sent; default random)\n",
                    argv[0], argv[0]);
        return 1;
    }
    srand48(getpid() * time(nullptr));
    setvbuf(stdout, nullptr, _IOLBF, 0); /* each line as it is printed, also into a pipe */
    if (!env.start_ports(o.eth_port, o.eth_port))
        return 1;
    Pingpong pp(o);
    return pp.open() && pp.exchange_and_connect() && pp.run() ? 0 : 1;
}
