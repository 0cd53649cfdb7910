/* SPDX-License-Identifier: BSD-3-Clause
 * flow_classifier: a two-port forwarder that leaves classification to the NIC.
 *
 * rte_flow rules on port 0 sort its traffic into classes inside the adapter:
 * each rule marks a frame with its class's number and steers it to the
 * class's Rx queues, so the software learns a frame's class from the mbuf,
 * without parsing a header. What no rule matches is spread by the port's own
 * RSS. Every frame goes out of the other port unchanged (port 1's traffic
 * back to port 0, unclassified).
 *
 * When port 0 is a net_cna PF with VFs (devarg vfs=N), it also gives each VF
 * a MAC address of its own through net_cna's API, rte_pmd_cna.h.
 *
 *   flow_classifier <EAL options> -- [--duration SECONDS] [--vf-mac-base MAC]
 *
 * On exit it prints what it counted, one fact a line:
 *   class vxlan: queue 1 packets 10
 *   class vxlan: total 10
 *   forwarded port 0 -> port 1: packets 29 dropped 0
 *   mbufs: 8480 of 8480 back in the pool
 */
#include <getopt.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pmd_cna.h>

namespace {

constexpr std::array<uint16_t, 2> PORTS = {0, 1};
constexpr uint16_t CLASSIFIED_PORT = 0; /* the port whose Rx the rules sort */
constexpr uint16_t NB_QUEUES = 4;       /* Rx and Tx: a frame of Rx queue q leaves on Tx queue q */
constexpr uint16_t NB_RXD = 512;
constexpr uint16_t NB_TXD = 512;
constexpr uint16_t BURST = 32;
constexpr unsigned MBUF_CACHE = 256;
/* Every ring full at once, plus the polling lcore's cache and the burst in
 * its hands: a pool any smaller could run dry and stall Rx. */
constexpr unsigned NB_MBUFS = PORTS.size() * NB_QUEUES * (NB_RXD + NB_TXD) + MBUF_CACHE + BURST;
/* The hash types of the ports' RSS and of the rules' RSS actions. */
constexpr uint64_t RSS_TYPES = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP;

constexpr int EXIT_USAGE = 2;

/* ---- the class table ------------------------------------------------------ */

/* One rule of a class: an IP version, a transport and, optionally, the
 * destination port. net_cna matches the IP version by the item's type, so
 * "UDP over any IP" takes a rule per version. */
struct Match {
    rte_flow_item_type l3; /* RTE_FLOW_ITEM_TYPE_IPV4 or _IPV6 */
    rte_flow_item_type l4; /* RTE_FLOW_ITEM_TYPE_UDP or _TCP */
    uint16_t dst_port;     /* 0: any */
};

/* A traffic class and where its frames go: one queue (a QUEUE action) or an
 * RSS action over several. A class's index is the MARK its rules put on its
 * frames. Class 0 has no rules: it is whatever no rule matched, which the
 * port's RSS spreads over all queues, the other classes' included: a queue
 * says where the work is done, the mark what the frame is. */
struct TrafficClass {
    const char* name;
    std::vector<uint16_t> queues;
    std::vector<Match> matches;
};

const std::vector<TrafficClass> CLASSES = {
    {"other", {}, {}},
    {"vxlan", {1}, {{RTE_FLOW_ITEM_TYPE_IPV4, RTE_FLOW_ITEM_TYPE_UDP, 4789},
                    {RTE_FLOW_ITEM_TYPE_IPV6, RTE_FLOW_ITEM_TYPE_UDP, 4789}}},
    {"tcp", {2, 3}, {{RTE_FLOW_ITEM_TYPE_IPV4, RTE_FLOW_ITEM_TYPE_TCP, 0},
                     {RTE_FLOW_ITEM_TYPE_IPV6, RTE_FLOW_ITEM_TYPE_TCP, 0}}},
};

/* ---- options ----------------------------------------------------------------- */

struct Options {
    unsigned duration = 0; /* seconds; 0: until SIGINT or SIGTERM */
    rte_ether_addr vf_mac_base{{0x02, 0xcf, 0x0f, 0x00, 0x00, 0x00}};
};

void usage(std::FILE* to, const char* prog)
{
    std::fprintf(to,
                 "usage: %s <EAL options> -- [--duration SECONDS] [--vf-mac-base MAC]\n"
                 "  --duration SECONDS   forward this long; 0 (default): until SIGINT or SIGTERM\n"
                 "  --vf-mac-base MAC    VF n of port 0 gets MAC + n (default 02:cf:0f:00:00:00)\n"
                 "  --help               this text\n"
                 "Ports 0 and 1 forward to each other; port 0's Rx is classified.\n",
                 prog);
}

enum class Parsed { run, help, bad };

Parsed parse_options(int argc, char** argv, Options& opt)
{
    static const option longopts[] = {
        {"duration", required_argument, nullptr, 'd'},
        {"vf-mac-base", required_argument, nullptr, 'm'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, nullptr)) != -1) {
        const std::string_view arg = optarg != nullptr ? optarg : "";
        switch (c) {
        case 'd': {
            const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), opt.duration);
            if (arg.empty() || ec != std::errc{} || end != arg.data() + arg.size()) {
                std::fprintf(stderr, "%s: invalid --duration '%s': expected whole seconds\n", argv[0], optarg);
                return Parsed::bad;
            }
            break;
        }
        case 'm':
            /* VFs are addressed by unicast MACs only */
            if (rte_ether_unformat_addr(optarg, &opt.vf_mac_base) != 0 ||
                !rte_is_unicast_ether_addr(&opt.vf_mac_base) || rte_is_zero_ether_addr(&opt.vf_mac_base)) {
                std::fprintf(stderr, "%s: invalid --vf-mac-base '%s': expected a unicast xx:xx:xx:xx:xx:xx\n",
                             argv[0], optarg);
                return Parsed::bad;
            }
            break;
        case 'h':
            return Parsed::help;
        default: /* getopt_long said what was wrong */
            return Parsed::bad;
        }
    }
    if (optind < argc) {
        std::fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return Parsed::bad;
    }
    return Parsed::run;
}

