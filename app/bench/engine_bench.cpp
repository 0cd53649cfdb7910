/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter engine alone: packets per second of the software adapter's
 * engine, for 64 B and 1518 B frames, over 1..8 queue pairs and 1..4
 * engine threads.
 *
 * The host side is the unit tests' FakeDriver (app/fwdriver), which reaches
 * the adapter only through the PCI function's resources and the HSI, as the
 * real driver does, but does no driver work per packet: every Tx BD of a
 * queue names the same fixed frame and every Rx BD slot the same buffer, so
 * the host loop only reads the status blocks' indices and writes producers.
 * The engine thread and the host loop are pinned to different CPUs; the
 * engine (Tx BD fetch, wire, classification, RSS, Rx placement, CQE) is the
 * bottleneck, and the figure is the Rx CQEs it completes per second.
 *
 * Setup per row (a fresh adapter each): one port group per engine thread,
 * each a port on a loopback wire (or two cabled ports, --wire cable, each PF
 * sending to the other), so that every thread has its own traffic; every
 * PF has vport 0 with N
 * Rx and N Tx queues, the PF's own MAC as its only filter (accept matched
 * unicast), RSS over the N Rx queues with the indirection table i % N, and
 * for each Tx queue i a UDP flow that RSS puts on Rx queue i (found by
 * sending probe frames, so the bench does not depend on how the adapter
 * hashes). Each Tx queue thus feeds its own Rx queue.
 *
 * Rx buffers: by default each Rx queue has its own ring of buffers, as a
 * driver with one mbuf per descriptor would, so N queues write N rings'
 * worth of memory and 1518 B rows also measure the caches. The `shared`
 * rows make every queue's slot i name queue 0's buffer i (the host never
 * reads the frames), keeping that footprint at one ring whatever N: the
 * difference between the two is the cost of memory, not of queues.
 */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cna_fw/adapter.h"
#include "fake_driver.h"

namespace {

using namespace cna;
using namespace cna::fw;
using namespace cna::fw::test;
using namespace cna::hsi;
using namespace cna::hsi::eth;
using Clock = std::chrono::steady_clock;

/* A row that could not be measured; the message says why. */
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::vector<uint32_t> sizes{64, 1518};
    std::vector<uint32_t> queues{1, 2, 4, 8};
    std::vector<uint32_t> engine_threads{1};
    Wire wire = Wire::loopback;
    std::vector<bool> shared_rx_buffers{false, true}; /* see the file's header */
    uint32_t windows = 5;
    double window_s = 0.5;
    double warmup_s = 0.5;
    uint16_t ring = 1024;
    uint16_t burst = 32;
    std::vector<uint32_t> engine_cpus{0}; /* engine thread t on engine_cpus[t % size] */
    int host_cpu = 1;
};

[[noreturn]] void usage(const char* argv0, const std::string& error = {})
{
    if (!error.empty())
        std::fprintf(stderr, "engine_bench: %s\n", error.c_str());
    std::fprintf(stderr,
                 "usage: %s [--sizes 64,1518] [--queues 1,2,4,8] [--engine-threads 1] [--wire loopback|cable]\n"
                 "          [--rx-buffers queue,shared]\n"
                 "          [--windows 5] [--window 0.5] [--warmup 0.5] [--ring 1024] [--burst 32]\n"
                 "          [--engine-cpus 0] [--host-cpu 1]\n",
                 argv0);
    std::exit(2);
}

