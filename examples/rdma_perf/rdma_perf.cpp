/* SPDX-License-Identifier: BSD-3-Clause
 * rdma_perf: RC bandwidth and latency on net_cna ports, in perftest's
 * layout: SEND, RDMA WRITE, RDMA READ and atomics, sizes 2 B to 1 MiB.
 *
 *   rdma_perf <EAL options> -- [options]            server, on ethdev port 0
 *   rdma_perf <EAL options> -- [options] <host>     client: connects, runs, reports
 *   rdma_perf <EAL options> -- --cable [options]    both ends in this process,
 *                                                   ethdev ports 0 and 1, one thread
 *
 * Peers exchange perftest's fields (LID, QPN, PSN, rkey, address, GID) over
 * TCP, then agree on each size over the same connection. With --check
 * every payload is verified: the bytes written, read or sent carry a
 * pattern of the size, where they land holds its complement first, and
 * each atomic's returned value and the final target value are checked.
 */
#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rte_cycles.h>

#include "example_net.h"
#include "perf_side.h"

namespace {

using namespace cna::examples;
using namespace cna::examples::perf;

constexpr uint32_t MAX_SIZE = 1u << 20;
constexpr const char* RULE =
    "---------------------------------------------------------------------------------------";

struct Args {
    Options o;
    bool cable = false;
    uint16_t eth_port = 0;
    uint16_t port_mtu = 0;     /* the ethdev ports' MTU; 0: as configured */
    unsigned tcp_port = 18515;
    const char* server = nullptr;
};

bool parse_test(const char* name, Options* o)
{
    static const struct {
        const char* name;
        Test test;
    } tests[] = {{"send", Test::send}, {"write", Test::write}, {"read", Test::read}, {"atomic", Test::atomic}};
    for (const auto& t : tests)
        if (std::strcmp(name, t.name) == 0) {
            o->test = t.test;
            return true;
        }
    return false;
}

bool parse_sizes(const char* text, std::vector<uint32_t>* sizes)
{
    sizes->clear();
    for (const char* p = text; *p != '\0';) {
        char* end;
        const unsigned long v = std::strtoul(p, &end, 0);
        if (end == p || v == 0 || v > MAX_SIZE || (*end != ',' && *end != '\0'))
            return false;
        sizes->push_back(static_cast<uint32_t>(v));
        p = *end == ',' ? end + 1 : end;
    }
    return !sizes->empty();
}

bool parse(int argc, char** argv, Args* a)
{
    enum { OPT_CABLE = 256, OPT_CHECK, OPT_LAT, OPT_PSN, OPT_ETH_PORT, OPT_COUNTERS, OPT_PORT_MTU };
    static const option longs[] = {
        {"test", 1, nullptr, 'T'},      {"latency", 0, nullptr, OPT_LAT}, {"size", 1, nullptr, 's'},
        {"all", 0, nullptr, 'a'},       {"iters", 1, nullptr, 'n'},       {"tx-depth", 1, nullptr, 't'},
        {"rx-depth", 1, nullptr, 'r'},  {"cq-mod", 1, nullptr, 'Q'},      {"inline_size", 1, nullptr, 'I'},
        {"atomic_type", 1, nullptr, 'A'}, {"gid-index", 1, nullptr, 'x'}, {"mtu", 1, nullptr, 'm'},
        {"port", 1, nullptr, 'p'},      {"eth-port", 1, nullptr, OPT_ETH_PORT}, {"cable", 0, nullptr, OPT_CABLE},
        {"check", 0, nullptr, OPT_CHECK}, {"psn", 1, nullptr, OPT_PSN},   {"counters", 0, nullptr, OPT_COUNTERS},
        {"port-mtu", 1, nullptr, OPT_PORT_MTU}, {nullptr, 0, nullptr, 0}};
    Options& o = a->o;
    for (int c; (c = getopt_long(argc, argv, "T:s:an:t:r:Q:I:A:x:m:p:", longs, nullptr)) != -1;) {
        switch (c) {
        case 'T':
            if (!parse_test(optarg, &o))
                return false;
            break;
        case OPT_LAT: o.latency = true; break;
        case 's':
            if (!parse_sizes(optarg, &o.sizes))
                return false;
            break;
        case 'a':
            o.sizes.clear();
            for (uint32_t s = 2; s <= MAX_SIZE; s *= 2)
                o.sizes.push_back(s);
            break;
        case 'n': o.iters = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 't': o.tx_depth = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 'r': o.rx_depth = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 'Q': o.cq_mod = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 'I': o.max_inline = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 'A':
            if (std::strcmp(optarg, "CMP_AND_SWAP") != 0 && std::strcmp(optarg, "FETCH_AND_ADD") != 0)
                return false;
            o.cmp_swap = std::strcmp(optarg, "CMP_AND_SWAP") == 0;
            break;
        case 'x': o.gid_index = static_cast<int>(std::strtol(optarg, nullptr, 0)); break;
        case 'm': {
            const long m = std::strtol(optarg, nullptr, 0);
            if (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)
                return false;
            o.mtu = static_cast<ibv_mtu>(__builtin_ctz(static_cast<unsigned>(m)) - 7);
            break;
        }
        case 'p': a->tcp_port = static_cast<unsigned>(std::strtoul(optarg, nullptr, 0)); break;
        case OPT_ETH_PORT: a->eth_port = static_cast<uint16_t>(std::strtoul(optarg, nullptr, 0)); break;
        case OPT_CABLE: a->cable = true; break;
        case OPT_CHECK: o.check = true; break;
        case OPT_COUNTERS: o.counters = true; break;
        case OPT_PORT_MTU: a->port_mtu = static_cast<uint16_t>(std::strtoul(optarg, nullptr, 0)); break;
        case OPT_PSN: o.initial_psn = std::strtol(optarg, nullptr, 0) & 0xffffff; break;
        default: return false;
        }
    }
    if (optind == argc - 1 && !a->cable)
        a->server = argv[optind];
    else if (optind < argc)
        return false;
    if (o.test == Test::atomic)
        o.sizes = {8};
    return o.tx_depth >= 1 && o.tx_depth <= 4096 && o.rx_depth >= 16 && o.cq_mod >= 1;
}

void print_header(const Args& a, const Side& side)
{
    const Options& o = a.o;
    std::printf("%s\n", RULE);
    std::printf("                    %s %s Test\n", test_title(o.test), o.latency ? "Latency" : "BW");
    std::printf(" Dual-port       : OFF\t\tDevice         : cna (ethdev port %u%s)\n", a.eth_port,
                a.cable ? " and port 1, cabled" : "");
    std::printf(" Number of qps   : 1\t\tTransport type : IB\n");
    std::printf(" Connection type : RC\t\tUsing SRQ      : OFF\n");
    if (!o.latency)
        std::printf(" TX depth        : %u\n CQ Moderation   : %u\n", o.tx_depth,
                    o.test == Test::atomic ? 1 : o.cq_mod);
    if (o.test == Test::send)
        std::printf(" RX depth        : %u\n", o.rx_depth);
    std::printf(" Mtu             : %u[B]\n", 128u << side.mtu());
    std::printf(" Link type       : Ethernet\n GID index       : %d\n", o.gid_index);
    if (o.test == Test::send || o.test == Test::write)
        std::printf(" Max inline data : %u[B]\n", o.max_inline);
    if (o.test == Test::atomic)
        std::printf(" Atomic type     : %s\n", o.cmp_swap ? "CMP_AND_SWAP" : "FETCH_AND_ADD");
    std::printf(" rdma_cm QPs\t : OFF\n Data ex. method : %s\n", a.cable ? "in process" : "Ethernet");
    std::printf("%s\n", RULE);
}

void print_dest(const char* what, const Dest& d)
{
    std::printf(" %s address: LID 0x%04x QPN 0x%04x PSN 0x%06x RKey 0x%08x VAddr 0x%016llx\n", what, d.lid, d.qpn, d.psn,
                d.rkey, static_cast<unsigned long long>(d.vaddr));
    std::printf(" GID: %s\n", gid_text(d.gid).c_str());
}

void print_columns(const Options& o)
{
    std::printf("%s\n", RULE);
    if (o.latency)
        std::printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
                    "t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
    else
        std::printf(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n");
}

void print_bw_row(uint32_t size, uint32_t iters, const Side& req)
{
    const double avg_rate = iters / req.seconds();
    const double peak_rate = 1.0 / req.peak_seconds_per_message();
    std::printf(" %-10u %-10u     %-18.2f %-20.2f %.6f\n", size, iters, peak_rate * size * 8 / 1e9,
                avg_rate * size * 8 / 1e9, avg_rate / 1e6);
}

/* SEND and WRITE latency are half a round trip (perftest's one-way
 * figure); READ and atomics, which wait for their answer, the whole. */
void print_lat_row(uint32_t size, const Options& o, const Side& req)
{
    std::vector<double> us;
    const double per_cycle = (o.test == Test::send || o.test == Test::write ? 0.5 : 1.0) * 1e6 /
                             api::tsc_hz();
    for (uint64_t c : req.round_trips())
        us.push_back(static_cast<double>(c) * per_cycle);
    if (us.empty())
        return;
    std::sort(us.begin(), us.end());
    double sum = 0, sq = 0;
    for (double v : us)
        sum += v;
    const double avg = sum / static_cast<double>(us.size());
    for (double v : us)
        sq += (v - avg) * (v - avg);
    auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<size_t>(q * static_cast<double>(us.size())))]; };
    std::printf(" %-7u %-10zu     %-10.2f     %-10.2f   %-10.2f         %-10.2f     %-10.2f       %-10.2f              "
                "%-10.2f\n",
                size, us.size(), us.front(), us.back(), at(0.5), avg, std::sqrt(sq / static_cast<double>(us.size())),
                at(0.99), at(0.999));
}

