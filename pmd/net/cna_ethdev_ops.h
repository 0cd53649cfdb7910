/* SPDX-License-Identifier: BSD-3-Clause
 * The ethdev ops of net_cna, grouped by the file implementing them.
 */
#pragma once

#include <array>
#include <cstdint>

#include <ethdev_driver.h>

#include "cna_ethdev.h"

struct rte_vdev_device;

namespace cna::pmd {

extern const eth_dev_ops cna_dev_ops;

/* cna_ethdev.cpp: life cycle */
int dev_configure(rte_eth_dev* dev);
int dev_start(rte_eth_dev* dev);
int dev_stop(rte_eth_dev* dev);
int dev_close(rte_eth_dev* dev);

/* vdev probe and removal (cna_ethdev.cpp) */
int cna_probe(rte_vdev_device* vdev);
int cna_remove(rte_vdev_device* vdev);

/* cna_link.cpp: link state, LSC */
int link_update(rte_eth_dev* dev, int wait_to_complete);
int dev_set_link_up(rte_eth_dev* dev);
int dev_set_link_down(rte_eth_dev* dev);
/* Asks the MFW to bring the link up or down; the result arrives as an LSC. */
int set_link(Port* port, bool up);
/* ecore's link_update hook: runs on the EAL interrupt thread. */
void link_changed(Port* port);

/* cna_filters.cpp: classification */
uint16_t rx_accept_flags(const Port* port);
int set_primary_mac_filter(Port* port, const std::array<uint8_t, 6>& mac);
int promiscuous_enable(rte_eth_dev* dev);
int promiscuous_disable(rte_eth_dev* dev);
int allmulticast_enable(rte_eth_dev* dev);
int allmulticast_disable(rte_eth_dev* dev);
int mac_addr_set(rte_eth_dev* dev, rte_ether_addr* addr);

/* cna_stats.cpp */
int stats_get(rte_eth_dev* dev, rte_eth_stats* stats);
int stats_reset(rte_eth_dev* dev);

} // namespace cna::pmd
