/* SPDX-License-Identifier: BSD-3-Clause */
#include "ptp/ptp_block.h"

#include "hsi_eth.h"

namespace cna::fw {

using namespace hsi::ptp;

int PtpBlock::claim(std::atomic<uint32_t>& busy, uint32_t count)
{
    uint32_t taken = busy.load(std::memory_order_relaxed);
    for (;;) {
        const uint32_t free = ~taken & ((1u << count) - 1);
        if (free == 0)
            return -1;
        const uint32_t bit = free & -free;
        if (busy.compare_exchange_weak(taken, taken | bit, std::memory_order_acquire, std::memory_order_relaxed))
            return __builtin_ctz(bit);
    }
}

uint16_t PtpBlock::latch_rx(uint64_t time, const PtpMessage& message)
{
    const int i = claim(rx_busy_, RX_LATCHES);
    if (i < 0) {
        rx_missed_.fetch_add(1, std::memory_order_relaxed);
        return 0;
    }
    rx_[i].time.store(time, std::memory_order_relaxed);
    rx_[i].seq.store(message.latch_word(), std::memory_order_relaxed);
    rx_valid_.fetch_or(1u << i, std::memory_order_release);
    return static_cast<uint16_t>(i + 1);
}

uint16_t PtpBlock::stamp_rx(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint64_t time)
{
    namespace pars = hsi::eth::pars;
    const PtpMessage message = ptp_message(frame, len, layout, ctrl() & ctrl::RX_ALL);
    if (message.transport == 0)
        return 0;
    if (!message.event())
        return pars::PTP;
    return static_cast<uint16_t>(pars::PTP | latch_rx(time, message) << pars::PTP_LATCH_SHIFT);
}

void PtpBlock::latch_tx(uint64_t time, const PtpMessage& message)
{
    if (claim(tx_busy_, 1) < 0) {
        tx_missed_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    tx_.time.store(time, std::memory_order_relaxed);
    tx_.seq.store(message.latch_word(), std::memory_order_relaxed);
    tx_valid_.fetch_or(1, std::memory_order_release);
}

uint32_t PtpBlock::read_stamp(Latch& latch, uint32_t bit, std::atomic<uint32_t>& busy, std::atomic<uint32_t>& valid,
                              uint32_t word)
{
    if (!(valid.load(std::memory_order_acquire) & bit))
        return 0;
    const uint64_t time = latch.time.load(std::memory_order_relaxed);
    switch (word) {
    case 0: return static_cast<uint32_t>(time);
    case 1:
        /* The high word frees the latch, for the next event message. */
        valid.fetch_and(~bit, std::memory_order_relaxed);
        busy.fetch_and(~bit, std::memory_order_release);
        return static_cast<uint32_t>(time >> 32);
    default: return latch.seq.load(std::memory_order_relaxed);
    }
}

bool PtpBlock::read(uint32_t offset, uint32_t& value)
{
    if (offset >= rx_ts_lo(0) && offset < rx_ts_lo(RX_LATCHES) && offset % 0x10 < 0xc) {
        const uint32_t i = (offset - rx_ts_lo(0)) / 0x10;
        value = read_stamp(rx_[i], 1u << i, rx_busy_, rx_valid_, offset % 0x10 / 4);
        return true;
    }
    switch (offset) {
    case CTRL: value = ctrl_.load(std::memory_order_relaxed); return true;
    case TIME_LO: {
        const uint64_t now = clock_.now();
        time_hi_ = static_cast<uint32_t>(now >> 32);
        value = static_cast<uint32_t>(now);
        return true;
    }
    case TIME_HI: value = time_hi_; return true;
    case FREQ:
        value = static_cast<uint32_t>(clock_.freq_ppb());
        return steers_;
    case RX_VALID: value = rx_valid_.load(std::memory_order_acquire); return true;
    case TX_VALID: value = tx_valid_.load(std::memory_order_acquire); return true;
    case RX_MISSED: value = rx_missed_.load(std::memory_order_relaxed); return true;
    case TX_MISSED: value = tx_missed_.load(std::memory_order_relaxed); return true;
    case TX_TS_LO: value = read_stamp(tx_, 1, tx_busy_, tx_valid_, 0); return true;
    case TX_TS_HI: value = read_stamp(tx_, 1, tx_busy_, tx_valid_, 1); return true;
    case TX_SEQ: value = read_stamp(tx_, 1, tx_busy_, tx_valid_, 2); return true;
    default: return false;
    }
}

bool PtpBlock::write(uint32_t offset, uint32_t value)
{
    if (offset == CTRL) {
        ctrl_.store(value & ctrl::ALL, std::memory_order_relaxed);
        return true;
    }
    if (!steers_)
        return false; /* the clock is its PF's to steer */
    switch (offset) {
    case SET_LO: set_lo_ = value; return true;
    case SET_HI: clock_.set(uint64_t{value} << 32 | set_lo_); return true;
    case STEP_LO: step_lo_ = value; return true;
    case STEP_HI: clock_.step(static_cast<int64_t>(uint64_t{value} << 32 | step_lo_)); return true;
    case FREQ: clock_.set_freq(static_cast<int32_t>(value)); return true;
    default: return false;
    }
}

void PtpBlock::reset()
{
    ctrl_.store(0, std::memory_order_relaxed);
    time_hi_ = set_lo_ = step_lo_ = 0;
    rx_valid_.store(0);
    rx_busy_.store(0);
    tx_valid_.store(0);
    tx_busy_.store(0);
    rx_missed_.store(0);
    tx_missed_.store(0);
}

} // namespace cna::fw
