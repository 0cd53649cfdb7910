/* SPDX-License-Identifier: BSD-3-Clause
 * The port switch's transfer rules through rte_flow, on an embedded adapter
 * with a PF, two VFs and their representors in this process:
 *
 *   - how fast rules go in and out (rte_flow_create / rte_flow_destroy,
 *     one thread, each a ramrod and its completion): 100,000 rules of one
 *     mask, each for its own IPv4 destination;
 *   - what a frame's lookup costs as the table grows: VF 0 sends 64-byte
 *     frames that one rule forwards to VF 1, in a table of 1, 1,000 and
 *     100,000 rules, and VF 1's Rx rate is the engine's (one engine thread:
 *     the switching, the main lcore: VF 0's Tx and VF 1's Rx).
 *
 * The engine thread is pinned to a CPU of the process that no lcore runs
 * on, so that each has one (a thread the main lcore makes would otherwise
 * inherit its one CPU, and the two take turns).
 *
 *   switch_bench <EAL args, with -d librte_net_cna.so> -- [seconds per rate]
 *
 * Prints `switch rules: insert N/s, delete N/s` and one line per table
 * size, `switch lookup R rules: X Mpps`.
 */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sched.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_lcore.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint16_t BURST = 32;
constexpr uint16_t RING = 1024;
constexpr uint16_t FRAME = 64;
constexpr uint32_t MAX_RULES = 100000;

[[noreturn]] void die(const std::string& what)
{
    std::fprintf(stderr, "switch_bench: %s\n", what.c_str());
    std::exit(1);
}

uint16_t port_named(const std::string& name)
{
    uint16_t port = 0;
    if (rte_eth_dev_get_port_by_name(name.c_str(), &port) != 0)
        die("no port " + name);
    return port;
}

void start(uint16_t port, rte_mempool* pool)
{
    const rte_eth_conf conf{};
    if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 || rte_eth_rx_queue_setup(port, 0, RING, 0, nullptr, pool) != 0 ||
        rte_eth_tx_queue_setup(port, 0, RING, 0, nullptr) != 0 || rte_eth_dev_start(port) != 0)
        die("cannot start port " + std::to_string(port));
}

/* A transfer rule on the representor `on`: IPv4 to `dst` goes to VF `to`'s
 * representor's VF. */
rte_flow* forward(uint16_t on, uint32_t dst, uint16_t to)
{
    rte_flow_attr attr{};
    attr.transfer = 1;
    rte_flow_item_ipv4 spec{}, mask{};
    spec.hdr.dst_addr = rte_cpu_to_be_32(dst);
    mask.hdr.dst_addr = RTE_BE32(0xffffffff);
    const rte_flow_item pattern[] = {
        {RTE_FLOW_ITEM_TYPE_ETH, nullptr, nullptr, nullptr},
        {RTE_FLOW_ITEM_TYPE_IPV4, &spec, nullptr, &mask},
        {RTE_FLOW_ITEM_TYPE_END, nullptr, nullptr, nullptr},
    };
    rte_flow_action_ethdev port{to};
    const rte_flow_action actions[] = {
        {RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT, &port},
        {RTE_FLOW_ACTION_TYPE_END, nullptr},
    };
    rte_flow_error error{};
    rte_flow* flow = rte_flow_create(on, &attr, pattern, actions, &error);
    if (flow == nullptr)
        die(std::string("rte_flow_create: ") + (error.message ? error.message : "?"));
    return flow;
}

void destroy(uint16_t on, rte_flow* flow)
{
    rte_flow_error error{};
    if (rte_flow_destroy(on, flow, &error) != 0)
        die(std::string("rte_flow_destroy: ") + (error.message ? error.message : "?"));
}

double per_second(std::size_t n, Clock::duration d)
{
    return static_cast<double>(n) / std::chrono::duration<double>(d).count();
}

/* 64-byte IPv4/UDP frames from VF 0 to 10.0.0.1 (the one rule's) for
 * `seconds`, VF 1's Rx drained on the same lcore: VF 1's Rx rate, Mpps. */