void print_row(uint32_t size, const Options& o, const Side& req)
{
    if (o.latency)
        print_lat_row(size, o, req);
    else
        print_bw_row(size, o.iters != 0 ? o.iters : 5000, req);
}

/* Both ends in this process: one thread steps them in turn. */
bool run_cable(const Args& a)
{
    Side req(a.o, Role::requester, a.eth_port), resp(a.o, Role::responder, static_cast<uint16_t>(a.eth_port + 1));
    if (!req.open() || !resp.open() || !req.connect(resp.me()) || !resp.connect(req.me()))
        return false;
    print_header(a, req);
    print_dest("local", req.me());
    print_dest("remote", resp.me());
    print_columns(a.o);
    for (uint32_t size : a.o.sizes) {
        resp.prepare(size);
        req.prepare(size);
        while (!req.done() || !resp.done())
            if (!req.step() || !resp.step())
                return false;
        if (!req.verify() || !resp.verify())
            return false;
        print_row(size, a.o, req);
    }
    std::printf("%s\n", RULE);
    if (a.o.counters) {
        req.print_counters();
        resp.print_counters();
    }
    return true;
}

/* The per-size conversation: "size N" -> "ready", the run, "done" ->
 * "ok" or "bad"; "end" at the end. */
constexpr size_t LINE = 32;