std::vector<uint32_t> parse_list(const char* argv0, const std::string& text, unsigned long least = 1)
{
    std::vector<uint32_t> values;
    std::size_t at = 0;
    while (at <= text.size()) {
        std::size_t comma = text.find(',', at);
        std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char* end = nullptr;
        unsigned long v = std::strtoul(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < least || v > 65535)
            usage(argv0, "bad list item '" + item + "' in '" + text + "'");
        values.push_back(static_cast<uint32_t>(v));
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    return values;
}

/* One port group per engine thread. */
uint32_t ports_for(const Options& o, uint32_t engine_threads)
{
    return engine_threads * (o.wire == Wire::cable ? 2 : 1);
}

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(argv[0], arg + " needs a value");
            return argv[++i];
        };
        auto number = [&](double lo, double hi) {
            std::string v = value();
            char* end = nullptr;
            double d = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || d < lo || d > hi)
                usage(argv[0], arg + " " + v + ": out of range");
            return d;
        };
        if (arg == "--sizes")
            o.sizes = parse_list(argv[0], value());
        else if (arg == "--queues")
            o.queues = parse_list(argv[0], value());
        else if (arg == "--engine-threads")
            o.engine_threads = parse_list(argv[0], value());
        else if (arg == "--wire") {
            std::string w = value();
            if (w == "loopback")
                o.wire = Wire::loopback;
            else if (w == "cable")
                o.wire = Wire::cable;
            else
                usage(argv[0], "--wire is loopback or cable");
        } else if (arg == "--rx-buffers") {
            std::string v = value();
            if (v == "queue")
                o.shared_rx_buffers = {false};
            else if (v == "shared")
                o.shared_rx_buffers = {true};
            else if (v == "queue,shared")
                o.shared_rx_buffers = {false, true};
            else
                usage(argv[0], "--rx-buffers is queue, shared or queue,shared");
        } else if (arg == "--windows")
            o.windows = static_cast<uint32_t>(number(1, 1000));
        else if (arg == "--window")
            o.window_s = number(0.01, 60);
        else if (arg == "--warmup")
            o.warmup_s = number(0, 60);
        else if (arg == "--ring")
            o.ring = static_cast<uint16_t>(number(MIN_RING_SIZE, MAX_RING_SIZE));
        else if (arg == "--burst")
            o.burst = static_cast<uint16_t>(number(1, 4096));
        else if (arg == "--engine-cpus")
            o.engine_cpus = parse_list(argv[0], value(), 0);
        else if (arg == "--host-cpu")
            o.host_cpu = static_cast<int>(number(0, CPU_SETSIZE - 1));
        else
            usage(argv[0], "unknown option " + arg);
    }
    if ((o.ring & (o.ring - 1)) != 0)
        usage(argv[0], "--ring must be a power of two");
    /* Both thresholds must be reachable with ring-1 buffers outstanding. */
    if (o.burst > o.ring / 2)
        usage(argv[0], "--burst must be at most half the ring");
    for (uint32_t q : o.queues)
        if (q > MAX_QUEUES_PER_PF || 2 * q > MAX_SB_PER_PF)
            usage(argv[0], "at most " + std::to_string(MAX_QUEUES_PER_PF) + " queue pairs");
    for (uint32_t size : o.sizes)
        if (size < 60 || size > MAX_MTU + 14)
            usage(argv[0], "frame sizes are 60.." + std::to_string(MAX_MTU + 14) + " bytes");
    for (uint32_t t : o.engine_threads)
        if (uint32_t ports = ports_for(o, t); ports != 1 && ports != 2 && ports != 4)
            usage(argv[0], "one port group per engine thread, and an adapter has 1, 2 or 4 ports: " +
                               std::to_string(t) + " engine thread(s) cannot be given a group each");
    return o;
}

constexpr const char* ADAPTER_NAME = "enginebench";


AdapterConfig make_config(const Options& o, uint32_t engine_threads)
{
    AdapterConfig config;
    config.name = ADAPTER_NAME;
    config.wire = o.wire;
    config.ports = ports_for(o, engine_threads);
    config.engine_threads = engine_threads;
    config.link_up_delay_ms = 0;
    return config;
}

void pin_this_thread(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0)
        throw BenchError("cannot pin the host loop to CPU " + std::to_string(cpu) + ": " + std::strerror(rc));
}

/* One PF of the adapter and where its Tx queues send. */
struct Side {
    std::unique_ptr<FakeDriver> drv;
    std::array<uint8_t, 6> mac{};
    Side* peer = nullptr;           /* receives this side's frames */
    std::vector<uint64_t> delivered; /* per Rx queue, CQEs consumed */
};

struct Row {
    uint32_t engine_threads = 1, queues = 1, size = 64;
    bool shared_rx_buffers = false;
    std::vector<double> pps;        /* per window */
    double no_buffer_share = 0;     /* Rx drops for want of a buffer / frames delivered */
    double queue_balance = 1;       /* least / most delivered over the Rx queues */
    double engine_cpu_share = -1;   /* engine CPU time / wall time; negative if unknown */
    double engine_cpu_per_pkt = 0;  /* engine CPU seconds per delivered frame */
};

