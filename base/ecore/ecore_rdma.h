/* SPDX-License-Identifier: BSD-3-Clause
 * ecore's RDMA state (ecore-internal): the id allocators of the objects
 * the device numbers, the QPs' states as ecore last moved them, the TID
 * context table the device writes, and the event callback.
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
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
    uint32_t size() const { return static_cast<uint32_t>(used_.size()); }

private:
    std::vector<bool> used_;
};

struct RdmaQpInfo {
    RdmaQpType type = RdmaQpType::rc;
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

    /* Neighbours: the answers the device reported, by address, and the
     * questions waiting for one (by tag). */
    struct Neighbour {
        std::array<uint8_t, 6> mac{};
        std::chrono::steady_clock::time_point learnt;
    };
    std::map<RoceIp, Neighbour> neighbours;
    std::map<uint16_t, RoceIp> questions;
    uint16_t next_tag = 1;
    std::condition_variable answered;
};

Status rdma_alloc(Hwfn& hwfn);
void rdma_free(Hwfn& hwfn);

/* Every RDMA ramrod: on the function's SPQ, failing at once (nodev) on a
 * VF whose channel its PF closed. */
Status post_rdma(Hwfn& hwfn, hsi::rdma::RdmaCmd cmd, const void* data, std::size_t len,
                 uint64_t* comp_data = nullptr);

/* ecore_rdma_vf: a VF's RDMA slowpath (SPQ, EQ, ILT), started before
 * RDMA_FUNC_INIT (its CNQs' status blocks programmed apart from the
 * vport's, its EQ on CNQ 0's) and stopped after RDMA_FUNC_CLOSE. */
Status vf_rdma_slowpath_start(Hwfn& hwfn, const RdmaStartParams& params);
void vf_rdma_slowpath_stop(Hwfn& hwfn);
/* eq_process: an asynchronous RDMA event (rdma_alloc registers it). */
void rdma_async_event(Hwfn& hwfn, uint8_t opcode, uint16_t echo, uint64_t data);
/* rdma_async_event: a neighbour's answer (RdmaEvent::neighbour). */
void roce_neighbour_answered(Hwfn& hwfn, uint64_t data);

} // namespace cna::ecore
