/* SPDX-License-Identifier: BSD-3-Clause
 * L2 (guide chapter "L2 protocol"): vports, Rx/Tx queues, classification
 * and statistics. All ids are PF-relative. Every call posts a ramrod and
 * waits (bounded) for its completion; call from the control thread (or the
 * interrupt thread: waiting then processes the event queue itself).
 *
 * Bring-up: sp_vport_start -> eth_rx/tx_queue_start -> sp_vport_update
 * (active) -> filter_accept_cmd / sp_eth_filter_ucast. Tear-down in reverse:
 * sp_vport_update (inactive) -> queue stops -> sp_vport_stop.
 */
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "ecore.h"
#include "ecore_hw.h"
#include "hsi_eth.h"
#include "osal_sync.h"

namespace cna::ecore {

/* ---- vports --------------------------------------------------------------- */

struct SpVportStartParams {
    uint8_t vport_id = 0;
    uint16_t mtu = 1500;
    bool vlan_strip = false;         /* strip the VLAN tag into the CQE */
    uint8_t max_bds_per_packet = 1;  /* > 1: scattered Rx */
    bool rx_csum = false;            /* checksum results in the CQEs */
    /* A PF's vport as a VF's representor (ecore_switch_api.h): the VF. */
    std::optional<uint8_t> represented_vf;
};
Status sp_vport_start(Hwfn& hwfn, const SpVportStartParams& params);

struct RssParams {
    bool enable = false;
    uint16_t hash_types = 0;                             /* hsi::eth::rss::* */
    std::array<uint32_t, hsi::eth::rss::KEY_DWORDS> key{};
    std::array<uint16_t, hsi::eth::rss::RETA_SIZE> reta{}; /* Rx queue ids */
};

/* Only what an update_* flag selects is changed. */
struct SpVportUpdateParams {
    uint8_t vport_id = 0;
    bool update_vport_active_rx_flg = false;
    bool vport_active_rx_flg = false;
    bool update_vport_active_tx_flg = false;
    bool vport_active_tx_flg = false;
    bool update_accept_flags = false;
    uint16_t rx_accept = hsi::eth::accept::NONE;       /* hsi::eth::accept::* */
    bool update_mtu = false;
    uint16_t mtu = 0;
    bool update_vlan_strip = false;
    bool vlan_strip = false;
    const RssParams* rss_params = nullptr;             /* non-null: update RSS */
};
Status sp_vport_update(Hwfn& hwfn, const SpVportUpdateParams& params);

Status sp_vport_stop(Hwfn& hwfn, uint8_t vport_id);

/* Rx mode of a vport: which frames are accepted (hsi::eth::accept::*). */
Status filter_accept_cmd(Hwfn& hwfn, uint8_t vport_id, uint16_t rx_accept);

/* ---- queues ------------------------------------------------------------- */

/* Opaque handle of a started queue, for its stop. */
struct QueueCid;
using QueueHandle = QueueCid*;

struct QueueStartParams {
    uint8_t vport_id = 0;
    uint16_t queue_id = 0;
    uint16_t sb_id = 0;   /* fastpath status block of the queue */
    uint8_t sb_idx = 0;   /* its protocol index: hsi::L2_PI_RX / L2_PI_TX */
};

struct RxQueueStartParams {
    QueueStartParams queue;
    uint16_t bd_max_bytes = 0;
    uint64_t bd_ring_iova = 0;   /* ring of hsi::eth::RxBd */
    uint16_t bd_ring_size = 0;
    uint64_t cqe_ring_iova = 0;  /* ring of hsi::eth::RxCqe */
    uint16_t cqe_ring_size = 0;
    /* Every frame stamped with the port's PTP clock into the stamp ring,
     * which the CQE ring's memory holds behind its cqe_ring_size CQEs
     * (hsi::eth::rxq_flags::TIMESTAMP). */
    bool timestamp = false;
};

struct RxQueueStartRet {
    /* Where the driver publishes hsi::RxProdData (GTT-mapped storm RAM). */
    volatile uint32_t* rx_prod_addr = nullptr;
    QueueHandle handle = nullptr;
};
Status eth_rx_queue_start(Hwfn& hwfn, const RxQueueStartParams& params, RxQueueStartRet* ret);
Status eth_rx_queue_stop(Hwfn& hwfn, QueueHandle handle);

struct TxQueueStartParams {
    QueueStartParams queue;
    uint64_t bd_ring_iova = 0;   /* ring of hsi::eth::TxBd */
    uint16_t bd_ring_size = 0;
};

struct TxQueueStartRet {
    /* The queue's doorbell: hsi::DoorbellData in the doorbell BAR. */
    volatile uint32_t* doorbell_addr = nullptr;
    QueueHandle handle = nullptr;
};
Status eth_tx_queue_start(Hwfn& hwfn, const TxQueueStartParams& params, TxQueueStartRet* ret);
Status eth_tx_queue_stop(Hwfn& hwfn, QueueHandle handle);

/* Fastpath: the Rx producers in GTT-mapped storm RAM, one 32-bit store that
 * publishes the BDs before it (Tx BDs are published with doorbell()). */
inline void eth_rx_prod_update(volatile uint32_t* rx_prod_addr, uint16_t bd_prod, uint16_t cqe_cons)
{
    osal::publish(rx_prod_addr, uint32_t{bd_prod} | (uint32_t{cqe_cons} << 16));
}

/* ---- classification ------------------------------------------------------ */

using FilterOpcode = hsi::eth::FilterOpcode;
using FilterType = hsi::eth::FilterType;

struct FilterUcast {
    FilterOpcode opcode = FilterOpcode::add;
    FilterType type = FilterType::mac;
    uint8_t vport_to_remove_from = 0; /* the vport (source of a move) */
    uint8_t vport_to_add_to = 0;      /* destination of a move */
    std::array<uint8_t, 6> mac{};
    uint16_t vlan = 0;
};
Status sp_eth_filter_ucast(Hwfn& hwfn, const FilterUcast& filter);

/* ---- statistics ---------------------------------------------------------- */

Status get_vport_stats(Hwfn& hwfn, Ptt& ptt, uint8_t vport_id, hsi::eth::VportStats* stats);
Status get_rx_queue_stats(Hwfn& hwfn, Ptt& ptt, uint16_t queue_id, hsi::eth::QueueStats* stats);
Status get_tx_queue_stats(Hwfn& hwfn, Ptt& ptt, uint16_t queue_id, hsi::eth::QueueStats* stats);

} // namespace cna::ecore
