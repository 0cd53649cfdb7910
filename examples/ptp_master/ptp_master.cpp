/* SPDX-License-Identifier: BSD-3-Clause
 * ptp_master: an IEEE 1588v2 master on one ethdev port, with the port's
 * hardware timestamps (ethdev timesync): an ordinary clock, master only,
 * two-step, over IEEE 802.3 (ethertype 0x88f7, to 01:1b:19:00:00:00). It is
 * the peer DPDK's ptpclient example, a slave, needs.
 *
 *   ptp_master <EAL options> -- -p PORTMASK [-l LOG_SYNC_INTERVAL] [-c COUNT]
 *
 * Every 2^LOG_SYNC_INTERVAL seconds it sends a Sync, reads the time the port
 * stamped it with (t1) and sends it in a Follow_Up; it answers each Delay_Req
 * with a Delay_Resp that carries the time the port received it (t4). It
 * announces nothing and runs no best master clock algorithm: the slave must
 * take it for its master, as ptpclient does with the first Sync it sees.
 *
 * One line per completed exchange (a Delay_Req answered for the last Sync),
 * then, on exit, what it counted:
 *   seq 12 t1 1764512345.123456789 t4 1764512345.123512345
 *   exchanges 30, syncs 31, syncs without a tx timestamp 0, ...
 *   mbufs: 576 of 576 back in the pool
 */
#include <getopt.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>
#include <thread>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/* ---- PTP messages on the wire (IEEE 1588-2008, clause 13; annex F) ------ */

constexpr uint16_t PTP_ETHERTYPE = 0x88f7;
/* Where every message but the peer-delay ones goes (annex F). */
constexpr rte_ether_addr PTP_MULTICAST{{0x01, 0x1b, 0x19, 0x00, 0x00, 0x00}};
constexpr uint8_t PTP_VERSION = 2;
constexpr uint8_t DOMAIN = 0;
constexpr uint16_t PORT_NUMBER = 1; /* an ordinary clock has one port, numbered from 1 */

/* messageType, the low nibble of the first byte (transportSpecific, the high
 * nibble, is 0: ptpclient compares the whole byte). */
enum class MessageType : uint8_t { sync = 0x0, delay_req = 0x1, follow_up = 0x8, delay_resp = 0x9 };

/* controlField: obsolete in version 2 but still set, for version 1 hardware
 * and parsers that look at it. */
constexpr uint8_t control_of(MessageType type)
{
    switch (type) {
    case MessageType::sync: return 0;
    case MessageType::delay_req: return 1;
    case MessageType::follow_up: return 2;
    case MessageType::delay_resp: return 3;
    }
    return 5;
}

constexpr uint8_t FLAG0_TWO_STEP = 0x02; /* flagField[0]: a Follow_Up carries the Sync's time */

struct __attribute__((packed)) WireTimestamp {
    rte_be16_t seconds_hi; /* seconds are 48 bits */
    rte_be32_t seconds_lo;
    rte_be32_t nanoseconds;
};

struct __attribute__((packed)) PortIdentity {
    uint8_t clock_identity[8];
    rte_be16_t port_number;
};

struct __attribute__((packed)) PtpHeader {
    uint8_t message_type;
    uint8_t version;
    rte_be16_t message_length;
    uint8_t domain_number;
    uint8_t reserved1;
    uint8_t flags[2];
    rte_be64_t correction; /* ns * 2^16 */
    uint8_t reserved2[4];
    PortIdentity source_port_identity;
    rte_be16_t sequence_id;
    uint8_t control;
    int8_t log_message_interval;
};

/* Sync, Follow_Up and Delay_Req: the header and one timestamp. */
struct __attribute__((packed)) TimestampMessage {
    PtpHeader header;
    WireTimestamp timestamp;
};

struct __attribute__((packed)) DelayResp {
    PtpHeader header;
    WireTimestamp receive_timestamp;
    PortIdentity requesting_port_identity;
};

static_assert(sizeof(PtpHeader) == 34 && sizeof(TimestampMessage) == 44 && sizeof(DelayResp) == 54);

