/* SPDX-License-Identifier: BSD-3-Clause
 * The process's adapter, for the verbs provider: when libibverbs first
 * finds a cna device, DPDK's EAL comes up inside the application (no
 * hugepages, nothing shared, nothing on disk) with one net_cna port per
 * entry of CNA_RDMA_DEVARGS, each port started with its RDMA device open.
 * One event thread hands the devices' completion and async events to
 * libibverbs's side; a port's link changes are its device's port events. At exit, everything goes down before the libraries'
 * own destructors run, so no engine thread outlives them.
 *
 *   CNA_RDMA_DEVARGS   net_cna devargs of device cna0;cna1;... (default:
 *                      one port on a TAP wire named cna<pid>); an entry
 *                      with vf= is a net_cna_vf port, its RDMA on
 *   CNA_RDMA_MTU       the ports' MTU (default 1500: RoCE path MTU 1024)
 *   CNA_RDMA_LINK_WAIT seconds to wait for the ports' links at start
 *                      (default 5: a cable's far end may come up later)
 *   CNA_RDMA_EAL_ARGS  more EAL arguments, split at spaces (e.g. a log level)
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "device_sysfs.h"
#include "verbs_host.h"

struct cna_host_port {
    unsigned index = 0;
    std::string vdev;
    uint16_t port_id = 0;
    cna_rdma_dev* rdma = nullptr;
    cna_device* device = nullptr; /* libibverbs's side, while it holds the device */
};

namespace cna::verbs {

namespace {

constexpr uint16_t DEFAULT_MTU = 1500;
constexpr unsigned long DEFAULT_LINK_WAIT_S = 5;
constexpr uint16_t RING_SIZE = 256;

void complain(const std::string& what) { std::fprintf(stderr, "cna: %s\n", what.c_str()); }

/* Whether the devargs name key, read by rte_kvargs as net_cna reads them
 * (malformed ones name nothing: net_cna then says why). */
bool has_key(const std::string& devargs, const char* key)
{
    rte_kvargs* kvlist = rte_kvargs_parse(devargs.c_str(), nullptr);
    const bool named = kvlist != nullptr && rte_kvargs_count(kvlist, key) != 0;
    rte_kvargs_free(kvlist);
    return named;
}

/* The environment's `name` as a number from lo to hi, else `fallback`;
 * false (said why) if it is something else. */
bool env_number(const char* name, unsigned long lo, unsigned long hi, unsigned long fallback, unsigned long* out)
{
    *out = fallback;
    const char* text = std::getenv(name);
    if (text == nullptr)
        return true;
    char* end;
    const unsigned long v = std::strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
        complain(std::string(name) + "=" + text + ": expected a number from " + std::to_string(lo) + " to " +
                 std::to_string(hi));
        return false;
    }
    *out = v;
    return true;
}

/* Every part, empty ones too ("a;" is two). */
std::vector<std::string> split(const std::string& text, char sep)
{
    std::vector<std::string> parts(1);
    for (char c : text) {
        if (c == sep)
            parts.emplace_back();
        else
            parts.back() += c;
    }
    return parts;
}

class ProcessAdapter {
public:
    ~ProcessAdapter() { shut_down(); }

    cna_host_port* probe(unsigned index, const std::string& ibdev_path)
    {
        std::lock_guard guard(bring_up_lock_);
        if (!state_known_)
            up_ = bring_up();
        state_known_ = true;
        if (!up_)
            return nullptr;
        if (index >= ports_.size()) {
            complain("no device cna" + std::to_string(index) + ": CNA_RDMA_DEVARGS names " +
                     std::to_string(ports_.size()));
            return nullptr;
        }
        cna_host_port& port = ports_[index];
        std::string error;
        if (!publish_attributes(ibdev_path, port.rdma, &error)) {
            complain("cannot publish cna" + std::to_string(index) + "'s attributes: " + error);
            return nullptr;
        }
        return &port;
    }

