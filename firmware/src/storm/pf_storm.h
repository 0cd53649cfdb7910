/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' view of one PF: its slowpath configuration registers, the
 * slowpath queue it consumes, the event queue it produces, and the L2
 * objects its ramrods create (vports, queues, filters).
 *
 * Ramrods run on engine thread 0 with the slowpath lock held and every
 * other engine thread between two passes; the fastpath (l2/) reads l2() on
 * the PF's own engine thread without a lock (the pass locks order the two).
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hsi_eth.h"
#include "hsi_spq.h"
#include "pci/function.h"
#include "roce/roce_storm.h"
#include "storm/filters.h"
#include "storm/flow_table.h"
#include "storm/l2_state.h"
#include "storm/resources.h"
#include "storm/storm_ram.h"

namespace cna::fw {

class Storms;

class PfStorm {
public:
    PfStorm(FunctionHw& hw, StormRam& ram, Storms& storms, const Grant& grant);

    uint32_t pf() const { return pf_; }
    FunctionHw& hw() { return hw_; }
    StormRam& ram() { return ram_; }
    const Grant& grant() const { return grant_; }
    bool started() const { return eq_.exists; }
    L2State& l2() { return l2_; }
    roce::RoceStorm& roce() { return roce_; }
    /* Sets a protocol index of one of the PF's status blocks; the host sees
     * it at the next CAU flush. */
    void update_sb_index(uint16_t sb_id, uint8_t pi, uint16_t value) { hw_.cau().set_pi(sb_id, pi, value); }
    const FlowTable& flows() const { return flows_; }

    /* GRC STORM_PF block (slowpath lock held). */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    /* Engine, lock-free: is there an SPQ element the storm would take now?
     * Inline up to the doorbell compare, all that an engine pass pays while
     * no ramrod is posted. */
    bool spq_pending() const
    {
        uint16_t prod = hw_.doorbell_prod(hsi::CID_SPQ);
        return prod != spq_cons_ && prod != spq_refused_prod_ && spq_can_take();
    }
    /* Engine, slowpath lock held: execute pending ramrods. */
    void poll_spq();
    /* Engine, slowpath lock held: the RoCE storm's asynchronous events
     * onto the EQ (while it has room). */
    void post_async_events();
    /* Back to power-on state (function unloaded). */
    void reset();
    void raise_fw_assert(uint32_t code);
    /* An engine thread: the malicious-driver checks refused what the
     * driver asked of a queue. Latches why in STORM_PF_QUEUE_ERROR and
     * raises attn::QUEUE_ERROR; the adapter's log says so too (the 1st,
     * 2nd, 4th... time). */
    void queue_error(hsi::QueueKind kind, uint32_t queue, hsi::QueueError why);

private:
    struct Registers {
        uint32_t spq_base_lo = 0, spq_base_hi = 0, spq_size = 0;
        uint32_t ilt_base_lo = 0, ilt_base_hi = 0, ilt_cids = 0;
        uint32_t pf_enable = 0;
    };
    struct EventQueue {
        bool exists = false;
        uint64_t base = 0;
        uint16_t mask = 0;
        uint16_t prod = 0;
        uint8_t sb_pi = 0;
    };

    /* spq.cpp */
    bool eq_full() const;
    bool spq_can_take() const;
    void execute(const hsi::SlowPathElement& elem);
    /* false when the EQ cannot take it (full, or not DMA-writable). */
    bool post_eqe(const hsi::RamrodHeader& hdr, hsi::FwReturn rc, uint64_t data = 0, uint8_t flags = 0);
    bool read_data(uint64_t data_ptr, void* data, std::size_t len);
    /* common_ramrods.cpp */
    void pf_start(const hsi::SlowPathElement& elem);
    hsi::FwReturn pf_stop();
    hsi::FwReturn common_ramrod(uint8_t cmd);
    bool write_conn_context(const hsi::ConnContext& ctx);
    /* eth_ramrods.cpp */
    hsi::FwReturn eth_ramrod(uint8_t cmd, uint64_t data_ptr);
    template <typename Data> hsi::FwReturn run_eth(uint64_t data_ptr, hsi::FwReturn (PfStorm::*handler)(const Data&));
    hsi::FwReturn check_vport(uint8_t vport, bool want_started) const;
    hsi::FwReturn check_sb(uint16_t sb, uint8_t pi) const;
    hsi::FwReturn vport_start(const hsi::eth::VportStartRamrodData& d);
    hsi::FwReturn vport_update(const hsi::eth::VportUpdateRamrodData& d);
    hsi::FwReturn vport_stop(const hsi::eth::VportStopRamrodData& d);
    hsi::FwReturn rx_queue_start(const hsi::eth::RxQueueStartRamrodData& d);
    hsi::FwReturn rx_queue_stop(const hsi::eth::QueueStopRamrodData& d);
    hsi::FwReturn tx_queue_start(const hsi::eth::TxQueueStartRamrodData& d);
    hsi::FwReturn tx_queue_stop(const hsi::eth::QueueStopRamrodData& d);
    hsi::FwReturn filters_update(const hsi::eth::FiltersUpdateRamrodData& d);
    hsi::FwReturn flow_rule_add(const hsi::eth::FlowRuleAddRamrodData& d);
    hsi::FwReturn flow_rule_del(const hsi::eth::FlowRuleDelRamrodData& d);

    const uint32_t pf_;
    FunctionHw& hw_;
    StormRam& ram_;
    Storms& storms_;
    const Grant grant_;
    Registers regs_;
    uint16_t spq_cons_ = 0;
    /* A doorbell producer more than the SPQ ahead, reported once and then
     * ignored until the driver rings another: none is 2^16 or more. */
    uint32_t spq_refused_prod_ = NONE_REFUSED;
    static constexpr uint32_t NONE_REFUSED = UINT32_MAX;
    std::atomic<uint32_t> last_queue_error_{0};
    std::atomic<uint32_t> queue_errors_{0};
    EventQueue eq_;
    uint64_t completion_data_ = 0; /* EQE data of the ramrod being executed */
    L2State l2_;
    FilterTable filters_{l2_, grant_};
    FlowTable flows_{ram_, pf_};
    roce::RoceStorm roce_{hw_, grant_, ram_.roce_stats(pf_)};
};

} // namespace cna::fw