/* ---- ports ----------------------------------------------------------------------- */

bool failed(uint16_t port, const char* what, int rc)
{
    std::fprintf(stderr, "port %u: %s failed: %s\n", port, what, rte_strerror(-rc));
    return false;
}

bool start_port(uint16_t port, rte_mempool* pool)
{
    rte_eth_dev_info info;
    if (int rc = rte_eth_dev_info_get(port, &info); rc != 0)
        return failed(port, "rte_eth_dev_info_get", rc);
    if (info.max_rx_queues < NB_QUEUES || info.max_tx_queues < NB_QUEUES) {
        std::fprintf(stderr, "port %u: has %u Rx and %u Tx queues, needs %u of each\n", port, info.max_rx_queues,
                     info.max_tx_queues, NB_QUEUES);
        return false;
    }
    rte_eth_conf conf{};
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    /* ethdev refuses hash types the port cannot compute: ask only for those it can */
    conf.rx_adv_conf.rss_conf.rss_hf = RSS_TYPES & info.flow_type_rss_offloads;
    if (int rc = rte_eth_dev_configure(port, NB_QUEUES, NB_QUEUES, &conf); rc != 0)
        return failed(port, "rte_eth_dev_configure", rc);
    const auto socket = static_cast<unsigned>(rte_eth_dev_socket_id(port));
    for (uint16_t q = 0; q < NB_QUEUES; q++) {
        if (int rc = rte_eth_rx_queue_setup(port, q, NB_RXD, socket, nullptr, pool); rc != 0)
            return failed(port, "rte_eth_rx_queue_setup", rc);
        if (int rc = rte_eth_tx_queue_setup(port, q, NB_TXD, socket, nullptr); rc != 0)
            return failed(port, "rte_eth_tx_queue_setup", rc);
    }
    /* a forwarder passes on frames for any address, not only its own */
    if (int rc = rte_eth_promiscuous_enable(port); rc != 0)
        return failed(port, "rte_eth_promiscuous_enable", rc);
    if (int rc = rte_eth_dev_start(port); rc != 0)
        return failed(port, "rte_eth_dev_start", rc);
    rte_ether_addr mac;
    char text[RTE_ETHER_ADDR_FMT_SIZE] = "?";
    if (rte_eth_macaddr_get(port, &mac) == 0)
        rte_ether_format_addr(text, sizeof(text), &mac);
    std::printf("port %u: %s, MAC %s, %u Rx queues (RSS types 0x%" PRIx64 "), %u Tx queues\n", port,
                info.driver_name, text, NB_QUEUES, conf.rx_adv_conf.rss_conf.rss_hf, NB_QUEUES);
    return true;
}