    void attach(cna_host_port* port, cna_device* device)
    {
        std::lock_guard guard(devices_lock_);
        port->device = device;
    }

private:
    bool bring_up()
    {
        const char* env = std::getenv("CNA_RDMA_DEVARGS");
        const std::string devargs = env != nullptr && *env != '\0' ? env : "wire=tap:cna" + std::to_string(getpid());
        unsigned long mtu;
        if (!env_number("CNA_RDMA_MTU", RTE_ETHER_MIN_MTU, 9600, DEFAULT_MTU, &mtu) ||
            !env_number("CNA_RDMA_LINK_WAIT", 0, 3600, DEFAULT_LINK_WAIT_S, &link_wait_s_))
            return false;
        const std::vector<std::string> entries = split(devargs, ';');
        for (const std::string& entry : entries)
            if (entry.empty()) {
                complain("CNA_RDMA_DEVARGS='" + devargs + "': an empty entry (entries are separated by ';')");
                return false;
            }
        if (!start_eal())
            return false;
        owner_ = getpid();
        for (unsigned i = 0; i < entries.size(); i++) {
            cna_host_port port;
            port.index = i;
            /* A VF's RDMA is asked for; the provider is there for it. */
            const bool vf = has_key(entries[i], "vf");
            port.vdev = (vf ? "net_cna_vf" : "net_cna") + std::to_string(i);
            const std::string args = vf && !has_key(entries[i], "rdma") ? entries[i] + ",rdma=1" : entries[i];
            const std::string what = "device cna" + std::to_string(i) + " (" + port.vdev + "," + args + ")";
            if (int rc = rte_vdev_init(port.vdev.c_str(), args.c_str()); rc != 0) {
                complain(what + ": the port did not come up: " + std::strerror(-rc) +
                         " (net_cna's message above says why)");
                return false;
            }
            if (rte_eth_dev_get_port_by_name(port.vdev.c_str(), &port.port_id) != 0 ||
                !start_port(port.port_id, static_cast<uint16_t>(mtu))) {
                complain(what + ": cannot start the port");
                ports_.push_back(port);
                return false;
            }
            port.rdma = cna_rdma_open(port.port_id);
            ports_.push_back(port);
            if (port.rdma == nullptr) {
                complain(what + ": cannot open its RDMA device: " + std::strerror(errno));
                return false;
            }
        }
        /* ports_ stays as it is from here on: the callbacks read it. */
        for (const cna_host_port& port : ports_) {
            rte_eth_dev_callback_register(port.port_id, RTE_ETH_EVENT_INTR_LSC, link_changed, this);
            wait_link_up(port);
        }
        return start_events();
    }

    bool start_eal()
    {
        std::vector<std::string> args = {"cna-verbs", "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
                                         "--file-prefix=cna-verbs-" + std::to_string(getpid()), "--no-telemetry",
                                         "--log-level=warning"};
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus);
        int first = 0;
        while (first < CPU_SETSIZE && !CPU_ISSET(first, &cpus))
            first++;
        args.insert(args.end(), {"-l", std::to_string(first)});
        if (const char* extra = std::getenv("CNA_RDMA_EAL_ARGS"); extra != nullptr)
            for (const std::string& a : split(extra, ' '))
                if (!a.empty())
                    args.push_back(a);
        std::vector<char*> argv;
        for (std::string& a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        /* DPDK's messages are the provider's: on stderr, never in the
         * application's output. */
        rte_openlog_stream(stderr);
        const int rc = rte_eal_init(static_cast<int>(args.size()), argv.data());
        /* The EAL made this thread its main lcore, on one CPU: the
         * application's thread keeps the CPUs it had. */
        pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
        if (rc < 0 && rte_errno != EALREADY) {
            complain(std::string("DPDK's EAL did not come up: ") + rte_strerror(rte_errno));
            return false;
        }
        eal_ours_ = rc >= 0;
        return true;
    }

