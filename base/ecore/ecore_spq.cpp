/* SPDX-License-Identifier: BSD-3-Clause
 * Posting ramrods on the SPQ and completing them from the EQ.
 */
#include "ecore_spq.h"

#include <cinttypes>
#include <cstring>
#include <mutex>

#include "ecore_hw.h"
#include "ecore_sb.h"
#include "ecore_log.h"
#include "hsi_eth.h"
#include "hsi_rdma.h"

namespace cna::ecore {

using hsi::EventRingElement;
using hsi::FwReturn;
using hsi::SlowPathElement;

namespace {

/* How a waiter looks at its slot (and at the EQ, if it may): without
 * sleeping for as long as most ramrods take (tens of microseconds), only
 * yielding its CPU in case the adapter's engine shares it, then asleep
 * between looks. A sleep from the start costs each ramrod about 100 us
 * (the kernel's timer slack included). */
constexpr uint64_t SPQ_QUICK_WAIT_NS = 500000;
constexpr uint32_t SPQ_POLL_US = 50;

Status fw_return_status(uint8_t code)
{
    switch (static_cast<FwReturn>(code)) {
    case FwReturn::ok: return Status::success;
    case FwReturn::invalid_command: return Status::notimpl;
    case FwReturn::invalid_param: return Status::inval;
    case FwReturn::bad_state: return Status::busy;
    case FwReturn::no_resource: return Status::nospc;
    case FwReturn::dma_error: return Status::fault;
    case FwReturn::not_found: return Status::noent;
    }
    return Status::io;
}

/* Returns slots whose ramrods are finished with (collected or abandoned) to
 * the ring, oldest first. Caller holds spq.lock. */
void spq_reclaim(Spq& spq)
{
    while (!spq.chain.is_empty()) {
        SpqEntry& entry = spq.entries[spq.chain.cons() & (spq.chain.size() - 1)];
        SpqEntryState state = entry.state.load(std::memory_order_acquire);
        if (state != SpqEntryState::idle && state != SpqEntryState::abandoned)
            break;
        spq.chain.consume();
    }
}

void spq_complete(Hwfn& hwfn, const EventRingElement& eqe)
{
    Spq& spq = *hwfn.spq;
    SpqEntry& entry = spq.entries[eqe.echo & (spq.chain.size() - 1)];
    if (entry.state.load(std::memory_order_acquire) != SpqEntryState::pending || entry.echo != eqe.echo) {
        /* Typically the completion of a ramrod whose waiter gave up. */
        DP_NOTICE(hwfn, "completion of %s (echo %u, %s) has no waiter: dropped",
                  ramrod_name(eqe.protocol_id, eqe.opcode), eqe.echo, fw_return_name(eqe.fw_return_code));
        return;
    }
    entry.fw_return = eqe.fw_return_code;
    entry.data = eqe.data;
    entry.state.store(SpqEntryState::done, std::memory_order_release);
    DP_VERBOSE(hwfn, osal::dp_module::SPQ, "%s (echo %u) completed: %s", ramrod_name(eqe.protocol_id, eqe.opcode),
               eqe.echo, fw_return_name(eqe.fw_return_code));
}

/* Waits for the slot's completion, processing the EQ whenever the DPC lock is
 * free so that it also works before interrupts are enabled, in POLL mode and
 * on the interrupt thread itself. */
Status spq_wait(Hwfn& hwfn, SpqEntry& entry, uint64_t* comp_data)
{
    Spq& spq = *hwfn.spq;
    const uint16_t echo = entry.echo;
    const char* name = ramrod_name(entry.protocol_id, entry.cmd_id);
    osal::Deadline deadline(spq.timeout_ms);
    const uint64_t quick_until = osal::time_ns() + SPQ_QUICK_WAIT_NS;
    for (;;) {
        if (entry.state.load(std::memory_order_acquire) == SpqEntryState::done)
            break;
        eq_try_process(hwfn);
        if (entry.state.load(std::memory_order_acquire) == SpqEntryState::done)
            break;
        if (deadline.expired() || device_gone(hwfn)) {
            /* A completion racing with the deadline wins. */
            SpqEntryState expected = SpqEntryState::pending;
            entry.state.compare_exchange_strong(expected, SpqEntryState::abandoned);
            break;
        }
        if (osal::time_ns() < quick_until)
            osal::yield();
        else
            osal::usleep(SPQ_POLL_US);
    }

    if (entry.state.load(std::memory_order_acquire) == SpqEntryState::abandoned) {
        if (device_gone(hwfn)) {
            DP_ERR(hwfn, "ramrod %s (echo %u): the device is gone", name, echo);
            return Status::nodev;
        }
        DP_ERR(hwfn, "ramrod %s (echo %u) not completed by the firmware within %u ms", name, echo,
               spq.timeout_ms);
        hw_report_dma_faults(hwfn, name);
        return Status::timeout;
    }
    const uint8_t code = entry.fw_return;
    if (comp_data != nullptr)
        *comp_data = entry.data;
    /* From here on the slot may be reused by another ramrod. */
    entry.state.store(SpqEntryState::idle, std::memory_order_release);
    Status rc = fw_return_status(code);
    if (rc != Status::success)
        DP_ERR(hwfn, "ramrod %s (echo %u) failed: firmware returned %s (%u)", name, echo,
               fw_return_name(code), code);
    return rc;
}

} // namespace

const char* ramrod_name(uint8_t protocol_id, uint8_t cmd_id)
{
    if (protocol_id == static_cast<uint8_t>(hsi::ProtocolId::common)) {
        switch (static_cast<hsi::CommonCmd>(cmd_id)) {
        case hsi::CommonCmd::pf_start: return "PF_START";
        case hsi::CommonCmd::pf_stop: return "PF_STOP";
        case hsi::CommonCmd::empty: return "EMPTY";
        case hsi::CommonCmd::vf_cleanup: return "VF_CLEANUP";
        }
    } else if (protocol_id == static_cast<uint8_t>(hsi::ProtocolId::eth)) {
        using hsi::eth::EthCmd;
        switch (static_cast<EthCmd>(cmd_id)) {
        case EthCmd::vport_start: return "VPORT_START";
        case EthCmd::vport_update: return "VPORT_UPDATE";
        case EthCmd::vport_stop: return "VPORT_STOP";
        case EthCmd::rx_queue_start: return "RX_QUEUE_START";
        case EthCmd::rx_queue_stop: return "RX_QUEUE_STOP";
        case EthCmd::tx_queue_start: return "TX_QUEUE_START";
        case EthCmd::tx_queue_stop: return "TX_QUEUE_STOP";
        case EthCmd::filters_update: return "FILTERS_UPDATE";
        case EthCmd::flow_rule_add: return "FLOW_RULE_ADD";
        case EthCmd::flow_rule_del: return "FLOW_RULE_DEL";
        case EthCmd::switch_mode: return "SWITCH_MODE";
        case EthCmd::switch_rule_add: return "SWITCH_RULE_ADD";
        case EthCmd::switch_rule_del: return "SWITCH_RULE_DEL";
        }
    } else if (protocol_id == static_cast<uint8_t>(hsi::ProtocolId::roce)) {
        using hsi::rdma::RdmaCmd;
        switch (static_cast<RdmaCmd>(cmd_id)) {
        case RdmaCmd::func_init: return "RDMA_FUNC_INIT";
        case RdmaCmd::func_close: return "RDMA_FUNC_CLOSE";
        case RdmaCmd::create_cq: return "RDMA_CREATE_CQ";
        case RdmaCmd::resize_cq: return "RDMA_RESIZE_CQ";
        case RdmaCmd::destroy_cq: return "RDMA_DESTROY_CQ";
        case RdmaCmd::create_qp: return "ROCE_CREATE_QP";
        case RdmaCmd::modify_qp: return "ROCE_MODIFY_QP";
        case RdmaCmd::query_qp: return "ROCE_QUERY_QP";
        case RdmaCmd::destroy_qp: return "ROCE_DESTROY_QP";
        case RdmaCmd::register_tid: return "RDMA_REGISTER_TID";
        case RdmaCmd::deregister_tid: return "RDMA_DEREGISTER_TID";
        case RdmaCmd::create_srq: return "RDMA_CREATE_SRQ";
        case RdmaCmd::modify_srq: return "RDMA_MODIFY_SRQ";
        case RdmaCmd::destroy_srq: return "RDMA_DESTROY_SRQ";
        case RdmaCmd::set_addresses: return "ROCE_SET_ADDRESSES";
        case RdmaCmd::resolve_neighbour: return "ROCE_RESOLVE_NEIGHBOUR";
        }
    }
    return "UNKNOWN";
}

const char* fw_return_name(uint8_t fw_return)
{
    switch (static_cast<FwReturn>(fw_return)) {
    case FwReturn::ok: return "ok";
    case FwReturn::invalid_command: return "invalid_command";
    case FwReturn::invalid_param: return "invalid_param";
    case FwReturn::bad_state: return "bad_state";
    case FwReturn::no_resource: return "no_resource";
    case FwReturn::dma_error: return "dma_error";
    case FwReturn::not_found: return "not_found";
    }
    return "unknown";
}

Status spq_alloc(Hwfn& hwfn)
{
    auto spq = std::make_unique<Spq>();
    Status rc = spq->chain.alloc(SPQ_RING_SIZE, sizeof(SlowPathElement), "SPQ ring");
    if (rc != Status::success)
        return rc;
    if (spq->ramrod_data.alloc(std::size_t{SPQ_RING_SIZE} * hsi::RAMROD_DATA_MAX, "SPQ ramrod data") < 0)
        return Status::nomem;
    spq->entries = std::make_unique<SpqEntry[]>(SPQ_RING_SIZE);
    hwfn.spq = std::move(spq);
    return Status::success;
}

void spq_free(Hwfn& hwfn) { hwfn.spq.reset(); }

Status eq_alloc(Hwfn& hwfn)
{
    auto eq = std::make_unique<Eq>();
    Status rc = eq->chain.alloc(EQ_RING_SIZE, sizeof(EventRingElement), "event ring");
    if (rc != Status::success)
        return rc;
    hwfn.eq = std::move(eq);
    return Status::success;
}

void eq_free(Hwfn& hwfn) { hwfn.eq.reset(); }

Status spq_post(Hwfn& hwfn, const SpqRequest& req, uint64_t* comp_data)
{
    const char* name = ramrod_name(static_cast<uint8_t>(req.protocol), req.cmd_id);
    if (device_gone(hwfn)) {
        DP_VERBOSE(hwfn, osal::dp_module::SPQ, "%s not posted: the device is gone", name);
        return Status::nodev;
    }
    if (!hwfn.spq || req.data_len > hsi::RAMROD_DATA_MAX) {
        DP_ERR(hwfn, "cannot post %s: %s", name, hwfn.spq ? "ramrod data too large" : "no SPQ (resc_alloc)");
        return Status::inval;
    }
    Spq& spq = *hwfn.spq;
    SpqEntry* entry;
    {
        std::lock_guard guard(spq.lock);
        spq_reclaim(spq);
        if (spq.chain.is_full()) {
            DP_ERR(hwfn, "cannot post %s: SPQ full (%u ramrods outstanding)", name, spq.chain.used());
            return Status::busy;
        }
        const uint16_t echo = spq.chain.prod();
        const uint32_t slot = echo & (spq.chain.size() - 1);
        auto* spe = spq.chain.produce_as<SlowPathElement>();

        auto* data = static_cast<uint8_t*>(spq.ramrod_data.va()) + std::size_t{slot} * hsi::RAMROD_DATA_MAX;
        memset(data, 0, hsi::RAMROD_DATA_MAX);
        if (req.data_len > 0)
            memcpy(data, req.data, req.data_len);
        spe->hdr = hsi::RamrodHeader{req.cid, req.cmd_id, static_cast<uint8_t>(req.protocol), echo};
        spe->data_ptr = hsi::make_regpair(spq.ramrod_data.iova() + std::size_t{slot} * hsi::RAMROD_DATA_MAX);

        entry = &spq.entries[slot];
        entry->echo = echo;
        entry->protocol_id = static_cast<uint8_t>(req.protocol);
        entry->cmd_id = req.cmd_id;
        entry->state.store(SpqEntryState::pending, std::memory_order_release);

        doorbell(doorbell_addr(hwfn, hsi::CID_SPQ), spq.chain.prod());
        DP_VERBOSE(hwfn, osal::dp_module::SPQ, "posted %s cid %u echo %u", name, req.cid, echo);
    }
    return spq_wait(hwfn, *entry, comp_data);
}

void spq_register_async_cb(Hwfn& hwfn, hsi::ProtocolId protocol, AsyncEventCb cb)
{
    hwfn.eq->async_cbs.at(static_cast<uint8_t>(protocol)) = cb;
}

void eq_dpc(Hwfn& hwfn)
{
    if (DpcOwnership::held(hwfn)) {
        eq_process(hwfn);
        return;
    }
    hwfn.dpc_lock.lock();
    DpcOwnership owner(hwfn);
    eq_process(hwfn);
}

void eq_try_process(Hwfn& hwfn)
{
    if (DpcOwnership::held(hwfn)) {
        eq_process(hwfn);
        return;
    }
    if (!hwfn.dpc_lock.try_lock())
        return; /* the DPC is at it */
    DpcOwnership owner(hwfn);
    eq_process(hwfn);
}

void eq_process(Hwfn& hwfn)
{
    Eq& eq = *hwfn.eq;
    if (eq.hw_prod == nullptr)
        return; /* not started: an attention's DPC before PF_START */
    const uint16_t hw_prod = osal::observe(eq.hw_prod);
    if (hw_prod == eq.chain.cons())
        return;
    eq.chain.set_prod(hw_prod);
    while (auto* elem = eq.chain.consume_as<EventRingElement>()) {
        EventRingElement eqe;
        memcpy(&eqe, elem, sizeof(eqe));
        if (!(eqe.flags & hsi::EQE_FLAG_ASYNC)) {
            spq_complete(hwfn, eqe);
            continue;
        }
        const AsyncEventCb cb = eqe.protocol_id < eq.async_cbs.size() ? eq.async_cbs[eqe.protocol_id] : nullptr;
        if (cb != nullptr)
            cb(hwfn, eqe.opcode, eqe.echo, eqe.data);
        else
            DP_INFO(hwfn, "async event %u (protocol %u, data 0x%" PRIx64 ")", eqe.opcode, eqe.protocol_id, eqe.data);
    }
    osal::publish(eq.cons, eq.chain.cons());
}

Status spq_pf_start(Hwfn& hwfn, const SbInfo& eq_sb, volatile uint16_t* eq_cons)
{
    /* Both ends restart at 0, as the storms' do: a producer a previous start
     * left in the status block must not be taken for this one's. */
    Eq& eq = *hwfn.eq;
    {
        /* The EQ's handler may run already (its status block's interrupt). */
        std::lock_guard guard(hwfn.dpc_lock);
        eq.chain.reset();
        eq.hw_prod = &eq_sb.sb_virt->pi_array[hsi::SP_PI_EQ];
        *eq.hw_prod = 0;
        eq.cons = eq_cons;
    }
    hsi::PfStartRamrodData data{};
    data.event_ring_base = hsi::make_regpair(eq.chain.iova());
    data.event_ring_size = static_cast<uint16_t>(eq.chain.size());
    data.event_ring_sb_id = static_cast<uint16_t>(eq_sb.sb_id);
    data.event_ring_sb_pi = static_cast<uint8_t>(hsi::SP_PI_EQ);
    data.personality = 1;
    data.hsi_major = hsi::HSI_VERSION_MAJOR;
    data.hsi_minor = hsi::HSI_VERSION_MINOR;
    data.mtu = hwfn.hw_info.mtu;
    const Status rc = spq_post(hwfn, SpqRequest{hsi::ProtocolId::common,
                                                static_cast<uint8_t>(hsi::CommonCmd::pf_start), hsi::CID_SPQ,
                                                &data, sizeof(data)});
    if (rc != Status::success)
        eq_detach(hwfn);
    return rc;
}

Status spq_pf_stop(Hwfn& hwfn)
{
    hsi::PfStopRamrodData data{};
    const Status rc = spq_post(hwfn, SpqRequest{hsi::ProtocolId::common,
                                                static_cast<uint8_t>(hsi::CommonCmd::pf_stop), hsi::CID_SPQ,
                                                &data, sizeof(data)});
    eq_detach(hwfn);
    return rc;
}

void eq_detach(Hwfn& hwfn)
{
    /* The status block's memory is its owner's to free from now on (a VF's
     * RDMA device's, closing): its handler, if it runs, finds no EQ. */
    std::lock_guard guard(hwfn.dpc_lock);
    hwfn.eq->hw_prod = nullptr;
    hwfn.eq->cons = nullptr;
}

} // namespace cna::ecore
