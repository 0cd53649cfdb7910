/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/completer.h"

#include <atomic>
#include <cstring>

#include "irq/cau.h"
#include "bus/dma.h"
#include "function/function.h"
#include "base/log.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

bool Completer::complete(uint16_t cq_id, RdmaCqe& cqe)
{
    Cq& cq = ctx_.cqs[cq_id];
    if (cq.overflowed)
        return false;
    const uint32_t db = cq_db_offset(cq.dpi, cq_id);
    const uint32_t cons = ctx_.hw.doorbell_word(db);
    const uint32_t written = cq.prod - cq.ring_start;
    uint8_t* slot = cq.prod - cons > cq.mask
                        ? nullptr
                        : ctx_.hw.dma().map(cq.ring, uint64_t{written & cq.mask} * sizeof(RdmaCqe), sizeof(RdmaCqe));
    if (slot == nullptr) {
        cq.overflowed = true;
        log(LogLevel::err, "roce: %s CQ %u overrun (%u written, %u consumed, %u entries)", ctx_.hw.name().c_str(), cq_id,
            cq.prod, cons, cq.mask + 1);
        raise(RdmaEvent::cq_error, cq_id);
        return false;
    }
    cqe.phase = ((written / (cq.mask + 1)) & 1) == 0 ? 1 : 0;
    std::memcpy(slot, &cqe, offsetof(RdmaCqe, phase));
    std::atomic_ref<uint8_t>(slot[offsetof(RdmaCqe, phase)]).store(cqe.phase, std::memory_order_release);
    cq.prod++;

    const uint32_t arm = ctx_.hw.doorbell_word(db + 4);
    if (arm != cq.arm_seen) {
        cq.arm_seen = arm;
        cq.armed = true;
        cq.solicited_only = (arm & cq_arm::SOLICITED) != 0;
    }
    if (cq.armed && (!cq.solicited_only || (cqe.flags & cqe::SOLICITED) ||
                     cqe.status != static_cast<uint8_t>(CqeStatus::success)))
        notify(cq);
    return true;
}

void Completer::notify(Cq& cq)
{
    Cnq& cnq = ctx_.cnqs[cq.cnq];
    const CnqEntry entry{hsi::make_regpair(cq.handle)};
    if (!ctx_.hw.dma().write(cnq.ring, uint64_t{cnq.prod & cnq.mask} * sizeof(entry), &entry, sizeof(entry)))
        return;
    cnq.prod++;
    ctx_.hw.cau().set_pi(cnq.sb_id, RDMA_PI_CNQ, cnq.prod);
    cq.armed = false;
}

void Completer::raise(RdmaEvent event, uint64_t data)
{
    if (event_count_ == MAX_EVENTS) {
        log(LogLevel::err, "roce: %s async event %u (0x%llx) lost: the slowpath is behind", ctx_.hw.name().c_str(),
            static_cast<uint32_t>(event), static_cast<unsigned long long>(data));
        return;
    }
    events_[event_count_++] = Event{event, data};
    events_pending_.store(1, std::memory_order_release);
}

void Completer::forget_events()
{
    event_count_ = 0;
    events_pending_.store(0, std::memory_order_release);
}

void Completer::fail_qp(Qp& qp, RdmaError why, std::optional<RdmaEvent> event)
{
    if (qp.state == QpState::err)
        return;
    qp.state = QpState::err;
    qp.last_error = why;
    qp.req.ack_deadline_ns = 0;
    qp.req.rnr_until_ns = 0;
    qp.resp.recv.active = false;
    qp.resp.in_progress = InProgress::none;
    if (event)
        raise(*event, qp.id);
    if (why != RdmaError::flushed)
        log(LogLevel::info, "roce: %s QP %u to ERR (error %u)", ctx_.hw.name().c_str(), qp.id, static_cast<uint32_t>(why));
}

bool Completer::flush_ring(Qp& qp, bool requester, uint32_t& cons, uint32_t end)
{
    DmaRing& ring = requester ? qp.sq : qp.rq;
    const uint32_t mask = requester ? qp.sq_mask : qp.rq_mask;
    const uint32_t shift = requester ? qp.sq_wqe_shift + 6u : qp.rq_wqe_shift + 4u;
    bool work = false;
    /* A producer more than a ring ahead is the driver's bug: flush what the
     * ring can hold, no more. */
    for (uint32_t budget = mask + 1; cons != end && budget != 0; budget--) {
        /* Both WQE formats start with wr_id; an SQ WQE's opcode follows. */
        SqWqe wqe{};
        if (!ctx_.hw.dma().read(ring, uint64_t{cons & mask} << shift, &wqe, requester ? sizeof(SqWqe) : sizeof(RqWqe)))
            return work;
        RdmaCqe cqe{};
        cqe.wr_id = wqe.wr_id;
        cqe.qp_id = qp.id;
        cqe.wqe_index = static_cast<uint16_t>(cons);
        cqe.status = static_cast<uint8_t>(CqeStatus::work_request_flushed);
        cqe.vendor_error = static_cast<uint8_t>(RdmaError::flushed);
        cqe.opcode = requester ? requester_opcode(wqe.opcode) : static_cast<uint8_t>(CqeOpcode::recv);
        cqe.flags = requester ? cqe::REQUESTER : 0;
        if (!complete(requester ? qp.sq_cq : qp.rq_cq, cqe))
            return work;
        cons++;
        work = true;
    }
    cons = end;
    return work;
}

bool Completer::flush(Qp& qp)
{
    bool work = flush_ring(qp, true, qp.req.sq_cons, ctx_.sq_prod(qp));
    qp.req.sq_next = qp.req.tx_wqe = qp.req.sq_cons;
    qp.req.reads_outstanding = 0;
    if (qp.srq == NO_SRQ)
        return flush_ring(qp, false, qp.resp.rq_cons, ctx_.rq_prod(qp)) || work;
    if (!qp.last_wqe_reported) {
        qp.last_wqe_reported = true;
        raise(RdmaEvent::qp_last_wqe, qp.id);
    }
    return work;
}

} // namespace cna::fw::roce