WireTimestamp to_wire(const timespec& t)
{
    const auto seconds = static_cast<uint64_t>(t.tv_sec);
    return {rte_cpu_to_be_16(static_cast<uint16_t>(seconds >> 32)), rte_cpu_to_be_32(static_cast<uint32_t>(seconds)),
            rte_cpu_to_be_32(static_cast<uint32_t>(t.tv_nsec))};
}

/* The EUI-64 the IEEE derives from a MAC (EUI-48): ff:fe in the middle. */
PortIdentity port_identity_of(const rte_ether_addr& mac)
{
    const uint8_t* m = mac.addr_bytes;
    return {{m[0], m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]}, rte_cpu_to_be_16(PORT_NUMBER)};
}

/* ---- options ------------------------------------------------------------- */

struct Options {
    uint16_t port = 0;
    int log_sync_interval = -3; /* 125 ms */
    uint64_t count = 0;         /* exchanges before exiting; 0: until SIGINT or SIGTERM */
};

/* 2^-7 s leaves room for the wait for a Sync's Tx stamp; 2^4 s is the
 * longest interval the default profile's range allows to be configured. */
constexpr int MIN_LOG_SYNC_INTERVAL = -7;
constexpr int MAX_LOG_SYNC_INTERVAL = 4;
constexpr int EXIT_USAGE = 2;

void usage(std::FILE* to, const char* prog)
{
    std::fprintf(to,
                 "usage: %s <EAL options> -- -p PORTMASK [-l LOG_SYNC_INTERVAL] [-c COUNT]\n"
                 "  -p PORTMASK           hexadecimal mask of exactly one port: the master's\n"
                 "  -l LOG_SYNC_INTERVAL  a Sync every 2^N s, N in %d..%d (default -3: 125 ms)\n"
                 "  -c COUNT              exit after COUNT exchanges; 0 (default): at SIGINT or SIGTERM\n"
                 "  -h                    this text\n",
                 prog, MIN_LOG_SYNC_INTERVAL, MAX_LOG_SYNC_INTERVAL);
}

