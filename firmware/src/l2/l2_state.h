/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' L2 objects of one PF: vports with their classification and
 * RSS configuration, Rx and Tx queues. Ramrods change them and the fastpath
 * reads them, both on the engine thread, so they need no synchronisation.
 */
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "hsi_eth.h"
#include "l2/tx_rate.h"
#include "frame/toeplitz.h"
#include "bus/dma_ring.h"

namespace cna::fw {

struct Filter {
    hsi::eth::FilterType type;
    uint8_t mac[6];
    uint16_t vlan;
};

struct Rss {
    bool enabled = false;
    uint16_t hash_types = 0;
    std::array<uint16_t, hsi::eth::rss::RETA_SIZE> reta{};
    std::unique_ptr<Toeplitz> toeplitz;
};

struct Vport {
    bool started = false;
    bool active_rx = false;
    bool active_tx = false;
    bool vlan_strip = false;
    bool rx_csum = false;     /* checksums validated into the CQE */
    uint16_t rx_accept = hsi::eth::accept::NONE;
    uint16_t mtu = 0;
    uint8_t max_bds_per_packet = 1;
    /* A VF's, as its PF's policy says: Tx from its MAC filters' addresses
     * only; its port VLAN (0: none) tagged on Tx, required and stripped on
     * Rx; its Tx rate limited; its link forced down, which cuts it off the
     * port whatever its driver activated. tx_policy: any of them, the Tx
     * fast lane's one check. */
    bool anti_spoof = false;
    uint16_t port_vlan = 0;
    TxRateLimit tx_rate;
    bool link_down = false;
    bool tx_policy = false;
    uint32_t rx_queues = 0;   /* bit per started Rx queue attached */
    uint32_t tx_queues = 0;   /* bit per started Tx queue attached */
    uint32_t vlan_filters = 0; /* VLAN and MAC+VLAN entries */
    std::vector<Filter> filters;
    /* When the only filter is one MAC (the common case), its address as a
     * mac_key(), so that the Rx lookup is one compare; else WALK_FILTERS. */
    uint64_t sole_mac = WALK_FILTERS;
    static constexpr uint64_t WALK_FILTERS = UINT64_MAX;
    Rss rss;
    hsi::eth::VportStats* stats = nullptr;
    /* A PF's vport started as a VF's representor (hsi_switch.h): the VF. */
    static constexpr uint8_t NO_VF = 0xff;
    uint8_t represented_vf = NO_VF;
};

struct RxQueue {
    bool started = false;
    uint8_t vport = 0;
    uint8_t sb_pi = 0;
    uint16_t sb_id = 0;
    uint16_t bd_max_bytes = 0;
    uint16_t bd_mask = 0;
    uint16_t cqe_mask = 0;
    uint16_t bd_cons = 0;     /* absolute, u16 like the driver's producer */
    uint16_t cqe_prod = 0;
    DmaRing bds;
    DmaRing cqes;
    hsi::eth::QueueStats* stats = nullptr;
    /* rxq_flags::TIMESTAMP: each frame's time in the stamp ring behind the
     * CQE ring (none: 0 bytes). */
    DmaRing stamps{};
    bool stamped() const { return stamps.bytes != 0; }
    /* Producers (RxProdData as one word) the malicious-driver check refused:
     * reported once, ignored until the driver writes others. */
    uint64_t refused_producers = UINT64_MAX;
};

struct TxQueue {
    bool started = false;
    uint8_t vport = 0;
    uint8_t sb_pi = 0;
    uint16_t sb_id = 0;
    uint16_t bd_mask = 0;
    uint16_t bd_cons = 0;
    uint32_t cid = 0;
    DmaRing bds;
    hsi::eth::QueueStats* stats = nullptr;
    /* A doorbell producer more than the ring ahead: reported once, ignored
     * until the driver rings another (none is 2^16 or more). */
    uint32_t refused_prod = UINT32_MAX;
};

struct L2State {
    std::array<Vport, hsi::MAX_VPORTS_PER_PF> vports;
    std::array<RxQueue, hsi::MAX_QUEUES_PER_PF> rxqs;
    std::array<TxQueue, hsi::MAX_QUEUES_PER_PF> txqs;
    uint32_t mac_filters_used = 0;
    uint32_t vlan_filters_used = 0;
    uint32_t active_rx_vports = 0; /* bit per vport: the Rx fast check */
    /* Bit per vport activated for Rx whose link its PF forced down: what it
     * would have received is dropped and counted, and switched to it all
     * the same (never to the wire). */
    uint32_t link_down_vports = 0;
    uint32_t started_txqs = 0;     /* bit per queue: what the Tx poll walks */
};

} // namespace cna::fw