constexpr uint32_t SIP = 0x0a000001, DIP = 0x0a000002; /* 10.0.0.1 -> 10.0.0.2 */
constexpr uint16_t DPORT = 9;                          /* discard */
constexpr uint16_t FIRST_SPORT = 1024;

std::vector<uint8_t> bench_frame(const Side& from, uint16_t sport, uint32_t size)
{
    /* Ethernet 14 + IPv4 20 + UDP 8 + payload: `size` bytes in the buffer,
     * no FCS, as testpmd's txpkts. */
    return udp4_frame(from.peer->mac.data(), from.mac.data(), SIP, DIP, sport, DPORT, size - 42);
}

void enable_rss(FakeDriver& drv, uint32_t queues)
{
    VportUpdateRamrodData up{};
    up.vport_id = 0;
    up.update_flags = vport_update::UPDATE_RSS;
    up.rss_enable = 1;
    up.rss_hash_types = rss::IPV4 | rss::UDP_IPV4;
    for (uint32_t i = 0; i < rss::KEY_DWORDS; i++)
        up.rss_key[i] = 0x6d5a6d5a ^ (i * 0x01010101u); /* any fixed key: the flows are probed */
    for (uint32_t i = 0; i < rss::RETA_SIZE; i++)
        up.rss_reta[i] = static_cast<uint16_t>(i % queues);
    if (FwReturn rc = drv.eth(EthCmd::vport_update, &up, sizeof(up)); rc != FwReturn::ok)
        throw BenchError("VPORT_UPDATE (RSS): fw_return " + std::to_string(static_cast<int>(rc)));
}

/* Frames the adapter dropped or refused for reasons that mean the setup is
 * wrong (not for want of an Rx buffer, which is the host falling behind). */
std::string setup_errors(std::vector<Side>& sides)
{
    std::string errors;
    for (Side& s : sides) {
        VportStats v = s.drv->vport_stats(0);
        auto note = [&](const char* what, uint64_t n) {
            if (n != 0)
                errors += " PF" + std::to_string(s.drv->pf()) + " " + what + "=" + std::to_string(n);
        };
        note("rx_filtered", v.rx_filtered_pkts);
        note("rx_oversize", v.rx_oversize_pkts);
        note("rx_error", v.rx_error_pkts);
        note("tx_error", v.tx_error_pkts);
        note("tx_oversize", v.tx_oversize_pkts);
    }
    return errors;
}

/* For each Tx queue i of `side`, a UDP source port whose flow RSS at the
 * peer puts on Rx queue i: probe frames go out one at a time on Tx queue 0
 * and the peer's Rx queue that receives each tells where that flow goes. */
std::vector<uint16_t> probe_flows(std::vector<Side>& sides, Side& side, uint32_t queues, uint32_t size)
{
    std::vector<uint16_t> sport_of(queues, 0);
    uint32_t found = 0;
    uint32_t max_probes = 64 * queues;
    for (uint32_t k = 0; k < max_probes && found < queues; k++) {
        uint16_t sport = static_cast<uint16_t>(FIRST_SPORT + k);
        side.drv->send(0, bench_frame(side, sport, size));
        int got = -1;
        bool arrived = wait_until(
            [&] {
                for (uint32_t q = 0; q < queues && got < 0; q++)
                    if (!side.peer->drv->rx_poll(static_cast<uint16_t>(q)).empty())
                        got = static_cast<int>(q);
                return got >= 0;
            },
            std::chrono::milliseconds(500));
        if (!arrived)
            throw BenchError("probe frame (UDP source port " + std::to_string(sport) +
                             ") not received within 500 ms; adapter counters:" +
                             setup_errors(sides));
        if (sport_of[got] == 0) {
            sport_of[got] = sport;
            found++;
        }
    }
    if (found < queues)
        throw BenchError("RSS put none of " + std::to_string(max_probes) + " probe flows on some Rx queue");
    if (!side.drv->wait_tx_done(0))
        throw BenchError("Tx queue 0 did not complete the probe frames");
    return sport_of;
}

