/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna in secondary processes (a forwarding secondary, dpdk-proc-info,
 * dpdk-dumpcap, ...).
 *
 * The ethdev data, each EthPort (its dev_private) and the queues are in DPDK
 * memory, which every process of the group maps at the same address. The
 * PCI function is the primary's: its registers are reached through the
 * primary's backend, so a secondary asks the primary (rte_mp request,
 * bounded wait) for counters and the link, and has no other control op
 * (ethdev answers -ENOTSUP). Its GTT window and doorbell BAR are files,
 * though: the primary passes them, and the secondary maps them at the
 * primary's addresses, where the queues' producer and doorbell pointers
 * point, and runs the real burst functions on them. The primary tells its
 * secondaries when a port's queues start and stop.
 */
#include "cna_mp.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <array>
#include <memory>

#include <atomic>
#include <sys/stat.h>
#include <unistd.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_string_fns.h>

#include "cna_eth_port.h"
#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rxtx.h"

namespace cna::net {
namespace {

/* Requests of secondaries, served by the primary. */
constexpr char MP_ACTION[] = "net_cna_mp";
/* Notices of the primary, heard by secondaries. */
constexpr char MP_RXTX_ACTION[] = "net_cna_mp_rxtx";
/* A request reads a few registers in the primary; the bound is for a primary
 * that is stuck or gone. */
constexpr int MP_TIMEOUT_S = 2;

enum class MpOp : uint32_t { stats_get, xstats_get, link_update, bars_get };

/* A result larger than a message's 256 bytes goes through `buffer`: DPDK
 * memory the secondary allocated, at the same address in the primary. */
struct MpRequest {
    MpOp op;
    uint16_t port_id;
    uint32_t count;          /* xstats_get: entries in buffer */
    int32_t wait_to_complete; /* link_update */
    void* buffer;
};

/* bars_get: where the primary mapped each BAR; the files come as the
 * reply's fds, in this order. */
struct MpBar {
    uint64_t address;
    uint64_t offset; /* in the file */
    uint64_t len;
};
enum : int { FD_GTT, FD_DOORBELLS, BAR_FDS };

struct MpReply {
    int32_t rc; /* the op's return value */
    MpBar bars[BAR_FDS];
};
static_assert(BAR_FDS <= RTE_MP_MAX_FD_NUM);

struct MpRxtxNotice {
    uint16_t port_id;
    uint8_t started;
};

/* A message (or reply) of action `name` carrying `param`. */
template <typename Param>
void set_param(rte_mp_msg& msg, const char* name, const Param& param)
{
    static_assert(sizeof(Param) <= RTE_MP_MAX_PARAM_LEN);
    rte_strscpy(msg.name, name, sizeof(msg.name));
    msg.len_param = sizeof(Param);
    std::memcpy(msg.param, &param, sizeof(Param));
}

/* ---- primary: serving requests ----------------------------------------- */

unsigned mp_holders = 0; /* probed ports; probe and close run on one thread */

MpBar describe(const osal::SharedBar& bar, rte_mp_msg& reply, int fd_index)
{
    reply.fds[fd_index] = bar.fd();
    return {reinterpret_cast<uintptr_t>(bar.va()), bar.offset(), bar.len()};
}

int serve_bars(rte_eth_dev* dev, MpReply& r, rte_mp_msg& reply)
{
    const osal::PciFunction& pci = *port_of(dev)->pci;
    r.bars[FD_GTT] = describe(pci.gtt_bar(), reply, FD_GTT);
    r.bars[FD_DOORBELLS] = describe(pci.doorbell_bar(), reply, FD_DOORBELLS);
    reply.num_fds = BAR_FDS;
    return 0;
}

int serve(const MpRequest& req, MpReply& r, rte_mp_msg& reply)
{
    if (!rte_eth_dev_is_valid_port(req.port_id))
        return -ENODEV;
    rte_eth_dev* dev = &rte_eth_devices[req.port_id];
    if ((dev->dev_ops != &cna_dev_ops && dev->dev_ops != &cna_vf_dev_ops) || dev->data->dev_private == nullptr)
        return -ENODEV;
    if ((req.op == MpOp::stats_get || req.op == MpOp::xstats_get) && rte_mem_virt2memseg_list(req.buffer) == nullptr)
        return -EFAULT; /* not DPDK memory: the primary cannot reach it */
    switch (req.op) {
    case MpOp::stats_get: return dev->dev_ops->stats_get(dev, static_cast<rte_eth_stats*>(req.buffer));
    case MpOp::xstats_get: return dev->dev_ops->xstats_get(dev, static_cast<rte_eth_xstat*>(req.buffer), req.count);
    case MpOp::link_update: return dev->dev_ops->link_update(dev, req.wait_to_complete);
    case MpOp::bars_get: return serve_bars(dev, r, reply);
    }
    return -EINVAL;
}

/* Runs on EAL's multi-process thread, concurrently with the application's
 * control thread: the ops it calls only read, through PTTs from ecore's
 * locked pool. */
int mp_handle(const rte_mp_msg* msg, const void* peer)
{
    MpReply r{-EINVAL, {}};
    rte_mp_msg reply{};
    if (msg->len_param == sizeof(MpRequest)) {
        MpRequest req;
        std::memcpy(&req, msg->param, sizeof(req));
        r.rc = serve(req, r, reply);
    }
    set_param(reply, msg->name, r);
    return rte_mp_reply(&reply, static_cast<const char*>(peer));
}

/* ---- secondary: asking the primary -------------------------------------- */

/* The primary's answer: the op's return value or -errno; the whole reply in
 * *out when given (its fds then the caller's to close). */
int ask_primary(const rte_eth_dev* dev, const MpRequest& req, MpReply* out = nullptr, rte_mp_msg* out_msg = nullptr)
{
    rte_mp_msg msg{};
    set_param(msg, MP_ACTION, req);
    timespec timeout{MP_TIMEOUT_S, 0};
    struct rte_mp_reply reply{};
    int rc;
    if (rte_mp_request_sync(&msg, &reply, &timeout) != 0) {
        PMD_DRV_LOG(ERR, "%s: the primary process did not answer within %d s (%s)", dev->data->name,
                    MP_TIMEOUT_S, rte_strerror(rte_errno));
        rc = -ETIMEDOUT;
    } else if (reply.nb_received != 1) {
        PMD_DRV_LOG(ERR, "%s: the primary process does not serve net_cna requests (is its PMD older?)",
                    dev->data->name);
        rc = -ENOTSUP;
    } else if (reply.msgs[0].len_param != sizeof(MpReply)) {
        PMD_DRV_LOG(ERR, "%s: the primary process answers in another format (is its PMD another version?)",
                    dev->data->name);
        rc = -EPROTO;
    } else {
        MpReply r;
        std::memcpy(&r, reply.msgs[0].param, sizeof(r));
        rc = r.rc;
        if (out != nullptr) {
            *out = r;
            *out_msg = reply.msgs[0];
            reply.msgs[0].num_fds = 0;
        }
    }
    for (int m = 0; m < reply.nb_received; m++)
        for (int i = 0; i < reply.msgs[m].num_fds; i++)
            close(reply.msgs[m].fds[i]);
    free(reply.msgs);
    return rc;
}

using SharedBuffer = std::unique_ptr<void, decltype(&rte_free)>;

SharedBuffer shared_buffer(std::size_t size)
{
    return SharedBuffer(rte_malloc("cna_mp", size, 0), &rte_free);
}

int secondary_stats_get(rte_eth_dev* dev, rte_eth_stats* stats)
{
    SharedBuffer buf = shared_buffer(sizeof(*stats));
    if (!buf)
        return -ENOMEM;
    /* ethdev filled in what it counts itself; stats_get adds to that. */
    std::memcpy(buf.get(), stats, sizeof(*stats));
    const int rc = ask_primary(dev, {MpOp::stats_get, dev->data->port_id, 0, 0, buf.get()});
    if (rc == 0)
        std::memcpy(stats, buf.get(), sizeof(*stats));
    return rc;
}

int secondary_xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned size)
{
    const int count = xstats_get_names(dev, nullptr, 0);
    if (xstats == nullptr || size < static_cast<unsigned>(count))
        return count;
    SharedBuffer buf = shared_buffer(sizeof(*xstats) * count);
    if (!buf)
        return -ENOMEM;
    const int rc = ask_primary(
        dev, {MpOp::xstats_get, dev->data->port_id, static_cast<uint32_t>(count), 0, buf.get()});
    /* More than count: the primary reconfigured queues meanwhile, nothing written. */
    if (rc > 0 && rc <= count)
        std::memcpy(xstats, buf.get(), sizeof(*xstats) * rc);
    return rc;
}

/* The primary writes the link into the ethdev data both processes share. */
int secondary_link_update(rte_eth_dev* dev, int wait_to_complete)
{
    return ask_primary(dev, {MpOp::link_update, dev->data->port_id, 0, wait_to_complete, nullptr});
}

/* ---- secondary: the BARs and the bursts --------------------------------- */

/* This process's mappings of the primary's BARs, by port; only the probe
 * and close of a port touch its entry (the EAL thread's notices read
 * `mapped`). Ports whose BAR is one mapping in the primary (the same file
 * at the same address) share one here too. */
using BarMapping = std::shared_ptr<osal::SharedBar>;
struct SecondaryBars {
    BarMapping gtt;
    BarMapping doorbells;
    std::atomic<bool> mapped{false};
};
std::array<SecondaryBars, RTE_MAX_ETHPORTS> secondary_bars;
unsigned secondary_ports = 0;

bool same_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The mapping of `where` another port of this process has already, if any. */
BarMapping mapped_already(const MpBar& where, int fd)
{
    for (const SecondaryBars& port : secondary_bars)
        for (const BarMapping& bar : {port.gtt, port.doorbells})
            if (bar && reinterpret_cast<uintptr_t>(bar->va()) == where.address && bar->offset() == where.offset &&
                bar->len() == where.len && same_file(bar->fd(), fd))
                return bar;
    return nullptr;
}

int map_bar(BarMapping& bar, const MpBar& where, int fd)
{
    if ((bar = mapped_already(where, fd)))
        return 0;
    bar = std::make_shared<osal::SharedBar>();
    return bar->map_at(static_cast<uintptr_t>(where.address), fd, where.offset, static_cast<std::size_t>(where.len));
}

/* 0, or why the bursts of this process cannot run (logged by the caller). */
int map_primary_bars(rte_eth_dev* dev, SecondaryBars& bars)
{
    MpReply r{};
    rte_mp_msg reply{};
    int rc = ask_primary(dev, {MpOp::bars_get, dev->data->port_id, 0, 0, nullptr}, &r, &reply);
    if (rc == 0 && reply.num_fds != BAR_FDS)
        rc = -EPROTO;
    if (rc == 0)
        rc = map_bar(bars.gtt, r.bars[FD_GTT], reply.fds[FD_GTT]);
    if (rc == 0)
        rc = map_bar(bars.doorbells, r.bars[FD_DOORBELLS], reply.fds[FD_DOORBELLS]);
    for (int i = 0; i < reply.num_fds; i++)
        close(reply.fds[i]); /* the mappings keep their own */
    if (rc != 0) {
        bars.gtt.reset();
        bars.doorbells.reset();
    }
    return rc;
}

/* This process's fastpath for the port: the real bursts while the primary
 * has the queues started and the BARs are mapped here, the dummies
 * otherwise. ethdev sets the fastpath table up only at probe in a
 * secondary; later changes are the driver's to make. */
void install_bursts(rte_eth_dev* dev, bool started)
{
    if (!started || !secondary_bars[dev->data->port_id].mapped.load(std::memory_order_acquire)) {
        stop_fastpath(dev);
        return;
    }
    set_fastpath_ops(dev);
    /* The embedded adapter lives in the primary: a secondary's polls
     * never run it. */
    select_fastpath(dev, false);
    publish_fastpath(dev);
}

int secondary_close(rte_eth_dev* dev);

bool is_our_secondary_port(uint16_t port_id)
{
    return rte_eth_dev_is_valid_port(port_id) && rte_eth_devices[port_id].dev_ops != nullptr &&
           rte_eth_devices[port_id].dev_ops->dev_close == secondary_close;
}

/* On EAL's multi-process thread: the primary started or is stopping the
 * port's queues. */
int secondary_rxtx(const rte_mp_msg* msg, const void* peer)
{
    MpReply r{-EINVAL, {}};
    if (msg->len_param == sizeof(MpRxtxNotice)) {
        MpRxtxNotice n;
        std::memcpy(&n, msg->param, sizeof(n));
        r.rc = -ENODEV;
        if (is_our_secondary_port(n.port_id)) {
            install_bursts(&rte_eth_devices[n.port_id], n.started != 0);
            r.rc = 0;
        }
    }
    rte_mp_msg reply{};
    set_param(reply, msg->name, r);
    return rte_mp_reply(&reply, static_cast<const char*>(peer));
}

int secondary_close(rte_eth_dev* dev)
{
    SecondaryBars& bars = secondary_bars[dev->data->port_id];
    bars.mapped.store(false, std::memory_order_release);
    install_bursts(dev, false);
    bars.gtt.reset(); /* unmapped with the last port using it */
    bars.doorbells.reset();
    if (--secondary_ports == 0)
        rte_mp_action_unregister(MP_RXTX_ACTION);
    return 0;
}

eth_dev_ops secondary_ops()
{
    eth_dev_ops ops{};
    /* What probe stored in the shared EthPort and ethdev data: read in place. */
    ops.dev_infos_get = cna_dev_ops.dev_infos_get;
    ops.fw_version_get = cna_dev_ops.fw_version_get;
    ops.xstats_get_names = cna_dev_ops.xstats_get_names;
    ops.rx_burst_mode_get = cna_dev_ops.rx_burst_mode_get;
    ops.tx_burst_mode_get = cna_dev_ops.tx_burst_mode_get;
    ops.rxq_info_get = cna_dev_ops.rxq_info_get;
    ops.txq_info_get = cna_dev_ops.txq_info_get;
    /* Releases only this process's view of the port. */
    ops.dev_close = secondary_close;
    /* The adapter's: asked of the primary. */
    ops.stats_get = secondary_stats_get;
    ops.xstats_get = secondary_xstats_get;
    ops.link_update = secondary_link_update;
    return ops;
}

} // namespace

