/* SPDX-License-Identifier: BSD-3-Clause
 * L2, ecore-internal part: the queues started on this hwfn.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ecore_l2_api.h"
#include "osal_sync.h"

namespace cna::ecore {

struct QueueCid {
    bool rx = false;
    uint8_t vport_id = 0;
    uint16_t queue_id = 0;
    uint32_t cid = 0;     /* Tx: the connection of its doorbell */
};

struct L2Info {
    osal::Mutex lock;     /* queues */
    std::vector<std::unique_ptr<QueueCid>> queues;
};

Status l2_alloc(Hwfn& hwfn);
void l2_free(Hwfn& hwfn);

/* false (and logged) for a vport id beyond the function's grant. */
bool check_vport(Hwfn& hwfn, uint8_t vport_id);

/* Records a queue started in the device: its handle. */
QueueHandle add_queue(Hwfn& hwfn, bool rx, const QueueStartParams& q, uint32_t cid);

} // namespace cna::ecore
