/* SPDX-License-Identifier: BSD-3-Clause
 * A function's slowpath queue and event queue: a PF's, or a VF's RDMA
 * slowpath (hsi_iov.h). The storm takes SPQ elements up to the producer rung
 * on CID_SPQ, has the function's storm execute each ramrod and completes it
 * on the EQ, never overwriting an EQE the driver has not consumed. PF_START
 * creates the EQ and PF_STOP's completion is its last EQE; anything else
 * before PF_START is a firmware assert.
 *
 * The registers (SPQ, ILT, enable) are the PF's STORM_PF block, or their
 * twins in a VF's BAR0; `reg` is the offset within that block.
 */
#pragma once

#include <cstdint>
#include <string>

#include "function/function.h"
#include "hsi_common.h"
#include "hsi_spq.h"

namespace cna::fw {

class FunctionHw;
class Storms;

class SlowpathQueue {
public:
    /* What the queue runs ramrods on: the function's storms. */
    class Storm {
    public:
        /* PF_START with its EQ in place: the function's own start (what
         * it resets, what it checks); the EQE's return code. */
        virtual hsi::FwReturn start(const hsi::PfStartRamrodData& d) = 0;
        /* PF_STOP completed: nothing more runs until the next PF_START. */
        virtual void stopped() = 0;
        /* Any ramrod after PF_START but PF_START; data: its EQE's data. */
        virtual hsi::FwReturn execute(const hsi::SlowPathElement& elem, uint64_t& data) = 0;
        /* The driver broke the SPQ's protocol (QueueKind::spq). */
        virtual void queue_error(hsi::QueueKind kind, uint32_t queue, hsi::QueueError why) = 0;
        /* A ramrod the storm cannot complete on any EQ (fw_assert::*). */
        virtual void fw_assert(uint32_t code) = 0;

    protected:
        ~Storm() = default;
    };

    /* eq_sb_ok: which status blocks may carry the EQ; eq_cons: where the
     * driver publishes its EQ consumer (a GTT page); name: for the log. */
    SlowpathQueue(FunctionHw& hw, Storms& storms, Storm& storm, bool (*eq_sb_ok)(uint32_t sb), uint8_t* eq_cons,
                  std::string name);

    /* The registers, by their offset in the STORM_PF block. */
    bool read(uint32_t reg, uint32_t& value) const;
    bool write(uint32_t reg, uint32_t value);
    uint64_t ilt_base() const { return uint64_t{regs_.ilt_base_hi} << 32 | regs_.ilt_base_lo; }
    uint32_t ilt_cids() const { return regs_.ilt_cids; }
    bool started() const { return started_; }

    /* Engine, lock-free: is there an SPQ element the storm would take now?
     * Inline up to the doorbell compare, all that an engine pass pays while
     * no ramrod is posted. */
    bool pending() const
    {
        const uint16_t prod = hw_.doorbell_prod(hsi::CID_SPQ);
        return prod != cons_ && prod != refused_prod_ && !halted_ && can_take();
    }
    /* Engine, slowpath lock held: execute pending ramrods. */
    void poll();
    /* An EQE; false when the EQ cannot take it (none before PF_START, full,
     * or not DMA-writable). */
    bool post_eqe(const hsi::RamrodHeader& hdr, hsi::FwReturn rc, uint64_t data = 0, uint8_t flags = 0);
    /* An asynchronous event of `protocol` (EQE_FLAG_ASYNC), as post_eqe. */
    bool post_async(hsi::ProtocolId protocol, uint8_t event, uint16_t echo, uint64_t data)
    {
        return post_eqe(hsi::RamrodHeader{0, event, static_cast<uint8_t>(protocol), echo}, hsi::FwReturn::ok, data,
                        hsi::EQE_FLAG_ASYNC);
    }
    /* The function broke the SPQ's protocol: nothing more is taken until
     * reset(). */
    void halt() { halted_ = true; }
    /* Back to power-on state: no EQ, the SPQ's registers and consumer clear. */
    void reset();

private:
    struct Registers {
        uint32_t spq_base_lo = 0, spq_base_hi = 0, spq_size = 0;
        uint32_t ilt_base_lo = 0, ilt_base_hi = 0, ilt_cids = 0;
        uint32_t enable = 0;
    };
    struct EventQueue {
        uint64_t base = 0;
        uint16_t mask = 0;
        uint16_t prod = 0;
        uint16_t sb = 0;
        uint8_t sb_pi = 0;
    };

    bool eq_full() const;
    bool can_take() const;
    uint16_t eq_cons() const;
    void execute(const hsi::SlowPathElement& elem);
    void start(const hsi::SlowPathElement& elem);
    bool write_conn_context(const hsi::ConnContext& ctx);

    FunctionHw& hw_;
    Storms& storms_;
    Storm& storm_;
    bool (*const eq_sb_ok_)(uint32_t sb);
    uint8_t* const eq_cons_;
    const std::string name_;
    Registers regs_;
    EventQueue eq_;
    bool started_ = false;
    bool halted_ = false;
    uint16_t cons_ = 0;
    /* A doorbell producer more than the SPQ ahead, reported once and then
     * ignored until the driver rings another: none is 2^16 or more. */
    uint32_t refused_prod_ = NONE_REFUSED;
    static constexpr uint32_t NONE_REFUSED = UINT32_MAX;
};

} // namespace cna::fw