void mp_primary_hold()
{
    if (mp_holders++ > 0)
        return;
    /* Without a shared configuration (--no-shconf, --in-memory) no secondary
     * can exist: EAL refuses with ENOTSUP, and nothing needs serving. */
    if (rte_mp_action_register(MP_ACTION, mp_handle) != 0 && rte_errno != ENOTSUP)
        PMD_DRV_LOG(WARNING, "secondary processes will get no statistics: %s", rte_strerror(rte_errno));
}

void mp_primary_release()
{
    if (--mp_holders == 0)
        rte_mp_action_unregister(MP_ACTION);
}

void mp_primary_rxtx(rte_eth_dev* dev, bool started)
{
    const MpRxtxNotice notice{dev->data->port_id, started};
    rte_mp_msg msg{};
    set_param(msg, MP_RXTX_ACTION, notice);
    timespec timeout{MP_TIMEOUT_S, 0};
    struct rte_mp_reply reply{};
    /* Without a shared configuration there are no secondaries (ENOTSUP). */
    if (rte_mp_request_sync(&msg, &reply, &timeout) != 0 && rte_errno != ENOTSUP)
        PMD_LOG(WARNING, port_of(dev), "cannot tell secondary processes the queues %s: %s",
                started ? "started" : "stop", rte_strerror(rte_errno));
    else if (reply.nb_received < reply.nb_sent)
        PMD_LOG(WARNING, port_of(dev), "%d of %d secondary processes did not hear the queues %s within %d s",
                reply.nb_sent - reply.nb_received, reply.nb_sent, started ? "started" : "stop", MP_TIMEOUT_S);
    free(reply.msgs);
}