/* The whole of text as a number in base, or nothing. */
template <typename Number> std::optional<Number> parse_number(std::string_view text, int base = 10)
{
    Number value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::optional<uint16_t> parse_portmask(std::string_view text, const char* prog)
{
    if (text.starts_with("0x") || text.starts_with("0X"))
        text.remove_prefix(2);
    const auto mask = parse_number<uint64_t>(text, 16);
    if (!mask || std::popcount(*mask) != 1) {
        std::fprintf(stderr, "%s: invalid portmask '%s': expected hexadecimal with exactly one bit set\n", prog,
                     optarg);
        return std::nullopt;
    }
    const auto port = static_cast<unsigned>(std::countr_zero(*mask));
    if (port >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(static_cast<uint16_t>(port))) {
        std::fprintf(stderr, "%s: portmask '%s' names port %u, which does not exist (ports available: %u)\n", prog,
                     optarg, port, static_cast<unsigned>(rte_eth_dev_count_avail()));
        return std::nullopt;
    }
    return static_cast<uint16_t>(port);
}

enum class Parsed { run, help, bad };

Parsed parse_options(int argc, char** argv, Options& opt)
{
    bool have_port = false;
    int c;
    while ((c = getopt(argc, argv, "p:l:c:h")) != -1) {
        const std::string_view arg = optarg != nullptr ? optarg : "";
        switch (c) {
        case 'p': {
            const auto port = parse_portmask(arg, argv[0]);
            if (!port)
                return Parsed::bad;
            opt.port = *port;
            have_port = true;
            break;
        }
        case 'l': {
            const auto log = parse_number<int>(arg);
            if (!log || *log < MIN_LOG_SYNC_INTERVAL || *log > MAX_LOG_SYNC_INTERVAL) {
                std::fprintf(stderr, "%s: invalid log sync interval '%s': expected an integer in %d..%d\n", argv[0],
                             optarg, MIN_LOG_SYNC_INTERVAL, MAX_LOG_SYNC_INTERVAL);
                return Parsed::bad;
            }
            opt.log_sync_interval = *log;
            break;
        }
        case 'c': {
            const auto count = parse_number<uint64_t>(arg);
            if (!count) {
                std::fprintf(stderr, "%s: invalid count '%s': expected a whole number (0: forever)\n", argv[0],
                             optarg);
                return Parsed::bad;
            }
            opt.count = *count;
            break;
        }
        case 'h':
            return Parsed::help;
        default: /* getopt named the option */
            return Parsed::bad;
        }
    }
    if (optind < argc) {
        std::fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return Parsed::bad;
    }
    if (!have_port) {
        std::fprintf(stderr, "%s: -p PORTMASK is required\n", argv[0]);
        return Parsed::bad;
    }
    return Parsed::run;
}

/* ---- the port ------------------------------------------------------------ */

constexpr uint16_t NB_RXD = 256;
constexpr uint16_t NB_TXD = 256;
constexpr uint16_t BURST = 32;
constexpr unsigned MBUF_CACHE = 32;
/* Both rings full, the lcore's cache and a burst in hand. */
constexpr unsigned NB_MBUFS = NB_RXD + NB_TXD + MBUF_CACHE + BURST;

bool failed(int rc, uint16_t port, const char* what)
{
    if (rc < 0)
        std::fprintf(stderr, "port %u: %s failed: %s\n", port, what, rte_strerror(-rc));
    return rc < 0;
}

bool start_port(uint16_t port, rte_mempool* pool)
{
    rte_eth_dev_info info;
    if (failed(rte_eth_dev_info_get(port, &info), port, "getting its device info"))
        return false;
    rte_eth_conf conf{};
    /* Some PMDs honour RTE_MBUF_F_TX_IEEE1588_TMST on their full Tx path
     * only, which a Tx offload selects. */
    conf.txmode.offloads = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    uint16_t nb_rxd = NB_RXD, nb_txd = NB_TXD;
    const int socket = rte_eth_dev_socket_id(port);
    return !failed(rte_eth_dev_configure(port, 1, 1, &conf), port, "configure") &&
           !failed(rte_eth_dev_adjust_nb_rx_tx_desc(port, &nb_rxd, &nb_txd), port, "adjusting its ring sizes") &&
           !failed(rte_eth_rx_queue_setup(port, 0, nb_rxd, socket, nullptr, pool), port, "Rx queue setup") &&
           !failed(rte_eth_tx_queue_setup(port, 0, nb_txd, socket, nullptr), port, "Tx queue setup") &&
           !failed(rte_eth_dev_start(port), port, "start") &&
           !failed(rte_eth_timesync_enable(port), port, "timesync enable") &&
           /* the PTP multicast address is in no filter of the port's */
           !failed(rte_eth_promiscuous_enable(port), port, "promiscuous enable");
}

void stop_port(uint16_t port)
{
    rte_eth_timesync_disable(port);
    failed(rte_eth_dev_stop(port), port, "stop");
    failed(rte_eth_dev_close(port), port, "close");
}

/* ---- the master ------------------------------------------------------------ */

struct SentSync {
    uint16_t sequence_id;
    timespec t1;
};

struct Counters {
    uint64_t exchanges = 0;
    uint64_t syncs = 0;
    uint64_t syncs_unstamped = 0;         /* no Tx stamp: no Follow_Up */
    uint64_t delay_reqs_unstamped = 0;    /* no Rx stamp: no Delay_Resp */
    uint64_t delay_reqs_of_no_sync = 0;   /* answered, but not for the last Sync with a Follow_Up */
    uint64_t send_failures = 0;
};

struct Master {
    uint16_t port = 0;
    rte_mempool* pool = nullptr;
    rte_ether_addr mac{};
    PortIdentity identity{};
    int8_t log_sync_interval = 0;
    uint16_t next_sequence_id = 0;
    /* A Delay_Req of its sequenceId completes an exchange. */
    std::optional<SentSync> last_sync;
    bool link_up = false;
    Counters counted;
};

volatile std::sig_atomic_t stop_requested = 0;

void on_signal(int) { stop_requested = 1; }

void print_time(const char* name, const timespec& t)
{
    std::printf(" %s %" PRId64 ".%09ld", name, static_cast<int64_t>(t.tv_sec), t.tv_nsec);
}

/* A frame to the PTP multicast address with a header of `type`; the body
 * (length - the header) zeroed. The frame is padded to Ethernet's minimum:
 * the receiver goes by messageLength. */
rte_mbuf* new_message(const Master& master, MessageType type, uint16_t length, uint16_t sequence_id,
                      int8_t log_interval)
{
    rte_mbuf* m = rte_pktmbuf_alloc(master.pool);
    if (m == nullptr) {
        std::fprintf(stderr, "no mbuf for a PTP message: the pool is empty\n");
        return nullptr;
    }
    const uint16_t frame_len =
        std::max<uint16_t>(sizeof(rte_ether_hdr) + length, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(rte_pktmbuf_append(m, frame_len));
    std::memset(eth, 0, frame_len);
    eth->dst_addr = PTP_MULTICAST;
    eth->src_addr = master.mac;
    eth->ether_type = rte_cpu_to_be_16(PTP_ETHERTYPE);
    auto* header = reinterpret_cast<PtpHeader*>(eth + 1);
    header->message_type = static_cast<uint8_t>(type);
    header->version = PTP_VERSION;
    header->message_length = rte_cpu_to_be_16(length);
    header->domain_number = DOMAIN;
    header->source_port_identity = master.identity;
    header->sequence_id = rte_cpu_to_be_16(sequence_id);
    header->control = control_of(type);
    header->log_message_interval = log_interval;
    return m;
}

template <typename Message> Message* message_of(rte_mbuf* m)
{
    return rte_pktmbuf_mtod_offset(m, Message*, sizeof(rte_ether_hdr));
}

/* Takes the mbuf either way. */
bool send(Master& master, rte_mbuf* m, const char* what)
{
    if (rte_eth_tx_burst(master.port, 0, &m, 1) == 1)
        return true;
    rte_pktmbuf_free(m);
    master.counted.send_failures++;
    std::printf("%s not sent: the Tx ring is full\n", what);
    return false;
}

/* The latch of the Tx stamp holds one; one no read took would pass for the
 * next Sync's. */
void discard_stale_tx_stamp(uint16_t port)
{
    timespec stale;
    rte_eth_timesync_read_tx_timestamp(port, &stale);
}

/* A device stamps a frame when it sends it, later than tx_burst returns. */
std::optional<timespec> wait_for_tx_stamp(uint16_t port)
{
    const auto deadline = Clock::now() + 10ms;
    timespec t;
    while (rte_eth_timesync_read_tx_timestamp(port, &t) != 0) {
        if (Clock::now() > deadline)
            return std::nullopt;
        std::this_thread::sleep_for(10us);
    }
    return t;
}

void send_sync_and_follow_up(Master& master)
{
    const uint16_t sequence_id = master.next_sequence_id++;
    rte_mbuf* sync = new_message(master, MessageType::sync, sizeof(TimestampMessage), sequence_id,
                                 master.log_sync_interval);
    if (sync == nullptr)
        return;
    auto* body = message_of<TimestampMessage>(sync);
    body->header.flags[0] = FLAG0_TWO_STEP;
    /* A two-step clock's originTimestamp need only be near the time: the
     * Follow_Up has the exact one. */
    if (timespec now; rte_eth_timesync_read_time(master.port, &now) == 0)
        body->timestamp = to_wire(now);
    sync->ol_flags |= RTE_MBUF_F_TX_IEEE1588_TMST;

    discard_stale_tx_stamp(master.port);
    if (!send(master, sync, "Sync"))
        return;
    master.counted.syncs++;
    const std::optional<timespec> t1 = wait_for_tx_stamp(master.port);
    if (!t1) {
        master.counted.syncs_unstamped++;
        std::printf("seq %u: no Tx timestamp for the Sync within 10 ms: no Follow_Up (%" PRIu64 " so far)\n",
                    sequence_id, master.counted.syncs_unstamped);
        return;
    }
    rte_mbuf* follow_up = new_message(master, MessageType::follow_up, sizeof(TimestampMessage), sequence_id,
                                      master.log_sync_interval);
    if (follow_up == nullptr)
        return;
    message_of<TimestampMessage>(follow_up)->timestamp = to_wire(*t1);
    if (send(master, follow_up, "Follow_Up"))
        master.last_sync = SentSync{sequence_id, *t1};
}

/* Reading an Rx stamp frees its latch, which the port has only a few of:
 * every stamp is read, whether used or not. */
std::optional<timespec> take_rx_stamp(uint16_t port, const rte_mbuf* m)
{
    timespec t;
    if (!(m->ol_flags & RTE_MBUF_F_RX_IEEE1588_TMST) ||
        rte_eth_timesync_read_rx_timestamp(port, &t, m->timesync) != 0)
        return std::nullopt;
    return t;
}

void answer_delay_req(Master& master, rte_mbuf* request, const timespec& t4)
{
    const PtpHeader& asked = message_of<TimestampMessage>(request)->header;
    const uint16_t sequence_id = rte_be_to_cpu_16(asked.sequence_id);
    /* logMinDelayReqInterval: as often as Syncs come, which is when ptpclient asks */
    rte_mbuf* m = new_message(master, MessageType::delay_resp, sizeof(DelayResp), sequence_id,
                              master.log_sync_interval);
    if (m == nullptr)
        return;
    auto* response = message_of<DelayResp>(m);
    response->header.correction = asked.correction;
    response->receive_timestamp = to_wire(t4);
    response->requesting_port_identity = asked.source_port_identity;
    if (!send(master, m, "Delay_Resp"))
        return;

    if (master.last_sync && master.last_sync->sequence_id == sequence_id) {
        master.counted.exchanges++;
        std::printf("seq %u", sequence_id);
        print_time("t1", master.last_sync->t1);
        print_time("t4", t4);
        std::printf("\n");
    } else {
        master.counted.delay_reqs_of_no_sync++;
        std::printf("seq %u: answered a Delay_Req that follows no Sync of ours with a Follow_Up\n", sequence_id);
    }
}

/* A Delay_Req of our domain is answered; anything else is dropped. */
void handle_frame(Master& master, rte_mbuf* m)
{
    const auto* eth = rte_pktmbuf_mtod(m, const rte_ether_hdr*);
    const std::optional<timespec> stamp = take_rx_stamp(master.port, m);
    if (eth->ether_type != rte_cpu_to_be_16(PTP_ETHERTYPE) ||
        rte_pktmbuf_data_len(m) < sizeof(rte_ether_hdr) + sizeof(TimestampMessage))
        return;
    const PtpHeader& header = message_of<TimestampMessage>(m)->header;
    if ((header.message_type & 0x0f) != static_cast<uint8_t>(MessageType::delay_req) ||
        (header.version & 0x0f) != PTP_VERSION || header.domain_number != DOMAIN)
        return;
    if (!stamp) {
        master.counted.delay_reqs_unstamped++;
        std::printf("seq %u: Delay_Req without an Rx timestamp: not answered (%" PRIu64 " so far)\n",
                    rte_be_to_cpu_16(header.sequence_id), master.counted.delay_reqs_unstamped);
        return;
    }
    answer_delay_req(master, m, *stamp);
}

unsigned poll_rx(Master& master)
{
    rte_mbuf* burst[BURST];
    const uint16_t n = rte_eth_rx_burst(master.port, 0, burst, BURST);
    for (uint16_t i = 0; i < n; i++) {
        handle_frame(master, burst[i]);
        rte_pktmbuf_free(burst[i]);
    }
    return n;
}

/* No Syncs while the link is down: they would not be stamped. */
bool check_link(Master& master)
{
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(master.port, &link) != 0)
        return master.link_up;
    const bool up = link.link_status == RTE_ETH_LINK_UP;
    if (up != master.link_up)
        std::printf("port %u: link %s\n", master.port, up ? "up: sending Syncs" : "down: no Syncs until it is up");
    master.link_up = up;
    return up;
}

Clock::duration sync_interval(int log_interval)
{
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::ldexp(1.0, log_interval)));
}