/* Waits up to 5 s for the link: a frame sent before it is up is lost. */
void wait_for_link(uint16_t port)
{
    rte_eth_link link{};
    for (int i = 0; i < 50; i++) {
        if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (link.link_status == RTE_ETH_LINK_UP)
        std::printf("port %u: link up, %u Mbps\n", port, link.link_speed);
    else
        std::printf("port %u: link down (forwarding anyway)\n", port);
}

/* ---- the rules -------------------------------------------------------------------- */

const char* item_name(rte_flow_item_type type)
{
    switch (type) {
    case RTE_FLOW_ITEM_TYPE_IPV4: return "ipv4";
    case RTE_FLOW_ITEM_TYPE_IPV6: return "ipv6";
    case RTE_FLOW_ITEM_TYPE_UDP: return "udp";
    case RTE_FLOW_ITEM_TYPE_TCP: return "tcp";
    default: return "?";
    }
}

/* The rule in testpmd's flow syntax. (A stream: GCC 12 at -O3 warns
 * falsely of overlapping copies in `" " + std::to_string(q)`.) */
std::string describe(uint32_t mark, const TrafficClass& cls, const Match& m)
{
    std::ostringstream text;
    text << "eth / " << item_name(m.l3) << " / " << item_name(m.l4);
    if (m.dst_port != 0)
        text << " dst is " << m.dst_port;
    text << " => mark " << mark << (cls.queues.size() == 1 ? " / queue" : " / rss queues");
    for (uint16_t q : cls.queues)
        text << ' ' << q;
    return text.str();
}

rte_flow_item item(rte_flow_item_type type, const void* spec = nullptr, const void* mask = nullptr)
{
    rte_flow_item it{}; /* no spec: any such header */
    it.type = type;
    it.spec = spec;
    it.mask = mask;
    return it;
}

rte_flow_action action(rte_flow_action_type type, const void* conf = nullptr)
{
    rte_flow_action a{};
    a.type = type;
    a.conf = conf;
    return a;
}

/* Installs one rule of class `mark`. A rule the port cannot do is reported
 * and left out: its frames then come unmarked, and count as class 0. */
void install_rule(uint16_t port, uint32_t mark, const TrafficClass& cls, const Match& m)
{
    rte_flow_attr attr{};
    attr.ingress = 1;

    rte_flow_item_udp udp{}, udp_mask{};
    rte_flow_item_tcp tcp{}, tcp_mask{};
    udp.hdr.dst_port = tcp.hdr.dst_port = rte_cpu_to_be_16(m.dst_port);
    udp_mask.hdr.dst_port = tcp_mask.hdr.dst_port = RTE_BE16(0xffff);
    const bool is_udp = m.l4 == RTE_FLOW_ITEM_TYPE_UDP;
    const rte_flow_item l4 = m.dst_port == 0 ? item(m.l4)
                             : is_udp        ? item(m.l4, &udp, &udp_mask)
                                             : item(m.l4, &tcp, &tcp_mask);
    const rte_flow_item pattern[] = {item(RTE_FLOW_ITEM_TYPE_ETH), item(m.l3), l4, item(RTE_FLOW_ITEM_TYPE_END)};

    rte_flow_action_mark mark_conf{};
    mark_conf.id = mark;
    rte_flow_action_queue queue_conf{};
    queue_conf.index = cls.queues.front();
    rte_flow_action_rss rss_conf{}; /* the port's hash function and key */
    rss_conf.types = RSS_TYPES;
    rss_conf.queue_num = static_cast<uint32_t>(cls.queues.size());
    rss_conf.queue = cls.queues.data();
    const rte_flow_action actions[] = {
        action(RTE_FLOW_ACTION_TYPE_MARK, &mark_conf),
        cls.queues.size() == 1 ? action(RTE_FLOW_ACTION_TYPE_QUEUE, &queue_conf)
                               : action(RTE_FLOW_ACTION_TYPE_RSS, &rss_conf),
        action(RTE_FLOW_ACTION_TYPE_END),
    };

    const std::string rule = describe(mark, cls, m);
    /* validate asks whether the port can do the rule at all, and says why
     * not, without touching its table; create can still fail for want of
     * room */
    rte_flow_error error{};
    const char* failure = nullptr;
    if (rte_flow_validate(port, &attr, pattern, actions, &error) != 0)
        failure = "refused";
    else if (rte_flow_create(port, &attr, pattern, actions, &error) == nullptr)
        failure = "not created";
    if (failure == nullptr)
        std::printf("rule %s: %s\n", cls.name, rule.c_str());
    else
        std::printf("rule %s: %s %s by port %u: %s (its frames count as class %s)\n", cls.name, rule.c_str(),
                    failure, port, error.message != nullptr ? error.message : rte_strerror(rte_errno),
                    CLASSES[0].name);
}

void install_rules(uint16_t port)
{
    for (uint32_t mark = 1; mark < CLASSES.size(); mark++)
        for (const Match& m : CLASSES[mark].matches)
            install_rule(port, mark, CLASSES[mark], m);
}

/* ---- the PF's VFs ---------------------------------------------------------------- */

rte_ether_addr nth_mac(const rte_ether_addr& base, uint16_t n)
{
    uint64_t value = 0;
    for (uint8_t byte : base.addr_bytes)
        value = value << 8 | byte;
    value += n;
    rte_ether_addr mac;
    for (int i = RTE_ETHER_ADDR_LEN - 1; i >= 0; i--, value >>= 8)
        mac.addr_bytes[i] = static_cast<uint8_t>(value);
    return mac;
}

/* Gives VF n of the PF `port` the MAC base + n (the PF forces it: the VF's
 * driver cannot change it, and one that comes later finds it) and prints
 * what the PF knows of each VF. These calls wait for the adapter: they
 * belong to the control path, here before forwarding starts. */
void administer_vfs(uint16_t port, const rte_ether_addr& base)
{
    uint16_t count = 0;
    if (int rc = rte_pmd_cna_get_vf_count(port, &count); rc != 0) {
        std::printf("port %u: no VF administration: %s\n", port,
                    rc == -ENODEV ? "not a net_cna PF" : rte_strerror(-rc));
        return;
    }
    if (count == 0) {
        std::printf("port %u: no VFs (the devarg vfs=N enables them)\n", port);
        return;
    }
    for (uint16_t vf = 0; vf < count; vf++) {
        const rte_ether_addr mac = nth_mac(base, vf);
        if (int rc = rte_pmd_cna_set_vf_mac_addr(port, vf, &mac); rc != 0)
            std::printf("vf %u: MAC not set: %s\n", vf, rte_strerror(-rc));
        rte_pmd_cna_vf_info info{};
        if (int rc = rte_pmd_cna_get_vf_info(port, vf, &info); rc != 0) {
            std::printf("vf %u: no information: %s\n", vf, rte_strerror(-rc));
            continue;
        }
        char text[RTE_ETHER_ADDR_FMT_SIZE];
        rte_ether_format_addr(text, sizeof(text), &info.mac);
        std::printf("vf %u: mac %s forced %u acquired %u link_up %u port_vlan %u trusted %u spoofchk %u\n", vf,
                    text, info.mac_forced, info.acquired, info.link_up, info.port_vlan, info.trusted,
                    info.spoofchk);
    }
}

/* ---- forwarding --------------------------------------------------------------------- */

volatile std::sig_atomic_t stop_requested = 0;

void on_signal(int)
{
    stop_requested = 1;
}

struct Counts {
    /* port 0's frames by class and Rx queue */
    std::vector<std::array<uint64_t, NB_QUEUES>> by_class = decltype(by_class)(CLASSES.size());
    std::array<uint64_t, PORTS.size()> forwarded{}; /* by Rx port */
    std::array<uint64_t, PORTS.size()> dropped{};
};

/* The class the rule that matched the frame marked it with; class 0 for a
 * frame no rule matched. */
std::size_t class_of(const rte_mbuf* m)
{
    if ((m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) != 0 && m->hash.fdir.hi < CLASSES.size())
        return m->hash.fdir.hi;
    return 0;
}

/* One lcore polls every queue of both ports: with a handful of queues and
 * two CPUs, more lcores would only contend for them. */
void forward(const Options& opt, Counts& counts)
{
    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::seconds(opt.duration);
    std::printf("forwarding between ports %u and %u on lcore %u (%s)\n", PORTS[0], PORTS[1], rte_lcore_id(),
                opt.duration == 0 ? "until SIGINT or SIGTERM" : (std::to_string(opt.duration) + " s").c_str());
    while (!stop_requested && (opt.duration == 0 || clock::now() < deadline)) {
        for (std::size_t rx = 0; rx < PORTS.size(); rx++) {
            const uint16_t tx_port = PORTS[1 - rx];
            for (uint16_t q = 0; q < NB_QUEUES; q++) {
                rte_mbuf* burst[BURST];
                const uint16_t n = rte_eth_rx_burst(PORTS[rx], q, burst, BURST);
                if (n == 0)
                    continue;
                if (PORTS[rx] == CLASSIFIED_PORT)
                    for (uint16_t i = 0; i < n; i++)
                        counts.by_class[class_of(burst[i])][q]++;
                const uint16_t sent = rte_eth_tx_burst(tx_port, q, burst, n);
                counts.forwarded[rx] += sent;
                /* a full Tx ring: drop the rest rather than stall Rx */
                if (sent < n) {
                    counts.dropped[rx] += n - sent;
                    rte_pktmbuf_free_bulk(burst + sent, n - sent);
                }
            }
        }
    }
}

void report(const Counts& counts)
{
    for (std::size_t c = 0; c < CLASSES.size(); c++) {
        uint64_t total = 0;
        for (uint16_t q = 0; q < NB_QUEUES; q++) {
            std::printf("class %s: queue %u packets %" PRIu64 "\n", CLASSES[c].name, q, counts.by_class[c][q]);
            total += counts.by_class[c][q];
        }
        std::printf("class %s: total %" PRIu64 "\n", CLASSES[c].name, total);
    }
    for (std::size_t rx = 0; rx < PORTS.size(); rx++)
        std::printf("forwarded port %u -> port %u: packets %" PRIu64 " dropped %" PRIu64 "\n", PORTS[rx],
                    PORTS[1 - rx], counts.forwarded[rx], counts.dropped[rx]);
}

int run(int argc, char** argv)
{
    Options opt;
    switch (parse_options(argc, argv, opt)) {
    case Parsed::help: usage(stdout, argv[0]); return EXIT_SUCCESS;
    case Parsed::bad: usage(stderr, argv[0]); return EXIT_USAGE;
    case Parsed::run: break;
    }
    if (!std::ranges::all_of(PORTS, [](uint16_t p) { return rte_eth_dev_is_valid_port(p) != 0; })) {
        std::fprintf(stderr, "%s: needs ports 0 and 1 (e.g. --vdev net_cna0,... --vdev net_cna1,...), has %u\n",
                     argv[0], rte_eth_dev_count_avail());
        return EXIT_FAILURE;
    }
    rte_mempool* pool = rte_pktmbuf_pool_create("mbufs", NB_MBUFS, MBUF_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                static_cast<int>(rte_socket_id()));
    if (pool == nullptr) {
        std::fprintf(stderr, "cannot create the mbuf pool: %s\n", rte_strerror(rte_errno));
        return EXIT_FAILURE;
    }

    int status = EXIT_SUCCESS;
    Counts counts;
    if (std::ranges::all_of(PORTS, [pool](uint16_t p) { return start_port(p, pool); })) {
        for (uint16_t p : PORTS)
            wait_for_link(p);
        install_rules(CLASSIFIED_PORT);
        administer_vfs(CLASSIFIED_PORT, opt.vf_mac_base);
        forward(opt, counts);
    } else {
        status = EXIT_FAILURE;
    }

    /* Stopping a port frees what its Tx rings still hold, closing it its Rx
     * rings: then every mbuf must be back. */
    rte_flow_error error{};
    rte_flow_flush(CLASSIFIED_PORT, &error);
    for (uint16_t p : PORTS) {
        rte_eth_dev_stop(p);
        rte_eth_dev_close(p);
    }
    report(counts);
    const unsigned back = rte_mempool_avail_count(pool);
    std::printf("mbufs: %u of %u back in the pool\n", back, pool->size);
    if (back != pool->size) {
        std::fprintf(stderr, "mbuf leak: %u mbufs were not returned\n", pool->size - back);
        status = EXIT_FAILURE;
    }
    rte_mempool_free(pool);
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    /* line by line, so whoever reads the output through a pipe (a test, a
     * log collector) sees each line as it happens; before EAL, which writes
     * its log to stdout too */
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    const int eal_args = rte_eal_init(argc, argv);
    if (eal_args < 0) {
        std::fprintf(stderr, "%s: cannot initialise EAL: %s\n", argv[0], rte_strerror(rte_errno));
        return EXIT_FAILURE;
    }
    /* EAL leaves the program's name before the application's options */
    argc -= eal_args;
    argv += eal_args;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    const int status = run(argc, argv);
    rte_eal_cleanup();
    return status;
}