int mp_secondary_probe(rte_vdev_device* vdev)
{
    const char* name = rte_vdev_device_name(vdev);
    rte_eth_dev* dev = rte_eth_dev_attach_secondary(name);
    if (dev == nullptr) {
        PMD_DRV_LOG(ERR, "%s: the primary process has no such port", name);
        return -ENODEV;
    }
    /* Built at the first probe: cna_dev_ops is initialised by then. */
    static const eth_dev_ops ops = secondary_ops();
    dev->dev_ops = &ops;
    dev->device = &vdev->device;
    if (secondary_ports++ == 0 && rte_mp_action_register(MP_RXTX_ACTION, secondary_rxtx) != 0 &&
        rte_errno != EEXIST)
        PMD_DRV_LOG(WARNING, "%s: will not hear the primary start and stop queues: %s", name,
                    rte_strerror(rte_errno));
    SecondaryBars& bars = secondary_bars[dev->data->port_id];
    if (const int rc = map_primary_bars(dev, bars); rc != 0)
        PMD_DRV_LOG(WARNING, "%s: Rx/Tx bursts in this process return 0 packets: cannot map the port's BARs at the "
                    "primary's addresses (%s)", name, strerror(-rc));
    else
        bars.mapped.store(true, std::memory_order_release);
    /* Registered first, so a start between here and there is heard. */
    set_fastpath_ops(dev);
    install_bursts(dev, dev->data->dev_started != 0);
    rte_eth_dev_probing_finish(dev);
    PMD_DRV_LOG(INFO, "%s: attached as port %u of the primary process%s", name, dev->data->port_id,
                bars.mapped.load() ? "" : " (no Rx/Tx here)");
    return 0;
}

} // namespace cna::net
