/* SPDX-License-Identifier: BSD-3-Clause
 * ecore's RDMA state (ecore-internal): the id allocators of the objects
 * the device numbers, the QPs' states as ecore last moved them, the TID
 * context table the device writes, and the event callback.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "ecore.h"
#include "ecore_rdma_api.h"
#include "osal_mem.h"
#include "osal_sync.h"

namespace cna::ecore {

/* Ids 0..size-1, lowest free first. */
class IdPool {
public:
    explicit IdPool(uint32_t size = 0) : used_(size, false) {}
    bool acquire(uint32_t* id);
    bool release(uint32_t id);
    bool in_use(uint32_t id) const { return id < used_.size() && used_[id]; }
    uint32_t used() const;

private:
    std::vector<bool> used_;
};

struct RdmaQpInfo {
    RdmaQpState state = RdmaQpState::reset;
    uint16_t pd = 0;
};

struct RdmaInfo {
    osal::Mutex lock;        /* the pools and QP states */
    bool started = false;
    RdmaEventCallback events;
    uint8_t num_cnqs = 0;
    uint16_t max_mtu = 0;
    osal::DmaMem tid_contexts;
    IdPool dpis{hsi::MAX_DPIS};
    IdPool pds{hsi::rdma::MAX_PDS};
    IdPool tids, cqs{hsi::rdma::MAX_CQS}, srqs{hsi::rdma::MAX_SRQS}, qps;
    std::vector<uint8_t> tid_keys;       /* the key byte of each TID's next registration */
    std::vector<RdmaQpInfo> qp_info;
};

Status rdma_alloc(Hwfn& hwfn);
void rdma_free(Hwfn& hwfn);
/* eq_process: an asynchronous RDMA event. */
void rdma_async_event(Hwfn& hwfn, uint8_t opcode, uint64_t data);

} // namespace cna::ecore