/* Brings a side's PF up for the row: queues, its MAC filter, RSS. Throws
 * BenchError naming the step that failed. */
void set_up(Side& side, uint32_t queues, uint32_t size, const Options& o)
{
    FakeDriver& drv = *side.drv;
    L2Setup setup;
    setup.rx_queues = static_cast<uint16_t>(queues);
    setup.tx_queues = static_cast<uint16_t>(queues);
    setup.accept = accept::UCAST_MATCHED | accept::BCAST;
    /* A 1518-byte frame carries 1504 bytes of L3: above the default MTU,
     * which the adapter enforces (as run_bench.py does for testpmd). */
    setup.mtu = static_cast<uint16_t>(std::max<uint32_t>(1500, size - 14));
    setup.max_bds = 1; /* rx_recycle's condition: one buffer per frame */
    setup.bd_max_bytes = static_cast<uint16_t>(std::max<uint32_t>(2048, (size + 63) & ~63u));
    setup.ring = o.ring;
    if (std::string error = bring_up_l2(drv, setup); !error.empty())
        throw BenchError("PF " + std::to_string(drv.pf()) + " bring-up: " + error);
    side.mac = drv.mac();
    if (drv.filter(FilterOpcode::add, FilterType::mac, 0, side.mac.data()) != FwReturn::ok)
        throw BenchError("PF " + std::to_string(drv.pf()) + ": MAC filter add failed");
    enable_rss(drv, queues);
}

void fill_tx_rings(Side& side, const std::vector<uint16_t>& sport_of, uint32_t size)
{
    for (uint32_t q = 0; q < sport_of.size(); q++) {
        std::vector<uint8_t> frame = bench_frame(side, sport_of[q], size);
        HostMem mem = side.drv->alloc(frame.size());
        std::memcpy(mem.va, frame.data(), frame.size());
        TxBd bd{};
        bd.addr = make_regpair(mem.iova);
        bd.nbytes = static_cast<uint16_t>(frame.size());
        bd.nbds = 1;
        bd.flags = txbd::START;
        side.drv->tx_fill_ring(static_cast<uint16_t>(q), bd);
    }
}

/* One vport counter summed over the PFs; a read per PF, cheap enough for a
 * window's edge. */
uint64_t vport_counter(std::vector<Side>& sides, std::size_t field_offset)
{
    uint64_t n = 0;
    for (Side& s : sides)
        n += s.drv->stat64(iro::vport_stats(s.drv->pf(), 0) + static_cast<uint32_t>(field_offset));
    return n;
}
/* Rx drops for want of a posted buffer: the host falling behind. */
uint64_t no_buffer_drops(std::vector<Side>& sides)
{
    return vport_counter(sides, offsetof(VportStats, rx_no_buffer_pkts));
}
/* Frames the adapter says it delivered: the cross-check of the CQE count. */
uint64_t adapter_rx(std::vector<Side>& sides)
{
    return vport_counter(sides, offsetof(VportStats, rx_ucast_pkts));
}

/* The measurement: keep every Tx ring full and every Rx ring posted, count
 * CQEs. Per pass the host reads two status-block indices per queue pair and
 * writes a producer only once `burst` slots are ready, as a driver's burst
 * would: fewer doorbell and producer writes for the engine to pick up. */
inline void pause()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* CPU time the adapter's engine threads got so far, in seconds. On a shared
 * 2-core machine the engines do not get their cores all the time; this says
 * how much they had. Negative if unavailable. */
double engine_cpu_seconds(const std::string& adapter_name, uint32_t engine_threads)
{
    double total = 0;
    for (uint32_t t = 0; t < engine_threads; t++) {
        double seconds = thread_cpu_seconds(engine_thread_name(adapter_name, t));
        if (seconds < 0)
            return -1;
        total += seconds;
    }
    return total;
}

struct Measured {
    std::vector<double> pps;        /* per window */
    double wall_s = 0;              /* over all windows */
    double engine_cpu_s = -1;       /* over all windows; negative if unknown */
    uint64_t delivered = 0;         /* over all windows */
    uint64_t no_buffer = 0;         /* over all windows */
    uint64_t adapter_rx = 0;        /* over all windows, by the adapter's counters */
};

