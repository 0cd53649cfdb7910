/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna_vf: an ethdev port on a VF of a net_cna PF (SR-IOV), attached to
 * cna-adapterd (daemon=<socket>,pf=N,vf=M) or to an embedded adapter of
 * this process (adapter=<name>,port=N,vf=M); or, inside a QEMU guest, the
 * PCI device (ivshmem) a daemon made of a VF (vm_protocol.h), probed by EAL from
 * -a <PCI address> once bound to vfio-pci.
 *
 * It is net_cna less what belongs to the PF: ecore asks the PF, over the
 * VF-PF channel, for what a PF does itself (ecore_vf_api.h), and the
 * fastpath is the PF's, on the VF's own pages. The link, and the MAC when
 * the PF forces one, come from the bulletin board the PF writes, which an
 * EAL alarm reads every BULLETIN_PERIOD_US: a change of link raises LSC.
 */
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include <bus_pci_driver.h>
#include <bus_vdev_driver.h>
#include <ethdev_pci.h>
#include <ethdev_vdev.h>
#include <rte_alarm.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "cna_mp.h"
#include "ecore_vf_api.h"
#include "vm_protocol.h"
#include "pci_vm.h"

namespace cna::net {
namespace {

constexpr uint64_t BULLETIN_PERIOD_US = 100'000;

rte_eth_link link_from_bulletin(const hsi::iov::Bulletin& b)
{
    rte_eth_link link{};
    link.link_status = b.link_up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;
    link.link_speed = b.link_up ? b.speed_mbps : RTE_ETH_SPEED_NUM_NONE;
    link.link_duplex = b.full_duplex ? RTE_ETH_LINK_FULL_DUPLEX : RTE_ETH_LINK_HALF_DUPLEX;
    link.link_autoneg = RTE_ETH_LINK_AUTONEG;
    return link;
}

/* What the board and the channel say, taken into the port under its
 * bulletin lock. Returns what to tell the application. */
struct BoardNews {
    bool link_changed = false;
    bool cut_off = false; /* the PF closed the channel: the port needs a reset */
    bool removed = false; /* the VF is gone with its adapter */
};

BoardNews take_board(EthPort* port)
{
    rte_eth_dev* dev = port->eth_dev;
    BoardNews news;
    std::lock_guard guard(port->bulletin_lock);
    hsi::iov::Bulletin board;
    if (removed(port)) {
        /* Not the PF's doing: the adapter is gone. */
        port->vf_cut_off = news.removed = true;
        return news;
    }
    using hsi::iov::ChannelState;
    const ChannelState channel = ecore::vf_channel_state(port->edev.hwfn);
    if (!port->vf_cut_off && channel == ChannelState::disabled) {
        PMD_LOG(ERR, port, "the PF closed the VF's channel (it went away, disabled the VF, took it for malicious, "
                           "or reset it): the port needs a reset");
        port->vf_cut_off = news.cut_off = true;
        port->bulletin.link_up = 0;
    } else if (!port->vf_unattended && channel == ChannelState::unattended) {
        port->vf_unattended = true;
        PMD_LOG(NOTICE, port, "the PF's driver unloaded leaving the VF enabled: the port forwards on; "
                              "its configuration waits for a PF's driver (EAGAIN)");
    } else if (!port->vf_cut_off && ecore::vf_bulletin_read(port->edev.hwfn, &board)) {
        port->bulletin = board;
        if (board.flags & hsi::iov::BULLETIN_MAC_FORCED &&
            std::memcmp(dev->data->mac_addrs[0].addr_bytes, board.mac, RTE_ETHER_ADDR_LEN) != 0) {
            std::memcpy(dev->data->mac_addrs[0].addr_bytes, board.mac, RTE_ETHER_ADDR_LEN);
            PMD_LOG(INFO, port, "MAC " RTE_ETHER_ADDR_PRT_FMT " (forced by the PF)",
                    RTE_ETHER_ADDR_BYTES(&dev->data->mac_addrs[0]));
        }
        if (!(board.flags & hsi::iov::BULLETIN_TRUSTED) && (dev->data->promiscuous || dev->data->all_multicast)) {
            /* The PF withdrew its trust and turned them off. */
            dev->data->promiscuous = dev->data->all_multicast = 0;
            port->promiscuous = port->allmulticast = false;
            PMD_LOG(WARNING, port, "no longer trusted by the PF: promiscuous and all-multicast off");
        }
    }
    const rte_eth_link link = link_from_bulletin(port->bulletin);
    if (rte_eth_linkstatus_set(dev, &link) == 0) {
        PMD_LOG(INFO, port, "link %s, %u Mbps", link.link_status ? "up" : "down", link.link_speed);
        news.link_changed = true;
    }
    return news;
}

/* The EAL interrupt thread: takes the board, re-arms (unless cut off: the
 * reset starts polling again), and then tells the application, whose
 * callbacks may close or reset the port: nothing of it is touched after. */
void bulletin_poll(void* arg)
{
    auto* port = static_cast<EthPort*>(arg);
    rte_eth_dev* dev = port->eth_dev;
    const BoardNews news = take_board(port);
    {
        /* Re-armed under the lock vf_bulletin_stop takes before it cancels:
         * EAL orders the alarm's allocation here before its cancel's free
         * with a lock of its own, which ThreadSanitizer cannot see. */
        std::lock_guard guard(port->bulletin_lock);
        if (port->bulletin_polled && !port->vf_cut_off &&
            rte_eal_alarm_set(BULLETIN_PERIOD_US, bulletin_poll, port) != 0)
            PMD_LOG(ERR, port, "cannot re-arm the bulletin board's poll: link changes go unseen");
    }
    if (news.link_changed && port->lsc_events.load(std::memory_order_relaxed))
        rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_LSC, nullptr);
    if (news.cut_off)
        rte_eth_dev_callback_process(dev, RTE_ETH_EVENT_INTR_RESET, nullptr);
    if (news.removed)
        report_removal(port);
}

int vf_link_update(rte_eth_dev* dev, int)
{
    EthPort* port = port_of(dev);
    if (removed(port))
        return set_link_gone(dev);
    std::lock_guard guard(port->bulletin_lock);
    const rte_eth_link link = link_from_bulletin(port->bulletin);
    return rte_eth_linkstatus_set(dev, &link);
}

/* A VF is reset when its PF went away or stopped it (FLR, malice): the
 * adapter forgot everything, so the VF acquires anew, ethdev's
 * configuration kept for the next configure and start. */
int vf_dev_reset(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    vf_bulletin_stop(port);
    if (const int rc = reattach(port); rc != 0)
        return rc;
    vf_bulletin_start(port);
    PMD_LOG(INFO, port, "reset: acquired the VF anew");
    return 0;
}

eth_dev_ops make_vf_ops()
{
    eth_dev_ops ops = cna_dev_ops;
    /* The PF's: the physical link, pause, flow rules, the port's clock's
     * steering. */
    ops.dev_set_link_up = nullptr;
    ops.dev_set_link_down = nullptr;
    ops.flow_ctrl_get = nullptr;
    ops.flow_ctrl_set = nullptr;
    ops.flow_ops_get = nullptr;
    ops.representor_info_get = nullptr;
    ops.timesync_adjust_time = nullptr;
    ops.timesync_write_time = nullptr;
    ops.link_update = vf_link_update;
    ops.dev_reset = vf_dev_reset;
    return ops;
}

/* 0, or -ENOTSUP in a secondary process: a VM's VF is its primary's alone. */
int primary_only(const char* name)
{
    if (rte_eal_process_type() != RTE_PROC_SECONDARY)
        return 0;
    PMD_DRV_LOG(ERR, "%s: a VF in a VM is driven from its primary process only", name);
    return -ENOTSUP;
}

} // namespace

