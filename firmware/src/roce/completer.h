/* SPDX-License-Identifier: BSD-3-Clause
 * The completer: CQEs (body, then the phase byte) on the CQs, CNQ
 * notifications of armed CQs, the asynchronous events the slowpath posts
 * on the EQ, and a QP's way into ERR with the flush of every WQE it still
 * holds. The requester and the responder complete through it.
 *
 * Threads: events are raised on the PF's engine thread and taken by the
 * slowpath; the pass locks order the two.
 */
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "hsi_rdma.h"
#include "roce/context.h"

namespace cna::fw::roce {

class Completer {
public:
    explicit Completer(Context& ctx) : ctx_(ctx) {}

    /* Writes a CQE (phase last) and notifies an armed CQ; false when the CQ
     * is full (cq_error raised, the CQ takes no more). */
    bool complete(uint16_t cq_id, hsi::rdma::RdmaCqe& cqe);
    /* The QP to ERR (the caller completed the WQE that failed, if any);
     * flush() then completes every WQE it still holds. */
    void fail_qp(Qp& qp, hsi::rdma::RdmaError why, std::optional<hsi::rdma::RdmaEvent> event);
    /* In ERR: completes whatever the driver posted, and posts, with
     * work_request_flushed. */
    bool flush(Qp& qp);
    /* WQEs [cons, end) of the SQ or the RQ completed as flushed; cons
     * moves to end unless a CQE could not be written. */
    bool flush_ring(Qp& qp, bool requester, uint32_t& cons, uint32_t end);

    void raise(hsi::rdma::RdmaEvent event, uint64_t data);
    bool events_pending() const { return events_pending_.load(std::memory_order_acquire) != 0; }
    /* post(event, data) puts one on the EQ, false when it cannot: the rest
     * wait for the next slowpath pass. */
    template <typename Post> void take_events(Post&& post)
    {
        uint32_t done = 0;
        while (done < event_count_ && post(events_[done].event, events_[done].data))
            done++;
        std::copy(events_.begin() + done, events_.begin() + event_count_, events_.begin());
        event_count_ -= done;
        events_pending_.store(event_count_ != 0 ? 1 : 0, std::memory_order_release);
    }
    /* Function reset: the events not yet taken are dropped. */
    void forget_events();

private:
    void notify(Cq& cq);

    Context& ctx_;

    struct Event {
        hsi::rdma::RdmaEvent event;
        uint64_t data;   /* the object's id, or a neighbour_event() */
    };
    static constexpr uint32_t MAX_EVENTS = 64;
    std::array<Event, MAX_EVENTS> events_{};
    uint32_t event_count_ = 0;
    std::atomic<uint32_t> events_pending_{0};
};

} // namespace cna::fw::roce