Measured drive(std::vector<Side>& sides, uint32_t queues, uint32_t engine_threads, const Options& o)
{
    using namespace std::chrono;
    Measured m;
    uint64_t delivered = 0;
    auto pass = [&] {
        bool work = false;
        for (Side& s : sides) {
            FakeDriver& drv = *s.drv;
            for (uint16_t q = 0; q < queues; q++) {
                if (uint16_t done = drv.rx_completed(q); done >= o.burst) {
                    drv.rx_recycle(q, done);
                    s.delivered[q] += done;
                    delivered += done;
                    work = true;
                }
                if (uint16_t free = drv.tx_free(q); free >= o.burst) {
                    drv.tx_produce(q, free);
                    work = true;
                }
            }
        }
        /* Nothing ready: wait a little before reading the status blocks
         * again, so that the host's reads take fewer of the cache lines the
         * engine is writing. */
        if (!work)
            pause();
    };
    /* Runs passes until `until`, reading the clock every 64 passes. */
    auto run_until = [&](Clock::time_point until) {
        for (;;) {
            for (int i = 0; i < 64; i++)
                pass();
            if (Clock::now() >= until)
                return;
        }
    };

    auto start = Clock::now();
    run_until(start + duration_cast<Clock::duration>(duration<double>(o.warmup_s)));
    for (Side& s : sides)
        std::fill(s.delivered.begin(), s.delivered.end(), 0);
    uint64_t first_count = delivered, edge_count = delivered;
    uint64_t drops_before = no_buffer_drops(sides), rx_before = adapter_rx(sides);
    double cpu_before = engine_cpu_seconds(ADAPTER_NAME, engine_threads);
    auto edge_time = Clock::now(), first_time = edge_time;
    for (uint32_t w = 0; w < o.windows; w++) {
        run_until(edge_time + duration_cast<Clock::duration>(duration<double>(o.window_s)));
        auto now = Clock::now();
        m.pps.push_back(static_cast<double>(delivered - edge_count) / duration<double>(now - edge_time).count());
        edge_count = delivered;
        edge_time = now;
    }
    m.wall_s = duration<double>(edge_time - first_time).count();
    if (double cpu_after = engine_cpu_seconds(ADAPTER_NAME, engine_threads); cpu_before >= 0 && cpu_after >= 0)
        m.engine_cpu_s = cpu_after - cpu_before;
    m.no_buffer = no_buffer_drops(sides) - drops_before;
    m.adapter_rx = adapter_rx(sides) - rx_before;
    m.delivered = delivered - first_count;
    return m;
}

/* Stops producing and waits (bounded) until the adapter consumed every Tx BD,
 * so that no DMA is in flight when the drivers unmap their memory. */
void drain(std::vector<Side>& sides, uint32_t queues, uint16_t ring)
{
    bool drained = wait_until(
        [&] {
            for (Side& s : sides)
                for (uint16_t q = 0; q < queues; q++) {
                    if (uint16_t done = s.drv->rx_completed(q); done != 0)
                        s.drv->rx_recycle(q, done);
                    if (s.drv->tx_free(q) != ring)
                        return false;
                }
            return true;
        },
        std::chrono::seconds(2));
    if (!drained)
        throw BenchError("Tx rings did not drain within 2 s after the measurement");
}

