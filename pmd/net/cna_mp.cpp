/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna in secondary processes (dpdk-proc-info, dpdk-dumpcap, ...).
 *
 * The ethdev data and each EthPort (its dev_private) are in DPDK memory, which
 * every process of the group maps at the same address; the adapter is not:
 * its registers, doorbell BAR and GTT storm RAM exist in the primary only.
 * So a secondary reads what probe stored in the EthPort in place, asks the
 * primary (rte_mp request, bounded wait) for counters and the link, and does
 * nothing else: the other ops are absent (ethdev answers -ENOTSUP).
 */
#include "cna_mp.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include <bus_vdev_driver.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_string_fns.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"

namespace cna::pmd {
namespace {

constexpr char MP_ACTION[] = "net_cna_mp";
/* A request reads a few registers in the primary; the bound is for a primary
 * that is stuck or gone. */
constexpr int MP_TIMEOUT_S = 2;

enum class MpOp : uint32_t { stats_get, xstats_get, link_update };

/* A result larger than a message's 256 bytes goes through `buffer`: DPDK
 * memory the secondary allocated, at the same address in the primary. */
struct MpRequest {
    MpOp op;
    uint16_t port_id;
    uint32_t count;          /* xstats_get: entries in buffer */
    int32_t wait_to_complete; /* link_update */
    void* buffer;
};
static_assert(sizeof(MpRequest) <= RTE_MP_MAX_PARAM_LEN);

struct MpReply {
    int32_t rc; /* the op's return value */
};

/* ---- primary: serving requests ----------------------------------------- */

unsigned mp_holders = 0; /* probed ports; probe and close run on one thread */

int serve(const MpRequest& req)
{
    if (!rte_eth_dev_is_valid_port(req.port_id))
        return -ENODEV;
    rte_eth_dev* dev = &rte_eth_devices[req.port_id];
    if (dev->dev_ops != &cna_dev_ops || dev->data->dev_private == nullptr)
        return -ENODEV;
    if (req.op != MpOp::link_update && rte_mem_virt2memseg_list(req.buffer) == nullptr)
        return -EFAULT; /* not DPDK memory: the primary cannot reach it */
    switch (req.op) {
    case MpOp::stats_get: return stats_get(dev, static_cast<rte_eth_stats*>(req.buffer));
    case MpOp::xstats_get: return xstats_get(dev, static_cast<rte_eth_xstat*>(req.buffer), req.count);
    case MpOp::link_update: return link_update(dev, req.wait_to_complete);
    }
    return -EINVAL;
}

/* Runs on EAL's multi-process thread, concurrently with the application's
 * control thread: the ops it calls only read, through PTTs from ecore's
 * locked pool. */
int mp_handle(const rte_mp_msg* msg, const void* peer)
{
    MpReply r{-EINVAL};
    if (msg->len_param == sizeof(MpRequest)) {
        MpRequest req;
        std::memcpy(&req, msg->param, sizeof(req));
        r.rc = serve(req);
    }
    rte_mp_msg reply{};
    rte_strscpy(reply.name, msg->name, sizeof(reply.name));
    reply.len_param = sizeof(r);
    std::memcpy(reply.param, &r, sizeof(r));
    return rte_mp_reply(&reply, static_cast<const char*>(peer));
}

/* ---- secondary: asking the primary -------------------------------------- */

int ask_primary(const rte_eth_dev* dev, const MpRequest& req)
{
    rte_mp_msg msg{};
    rte_strscpy(msg.name, MP_ACTION, sizeof(msg.name));
    msg.len_param = sizeof(req);
    std::memcpy(msg.param, &req, sizeof(req));
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
    } else {
        MpReply r;
        std::memcpy(&r, reply.msgs[0].param, sizeof(r));
        rc = r.rc;
    }
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

eth_dev_ops secondary_ops()
{
    eth_dev_ops ops{};
    /* What probe stored in the shared EthPort and ethdev data: read in place. */
    ops.dev_infos_get = cna_dev_ops.dev_infos_get;
    ops.fw_version_get = cna_dev_ops.fw_version_get;
    ops.xstats_get_names = cna_dev_ops.xstats_get_names;
    /* Releases only this process's view of the port. */
    ops.dev_close = cna_dev_ops.dev_close;
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
    /* The queues are the primary's to drive: a burst here would store to a
     * doorbell BAR that only the primary maps. */
    dev->rx_pkt_burst = rte_eth_pkt_burst_dummy;
    dev->tx_pkt_burst = rte_eth_pkt_burst_dummy;
    rte_eth_dev_probing_finish(dev);
    PMD_DRV_LOG(INFO, "%s: attached as port %u of the primary process", name, dev->data->port_id);
    return 0;
}

} // namespace cna::pmd
