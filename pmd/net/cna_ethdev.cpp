/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna: probe and removal of the vdev, and the port life cycle
 * (configure, start, stop, close) on top of ecore.
 *
 * probe:  pci_attach -> init_struct -> hw_prepare -> resc_alloc -> resc_setup
 *         -> hw_init (LOAD_REQ, init phases, PF_START)
 * start:  vport start -> Rx/Tx queue starts -> vport active + rx mode
 *         -> primary MAC filter -> link up
 * stop:   the reverse, every mbuf returned to its pool
 * close:  hw_stop -> slowpath IRQ release -> resc_free -> hw_remove -> detach
 */
#include "cna_eth_port.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include <bus_pci_driver.h>
#include <bus_vdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_malloc.h>

#include "cna_engine_service.h"
#include "cna_ethdev_ops.h"
#include "cna_firmware.h"
#include "cna_log.h"
#include "cna_mp.h"
#include "cna_rdma_port.h"
#include "cna_rxtx.h"
#include "ecore_dev_api.h"
#include "ecore_iov_api.h"
#include "ecore_l2_api.h"
#include "ecore_rdma_api.h"
#include "vm_protocol.h"
#include "pci_attach.h"

namespace cna::net {

RTE_LOG_REGISTER(logtype_pmd, pmd.net.cna, NOTICE);

namespace {

/* The PFs of this process, for with_pf(). */
std::mutex g_pfs_lock;
std::vector<EthPort*> g_pfs;

/* The switch domains of this process's ports: one per adapter port, its
 * id taken from ethdev by the first of its ports and given back by the last. */
struct SwitchDomain {
    std::string name;
    uint16_t id;
    uint32_t ports;
};
std::mutex g_domains_lock;
std::vector<SwitchDomain> g_domains;

/* The port's switch, as every process names it: its adapter (embedded, or
 * the daemon's) and physical port; the id is this process's. */
void join_switch_domain(EthPort* port)
{
    const Devargs& d = port->devargs;
    port->switch_name = (d.daemon.empty() ? "cna adapter " + d.adapter : "cna daemon " + d.daemon) + " port " +
                        std::to_string(port->edev.hwfn.hw_info.port_id);
    std::lock_guard guard(g_domains_lock);
    for (SwitchDomain& domain : g_domains) {
        if (domain.name == port->switch_name) {
            domain.ports++;
            port->switch_domain = domain.id;
            return;
        }
    }
    if (rte_eth_switch_domain_alloc(&port->switch_domain) != 0) {
        PMD_LOG(WARNING, port, "no switch domain id left: switch_info left out");
        port->switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
        return;
    }
    g_domains.push_back({port->switch_name, port->switch_domain, 1});
}

void leave_switch_domain(EthPort* port)
{
    std::lock_guard guard(g_domains_lock);
    auto it = std::find_if(g_domains.begin(), g_domains.end(),
                           [&](const SwitchDomain& domain) { return domain.name == port->switch_name; });
    if (it != g_domains.end() && --it->ports == 0) {
        rte_eth_switch_domain_free(it->id);
        g_domains.erase(it);
    }
    port->switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
}

void slowpath_isr(void* arg)
{
    ecore::int_sp_dpc(static_cast<EthPort*>(arg)->edev.hwfn);
}

/* cna-adapterd's flags for the adapter the devargs describe: what a port
 * starts the daemon with when none serves its socket. */
std::vector<std::string> daemon_options(const Devargs& d)
{
    std::vector<std::string> o = {"--ports", std::to_string(d.ports), "--wire",
                                  d.wire == Wire::cable ? "cable" : "loopback", "--engine-threads",
                                  std::to_string(d.engine_threads)};
    if (!d.engine_cpus.empty()) {
        std::string cpus;
        for (uint32_t cpu : d.engine_cpus) {
            if (!cpus.empty())
                cpus += ',';
            cpus += std::to_string(cpu);
        }
        o.insert(o.end(), {"--engine-cpus", cpus});
    }
    if (d.fault != Fault::none)
        o.insert(o.end(), {"--fault", std::string(hsi::control::fault_name(d.fault))});
    return o;
}

osal::PciAttachParams attach_params(const EthPort* port)
{
    const Devargs& d = port->devargs;
    osal::PciAttachParams p;
    p.pf = d.port;
    p.is_vf = d.is_vf;
    p.vf = d.vf;
    if (port->vm_device != nullptr) {
        const rte_mem_resource& bar = port->vm_device->mem_resource[transport::vm::BAR];
        p.backend = osal::Backend::vm;
        p.vm_bar = static_cast<volatile uint8_t*>(bar.addr);
        p.vm_bar_len = bar.len;
        p.device = port->vm_device->name;
        return p;
    }
    if (d.is_vf) {
        /* A VF joins its PF's adapter: it never starts one. */
        p.backend = d.daemon.empty() ? osal::Backend::embedded : osal::Backend::remote;
        p.daemon_socket = d.daemon;
        p.adapter = d.adapter;
        p.embedded.layout_given = false;
        return p;
    }
    if (!d.daemon.empty()) {
        p.backend = osal::Backend::remote;
        p.daemon_socket = d.daemon;
        p.daemon_options = daemon_options(d);
        p.daemon_ports = d.ports_given ? d.ports : 0;
        return p;
    }
    p.backend = osal::Backend::embedded;
    p.adapter = d.adapter;
    p.embedded.ports = d.ports;
    /* A TAP is this port's own wire, not the adapter's layout. */
    p.embedded.wire = d.wire == Wire::tap ? Wire::loopback : d.wire;
    if (d.wire == Wire::tap)
        p.embedded.tap_names[d.port] = d.tap_name;
    p.embedded.engine_threads = d.engine_threads;
    p.embedded.engine_cpus = d.engine_cpus;
    if (d.engine_given)
        p.embedded.engine_on_host = d.engine != EnginePlacement::threads;
    p.embedded.layout_given = d.ports_given || (d.wire_given && d.wire != Wire::tap);
    p.embedded.faults = static_cast<uint32_t>(d.fault);
    return p;
}

void hw_tear_down(EthPort* port);

/* SR-IOV: the PF's VFs open to their drivers (vfs=); the PF undone if not. */
int enable_vfs(EthPort* port)
{
    const ecore::Status st = ecore::iov_enable(port->edev.hwfn, port->devargs.vfs);
    if (st == ecore::Status::success)
        return 0;
    PMD_LOG(ERR, port, "cannot enable %u VF(s): %s", port->devargs.vfs, ecore::status_name(st));
    hw_tear_down(port);
    return ecore::status_to_errno(st);
}

/* Attaches the PF and brings ecore up to a started PF; undoes it all on failure. */
int hw_bring_up(EthPort* port)
{
    std::string fw_source;
    if (int rc = is_vf(port) ? 0 : load_firmware(port, &fw_source); rc != 0)
        return rc;
    int err = 0;
    std::string msg;
    port->pci = osal::pci_attach(attach_params(port), &err, &msg);
    if (!port->pci) {
        PMD_LOG(ERR, port, "cannot attach the PCI function: %s", msg.c_str());
        return err;
    }
    if (port->devargs.roce_loss_ppm != 0) {
        osal::AdapterControl* control = port->pci->control();
        if (control == nullptr) {
            PMD_LOG(ERR, port, "roce_loss: this adapter backend has no fault switch");
            port->pci.reset();
            return -ENOTSUP;
        }
        control->set_roce_loss(port->devargs.port, port->devargs.roce_loss_ppm);
    }

    ecore::UpperOps ops;
    ops.link_update = [port](ecore::Hwfn&) { link_changed(port); };
    ops.slowpath_irq_req = [port](ecore::Hwfn&) {
        const int rc = port->slowpath_irq.request(port->pci->msix_eventfd(hsi::SP_MSIX_VECTOR), slowpath_isr, port);
        return rc == 0 ? ecore::Status::success : ecore::Status::io;
    };
    ops.slowpath_irq_release = [port](ecore::Hwfn&) { port->slowpath_irq.release(); };
    ecore::init_struct(port->edev, port->name, *port->pci, std::move(ops));
    /* The guide's init_dp, from EAL's --log-level=pmd.net.cna.ecore:<level>:
     * at debug, the verbose prints of every flow. */
    const osal::DpLevel dp_level = osal::get_dp_level();
    ecore::init_dp(port->edev, dp_level == osal::DpLevel::verbose ? osal::dp_module::ALL : 0, dp_level);

    ecore::Dev& edev = port->edev;
    if (port->devargs.rdma)
        edev.hwfn.pf_params.rdma = is_vf(port) ? ecore::RdmaPfParams{hsi::iov::VF_RDMA_QPS, hsi::iov::VF_RDMA_TIDS}
                                               : ecore::RdmaPfParams{RDMA_QPS, RDMA_MRS};
    ecore::Status st = ecore::hw_prepare(edev);
    if (st == ecore::Status::success) {
        st = ecore::resc_alloc(edev);
        if (st == ecore::Status::success) {
            ecore::resc_setup(edev);
            ecore::HwInitParams params;
            params.int_mode = ecore::IntMode::msix;
            params.fw_image = port->fw_image;
            params.fw_name = fw_source;
            st = ecore::hw_init(edev, params);
            if (st == ecore::Status::success) {
                port->hw_initialized = true;
                if (const int rc = removal_watch_start(port); rc != 0) {
                    hw_tear_down(port);
                    return rc;
                }
                return port->devargs.vfs != 0 ? enable_vfs(port) : 0;
            }
            ecore::resc_free(edev);
        }
        ecore::hw_remove(edev);
    }
    PMD_LOG(ERR, port, "adapter initialisation failed: %s", ecore::status_name(st));
    port->pci.reset();
    return ecore::status_to_errno(st);
}

void hw_tear_down(EthPort* port)
{
    removal_watch_stop(port);
    if (port->rdma_teardown)
        std::exchange(port->rdma_teardown, nullptr)();
    ecore::Dev& edev = port->edev;
    if (port->hw_initialized) {
        if (ecore::Status st = ecore::hw_stop(edev); st != ecore::Status::success)
            PMD_LOG(WARNING, port, "hw_stop: %s", ecore::status_name(st));
        port->slowpath_irq.release();
        ecore::int_disable_post_isr_release(edev);
        ecore::resc_free(edev);
        ecore::hw_remove(edev);
        port->hw_initialized = false;
    }
    port->pci.reset();
}

/* ---- fastpath status blocks --------------------------------------------- */

void free_fastpath_sbs(EthPort* port)
{
    PortPtt ptt(port);
    for (FastpathSb& sb : port->sbs) {
        if (ptt)
            ecore::int_sb_release(port->edev.hwfn, *ptt, sb.info);
    }
    port->sbs.clear();
}

int alloc_fastpath_sbs(EthPort* port, uint16_t count)
{
    free_fastpath_sbs(port);
    PortPtt ptt(port);
    if (!ptt)
        return -EBUSY;
    port->sbs.resize(count);
    for (uint16_t i = 0; i < count; i++) {
        FastpathSb& sb = port->sbs[i];
        if (sb.mem.alloc(sizeof(hsi::StatusBlock), "fp_sb") != 0) {
            port->sbs.resize(i);
            free_fastpath_sbs(port);
            return -ENOMEM;
        }
        const ecore::Status st = ecore::int_sb_init(port->edev.hwfn, *ptt, sb.info, sb.mem.va(), sb.mem.iova(), i);
        if (st != ecore::Status::success) {
            port->sbs.resize(i + 1u);
            free_fastpath_sbs(port);
            return ecore::status_to_errno(st);
        }
    }
    return 0;
}

} // namespace

/* ---- ethdev ops: life cycle ----------------------------------------------- */

uint32_t l2_queue_pairs(const EthPort* port)
{
    const ecore::Hwfn& hwfn = port->edev.hwfn;
    const ecore::Resources& resc = hwfn.hw_info.resc;
    const uint32_t sbs = port->devargs.rdma ? ecore::rdma_l2_sbs(hwfn, RDMA_CNQS) : resc.num_sbs;
    return RTE_MIN(sbs, RTE_MIN(resc.num_rx_queues, resc.num_tx_queues));
}

uint32_t max_queue_pairs(const EthPort* port)
{
    const uint32_t l2 = l2_queue_pairs(port);
    const auto representors = static_cast<uint32_t>(port->devargs.representors.size());
    return l2 > representors ? l2 - representors : 0;
}

int dev_configure(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    const uint16_t nb_rxq = dev->data->nb_rx_queues;
    const uint16_t nb_txq = dev->data->nb_tx_queues;
    const uint32_t max_queues = max_queue_pairs(port);
    if (nb_rxq > max_queues || nb_txq > max_queues) {
        PMD_LOG(ERR, port, "%u Rx / %u Tx queues requested; the adapter grants this PF %u", nb_rxq, nb_txq,
                max_queues);
        return -EINVAL;
    }
    port->lsc_events.store(dev->data->dev_conf.intr_conf.lsc != 0, std::memory_order_relaxed);
    const rte_eth_rx_mq_mode mq_mode = dev->data->dev_conf.rxmode.mq_mode;
    if (mq_mode != RTE_ETH_MQ_RX_NONE && mq_mode != RTE_ETH_MQ_RX_RSS) {
        PMD_LOG(ERR, port, "Rx multi-queue mode %d is not supported (none or RSS)", mq_mode);
        return -ENOTSUP;
    }
    if (mq_mode == RTE_ETH_MQ_RX_RSS)
        dev->data->dev_conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
    rss_configure(dev);
    return alloc_fastpath_sbs(port, RTE_MAX(nb_rxq, nb_txq));
}

namespace {

/* A device that is gone is not asked: only what the host holds is
 * released (here and in the queue stops). */
void vport_teardown(EthPort* port)
{
    ecore::Hwfn& hwfn = port->edev.hwfn;
    ecore::SpVportUpdateParams inactive;
    inactive.vport_id = VPORT_ID;
    inactive.update_vport_active_rx_flg = inactive.update_vport_active_tx_flg = true;
    const bool asked = !removed(port);
    if (ecore::Status st = asked ? ecore::sp_vport_update(hwfn, inactive) : ecore::Status::success;
        st != ecore::Status::success)
        PMD_LOG(WARNING, port, "vport deactivation: %s", ecore::status_name(st));
    stop_all_queues(port);
    if (ecore::Status st = asked ? ecore::sp_vport_stop(hwfn, VPORT_ID) : ecore::Status::success;
        st != ecore::Status::success)
        PMD_LOG(WARNING, port, "vport stop: %s", ecore::status_name(st));
    port->vport_started = false;
}

/* The queues learn whose passes their bursts give (engine=inline); whether
 * there is one. */
bool bind_inline_adapter(rte_eth_dev* dev)
{
    osal::PciFunction* adapter = inline_adapter(port_of(dev));
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
        static_cast<RxQueue*>(dev->data->rx_queues[q])->inline_adapter = adapter;
    for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
        static_cast<TxQueue*>(dev->data->tx_queues[q])->inline_adapter = adapter;
    return adapter != nullptr;
}

} // namespace

int dev_start(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    ecore::Hwfn& hwfn = port->edev.hwfn;
    rte_eth_dev_data* data = dev->data;

    ecore::SpVportStartParams vp;
    vp.vport_id = VPORT_ID;
    vp.mtu = data->mtu;
    vp.vlan_strip = data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
    vp.rx_csum = data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_CHECKSUM;
    vp.max_bds_per_packet =
        (data->dev_conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER) ? hsi::eth::MAX_BDS_PER_PACKET : 1;
    ecore::Status st = ecore::sp_vport_start(hwfn, vp);
    if (st != ecore::Status::success)
        return ecore::status_to_errno(st);
    port->vport_started = true;

    int rc = 0;
    for (uint16_t q = 0; q < data->nb_rx_queues && rc == 0; q++) {
        auto* rxq = static_cast<RxQueue*>(data->rx_queues[q]);
        if (!rxq->deferred_start)
            rc = start_rx_queue(port, rxq);
    }
    for (uint16_t q = 0; q < data->nb_tx_queues && rc == 0; q++) {
        auto* txq = static_cast<TxQueue*>(data->tx_queues[q]);
        if (!txq->deferred_start)
            rc = start_tx_queue(port, txq);
    }
    if (rc == 0) {
        ecore::SpVportUpdateParams active;
        active.vport_id = VPORT_ID;
        active.update_vport_active_rx_flg = active.vport_active_rx_flg = true;
        active.update_vport_active_tx_flg = active.vport_active_tx_flg = true;
        active.update_accept_flags = true;
        active.rx_accept = rx_accept_flags(port);
        rc = ecore::status_to_errno(ecore::sp_vport_update(hwfn, active));
    }
    if (rc == 0)
        rc = restore_filters(dev);
    if (rc == 0)
        rc = rss_apply(dev);
    if (rc == 0)
        rc = restore_flows(dev);
    if (rc == 0)
        rc = rx_intr_setup(dev);
    if (rc == 0 && !is_vf(port))
        rc = set_link(port, true); /* a VF's link is its PF's */
    if (rc == 0) {
        select_fastpath(dev, bind_inline_adapter(dev));
        engine_service_check(port);
        mp_primary_rxtx(dev, true);
    }
    if (rc != 0) {
        PMD_LOG(ERR, port, "start failed: %s", strerror(-rc));
        vport_teardown(port);
        return rc;
    }
    return 0;
}

int dev_stop(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    dev->data->dev_started = 0;
    if (!port->vport_started)
        return 0;
    mp_primary_rxtx(dev, false);
    if (!is_vf(port) && !removed(port))
        set_link(port, false);
    rx_intr_release(dev);
    vport_teardown(port);
    return 0;
}

namespace {

/* The port stopped, its queues released (every mbuf back in its pool) and
 * its status blocks freed: what close and reset leave of it. */
void release_queues(rte_eth_dev* dev)
{
    if (dev->data->dev_started)
        dev_stop(dev);
    for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
        rx_queue_release(dev, q);
    for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
        tx_queue_release(dev, q);
    free_fastpath_sbs(port_of(dev));
}

} // namespace

int dev_close(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    if (rte_eal_process_type() != RTE_PROC_PRIMARY)
        return 0;
    {
        std::lock_guard guard(g_pfs_lock);
        std::erase(g_pfs, port);
    }
    if (!is_vf(port))
        close_representors(port);
    leave_switch_domain(port);
    release_queues(dev);
    dev->data->nb_rx_queues = dev->data->nb_tx_queues = 0;
    vf_bulletin_stop(port);
    engine_service_unregister(port);
    hw_tear_down(port);
    mp_primary_release();
    PMD_LOG(INFO, port, "closed");
    port->~EthPort();
    dev->data->dev_private = nullptr;
    return 0;
}

/* ---- vdev probe/remove ------------------------------------------------------ */

int reattach(EthPort* port)
{
    release_queues(port->eth_dev);
    hw_tear_down(port);
    /* A VF's PF may still be cleaning up after the VF's reset (its channel
     * closed until then): a bounded wait for it. */
    constexpr int RETRIES = 40, RETRY_MS = 50;
    int rc = hw_bring_up(port);
    for (int i = 0; rc == -ENODEV && is_vf(port) && i < RETRIES; i++) {
        rte_delay_ms(RETRY_MS);
        rc = hw_bring_up(port);
    }
    if (rc != 0)
        PMD_LOG(ERR, port, "cannot attach the function again: %s", strerror(-rc));
    return rc;
}

int dev_reset(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    /* The representors are the old attachment's: closed (their ports go)
     * and made anew on the new one (new ports). */
    close_representors(port);
    if (const int rc = reattach(port); rc != 0)
        return rc;
    if (const int rc = create_representors(port); rc != 0)
        return rc;
    PMD_LOG(INFO, port, "reset: the PF attached anew");
    return 0;
}

int probe_port(rte_eth_dev* dev, Devargs&& devargs, const eth_dev_ops& ops, rte_pci_device* vm_device)
{
    const char* name = dev->data->name;
    EthPort* port = new (dev->data->dev_private) EthPort{};
    port->name = name;
    port->devargs = std::move(devargs);
    port->vm_device = vm_device;
    port->eth_dev = dev;

    int rc = hw_bring_up(port);
    if (rc == 0 && port->devargs.engine == EnginePlacement::service && (rc = engine_service_register(port)) != 0)
        hw_tear_down(port);
    if (rc == 0) {
        dev->data->mac_addrs = static_cast<rte_ether_addr*>(
            rte_zmalloc(name, sizeof(rte_ether_addr) * max_unicast_macs(port), 0));
        if (dev->data->mac_addrs == nullptr) {
            engine_service_unregister(port);
            hw_tear_down(port);
            rc = -ENOMEM;
        }
    }
    if (rc != 0) {
        PMD_DRV_LOG(ERR, "%s: probe failed: %s", name, strerror(-rc));
        port->~EthPort();
        dev->data->dev_private = nullptr;
        rte_eth_dev_release_port(dev);
        return rc;
    }
    const ecore::HwInfo& info = port->edev.hwfn.hw_info;
    if (port->devargs.mac)
        dev->data->mac_addrs[0] = *port->devargs.mac;
    else
        std::memcpy(dev->data->mac_addrs[0].addr_bytes, info.mac.data(), RTE_ETHER_ADDR_LEN);
    dev->data->mtu = info.mtu;
    dev->data->dev_flags |= RTE_ETH_DEV_INTR_LSC;
    dev->dev_ops = &ops;
    set_fastpath_ops(dev);
    mp_primary_hold();
    if (is_vf(port)) {
        vf_bulletin_start(port);
    } else {
        std::lock_guard guard(g_pfs_lock);
        g_pfs.push_back(port);
    }
    if (vm_device == nullptr)
        join_switch_domain(port);
    rte_eth_dev_probing_finish(dev);
    if (const int rc = is_vf(port) ? 0 : create_representors(port); rc != 0) {
        rte_eth_dev_close(dev->data->port_id);
        return rc;
    }
    if (is_vf(port))
        PMD_LOG(INFO, port, "VF %u of PF %u on port %u, MAC " RTE_ETHER_ADDR_PRT_FMT ", %u queue pair(s)",
                port->devargs.vf, info.pf_id, info.port_id, RTE_ETHER_ADDR_BYTES(&dev->data->mac_addrs[0]),
                max_queue_pairs(port));
    else
        PMD_LOG(INFO, port, "PF %u on port %u of adapter %s, MAC " RTE_ETHER_ADDR_PRT_FMT ", %u VF(s)",
                info.pf_id, info.port_id, port->devargs.adapter.c_str(),
                RTE_ETHER_ADDR_BYTES(&dev->data->mac_addrs[0]), port->devargs.vfs);
    return 0;
}

int cna_probe(rte_vdev_device* vdev)
{
    const char* name = rte_vdev_device_name(vdev);
    if (rte_eal_process_type() == RTE_PROC_SECONDARY)
        return mp_secondary_probe(vdev);
    Devargs devargs;
    std::string error;
    if (parse_devargs(name, rte_vdev_device_args(vdev), &devargs, &error) != 0) {
        PMD_DRV_LOG(ERR, "%s: %s", name, error.c_str());
        return -EINVAL;
    }
    rte_eth_dev* dev = rte_eth_vdev_allocate(vdev, sizeof(EthPort));
    return dev != nullptr ? probe_port(dev, std::move(devargs), cna_dev_ops) : -ENOMEM;
}

int cna_remove(rte_vdev_device* vdev) { return remove_port(rte_vdev_device_name(vdev)); }

int remove_port(const char* device_name)
{
    rte_eth_dev* dev = rte_eth_dev_allocated(device_name);
    if (dev == nullptr)
        return 0;
    /* Closed already (ethdev cleared its ops), or open in this process: a
     * secondary's close releases only its view. */
    if (dev->dev_ops != nullptr && dev->data->dev_private != nullptr)
        dev->dev_ops->dev_close(dev);
    return rte_eth_dev_release_port(dev);
}

int with_pf(uint16_t port_id, const std::function<int(EthPort*)>& call)
{
    std::lock_guard guard(g_pfs_lock);
    for (EthPort* port : g_pfs)
        if (port->eth_dev->data->port_id == port_id)
            return call(port);
    return -ENODEV;
}

} // namespace cna::net