double forward_rate(uint16_t vf0, uint16_t vf1, rte_mempool* pool, double seconds)
{
    rte_ether_addr src, dst;
    rte_eth_macaddr_get(vf0, &src);
    rte_eth_macaddr_get(vf1, &dst);
    uint64_t received = 0;
    rte_mbuf* pkts[BURST];
    Clock::time_point begin;
    for (int phase = 0; phase < 2; phase++) { /* a warm-up, then the measurement */
        begin = Clock::now();
        received = 0;
        const auto length = std::chrono::duration<double>(phase == 0 ? 0.3 : seconds);
        while (Clock::now() - begin < length) {
            if (rte_pktmbuf_alloc_bulk(pool, pkts, BURST) == 0) {
                for (rte_mbuf* m : pkts) {
                    auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
                    eth->dst_addr = dst;
                    eth->src_addr = src;
                    eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
                    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
                    std::memset(ip, 0, sizeof(*ip));
                    ip->version_ihl = RTE_IPV4_VHL_DEF;
                    ip->total_length = RTE_BE16(FRAME - sizeof(rte_ether_hdr));
                    ip->time_to_live = 64;
                    ip->next_proto_id = IPPROTO_UDP;
                    ip->src_addr = RTE_BE32(0x0a000002);
                    ip->dst_addr = RTE_BE32(0x0a000001);
                    m->data_len = m->pkt_len = FRAME;
                }
                const uint16_t sent = rte_eth_tx_burst(vf0, 0, pkts, BURST);
                rte_pktmbuf_free_bulk(pkts + sent, BURST - sent);
            }
            for (uint16_t n; (n = rte_eth_rx_burst(vf1, 0, pkts, BURST)) != 0;) {
                received += n;
                rte_pktmbuf_free_bulk(pkts, n);
            }
        }
    }
    return per_second(received, Clock::now() - begin) / 1e6;
}

/* A CPU of `allowed` that no lcore runs on, for the engine thread; empty
 * if every one is an lcore's. */
std::string engine_cpu_devarg(const cpu_set_t& allowed)
{
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        bool lcore = false;
        unsigned id;
        RTE_LCORE_FOREACH(id)
            lcore |= static_cast<int>(rte_lcore_to_cpu_id(static_cast<int>(id))) == cpu;
        if (!lcore)
            return ",engine_cpu=" + std::to_string(cpu);
    }
    std::fprintf(stderr, "switch_bench: no CPU beside the lcores: the engine thread shares the main lcore's\n");
    return "";
}

} // namespace

int main(int argc, char** argv)
{
    /* The process's CPUs, before the EAL pins this thread to its lcore. */
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        CPU_ZERO(&allowed);
    const int eal = rte_eal_init(argc, argv);
    if (eal < 0)
        die("EAL init failed");
    argc -= eal;
    argv += eal;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
    const std::string pf_devargs = "vfs=2,representor=[0-1]" + engine_cpu_devarg(allowed);
    if (rte_vdev_init("net_cna_bench", pf_devargs.c_str()) != 0 ||
        rte_vdev_init("net_cna_vf_bench0", "adapter=net_cna_bench,vf=0") != 0 ||
        rte_vdev_init("net_cna_vf_bench1", "adapter=net_cna_bench,vf=1") != 0)
        die("cannot probe the PF, its representors and its VFs");
    rte_mempool* pool = rte_pktmbuf_pool_create("bench", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
    if (pool == nullptr)
        die("no mbuf pool");
    const uint16_t pf = port_named("net_cna_bench");
    const uint16_t rep0 = port_named("net_cna_bench_representor_vf0");
    const uint16_t rep1 = port_named("net_cna_bench_representor_vf1");
    const uint16_t vf0 = port_named("net_cna_vf_bench0");
    const uint16_t vf1 = port_named("net_cna_vf_bench1");
    for (uint16_t port : {pf, rep0, rep1, vf0, vf1})
        start(port, pool);

    /* Insertion and deletion: 10.1.0.0 on, none of them the traffic's. */
    std::vector<rte_flow*> flows(MAX_RULES);
    auto t0 = Clock::now();
    for (uint32_t i = 0; i < MAX_RULES; i++)
        flows[i] = forward(rep0, 0x0a010000 + i, rep1);
    const double insert = per_second(MAX_RULES, Clock::now() - t0);
    t0 = Clock::now();
    for (rte_flow* flow : flows)
        destroy(rep0, flow);
    const double remove = per_second(MAX_RULES, Clock::now() - t0);
    std::printf("switch rules: insert %.0f/s, delete %.0f/s\n", insert, remove);

    /* Lookup: the traffic's rule, and the table filled up to each size with
     * rules of the same mask that match nothing of it. */
    rte_flow* active = forward(rep0, 0x0a000001, rep1);
    uint32_t filler = 0;
    for (uint32_t size : {1u, 1000u, MAX_RULES}) {
        for (; filler + 1 < size; filler++)
            flows[filler] = forward(rep0, 0x0a010000 + filler, rep1);
        std::printf("switch lookup %u rules: %.2f Mpps\n", size, forward_rate(vf0, vf1, pool, seconds));
        std::fflush(stdout);
    }
    for (uint32_t i = 0; i < filler; i++)
        destroy(rep0, flows[i]);
    destroy(rep0, active);
    for (uint16_t port : {vf0, vf1, rep0, rep1, pf})
        rte_eth_dev_stop(port);
    rte_vdev_uninit("net_cna_vf_bench0");
    rte_vdev_uninit("net_cna_vf_bench1");
    rte_vdev_uninit("net_cna_bench");
    rte_eal_cleanup();
    return 0;
}