/* Nothing came: sleep, and leave the CPU to others (the adapter's engine,
 * the slave). A Delay_Req is stamped on arrival, so how soon it is looked at
 * changes no time, only how soon its Delay_Resp goes: short naps for a while
 * after a Sync, when one is due (ptpclient asks at once), long ones after
 * that, never past the next Sync. */
Clock::duration nap(Clock::time_point now, Clock::time_point last_sync, Clock::time_point next_sync)
{
    constexpr std::chrono::microseconds SHORT_NAP = 30us, LONG_NAP = 1ms, ANSWER_DUE_WITHIN = 20ms;
    const Clock::duration wanted = now - last_sync < ANSWER_DUE_WITHIN ? SHORT_NAP : LONG_NAP;
    return std::clamp<Clock::duration>(next_sync - now, Clock::duration::zero(), wanted);
}

void run_master(Master& master, const Options& opt)
{
    const Clock::duration interval = sync_interval(opt.log_sync_interval);
    auto next_sync = Clock::now();
    auto last_sync = next_sync;
    while (!stop_requested && (opt.count == 0 || master.counted.exchanges < opt.count)) {
        if (const auto now = Clock::now(); now >= next_sync) {
            if (check_link(master))
                send_sync_and_follow_up(master);
            last_sync = now;
            /* late (a stall, a slow Tx stamp): on from now, no burst of Syncs to catch up */
            next_sync = std::max(next_sync + interval, now);
        }
        if (poll_rx(master) == 0)
            std::this_thread::sleep_for(nap(Clock::now(), last_sync, next_sync));
    }
}

