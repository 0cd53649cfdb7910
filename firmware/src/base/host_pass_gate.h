/* SPDX-License-Identifier: BSD-3-Clause
 * Who runs a port group's passes when the host's threads run the dataplane
 * (EnginePlacement::host): any thread may ask, one runs, none waits. A
 * thread that finds the passes running leaves its request to the runner,
 * which passes again before it lets go; one that finds them held (by the
 * slowpath, or an IOMMU unmap waiting out the DMA in flight) leaves it to
 * the next call after the hold.
 *
 * A thread that only has time to lend (an idle poll) leaves no request:
 * the pass running does what its own would, and a runner that passed again
 * for every idle poll of another thread would do nothing else.
 *
 * One atomic word. A caller read-modify-writes it once, and a runner once
 * more after a pass with no request behind it: two locked instructions a
 * pass where a lock and a request word took five. Each read-modify-write
 * is also the fence that orders a caller's doorbell write before the
 * runner's next pass reads it.
 */
#pragma once

#include <atomic>
#include <cstdint>

#include "base/backoff.h"

namespace cna::fw {

class HostPassGate {
public:
    /* A host thread asks for a pass. True: it is the runner, passes now and
     * calls done() after each pass; false: the runner, or the next call
     * after the hold, serves the request. */
    bool enter()
    {
        uint32_t v = state_.load(std::memory_order_relaxed);
        for (;;) {
            const bool busy = (v & (RUNNING | HELD)) != 0;
            /* A runner starts with no request pending: its pass serves them. */
            if (state_.compare_exchange_weak(v, busy ? v | WANTED : RUNNING, std::memory_order_acq_rel,
                                             std::memory_order_relaxed))
                return !busy;
        }
    }

    /* A host thread lends its time: true when it is the runner (as with
     * enter()); false, leaving no request, when a pass runs or is held. */
    bool enter_if_free()
    {
        uint32_t v = state_.load(std::memory_order_relaxed);
        while ((v & (RUNNING | HELD)) == 0)
            if (state_.compare_exchange_weak(v, RUNNING, std::memory_order_acq_rel, std::memory_order_relaxed))
                return true;
        return false;
    }

    /* The runner after a pass: true when it may go (no request came during
     * the pass, or the passes are being held and the request waits for the
     * hold's end); false when it must pass again. */
    bool done()
    {
        uint32_t v = RUNNING;
        for (;;) {
            const uint32_t next = (v & HELD) ? v & ~RUNNING : (v & WANTED) ? RUNNING : 0;
            if (state_.compare_exchange_weak(v, next, std::memory_order_acq_rel, std::memory_order_relaxed))
                return next != RUNNING;
        }
    }

    /* Holds the passes off, once the one running has ended. One holder at
     * a time: the caller serializes them. */
    void hold()
    {
        state_.fetch_or(HELD, std::memory_order_seq_cst);
        while (state_.load(std::memory_order_acquire) & RUNNING)
            cpu_relax();
    }
    void release() { state_.fetch_and(~HELD, std::memory_order_release); }
    /* Whether the passes are held: what a pass beside the runner's (a Tx
     * queue's) looks at after it has made itself seen, the holder looking
     * for such passes after it set the hold (both sequentially consistent:
     * one of the two sees the other). */
    bool held() const { return state_.load(std::memory_order_seq_cst) & HELD; }

private:
    static constexpr uint32_t RUNNING = 1, WANTED = 2, HELD = 4;
    std::atomic<uint32_t> state_{0};
};

} // namespace cna::fw
