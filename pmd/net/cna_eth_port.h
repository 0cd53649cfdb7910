/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna: one ethdev port per adapter PF. EthPort is the ethdev's private
 * data: the PCI function the OSAL attached, the ecore device on it, and the
 * state the ethdev ops keep between calls. (A Port, in the adapter, is a
 * physical port several PFs may share.)
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cna_devargs.h"
#include "cna_flow.h"
#include "ecore.h"
#include "ecore_hw.h"
#include "ecore_int_api.h"
#include "ecore_ptp_api.h"
#include "hsi_eth.h"
#include "hsi_iov.h"
#include "hsi_rdma.h"
#include "hsi_switch.h"
#include "osal.h"

#include <rte_ethdev.h>
#include <rte_ether.h>

struct rte_eth_dev;
struct rte_intr_handle;
struct rte_pci_device;

namespace cna::net {

/* A PF port drives a single vport. */
inline constexpr uint8_t VPORT_ID = 0;

/* A fastpath status block: shared by Rx queue i (L2_PI_RX) and Tx queue i
 * (L2_PI_TX). */
struct FastpathSb {
    osal::DmaMem mem;
    ecore::SbInfo info;
};

struct RssConf {
    uint64_t rss_hf = 0;                                  /* as ethdev gave it */
    std::array<uint8_t, hsi::eth::rss::KEY_DWORDS * 4> key{};
    std::array<uint16_t, hsi::eth::rss::RETA_SIZE> reta{};
};

struct EthPort {
    std::string name;
    Devargs devargs;
    /* net_cna_vf in a VM: the ivshmem device whose BAR2 is the VF (vm_protocol.h). */
    rte_pci_device* vm_device = nullptr;
    /* dev_conf.intr_conf.lsc as of the last configure, for the interrupt
     * thread: ethdev rewrites dev_conf in rte_eth_dev_configure while a link
     * event may be in flight. */
    std::atomic<bool> lsc_events{false};
    std::unique_ptr<osal::PciFunction> pci;
    ecore::Dev edev;
    osal::MsixIrq slowpath_irq;
    osal::MsixIrq removal_watch;          /* on the function's removal fd (cna_removal.cpp) */
    std::atomic<bool> removal_reported{false};
    std::vector<uint8_t> fw_image;        /* bytes of fw_file=, empty: built-in */
    std::vector<FastpathSb> sbs;          /* one per queue pair */
    rte_eth_dev* eth_dev = nullptr;

    bool hw_initialized = false;
    bool vport_started = false;
    bool promiscuous = false;
    bool allmulticast = false;
    /* Filters live in the vport, which is rebuilt by every start: ethdev keeps
     * the unicast MACs (data->mac_addrs) and VLAN ids (data->vlan_filter_conf),
     * the port keeps the multicast list. */
    std::vector<rte_ether_addr> mc_addrs;
    RssConf rss;
    /* rte_flow rules, replayed into every new vport; freed with the port. */
    std::vector<std::unique_ptr<rte_flow>> flows;
    rte_intr_handle* rx_intr = nullptr;   /* Rx queue interrupts (eventfd per queue) */
    std::optional<uint32_t> engine_service; /* engine=service: the DPDK service that runs the adapter */

    /* The adapter's counters cannot be cleared: stats_reset records them and
     * stats_get reports the difference. A reading and its baseline must come
     * from the same side of a reset: testpmd's thread, EAL's telemetry thread
     * and the one serving secondaries read and reset concurrently. */
    std::mutex stats_lock;
    hsi::eth::VportStats stats_base{};
    std::array<hsi::eth::QueueStats, hsi::MAX_QUEUES_PER_PF> rxq_stats_base{};
    std::array<hsi::eth::QueueStats, hsi::MAX_QUEUES_PER_PF> txq_stats_base{};
    hsi::rdma::RoceStats roce_stats_base{};
    hsi::eswitch::SwitchStats switch_stats_base{};
    ecore::PtpStats ptp_stats_base{};
    /* The VFs' counters at their last rte_pmd_cna_reset_vf_stats. */
    std::array<hsi::eth::VportStats, hsi::iov::MAX_VFS_PER_PF> vf_stats_base{};
    /* The port's RDMA device while it is open (pmd/rdma): dev_close tears
     * it down first, the device refusing to stop the PF under it. */
    std::function<void()> rdma_teardown;
    /* A VF's: the last bulletin board its PF wrote (link, forced MAC), and
     * the lock between its poll (the EAL alarm) and the control thread,
     * over the board and the alarm's arming. */
    std::mutex bulletin_lock;
    hsi::iov::Bulletin bulletin{};
    bool bulletin_polled = false; /* the EAL alarm that reads it is set */
    bool vf_cut_off = false;      /* its channel closed: RTE_ETH_EVENT_INTR_RESET raised */
    bool vf_unattended = false;   /* its PF's driver unloaded leaving it enabled: said once */

