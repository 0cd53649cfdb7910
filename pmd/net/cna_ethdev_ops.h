/* SPDX-License-Identifier: BSD-3-Clause
 * The ethdev ops of net_cna, grouped by the file implementing them.
 */
#pragma once

#include <array>
#include <cstdint>

#include <ethdev_driver.h>

#include "cna_eth_port.h"

struct rte_pci_device;
struct rte_pci_driver;
struct rte_vdev_device;

namespace cna::net {
struct RxQueue;
struct TxQueue;
}

namespace cna::net {

extern const eth_dev_ops cna_dev_ops;

/* cna_ethdev_ops.cpp: what every net_cna ethdev offers alike (MTUs,
 * descriptors, frame lengths) */
void port_limits(rte_eth_dev_info* info);

/* cna_ethdev.cpp: life cycle */
int dev_configure(rte_eth_dev* dev);
int dev_start(rte_eth_dev* dev);
int dev_stop(rte_eth_dev* dev);
int dev_close(rte_eth_dev* dev);
/* The PF attached anew and brought up to where probe left it: after its
 * adapter went away (surprise removal), or to start over. */
int dev_reset(rte_eth_dev* dev);

/* vdev probe and removal (cna_ethdev.cpp) */
int cna_probe(rte_vdev_device* vdev);
int cna_remove(rte_vdev_device* vdev);
/* A port (PF or VF) on devargs already parsed, driven by `ops`, on an
 * ethdev just allocated (released if the probe fails); a VF in a VM on the
 * ivshmem device `vm_device`. */
int probe_port(rte_eth_dev* dev, Devargs&& devargs, const eth_dev_ops& ops, rte_pci_device* vm_device = nullptr);
/* Closes (if open in this process) and releases the ethdev of a device. */
int remove_port(const char* device_name);
/* dev_reset: the function torn down and brought up again (its queues
 * released: the application sets them up anew). */
int reattach(EthPort* port);

/* cna_timesync.cpp: IEEE 1588, a PF's (a VF's without the clock's steering) */
void timesync_ops(eth_dev_ops& ops);

/* cna_vf.cpp: net_cna_vf */
extern const eth_dev_ops cna_vf_dev_ops;
int cna_vf_probe(rte_vdev_device* vdev);
/* net_cna_vf as a PCI driver: an ivshmem device of a QEMU guest whose BAR2
 * holds a cna VF (vm_protocol.h); any other is left alone. */
int cna_vf_pci_probe(rte_pci_driver* drv, rte_pci_device* pci_dev);
int cna_vf_pci_remove(rte_pci_device* pci_dev);
/* The VF's bulletin board, read on an EAL alarm: link (LSC), forced MAC. */
void vf_bulletin_start(EthPort* port);
void vf_bulletin_stop(EthPort* port);
/* Whether the PF trusts the VF, as its bulletin board last said. */
bool vf_trusted(EthPort* port);

/* cna_queues.cpp: queue control and Rx interrupts */
int start_rx_queue(EthPort* port, RxQueue* rxq);
int start_tx_queue(EthPort* port, TxQueue* txq);
void stop_rx_queue(EthPort* port, RxQueue* rxq);
void stop_tx_queue(EthPort* port, TxQueue* txq);
/* Where an ethdev's queue is in the adapter: a vport of the function, the
 * function's queue id, and the status block (of that id) it reports in. A
 * port's queue i is its function's, a representor's one of its PF's. */
struct QueueSite {
    ecore::Hwfn& hwfn;
    uint8_t vport_id;
    uint16_t queue_id;
    FastpathSb& sb;
};
int start_rx_queue_at(rte_eth_dev* dev, RxQueue* rxq, const QueueSite& site);
int start_tx_queue_at(rte_eth_dev* dev, TxQueue* txq, const QueueSite& site);
/* function: the port whose adapter function holds the queue. */
void stop_rx_queue_at(rte_eth_dev* dev, RxQueue* rxq, EthPort* function);
void stop_tx_queue_at(rte_eth_dev* dev, TxQueue* txq, EthPort* function);
void stop_all_queues(EthPort* port);
int rx_queue_start(rte_eth_dev* dev, uint16_t queue_id);
int rx_queue_stop(rte_eth_dev* dev, uint16_t queue_id);
int tx_queue_start(rte_eth_dev* dev, uint16_t queue_id);
int tx_queue_stop(rte_eth_dev* dev, uint16_t queue_id);
int rx_intr_setup(rte_eth_dev* dev);
void rx_intr_release(rte_eth_dev* dev);
int rx_queue_intr_enable(rte_eth_dev* dev, uint16_t queue_id);
int rx_queue_intr_disable(rte_eth_dev* dev, uint16_t queue_id);

/* cna_rss.cpp */
uint64_t rss_offloads_supported();
/* The adapter's hash types (hsi::eth::rss::*) for ethdev's rss_hf bits. */
uint16_t rss_hash_types(uint64_t rss_hf);
/* Takes ethdev's RSS configuration (dev_configure); rss_apply programs it. */
void rss_configure(rte_eth_dev* dev);
int rss_apply(rte_eth_dev* dev);
int rss_hash_update(rte_eth_dev* dev, rte_eth_rss_conf* conf);
int rss_hash_conf_get(rte_eth_dev* dev, rte_eth_rss_conf* conf);
int reta_update(rte_eth_dev* dev, rte_eth_rss_reta_entry64* reta_conf, uint16_t reta_size);
int reta_query(rte_eth_dev* dev, rte_eth_rss_reta_entry64* reta_conf, uint16_t reta_size);

/* cna_link.cpp: link state, LSC */
/* ethdev's speed_capa for the MFW's speed capability bits. */
uint32_t ethdev_speed_capa(uint32_t mfw_caps);
int link_update(rte_eth_dev* dev, int wait_to_complete);
int dev_set_link_up(rte_eth_dev* dev);
int dev_set_link_down(rte_eth_dev* dev);
/* Asks the MFW to bring the link up or down; the result arrives as an LSC. */
int set_link(EthPort* port, bool up);
int flow_ctrl_get(rte_eth_dev* dev, rte_eth_fc_conf* fc);
int flow_ctrl_set(rte_eth_dev* dev, rte_eth_fc_conf* fc);
/* ecore's link_update hook: runs on the EAL interrupt thread. */
void link_changed(EthPort* port);

/* cna_removal.cpp: surprise removal (the adapter's daemon ended) */
/* Watches the attached function's removal fd from the EAL interrupt
 * thread; 0 where it cannot be removed. */
int removal_watch_start(EthPort* port);
void removal_watch_stop(EthPort* port);
/* Whether the function is gone: the port's operations fail with ENODEV. */
bool removed(const EthPort* port);
/* The port taken down for good, once: its bursts stopped, its link down
 * (LSC), RTE_ETH_EVENT_INTR_RMV; from the removal fd's watch, or a VF's
 * bulletin poll where there is no fd (a VF in a guest). */
void report_removal(EthPort* port);
/* A gone function's link: down, for good (rte_eth_linkstatus_set's result). */
int set_link_gone(rte_eth_dev* dev);

/* cna_filters.cpp: classification */
uint16_t rx_accept_flags(const EthPort* port);
/* Replays MAC, multicast and VLAN filters into a new vport. */
int restore_filters(rte_eth_dev* dev);
int mac_addr_add(rte_eth_dev* dev, rte_ether_addr* mac, uint32_t index, uint32_t vmdq);
void mac_addr_remove(rte_eth_dev* dev, uint32_t index);
int set_mc_addr_list(rte_eth_dev* dev, rte_ether_addr* list, uint32_t count);
int vlan_filter_set(rte_eth_dev* dev, uint16_t vlan_id, int on);
int vlan_offload_set(rte_eth_dev* dev, int mask);
int promiscuous_enable(rte_eth_dev* dev);
int promiscuous_disable(rte_eth_dev* dev);
int allmulticast_enable(rte_eth_dev* dev);
int allmulticast_disable(rte_eth_dev* dev);
int mac_addr_set(rte_eth_dev* dev, rte_ether_addr* addr);

/* cna_flow.cpp: rte_flow */
int flow_ops_get(rte_eth_dev* dev, const rte_flow_ops** ops);
/* Replays the port's rules into a new vport. */
int restore_flows(rte_eth_dev* dev);

/* cna_flow_transfer.cpp: transfer rules in the PF's port switch */
/* The PF whose switch (in switchdev mode) dev is of: itself or its
 * representor's PF; nullptr in legacy mode. */
EthPort* switch_manager(const rte_eth_dev* dev);
int transfer_flow_validate(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                           const rte_flow_action* actions, rte_flow_error* error);
rte_flow* transfer_flow_create(rte_eth_dev* dev, const rte_flow_attr* attr, const rte_flow_item* pattern,
                               const rte_flow_action* actions, rte_flow_error* error);
int transfer_flow_destroy(rte_eth_dev* dev, rte_flow* flow, rte_flow_error* error);
/* Every transfer rule made on dev. */
int transfer_flows_flush(rte_eth_dev* dev, rte_flow_error* error);
int transfer_flow_query(rte_eth_dev* dev, rte_flow* flow, const rte_flow_action* action, void* data,
                        rte_flow_error* error);

/* cna_representor.cpp: VF representors */
extern const eth_dev_ops cna_representor_ops;
/* switchdev mode and an ethdev per VF of devargs.representors (probe);
 * the PF is undone by its caller if it fails. */
int create_representors(EthPort* pf);
/* Every representor closed and released, the rules gone, legacy mode. */
void close_representors(EthPort* pf);
/* Legacy mode: the transfer rules gone (the last representor closed). */
void leave_switchdev(EthPort* pf);
int representor_info_get(rte_eth_dev* dev, rte_eth_representor_info* info);

/* cna_stats.cpp */
/* ethdev's basic statistics from a vport's counters. */
void vport_eth_stats(const hsi::eth::VportStats& v, rte_eth_stats* stats);
int stats_get(rte_eth_dev* dev, rte_eth_stats* stats);
int stats_reset(rte_eth_dev* dev);
int xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned size);
int xstats_get_names(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size);
/* A representor's: its own vport's counters (the frames software saw of
 * the switch), and its VF's as vf_* xstats. */
int representor_stats_get(rte_eth_dev* dev, rte_eth_stats* stats);
int representor_stats_reset(rte_eth_dev* dev);
int representor_xstats_get(rte_eth_dev* dev, rte_eth_xstat* xstats, unsigned size);
int representor_xstats_get_names(rte_eth_dev* dev, rte_eth_xstat_name* names, unsigned size);

} // namespace cna::net