Row measure(const Options& o, uint32_t engine_threads, uint32_t queues, uint32_t size, bool shared_rx_buffers)
{
    Row row;
    row.engine_threads = engine_threads;
    row.queues = queues;
    row.size = size;
    row.shared_rx_buffers = shared_rx_buffers;

    std::string error;
    std::unique_ptr<Adapter> adapter = Adapter::create(make_config(o, engine_threads), &error);
    if (!adapter)
        throw BenchError("Adapter::create: " + error);
    for (uint32_t t = 0; t < engine_threads; t++) {
        int cpu = static_cast<int>(o.engine_cpus[t % o.engine_cpus.size()]);
        if (int rc = adapter->set_engine_affinity(t, cpu); rc != 0)
            throw BenchError("set_engine_affinity(" + std::to_string(t) + ", " + std::to_string(cpu) +
                             "): " + std::strerror(-rc));
    }

    /* The drivers unmap their memory from the adapter's IOMMU when they go:
     * they must go first, and after the engine stopped touching it. */
    std::vector<Side> sides(adapter->config().ports);
    struct DriversFirst {
        std::vector<Side>& sides;
        ~DriversFirst() { sides.clear(); }
    } drivers_first{sides};

    for (uint32_t i = 0; i < sides.size(); i++) {
        sides[i].drv = std::make_unique<FakeDriver>(*adapter, i);
        sides[i].peer = &sides[o.wire == Wire::cable ? i ^ 1 : i];
        sides[i].delivered.assign(queues, 0);
    }
    for (Side& s : sides)
        set_up(s, queues, size, o);
    for (Side& s : sides)
        if (!wait_link(*s.drv))
            throw BenchError("PF " + std::to_string(s.drv->pf()) + ": link not up within 2 s");
    for (Side& s : sides)
        fill_tx_rings(s, probe_flows(sides, s, queues, size), size);
    /* After the probes, whose rx_poll reposts each queue's own buffers. */
    if (shared_rx_buffers)
        for (Side& s : sides)
            for (uint16_t q = 1; q < queues; q++)
                s.drv->rx_share_buffers(q, 0);
    if (std::string e = setup_errors(sides); !e.empty())
        throw BenchError("adapter counted drops during setup:" + e);

    Measured m = drive(sides, queues, engine_threads, o);
    drain(sides, queues, o.ring);
    row.pps = m.pps;

    if (std::string e = setup_errors(sides); !e.empty())
        throw BenchError("adapter counted drops:" + e);
    uint64_t least = UINT64_MAX, most = 0;
    for (Side& s : sides)
        for (uint64_t n : s.delivered) {
            least = std::min(least, n);
            most = std::max(most, n);
        }
    if (m.delivered == 0)
        throw BenchError("no frame delivered during the windows");
    /* The host counts CQEs without looking at them; the adapter's own
     * counter must agree, up to what was in flight at the two edges. */
    uint64_t slack = uint64_t{o.ring} * queues * sides.size();
    uint64_t diff = m.adapter_rx > m.delivered ? m.adapter_rx - m.delivered : m.delivered - m.adapter_rx;
    if (diff > slack)
        throw BenchError("CQEs consumed (" + std::to_string(m.delivered) + ") and the adapter's rx_ucast_pkts (" +
                         std::to_string(m.adapter_rx) + ") disagree");
    row.no_buffer_share = static_cast<double>(m.no_buffer) / static_cast<double>(m.delivered);
    if (m.engine_cpu_s >= 0) {
        row.engine_cpu_share = m.engine_cpu_s / m.wall_s;
        row.engine_cpu_per_pkt = m.engine_cpu_s / static_cast<double>(m.delivered);
    }
    row.queue_balance = most == 0 ? 0 : static_cast<double>(least) / static_cast<double>(most);
    return row;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double cpu_mhz()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("cpu MHz", 0) == 0)
            if (auto colon = line.find(':'); colon != std::string::npos)
                return std::atof(line.c_str() + colon + 1);
    return 0;
}

void print_row(const Row& r, double mhz)
{
    double med = median(r.pps);
    auto [lo, hi] = std::minmax_element(r.pps.begin(), r.pps.end());
    /* Cycles per packet from the CPU time the engine actually had, when
     * known: the figure that survives other work on the machine. */
    char cyc[16] = "-", share[16] = "-", per_core[16] = "-";
    if (mhz > 0 && r.engine_cpu_share >= 0)
        std::snprintf(cyc, sizeof(cyc), "%.0f", mhz * 1e6 * r.engine_cpu_per_pkt);
    else if (mhz > 0)
        std::snprintf(cyc, sizeof(cyc), "%.0f", mhz * 1e6 / med);
    if (r.engine_cpu_share >= 0) {
        std::snprintf(share, sizeof(share), "%.0f%%", 100 * r.engine_cpu_share);
        std::snprintf(per_core, sizeof(per_core), "%.3f", 1e-6 / r.engine_cpu_per_pkt);
    }
    std::printf("%7u %7u %7s %6u %8.3f %7.3f %7.3f %8.2f %8s %9s %8s %8.3f%% %6.2f\n", r.engine_threads, r.queues,
                r.shared_rx_buffers ? "shared" : "queue", r.size, med / 1e6, *lo / 1e6, *hi / 1e6,
                med * r.size * 8 / 1e9, share, per_core, cyc, 100 * r.no_buffer_share, r.queue_balance);
}

} // namespace

