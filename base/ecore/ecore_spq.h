/* SPDX-License-Identifier: BSD-3-Clause
 * The slowpath queue (SPQ) and the event queue (EQ), ecore-internal.
 *
 * A ramrod is an SPQ element plus its data (in a per-slot DMA buffer). The
 * storm completes it by posting an EQ element that echoes the element's
 * producer index. Posting is serialised by a mutex; completion is marked in
 * the slot by whoever processes the EQ (the DPC, or a waiter that could take
 * the DPC lock), and the waiter collects it.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ecore.h"
#include "ecore_chain.h"
#include "ecore_sb.h"
#include "hsi_spq.h"

namespace cna::ecore {

inline constexpr uint32_t SPQ_RING_SIZE = 64;
inline constexpr uint32_t EQ_RING_SIZE = 256;
inline constexpr uint32_t SPQ_DEFAULT_TIMEOUT_MS = 5000;

/* Life of an SPQ slot. idle and abandoned slots may be reused. */
enum class SpqEntryState : uint32_t { idle, pending, done, abandoned };

struct SpqEntry {
    std::atomic<SpqEntryState> state{SpqEntryState::idle};
    uint16_t echo = 0;
    uint8_t protocol_id = 0;
    uint8_t cmd_id = 0;
    uint8_t fw_return = 0;  /* valid once done */
    uint64_t data = 0;      /* EQE data, valid once done */
};

struct Spq {
    Chain chain;                          /* of hsi::SlowPathElement */
    osal::DmaMem ramrod_data;             /* RAMROD_DATA_MAX bytes per slot */
    std::unique_ptr<SpqEntry[]> entries;  /* per slot */
    osal::Mutex lock;                     /* posting */
    uint32_t timeout_ms = SPQ_DEFAULT_TIMEOUT_MS;
};

/* An asynchronous event's handler, its protocol's: rdma_alloc and
 * iov_alloc register theirs (spq_register_async_cb). */
using AsyncEventCb = void (*)(Hwfn& hwfn, uint8_t opcode, uint16_t echo, uint64_t data);

struct Eq {
    Chain chain;                          /* of hsi::EventRingElement */
    std::array<AsyncEventCb, 4> async_cbs{}; /* by hsi::ProtocolId */
    /* Set by spq_pf_start: the producer's PI in the EQ's status block, and
     * where the storms take the consumer back. */
    volatile uint16_t* hw_prod = nullptr;
    volatile uint16_t* cons = nullptr;
};

void spq_register_async_cb(Hwfn& hwfn, hsi::ProtocolId protocol, AsyncEventCb cb);

/* This thread holds hwfn.dpc_lock (taken before) and processes the EQ: the
 * DPC, or a ramrod's waiter. A ramrod waited for from within (e.g. from the
 * DPC's link_update hook) processes the EQ itself instead of waiting for the
 * lock its own thread holds. */
class DpcOwnership {
public:
    explicit DpcOwnership(Hwfn& hwfn) : hwfn_(hwfn) { owner_ = &hwfn; }
    ~DpcOwnership()
    {
        owner_ = nullptr;
        hwfn_.dpc_lock.unlock();
    }
    DpcOwnership(const DpcOwnership&) = delete;
    DpcOwnership& operator=(const DpcOwnership&) = delete;
    static bool held(const Hwfn& hwfn) { return owner_ == &hwfn; }

private:
    Hwfn& hwfn_;
    static inline thread_local const Hwfn* owner_ = nullptr;
};

/* Processes the EQ now if this thread may: it holds the DPC lock already
 * or can take it. */
void eq_try_process(Hwfn& hwfn);
/* Processes the EQ, waiting for the DPC lock if another thread holds it:
 * an interrupt's handler, which must not leave an element it was raised
 * for to a waiter that may have read the producer before it. */
void eq_dpc(Hwfn& hwfn);

Status spq_alloc(Hwfn& hwfn);
void spq_free(Hwfn& hwfn);
Status eq_alloc(Hwfn& hwfn);
void eq_free(Hwfn& hwfn);

struct SpqRequest {
    hsi::ProtocolId protocol = hsi::ProtocolId::common;
    uint8_t cmd_id = 0;
    uint32_t cid = hsi::CID_SPQ;
    const void* data = nullptr;
    std::size_t data_len = 0;
};

/* Posts a ramrod and waits (bounded by Spq::timeout_ms) for its completion;
 * the firmware's return code is mapped to a Status and logged by name. A
 * ramrod that never completes gives Status::timeout. *comp_data (optional)
 * gets the completion's data. */
Status spq_post(Hwfn& hwfn, const SpqRequest& request, uint64_t* comp_data = nullptr);

/* PF_START, the function's first ramrod: its EQ on eq_sb (the producer at
 * PI hsi::SP_PI_EQ), its consumer returned at eq_cons (in the function's
 * GTT window). The EQ starts empty. PF_STOP, its last. */
Status spq_pf_start(Hwfn& hwfn, const SbInfo& eq_sb, volatile uint16_t* eq_cons);
Status spq_pf_stop(Hwfn& hwfn);
/* After PF_STOP, or a PF_START that failed: the EQ no longer looks at its
 * status block. */
void eq_detach(Hwfn& hwfn);

/* Processes every new EQ element (ramrod completions, async events) and
 * returns the consumed slots to the storm. Caller owns the DPC lock. */
void eq_process(Hwfn& hwfn);

const char* ramrod_name(uint8_t protocol_id, uint8_t cmd_id);
const char* fw_return_name(uint8_t fw_return);

} // namespace cna::ecore
