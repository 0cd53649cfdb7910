/* SPDX-License-Identifier: BSD-3-Clause
 * A function's PTP block (hsi_ptp.h): its view of its port's clock, the
 * timestamping it asked for, and its latches.
 *
 * The host reads and writes the registers with the slowpath lock held; the
 * engines (and host passes) latch with none. A latch is claimed (busy), its
 * stamp written, then published (valid); the driver's read of its TS_HI
 * frees it (both bits cleared). Only a free latch is written and only a
 * valid one read, so neither side waits for the other.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "hsi_ptp.h"
#include "ptp/ptp_clock.h"
#include "ptp/ptp_message.h"

namespace cna::fw {

class PtpBlock {
public:
    /* A PF's block steers the clock; a VF's reads it. */
    PtpBlock(PtpClock& clock, bool steers) : clock_(clock), steers_(steers) {}

    /* Slowpath lock held: false for an offset that is no register (or a
     * PF's, from a VF). */
    bool read(uint32_t offset, uint32_t& value);
    bool write(uint32_t offset, uint32_t value);

    /* Engines: what the function stamps (ctrl::), read once per burst. */
    uint32_t ctrl() const { return ctrl_.load(std::memory_order_relaxed); }
    PtpClock& clock() { return clock_; }
    /* An event message received at `time`: the latch that holds it, plus
     * one (the CQE's PTP_LATCH), or 0 when every latch was full. */
    uint16_t latch_rx(uint64_t time, const PtpMessage& message);
    /* A frame that came off the wire at `time`, with ctrl::RX_* on: its
     * CQE's eth::pars::PTP_* (a PTP message of a transport asked for; an
     * event message's stamp latched). */
    uint16_t stamp_rx(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint64_t time);
    /* A frame sent with txbd::PTP_TIMESTAMP went out at `time`. */
    void latch_tx(uint64_t time, const PtpMessage& message);

    /* The function's reset: nothing stamped, every latch free. */
    void reset();

private:
    struct Latch {
        std::atomic<uint64_t> time{0};
        std::atomic<uint32_t> seq{0};
    };
    /* Claims a free latch of `count` in busy: its index, or -1. */
    static int claim(std::atomic<uint32_t>& busy, uint32_t count);
    uint32_t read_stamp(Latch& latch, uint32_t bit, std::atomic<uint32_t>& busy, std::atomic<uint32_t>& valid,
                        uint32_t word);

    PtpClock& clock_;
    const bool steers_;
    std::atomic<uint32_t> ctrl_{0};
    uint32_t time_hi_ = 0; /* TIME_HI, latched by TIME_LO's read */
    uint32_t set_lo_ = 0;
    uint32_t step_lo_ = 0;
    std::array<Latch, hsi::ptp::RX_LATCHES> rx_;
    Latch tx_;
    std::atomic<uint32_t> rx_busy_{0}, rx_valid_{0}, tx_busy_{0}, tx_valid_{0};
    std::atomic<uint32_t> rx_missed_{0}, tx_missed_{0};
};

} // namespace cna::fw