    static bool start_port(uint16_t port_id, uint16_t mtu)
    {
        /* The port's Ethernet queues only exist because a started port
         * needs them: RoCE traffic bypasses them. */
        const std::string pool_name = "cna_verbs" + std::to_string(port_id);
        rte_mempool* pool =
            rte_pktmbuf_pool_create(pool_name.c_str(), 2 * RING_SIZE - 1, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        rte_eth_conf conf{};
        conf.intr_conf.lsc = 1; /* link changes are the device's port events */
        if (uint32_t{mtu} + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN + 2 * RTE_VLAN_HLEN > RTE_MBUF_DEFAULT_DATAROOM)
            conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
        return pool != nullptr && rte_eth_dev_configure(port_id, 1, 1, &conf) == 0 &&
               rte_eth_dev_set_mtu(port_id, mtu) == 0 &&
               rte_eth_rx_queue_setup(port_id, 0, RING_SIZE, SOCKET_ID_ANY, nullptr, pool) == 0 &&
               rte_eth_tx_queue_setup(port_id, 0, RING_SIZE, SOCKET_ID_ANY, nullptr) == 0 &&
               rte_eth_dev_start(port_id) == 0;
    }

    /* An application checks the port is active before it connects. */
    void wait_link_up(const cna_host_port& port) const
    {
        rte_eth_link link{};
        for (unsigned long ms = 0; ms < link_wait_s_ * 1000 && link.link_status != RTE_ETH_LINK_UP; ms += 10) {
            rte_eth_link_get_nowait(port.port_id, &link);
            if (link.link_status != RTE_ETH_LINK_UP)
                rte_delay_us_sleep(10000);
        }
        if (link.link_status != RTE_ETH_LINK_UP)
            complain("cna" + std::to_string(port.index) + ": the link is down");
    }

    bool start_events()
    {
        stop_fd_ = eventfd(0, EFD_CLOEXEC);
        epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
        if (stop_fd_ < 0 || epoll_fd_ < 0)
            return false;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = nullptr;
        epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, stop_fd_, &ev);
        for (cna_host_port& port : ports_) {
            ev.data.ptr = &port;
            if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, cna_rdma_event_fd(port.rdma), &ev) != 0)
                return false;
        }
        /* The application's signals are its threads', not this one's. */
        sigset_t all, before;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &before);
        events_ = std::thread([this] { hand_over_events(); });
        pthread_sigmask(SIG_SETMASK, &before, nullptr);
        pthread_setname_np(events_.native_handle(), "cna-verbs-ev");
        return true;
    }

    void hand_over_events()
    {
        for (;;) {
            epoll_event ready[8];
            const int n = epoll_wait(epoll_fd_, ready, 8, -1);
            for (int i = 0; i < n; i++) {
                auto* port = static_cast<cna_host_port*>(ready[i].data.ptr);
                if (port == nullptr)
                    return;
                hand_over(*port);
            }
        }
    }

    void hand_over(cna_host_port& port)
    {
        std::lock_guard guard(devices_lock_);
        if (port.device != nullptr) {
            cna_device_hand_over(port.device);
            return;
        }
        /* No context is open: nothing can have an event; the fd is reset. */
        ibv_cq* cq;
        void* cq_context;
        ibv_async_event event;
        while (cna_rdma_get_cq_event(port.rdma, &cq, &cq_context) == 0)
            cna_rdma_ack_cq_events(cq, 1);
        while (cna_rdma_get_async_event(port.rdma, &event) == 0) {
        }
    }

    /* On the EAL interrupt thread: a port's link went up or down. */
    static int link_changed(uint16_t port_id, rte_eth_event_type, void* arg, void*)
    {
        auto* self = static_cast<ProcessAdapter*>(arg);
        rte_eth_link link{};
        rte_eth_link_get_nowait(port_id, &link);
        std::lock_guard guard(self->devices_lock_);
        for (cna_host_port& port : self->ports_)
            if (port.port_id == port_id && port.device != nullptr)
                cna_device_port_event(port.device,
                                      link.link_status == RTE_ETH_LINK_UP ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR);
        return 0;
    }

    void shut_down()
    {
        /* A child the application forked has none of this: its exit
         * leaves the parent's adapter alone. */
        if (owner_ != getpid()) {
            if (events_.joinable())
                events_.detach();
            return;
        }
        if (events_.joinable()) {
            const uint64_t one = 1;
            (void)!write(stop_fd_, &one, sizeof(one));
            events_.join();
        }
        if (epoll_fd_ >= 0)
            close(epoll_fd_);
        if (stop_fd_ >= 0)
            close(stop_fd_);
        for (cna_host_port& port : ports_) {
            /* -EAGAIN while the callback runs: it finishes first. */
            while (rte_eth_dev_callback_unregister(port.port_id, RTE_ETH_EVENT_INTR_LSC, link_changed, this) ==
                   -EAGAIN)
                std::this_thread::yield();
            if (port.device != nullptr)
                cna_device_exit(port.device);
            if (port.rdma != nullptr)
                (void)cna_rdma_close(port.rdma);
            rte_eth_dev_stop(port.port_id);
            rte_eth_dev_close(port.port_id);
            rte_vdev_uninit(port.vdev.c_str());
        }
        ports_.clear();
        if (eal_ours_) {
            /* The EAL leaves its (empty) runtime directory behind. */
            const std::string runtime_dir = rte_eal_get_runtime_dir();
            rte_eal_cleanup();
            rmdir(runtime_dir.c_str());
        }
    }

    std::mutex bring_up_lock_; /* probe's: the adapter comes up once */
    pid_t owner_ = 0;          /* the process it came up in */
    /* Each port's libibverbs side, which the event thread and the link
     * callback hand events to, and libibverbs lets go of. */
    std::mutex devices_lock_;
    bool state_known_ = false;
    bool up_ = false;
    bool eal_ours_ = false;
    unsigned long link_wait_s_ = DEFAULT_LINK_WAIT_S;
    std::vector<cna_host_port> ports_;
    int epoll_fd_ = -1;
    int stop_fd_ = -1;
    std::thread events_;
};

ProcessAdapter the_adapter;

} // namespace

} // namespace cna::verbs

extern "C" {

cna_host_port* cna_host_probe(unsigned index, const char* ibdev_path)
{
    return cna::verbs::the_adapter.probe(index, ibdev_path);
}

void cna_host_attach(cna_host_port* port, cna_device* device) { cna::verbs::the_adapter.attach(port, device); }

cna_rdma_dev* cna_host_rdma(cna_host_port* port) { return port->rdma; }

} // extern "C"
