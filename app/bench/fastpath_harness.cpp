/* SPDX-License-Identifier: BSD-3-Clause
 * The smallest program that drives net_cna's fastpath, for callgrind: one
 * port on a loopback wire, 1 Rx and 1 Tx queue of 1024, and N rounds of
 * "send 32 fresh 64-byte frames, receive the 32 the adapter loops back, free
 * them". Only recv_pkts and xmit_pkts are measured (run_bench.py toggles
 * collection on around them), so everything else here may be as slow as it
 * likes; the adapter engine is a separate thread, very slow under valgrind,
 * so every wait is bounded.
 *
 *   fastpath_harness <EAL args, with -d librte_net_cna.so --vdev net_cna0> -- <rounds> [offloads|timestamp]
 *
 * `offloads` enables RSS (IPv4/UDP/TCP, over the one queue) and the Rx
 * checksum offload: the adapter then takes its general Rx path rather than
 * the plain lane, as in engine_bench, and the PMD its offload Rx function.
 * `timestamp` enables RTE_ETH_RX_OFFLOAD_TIMESTAMP alone: what the stamps
 * cost the fastpath. Every frame must come with its flag and a stamp that
 * never goes back, or the harness fails.
 *
 * Prints one line: a checksum of the received bytes (so the work cannot be
 * optimised away and a broken loop is visible), the packet count and how
 * many burst calls it took.
 */
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

namespace {

constexpr uint16_t BURST = 32;
constexpr uint16_t RING = 1024;
constexpr uint16_t FRAME = 64;
/* Under valgrind the engine may need a long time for one round trip. */
constexpr auto ROUND_TIMEOUT = std::chrono::seconds(60);

[[noreturn]] void die(const char* what)
{
    std::fprintf(stderr, "fastpath_harness: %s\n", what);
    std::exit(1);
}

bool expired(std::chrono::steady_clock::time_point start)
{
    return std::chrono::steady_clock::now() - start > ROUND_TIMEOUT;
}

/* An IPv4/UDP frame to the port's own MAC (so the vport accepts it without
 * promiscuous mode), like testpmd's tx_first frames. */
void build_template(uint8_t* frame, const rte_ether_addr& own_mac)
{
    std::memset(frame, 0, FRAME);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(frame);
    eth->dst_addr = own_mac;
    eth->src_addr = rte_ether_addr{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
    ip->version_ihl = RTE_IPV4_VHL_DEF;
    ip->total_length = rte_cpu_to_be_16(FRAME - sizeof(rte_ether_hdr));
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(RTE_IPV4(198, 18, 0, 1));
    ip->dst_addr = rte_cpu_to_be_32(RTE_IPV4(198, 18, 0, 2));
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
    udp->src_port = rte_cpu_to_be_16(9);
    udp->dst_port = rte_cpu_to_be_16(9);
    udp->dgram_len = rte_cpu_to_be_16(FRAME - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr));
}

uint64_t fnv1a(uint64_t h, const uint8_t* p, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

void setup_port(uint16_t port, rte_mempool* pool, bool offloads, bool timestamp)
{
    /* Like testpmd: mbufs of one pool, never shared, so the PMD may free
     * them in bulk where it can. */
    rte_eth_dev_info info;
    rte_eth_conf conf{};
    if (rte_eth_dev_info_get(port, &info) == 0)
        conf.txmode.offloads = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
    if (offloads) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV4_TCP;
        conf.rxmode.offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM | RTE_ETH_RX_OFFLOAD_RSS_HASH;
    }
    if (timestamp)
        conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
    if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
        rte_eth_rx_queue_setup(port, 0, RING, rte_socket_id(), nullptr, pool) != 0 ||
        rte_eth_tx_queue_setup(port, 0, RING, rte_socket_id(), nullptr) != 0 || rte_eth_dev_start(port) != 0)
        die("port set-up failed");
    const auto start = std::chrono::steady_clock::now();
    rte_eth_link link{};
    while (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status != RTE_ETH_LINK_UP) {
        if (expired(start))
            die("link did not come up");
        usleep(1000);
    }
}

} // namespace

