/* SPDX-License-Identifier: BSD-3-Clause
 * Surprise removal: the function gone from under the port, as a device
 * that fell off the bus (for net_cna, the end of the cna-adapterd that
 * served it). The EAL interrupt thread hears it at once, from the
 * function's removal fd; the port then stops moving frames (its Tx bursts
 * send nothing and ring no doorbell; its Rx bursts find nothing, as no
 * completion comes from a gone adapter), goes link-down with an LSC and
 * raises RTE_ETH_EVENT_INTR_RMV. The burst functions stay: rte_eth_fp_ops
 * are the application's lcores' to read without a lock, and only a stopped
 * port may have them changed. Every operation after it
 * fails at once (ecore's waits end with nodev, statistics with ENODEV) and
 * close returns every mbuf. A reset, or a detach and attach, brings the
 * port up again on whatever serves the function then.
 */
#include <cstring>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_rxtx.h"

namespace cna::net {
namespace {

void on_removal(void* arg)
{
    auto* port = static_cast<EthPort*>(arg);
    if (!port->pci->removed())
        return;
    port->removal_watch.release();
    report_removal(port);
}

} // namespace

void report_removal(EthPort* port)
{
    if (port->removal_reported.exchange(true))
        return;
    rte_eth_dev* dev = port->eth_dev;
    PMD_LOG(ERR, port,
            "the adapter is gone (%s ended): link down, the port moves no frames and every operation fails "
            "(ENODEV) until a reset, or a detach and attach, finds it served again",
            port->devargs.daemon.empty() ? "its backend" : port->devargs.daemon.c_str());
    if (set_link_gone(dev) == 0 && port->lsc_events.load(std::memory_order_relaxed))
        rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, nullptr);
    rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_RMV, nullptr);
}

int removal_watch_start(EthPort* port)
{
    port->removal_reported = false;
    /* The fd hangs up and stays so: the EAL thread watches it as it watches
     * a vector's eventfd, and the handler lets go of it at the first call. */
    const int fd = port->pci->removal_fd();
    if (fd < 0)
        return 0;
    const int rc = port->removal_watch.request(fd, on_removal, port);
    if (rc != 0)
        PMD_LOG(ERR, port, "cannot watch for the adapter's removal: %s", strerror(-rc));
    return rc;
}

void removal_watch_stop(EthPort* port)
{
    port->removal_watch.release();
}

bool removed(const EthPort* port)
{
    return port->pci != nullptr && port->pci->removed();
}

int set_link_gone(rte_eth_dev* dev)
{
    rte_eth_link down{};
    down.link_status = RTE_ETH_LINK_DOWN;
    down.link_autoneg = RTE_ETH_LINK_AUTONEG;
    return rte_eth_linkstatus_set(dev, &down);
}

} // namespace cna::net