void print_counters(const Counters& c)
{
    std::printf("exchanges %" PRIu64 ", syncs %" PRIu64 ", syncs without a tx timestamp %" PRIu64
                ", delay_reqs without an rx timestamp %" PRIu64 ", delay_reqs for no sync %" PRIu64
                ", send failures %" PRIu64 "\n",
                c.exchanges, c.syncs, c.syncs_unstamped, c.delay_reqs_unstamped, c.delay_reqs_of_no_sync,
                c.send_failures);
}

int run(int argc, char** argv)
{
    Options opt;
    switch (parse_options(argc, argv, opt)) {
    case Parsed::help:
        usage(stdout, argv[0]);
        return EXIT_SUCCESS;
    case Parsed::bad:
        usage(stderr, argv[0]);
        return EXIT_USAGE;
    case Parsed::run:
        break;
    }
    rte_mempool* pool = rte_pktmbuf_pool_create("ptp_master", NB_MBUFS, MBUF_CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                                rte_eth_dev_socket_id(opt.port));
    if (pool == nullptr) {
        std::fprintf(stderr, "cannot create the mbuf pool: %s\n", rte_strerror(rte_errno));
        return EXIT_FAILURE;
    }
    Master master;
    master.port = opt.port;
    master.pool = pool;
    master.log_sync_interval = static_cast<int8_t>(opt.log_sync_interval);
    int status = EXIT_FAILURE;
    if (start_port(opt.port, pool) && !failed(rte_eth_macaddr_get(opt.port, &master.mac), opt.port, "MAC address")) {
        master.identity = port_identity_of(master.mac);
        const uint8_t* id = master.identity.clock_identity;
        std::printf("port %u: master, clock identity %02x%02x%02x.%02x%02x.%02x%02x%02x, a Sync every 2^%d s\n",
                    opt.port, id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], opt.log_sync_interval);
        run_master(master, opt);
        /* the last Delay_Resp may still be on the Tx ring, which a stop drops */
        std::this_thread::sleep_for(10ms);
        print_counters(master.counted);
        status = EXIT_SUCCESS;
    }
    stop_port(opt.port);
    std::printf("mbufs: %u of %u back in the pool\n", rte_mempool_avail_count(pool), pool->size);
    rte_mempool_free(pool);
    return status;
}

} // namespace

int main(int argc, char** argv)
{
    /* line by line, so whoever reads the output through a pipe or file (a
     * test, a log collector) sees each exchange as it happens; before EAL,
     * which writes its log to stdout too */
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