int main(int argc, char** argv)
{
    const int eal_args = rte_eal_init(argc, argv);
    if (eal_args < 0)
        die("EAL initialisation failed");
    argc -= eal_args;
    argv += eal_args;
    const long rounds = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 1000;
    const bool offloads = argc > 2 && std::strcmp(argv[2], "offloads") == 0;
    const bool timestamp = argc > 2 && std::strcmp(argv[2], "timestamp") == 0;
    if (rounds <= 0)
        die("usage: fastpath_harness <EAL args> -- <rounds>");
    if (rte_eth_dev_count_avail() == 0)
        die("no port: pass -d <librte_net_cna.so> --vdev net_cna0");
    const uint16_t port = 0;

    rte_mempool* pool = rte_pktmbuf_pool_create("harness", 4095, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                static_cast<int>(rte_socket_id()));
    if (pool == nullptr)
        die("mbuf pool creation failed");
    setup_port(port, pool, offloads, timestamp);
    const int stamp_field = timestamp ? rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, nullptr) : -1;
    const int stamp_flag = timestamp ? rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, nullptr) : -1;
    if (timestamp && (stamp_field < 0 || stamp_flag < 0))
        die("the Rx timestamp's field or flag is not registered");
    uint64_t last_stamp = 0;

    rte_ether_addr mac;
    rte_eth_macaddr_get(port, &mac);
    uint8_t frame[FRAME];
    build_template(frame, mac);

    uint64_t checksum = 0xcbf29ce484222325ull;
    uint64_t received = 0, rx_calls = 0, tx_calls = 0;
    rte_mbuf* tx[BURST];
    rte_mbuf* rx[BURST];
    for (long round = 0; round < rounds; round++) {
        if (rte_pktmbuf_alloc_bulk(pool, tx, BURST) != 0)
            die("mbuf pool exhausted");
        for (uint16_t i = 0; i < BURST; i++) {
            auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(tx[i], FRAME));
            std::memcpy(data, frame, FRAME);
            /* A sequence number in the payload: every frame differs. */
            const uint32_t seq = static_cast<uint32_t>(round * BURST + i);
            std::memcpy(data + FRAME - sizeof(seq), &seq, sizeof(seq));
        }

        auto start = std::chrono::steady_clock::now();
        for (uint16_t sent = 0; sent < BURST;) {
            sent = static_cast<uint16_t>(sent + rte_eth_tx_burst(port, 0, tx + sent, BURST - sent));
            tx_calls++;
            if (sent < BURST) {
                if (expired(start))
                    die("Tx ring stayed full");
                usleep(10);
            }
        }

        /* Poll only once the adapter has counted the frames in: under
         * valgrind the engine is slow, and empty polls would be counted as
         * fastpath work. (The status block follows within the same pass.) */
        const uint64_t expected = received + BURST;
        rte_eth_stats stats{};
        while (rte_eth_stats_get(port, &stats) == 0 && stats.ipackets < expected) {
            if (expired(start))
                die("frames not looped back");
            usleep(100);
        }
        for (uint16_t got = 0; got < BURST;) {
            const uint16_t n = rte_eth_rx_burst(port, 0, rx, BURST - got);
            rx_calls++;
            for (uint16_t i = 0; i < n; i++) {
                checksum = fnv1a(checksum, rte_pktmbuf_mtod(rx[i], const uint8_t*), rx[i]->data_len);
                if (timestamp) {
                    const uint64_t stamp = *RTE_MBUF_DYNFIELD(rx[i], stamp_field, const rte_mbuf_timestamp_t*);
                    if (!(rx[i]->ol_flags & (uint64_t{1} << stamp_flag)) || stamp == 0 || stamp < last_stamp)
                        die("a frame without its Rx timestamp, or one that went back");
                    last_stamp = stamp;
                }
                rte_pktmbuf_free(rx[i]);
            }
            got = static_cast<uint16_t>(got + n);
            if (n == 0) {
                if (expired(start))
                    die("frames counted but not delivered");
                usleep(10);
            }
        }
        received += BURST;
    }
    std::printf("checksum %016llx packets %llu rx_calls %llu tx_calls %llu\n",
                static_cast<unsigned long long>(checksum), static_cast<unsigned long long>(received),
                static_cast<unsigned long long>(rx_calls), static_cast<unsigned long long>(tx_calls));

    rte_eth_dev_stop(port);
    rte_eth_dev_close(port);
    rte_eal_cleanup();
    return 0;
}