    /* The port's switch domain (switch_info): its name, the same in every
     * process (the adapter and port), and this process's id for it. */
    std::string switch_name;
    uint16_t switch_domain = RTE_ETH_DEV_SWITCH_DOMAIN_ID_INVALID;
    /* switchdev mode (representor=): the VFs' representors, and the
     * transfer rules of every port of the domain, all in the PF's switch;
     * the lock over both, as OVS's threads make rules on the PF and its
     * representors at once. */
    std::mutex switch_lock;
    std::vector<rte_eth_dev*> representors;
    /* By handle: the table holds up to 131072 rules, and a destroy finds
     * its own at once. */
    using TransferFlows = std::unordered_map<const rte_flow*, std::unique_ptr<rte_flow>>;
    TransferFlows transfer_flows;
    /* Transfer rules legacy mode took out of the adapter: their handles
     * the application may still hold, freed when it destroys them (or
     * flushes their port) and with the port. */
    TransferFlows orphaned_flows;
};

/* A VF's representor (representor=): an ethdev of the PF's process on a
 * vport of the PF that the port's switch, in switchdev mode, sends the
 * VF's frames no transfer rule takes to, and whose Tx reaches the VF
 * (hsi_switch.h). Its queue pair and status block are the PF's, from the
 * top of L2's share. */
struct Representor {
    EthPort* pf = nullptr;
    uint16_t vf = 0;
    uint8_t vport_id = 0;
    uint16_t queue_id = 0; /* the PF's Rx and Tx queue and status block it uses */
    FastpathSb sb;
    bool vport_started = false;
    /* Its counters (its vport's: what software saw of the switch) and its
     * VF's, less their values at the last reset. */
    std::mutex stats_lock;
    hsi::eth::VportStats stats_base{};
    hsi::eth::VportStats vf_stats_base{};
};

/* RDMA's share of the PF (devarg rdma): what ecore reserves at probe; a
 * VF's is its grant (hsi::iov::VF_RDMA_QPS, VF_RDMA_TIDS). */
inline constexpr uint32_t RDMA_QPS = 1024;
inline constexpr uint32_t RDMA_MRS = 1024;
inline constexpr uint32_t RDMA_CNQS = 1;
/* Queue pairs L2 may use: RDMA keeps the PF's last SBs for its CNQs. */
uint32_t l2_queue_pairs(const EthPort* port);
/* Those of them the port's own: each representor has one of the rest. */
uint32_t max_queue_pairs(const EthPort* port);
/* Switch ports (switch_info.port_id): the uplink's, VF n's representor's,
 * and VF n's own as its port sees it; all different, as a process may
 * hold a VF and its representor. */
inline constexpr uint16_t UPLINK_SWITCH_PORT = 0;
inline uint16_t switch_port_of_representor(uint32_t vf) { return static_cast<uint16_t>(1 + vf); }
inline uint16_t switch_port_of_vf(uint32_t vf) { return static_cast<uint16_t>(1 + hsi::iov::MAX_VFS_PER_PF + vf); }

inline EthPort* port_of(const rte_eth_dev* dev);
inline bool is_representor(const rte_eth_dev* dev);
inline Representor* representor_of(const rte_eth_dev* dev);
/* What a Tx queue checks before it sends: its function's removal. */
inline const std::atomic<bool>* removal_flag(const rte_eth_dev* dev);

/* A port on a VF (net_cna_vf) rather than a PF. */
inline bool is_vf(const EthPort* port) { return port->devargs.is_vf; }

/* The MSI-X vector of a fastpath status block: a VF's SB i raises its
 * vector i (it has no slowpath vector). */
inline uint32_t sb_vector(const EthPort* port, uint32_t sb)
{
    return is_vf(port) ? sb : hsi::msix_vector_of_sb(sb);
}

/* A PTT for the ecore calls that take one, while it lives (none on a VF). */
class PortPtt : public ecore::FunctionPtt {
public:
    explicit PortPtt(EthPort* port) : FunctionPtt(port->edev.hwfn) {}
};

/* A PF's MAC filter grant is split evenly between unicast addresses
 * (mac_addr_add) and the multicast list; a VF's multicast list has a grant
 * of its own. */
inline uint32_t max_unicast_macs(const EthPort* port)
{
    const uint32_t filters = port->edev.hwfn.hw_info.resc.num_mac_filters;
    return port->devargs.is_vf ? filters : filters / 2;
}

/* The adapter's counters cannot be cleared: a reading less the baseline of
 * the last reset, counter by counter (structs of u64 counters). */
template <class T> void subtract_counters(T* now, const T& base)
{
    static_assert(sizeof(T) % sizeof(uint64_t) == 0);
    auto* n = reinterpret_cast<uint64_t*>(now);
    auto* b = reinterpret_cast<const uint64_t*>(&base);
    for (std::size_t i = 0; i < sizeof(T) / sizeof(uint64_t); i++)
        n[i] -= b[i];
}

/* rte_pmd_cna.h's calls come from any thread (EAL's telemetry thread among
 * them): they reach a PF of this process through this, which dev_close
 * leaves before it tears the PF down, waiting for the calls in flight.
 * -ENODEV when port_id is no net_cna PF. */
int with_pf(uint16_t port_id, const std::function<int(EthPort*)>& call);

/* Frame length an MTU allows on the wire (header and one VLAN tag). */
inline uint32_t max_frame_len(uint32_t mtu) { return mtu + hsi::eth::ETH_OVERHEAD; }

} // namespace cna::net

#include <ethdev_driver.h>

inline cna::net::EthPort* cna::net::port_of(const rte_eth_dev* dev)
{
    return static_cast<EthPort*>(dev->data->dev_private);
}

inline bool cna::net::is_representor(const rte_eth_dev* dev)
{
    return (dev->data->dev_flags & RTE_ETH_DEV_REPRESENTOR) != 0;
}

inline cna::net::Representor* cna::net::representor_of(const rte_eth_dev* dev)
{
    return static_cast<Representor*>(dev->data->dev_private);
}

inline const std::atomic<bool>* cna::net::removal_flag(const rte_eth_dev* dev)
{
    return &(is_representor(dev) ? representor_of(dev)->pf : port_of(dev))->removal_reported;
}