bool say(int fd, const char* fmt, unsigned v = 0)
{
    char line[LINE] = {};
    std::snprintf(line, sizeof line, fmt, v);
    return write_all(fd, line, sizeof line);
}

bool hear(int fd, char (&line)[LINE]) { return read_all(fd, line, sizeof line) && line[LINE - 1] == '\0'; }

bool run_server(const Args& a, Side& side, int fd)
{
    for (;;) {
        char line[LINE];
        unsigned size;
        if (!hear(fd, line))
            return false;
        if (std::strcmp(line, "end") == 0) {
            if (a.o.counters)
                side.print_counters();
            return true;
        }
        if (std::sscanf(line, "size %u", &size) != 1 || size == 0 || size > MAX_SIZE)
            return false;
        side.prepare(size);
        if (!say(fd, "ready"))
            return false;
        while (!side.done())
            if (!side.step())
                return false;
        if (!hear(fd, line) || std::strcmp(line, "done") != 0)
            return false;
        const bool ok = side.verify();
        if (!say(fd, ok ? "ok" : "bad") || !ok)
            return false;
        std::printf(" %u bytes: %s\n", size, a.o.check ? "payload verified" : "done");
    }
}

bool run_client(const Args& a, Side& side, int fd)
{
    print_columns(a.o);
    for (uint32_t size : a.o.sizes) {
        char line[LINE];
        side.prepare(size);
        if (!say(fd, "size %u", size) || !hear(fd, line) || std::strcmp(line, "ready") != 0)
            return false;
        while (!side.done())
            if (!side.step())
                return false;
        if (!say(fd, "done") || !hear(fd, line))
            return false;
        if (std::strcmp(line, "ok") != 0) {
            std::fprintf(stderr, "the server found the %u-byte payload wrong\n", size);
            return false;
        }
        if (!side.verify())
            return false;
        print_row(size, a.o, side);
    }
    std::printf("%s\n", RULE);
    if (a.o.counters)
        side.print_counters();
    return say(fd, "end");
}

