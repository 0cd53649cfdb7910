/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' L2 view of one PCI function, a PF or one of its VFs: its
 * vports, queues and filters, where its Rx producers and statistics live
 * (storm RAM for a PF, the VF's GTT page for a VF) and what becomes of a
 * queue protocol violation. The PF's ramrods create and change the objects
 * (a ramrod on a VF's vport acts on the VF's FunctionFirmware); the engines
 * (l2/) serve them with the function's own DMA, status blocks and
 * doorbells.
 *
 * Ramrods run on engine thread 0 with the slowpath lock held and every
 * other engine thread between two passes; the fastpath reads l2() on the
 * function's own engine thread, or the host threads' passes, without a
 * lock (the pass locks and the host pass gate order the two).
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>

#include "base/host_pass_gate.h"
#include "base/published_list.h"
#include "hsi_common.h"
#include "hsi_eth.h"
#include "hsi_iov.h"
#include "hsi_spq.h"
#include "function/function.h"
#include "l2/filters.h"
#include "l2/flow_table.h"
#include "l2/l2_state.h"
#include "ptp/ptp_block.h"
#include "slowpath/resources.h"

namespace cna::fw {

class StormRam;

/* A ramrod's object id: invalid_param past the chip's limit, no_resource
 * past the function's grant. */
hsi::FwReturn check_id(uint32_t id, uint32_t chip_limit, uint32_t granted);

class FunctionFirmware {
public:
    FunctionFirmware(const FunctionFirmware&) = delete;
    FunctionFirmware& operator=(const FunctionFirmware&) = delete;

    FunctionHw& hw() { return hw_; }
    const FunctionHw& hw() const { return hw_; }
    const Grant& grant() const { return grant_; }
    /* Whether the engines serve the function: a PF between PF_START and
     * PF_STOP, a VF while its PF has it enabled. */
    bool started() const { return started_; }
    L2State& l2() { return l2_; }
    const L2State& l2() const { return l2_; }
    const FlowTable& flows() const { return flows_; }
    /* Its PTP registers and latches (hsi_ptp.h). */
    PtpBlock& ptp() { return ptp_; }

    /* Sets a protocol index of one of the function's status blocks; the
     * host sees it at the next CAU flush. */
    void update_sb_index(uint16_t sb_id, uint8_t pi, uint16_t value) { hw_.cau().set_pi(sb_id, pi, value); }
    /* The producers the host last published for an Rx queue. Inline: the
     * Rx path reads them for every burst. */
    hsi::RxProdData rx_prod(uint32_t queue) const
    {
        uint32_t raw = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(rx_prods_ + queue * hsi::iro::RX_PROD_STRIDE))
                           .load(std::memory_order_acquire);
        hsi::RxProdData data;
        std::memcpy(&data, &raw, sizeof(data));
        return data;
    }
    /* An engine thread: the malicious-driver checks refused what the
     * driver asked of a queue. */
    virtual void queue_error(hsi::QueueKind kind, uint32_t queue, hsi::QueueError why) = 0;

    /* Who serves a queue while passes run at once (engine=inline's queue
     * passes beside the port group's): an Rx queue's one writer holds its
     * claim (RxEngine's cursor), a Tx queue's one pass its gate. */
    std::atomic<bool>& rx_claim(uint32_t queue) { return rx_claims_[queue]; }
    HostPassGate& tx_gate(uint32_t queue) { return tx_gates_[queue]; }

    /* L2 ramrods on the function's objects (eth_ramrods.cpp); ids are the
     * function's own, checked against its grant. */
    hsi::FwReturn vport_start(const hsi::eth::VportStartRamrodData& d);
    hsi::FwReturn vport_update(const hsi::eth::VportUpdateRamrodData& d);
    hsi::FwReturn vport_stop(const hsi::eth::VportStopRamrodData& d);
    hsi::FwReturn rx_queue_start(const hsi::eth::RxQueueStartRamrodData& d);
    hsi::FwReturn rx_queue_stop(const hsi::eth::QueueStopRamrodData& d);
    hsi::FwReturn tx_queue_start(const hsi::eth::TxQueueStartRamrodData& d);
    hsi::FwReturn tx_queue_stop(const hsi::eth::QueueStopRamrodData& d);
    hsi::FwReturn filters_update(const hsi::eth::FiltersUpdateRamrodData& d);

protected:
    /* rx_prods: the function's Rx producers, RX_PROD_STRIDE apart; clock:
     * its port's, which a PF steers and a VF reads. */
    FunctionFirmware(FunctionHw& hw, StormRam& ram, uint32_t pf, const Grant& grant, uint8_t* rx_prods,
                     PtpClock& clock);
    ~FunctionFirmware() = default;

    /* Where the storms keep the function's statistics. */
    virtual hsi::eth::VportStats& vport_stats(uint32_t vport) = 0;
    virtual hsi::eth::QueueStats& rx_queue_stats(uint32_t queue) = 0;
    virtual hsi::eth::QueueStats& tx_queue_stats(uint32_t queue) = 0;
    /* A Tx queue's connection: whether its cid may be used, and its context
     * when the function has connection contexts (a PF's ILT). */
    virtual hsi::FwReturn open_tx_connection(const hsi::eth::TxQueueStartRamrodData& d) = 0;
    virtual void close_tx_connection(const TxQueue& q, uint16_t queue_id) = 0;
    /* Every L2 object forgotten: unload, function level reset. */
    void reset_l2();
    void zero_rx_prod(uint32_t queue);

    hsi::FwReturn check_vport(uint8_t vport, bool want_started) const;
    hsi::FwReturn check_sb(uint16_t sb, uint8_t pi) const;

    FunctionHw& hw_;
    StormRam& ram_;
    const uint32_t pf_;
    const Grant grant_;
    uint8_t* const rx_prods_;
    bool started_ = false;
    L2State l2_;
    FilterTable filters_{l2_, grant_};
    FlowTable flows_;
    PtpBlock ptp_;
    std::array<std::atomic<bool>, hsi::MAX_QUEUES_PER_PF> rx_claims_{};
    std::array<HostPassGate, hsi::MAX_QUEUES_PER_PF> tx_gates_;
};

} // namespace cna::fw

namespace cna::fw {

/* The functions an engine serves (a port's, an engine thread's). */
class FunctionList : public PublishedList<FunctionFirmware, MAX_FUNCTIONS> {};

} // namespace cna::fw