int main(int argc, char** argv)
{
    Options o = parse(argc, argv);
    /* The adapter logs to stderr only what is worth seeing in a bench run. */
    set_log_sink([](LogLevel level, const std::string& line) {
        if (level <= LogLevel::warning)
            std::fprintf(stderr, "adapter: %s\n", line.c_str());
    });
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    std::string engine_cpus;
    for (uint32_t cpu : o.engine_cpus) {
        if (cpu >= cpus || o.host_cpu >= cpus) {
            std::fprintf(stderr, "engine_bench: CPUs 0..%ld online; --engine-cpus %u / --host-cpu %d out of range\n",
                         cpus - 1, cpu, o.host_cpu);
            return 2;
        }
        if (static_cast<int>(cpu) == o.host_cpu)
            std::fprintf(stderr, "engine_bench: warning: an engine and the host loop share CPU %d\n", o.host_cpu);
        if (!engine_cpus.empty())
            engine_cpus += ',';
        engine_cpus += std::to_string(cpu);
    }
    try {
        /* Before the adapter exists: its engine thread starts with this
         * affinity until set_engine_affinity moves it. */
        pin_this_thread(o.host_cpu);
    } catch (const BenchError& e) {
        std::fprintf(stderr, "engine_bench: %s\n", e.what());
        return 1;
    }

    double mhz = cpu_mhz();
    bool cable = o.wire == Wire::cable;
    std::printf("engine: engine thread t pinned to CPU [%s][t %% %zu], host loop (FakeDriver, no per-packet work) "
                "on CPU %d\n",
                engine_cpus.c_str(), o.engine_cpus.size(), o.host_cpu);
    std::printf("engine: per engine thread %s; per PF N Tx queues -> N Rx queues (RSS, Tx queue i's UDP flow on Rx "
                "queue i); rings of %u, producers written per %u ready slots\n",
                cable ? "2 cabled ports, each PF sending to the other" : "1 port on a loopback wire", o.ring,
                o.burst);
    std::printf("engine: %u x %g s windows after %g s warm-up; fresh adapter per row; Mpps = Rx CQEs/s%s; "
                "Gbit/s of frame bytes (no FCS)\n",
                o.windows, o.window_s, o.warmup_s, " of every PF");
    std::printf("%7s %7s %7s %6s %8s %7s %7s %8s %8s %9s %8s %9s %6s\n", "engines", "queues", "rx-bufs", "frame",
                "median", "min", "max", "Gbit/s", "eng-cpu", "Mpps/cpu", "cyc/pkt", "no-buf", "q-bal");
    std::fflush(stdout);

    int failures = 0;
    /* The axes, outermost first. */
    for (uint32_t engines : o.engine_threads)
        for (bool shared : o.shared_rx_buffers)
            for (uint32_t size : o.sizes)
                for (uint32_t queues : o.queues) {
                    if (shared && queues == 1 && o.shared_rx_buffers.size() > 1)
                        continue; /* the same as its own buffers */
                    try {
                        print_row(measure(o, engines, queues, size, shared), mhz);
                    } catch (const BenchError& e) {
                        std::printf("%7u %7u %7s %6u  failed: %s\n", engines, queues, shared ? "shared" : "queue", size,
                                    e.what());
                        failures++;
                    }
                    std::fflush(stdout);
                }
    std::printf("engine: eng-cpu = CPU time the engine threads got / wall time (200%% = two full CPUs; "
                "/proc schedstat, as the kernel counts it); Mpps/cpu = frames per second of engine CPU time, over "
                "all windows; cyc/pkt = nominal clock x engine CPU time / frames (clock / median rate if eng-cpu is "
                "unknown); no-buf = Rx drops for want of a posted buffer (the host falling behind) per delivered "
                "frame; q-bal = least/most CQEs over the Rx queues; rx-bufs: each Rx queue its own ring of buffers "
                "(queue) or all on queue 0's (shared)\n");
    if (failures != 0)
        std::printf("engine: %d row(s) failed\n", failures);
    return failures == 0 ? 0 : 1;
}