bool run_two_hosts(const Args& a)
{
    Side side(a.o, a.server ? Role::requester : Role::responder, a.eth_port);
    if (!side.open())
        return false;
    const int fd = tcp_connect(a.server, a.tcp_port);
    if (fd < 0)
        return false;
    char mine[DEST_MSG_LEN] = {}, theirs[DEST_MSG_LEN];
    encode(side.me(), mine);
    Dest peer;
    bool ok = write_all(fd, mine, sizeof mine) && read_all(fd, theirs, sizeof theirs) &&
              theirs[DEST_MSG_LEN - 1] == '\0' && decode(theirs, &peer);
    if (!ok)
        std::fprintf(stderr, "Couldn't exchange addresses with the peer\n");
    ok = ok && side.connect(peer);
    if (ok) {
        print_header(a, side);
        print_dest("local", side.me());
        print_dest("remote", peer);
        ok = a.server ? run_client(a, side, fd) : run_server(a, side, fd);
        if (!ok)
            std::fprintf(stderr, "rdma_perf: the test failed\n");
    }
    ::close(fd);
    return ok;
}

void usage(const char* prog)
{
    std::printf(
        "Usage:\n  %s <EAL options> -- [options]            server\n"
        "  %s <EAL options> -- [options] <host>     client\n"
        "  %s <EAL options> -- --cable [options]    both ends, ethdev ports N and N+1 of this process\n"
        "Options:\n"
        "  -T, --test=send|write|read|atomic   the operation (default write)\n"
        "      --latency                       latency instead of bandwidth\n"
        "  -s, --size=N[,N...]                 message sizes, 1 B to 1 MiB (default 65536; atomics 8)\n"
        "  -a, --all                           sizes 2 B to 1 MiB, powers of two\n"
        "  -n, --iters=N                       per size (default 5000, latency 1000)\n"
        "  -t, --tx-depth=N  -r, --rx-depth=N  -Q, --cq-mod=N   -I, --inline_size=N\n"
        "  -A, --atomic_type=CMP_AND_SWAP|FETCH_AND_ADD\n"
        "  -x, --gid-index=N  -m, --mtu=256..4096  -p, --port=TCP  --eth-port=N  --psn=N\n"
        "      --port-mtu=N                    the ethdev port's MTU (9000: a 4096-byte path MTU)\n"
        "      --check                         verify every payload byte and atomic result\n"
        "      --counters                      print the port's and the QP's RoCE counters at the end\n",
        prog, prog, prog);
}

uint16_t last_port(const Args& a) { return static_cast<uint16_t>(a.eth_port + (a.cable ? 1 : 0)); }

} // namespace

int main(int argc, char** argv)
{
    api::Environment env(argc, argv);
    if (env.args() < 0)
        return 1;
    Args a;
    argv[env.args()] = argv[0];
    if (!parse(argc - env.args(), argv + env.args(), &a)) {
        usage(argv[0]);
        return 1;
    }
    srand48(getpid() * time(nullptr));
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool ok =
        env.start_ports(a.eth_port, last_port(a), a.port_mtu) && (a.cable ? run_cable(a) : run_two_hosts(a));
    return ok ? 0 : 1;
}