int cna_vf_probe(rte_vdev_device* vdev)
{
    const char* name = rte_vdev_device_name(vdev);
    if (rte_eal_process_type() == RTE_PROC_SECONDARY)
        return mp_secondary_probe(vdev);
    Devargs devargs;
    std::string error;
    if (parse_vf_devargs(name, rte_vdev_device_args(vdev), &devargs, &error) != 0) {
        PMD_DRV_LOG(ERR, "%s: %s", name, error.c_str());
        return -EINVAL;
    }
    rte_eth_dev* dev = rte_eth_vdev_allocate(vdev, sizeof(EthPort));
    return dev != nullptr ? probe_port(dev, std::move(devargs), cna_vf_dev_ops) : -ENOMEM;
}

int cna_vf_pci_probe(rte_pci_driver*, rte_pci_device* pci_dev)
{
    const rte_mem_resource& bar = pci_dev->mem_resource[transport::vm::BAR];
    std::string why;
    if (const int rc = osal::vm_bar_check(static_cast<const volatile uint8_t*>(bar.addr), bar.len, &why); rc != 0) {
        if (rc == -ENODEV) {
            PMD_DRV_LOG(DEBUG, "%s: not a cna VF, left alone: %s", pci_dev->name, why.c_str());
            return 1; /* EAL: not this driver's device */
        }
        PMD_DRV_LOG(ERR, "%s: %s", pci_dev->name, why.c_str());
        return rc;
    }
    if (const int rc = primary_only(pci_dev->name); rc != 0)
        return rc;
    const rte_devargs* args = pci_dev->device.devargs;
    if (args != nullptr && args->args != nullptr && args->args[0] != '\0') {
        PMD_DRV_LOG(ERR, "%s: net_cna_vf on a PCI device takes no devargs (got \"%s\")", pci_dev->name, args->args);
        return -EINVAL;
    }
    Devargs devargs;
    devargs.is_vf = true;
    devargs.rdma = false;
    rte_eth_dev* dev = rte_eth_dev_pci_allocate(pci_dev, sizeof(EthPort));
    return dev != nullptr ? probe_port(dev, std::move(devargs), cna_vf_dev_ops, pci_dev) : -ENOMEM;
}

int cna_vf_pci_remove(rte_pci_device* pci_dev) { return remove_port(pci_dev->device.name); }

const eth_dev_ops cna_vf_dev_ops = make_vf_ops();

void vf_bulletin_start(EthPort* port)
{
    port->vf_cut_off = port->vf_unattended = false;
    take_board(port); /* the first board now: the link is known at probe */
    std::lock_guard guard(port->bulletin_lock);
    if (rte_eal_alarm_set(BULLETIN_PERIOD_US, bulletin_poll, port) != 0)
        PMD_LOG(ERR, port, "cannot arm the bulletin board's poll: link changes go unseen");
    port->bulletin_polled = true;
}

bool vf_trusted(EthPort* port)
{
    std::lock_guard guard(port->bulletin_lock);
    return (port->bulletin.flags & hsi::iov::BULLETIN_TRUSTED) != 0;
}

void vf_bulletin_stop(EthPort* port)
{
    bool polled;
    {
        std::lock_guard guard(port->bulletin_lock);
        polled = std::exchange(port->bulletin_polled, false);
    }
    /* Outside the lock: cancel waits for a poll under way, which takes it. */
    if (polled)
        rte_eal_alarm_cancel(bulletin_poll, port);
}

} // namespace cna::net
