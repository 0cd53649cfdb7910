/* SPDX-License-Identifier: BSD-3-Clause
 * net_cna: one ethdev port per adapter PF. Port is the ethdev's private
 * data: the PCI function the OSAL attached, the ecore device on it, and the
 * state the ethdev ops keep between calls.
 */
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cna_devargs.h"
#include "ecore.h"
#include "ecore_int_api.h"
#include "hsi_eth.h"
#include "osal.h"

struct rte_eth_dev;

namespace cna::pmd {

/* A fastpath status block: shared by Rx queue i (L2_PI_RX) and Tx queue i
 * (L2_PI_TX). */
struct FastpathSb {
    osal::DmaMem mem;
    ecore::SbInfo info;
};

struct Port {
    std::string name;
    Devargs devargs;
    std::unique_ptr<osal::PciFunction> pci;
    ecore::Dev edev;
    osal::MsixIrq slowpath_irq;
    std::vector<uint8_t> fw_image;        /* bytes of fw_file=, empty: built-in */
    std::vector<FastpathSb> sbs;          /* one per queue pair */
    rte_eth_dev* eth_dev = nullptr;

    bool hw_initialized = false;
    bool vport_started = false;
    bool promiscuous = false;
    bool allmulticast = false;
    std::array<uint8_t, 6> mac_filter{};  /* primary MAC programmed in the vport */
    bool mac_filter_set = false;

    /* The adapter's counters cannot be cleared: stats_reset records them and
     * stats_get reports the difference. */
    hsi::eth::VportStats stats_base{};
};

inline Port* port_of(rte_eth_dev* dev);

/* Frame length an MTU allows on the wire (header and one VLAN tag). */
inline uint32_t max_frame_len(uint32_t mtu) { return mtu + hsi::eth::ETH_OVERHEAD; }

} // namespace cna::pmd

#include <ethdev_driver.h>

inline cna::pmd::Port* cna::pmd::port_of(rte_eth_dev* dev)
{
    return static_cast<Port*>(dev->data->dev_private);
}
