/* SPDX-License-Identifier: BSD-3-Clause
 * The PTP block's registers: a PF's through a PTT window, a VF's in its
 * BAR0, at the same offsets.
 */
#include "ecore_ptp_api.h"

#include <cinttypes>
#include <mutex>

#include "ecore_hw.h"
#include "ecore_log.h"
#include "ecore_ptt.h"
#include "hsi_iov.h"

namespace cna::ecore {

namespace ptp = hsi::ptp;

namespace {

/* The function's PTP block: a PF's through its PTT window, a VF's in its
 * BAR0 (ptt unused). */
class PtpRegs {
public:
    PtpRegs(Hwfn& hwfn, Ptt& ptt) : hwfn_(hwfn), ptt_(ptt) {}

    uint32_t rd(uint32_t offset)
    {
        return is_vf(hwfn_) ? hwfn_.dev->pci->reg_rd(hsi::iov::vf_bar0::PTP_BASE + offset)
                            : ecore::rd(hwfn_, ptt_, hsi::reg::PTP_BASE + offset);
    }
    void wr(uint32_t offset, uint32_t value)
    {
        if (is_vf(hwfn_))
            hwfn_.dev->pci->reg_wr(hsi::iov::vf_bar0::PTP_BASE + offset, value);
        else
            ecore::wr(hwfn_, ptt_, hsi::reg::PTP_BASE + offset, value);
    }
    /* lo first: reading hi completes (TIME) or frees (a latch). */
    uint64_t rd64(uint32_t lo, uint32_t hi)
    {
        const uint32_t low = rd(lo);
        return uint64_t{rd(hi)} << 32 | low;
    }
    void wr64(uint32_t lo, uint32_t hi, uint64_t value)
    {
        wr(lo, static_cast<uint32_t>(value));
        wr(hi, static_cast<uint32_t>(value >> 32));
    }

private:
    Hwfn& hwfn_;
    Ptt& ptt_;
};

/* access(regs) on the function's PTP block, its two-word accesses
 * serialised; Status::busy for a PF without a PTT window to spare. */
template <typename Access> Status with_regs(Hwfn& hwfn, Access access)
{
    std::lock_guard guard(hwfn.ptp_lock);
    FunctionPtt ptt(hwfn);
    if (!ptt)
        return Status::busy;
    PtpRegs regs(hwfn, *ptt);
    return access(regs);
}

/* ctrl's bits in `bits` set to `on`, the rest kept. */
Status update_ctrl(Hwfn& hwfn, uint32_t bits, uint32_t on)
{
    return with_regs(hwfn, [&](PtpRegs& regs) {
        regs.wr(ptp::CTRL, (regs.rd(ptp::CTRL) & ~bits) | (on & bits));
        return Status::success;
    });
}

/* Only a PF steers its port's clock. */
Status steering(Hwfn& hwfn, const char* what)
{
    if (!is_vf(hwfn))
        return Status::success;
    DP_NOTICE(hwfn, "%s: the port's clock is its PF's to steer", what);
    return Status::perm;
}

PtpStamp stamp_of(uint64_t time, uint32_t seq)
{
    return PtpStamp{time, static_cast<uint16_t>(seq & ptp::latch::SEQUENCE_ID_MASK),
                    static_cast<uint8_t>(seq >> ptp::latch::MSG_TYPE_SHIFT)};
}

} // namespace

Status ptp_enable(Hwfn& hwfn)
{
    return with_regs(hwfn, [&](PtpRegs& regs) {
        /* Stamps of before (a previous user's) are taken, so that the first
         * event message finds its latch free. */
        const uint32_t rx = regs.rd(ptp::RX_VALID);
        for (uint32_t i = 0; i < ptp::RX_LATCHES; i++)
            if (rx & 1u << i)
                regs.rd64(ptp::rx_ts_lo(i), ptp::rx_ts_hi(i));
        if (regs.rd(ptp::TX_VALID))
            regs.rd64(ptp::TX_TS_LO, ptp::TX_TS_HI);
        regs.wr(ptp::CTRL, ptp::ctrl::ALL);
        DP_VERBOSE(hwfn, osal::dp_module::HW, "PTP stamping on");
        return Status::success;
    });
}

Status ptp_disable(Hwfn& hwfn) { return update_ctrl(hwfn, ptp::ctrl::ALL, 0); }

Status ptp_cfg_rx_filters(Hwfn& hwfn, PtpRxFilters filters)
{
    if (filters & ~ptp::ctrl::RX_ALL)
        return Status::inval;
    return update_ctrl(hwfn, ptp::ctrl::RX_ALL, filters);
}

Status ptp_hwtstamp_tx_on(Hwfn& hwfn, bool on) { return update_ctrl(hwfn, ptp::ctrl::TX, on ? ptp::ctrl::TX : 0); }

Status ptp_read_rx_ts(Hwfn& hwfn, uint32_t latch, PtpStamp* stamp)
{
    if (latch >= ptp::RX_LATCHES)
        return Status::inval;
    return with_regs(hwfn, [&](PtpRegs& regs) {
        if (!(regs.rd(ptp::RX_VALID) & 1u << latch))
            return Status::again;
        const uint32_t seq = regs.rd(ptp::rx_seq(latch));
        *stamp = stamp_of(regs.rd64(ptp::rx_ts_lo(latch), ptp::rx_ts_hi(latch)), seq);
        return Status::success;
    });
}

Status ptp_read_tx_ts(Hwfn& hwfn, PtpStamp* stamp)
{
    return with_regs(hwfn, [&](PtpRegs& regs) {
        if (!regs.rd(ptp::TX_VALID))
            return Status::again;
        const uint32_t seq = regs.rd(ptp::TX_SEQ);
        *stamp = stamp_of(regs.rd64(ptp::TX_TS_LO, ptp::TX_TS_HI), seq);
        return Status::success;
    });
}

Status ptp_read_cc(Hwfn& hwfn, uint64_t* time)
{
    return with_regs(hwfn, [&](PtpRegs& regs) {
        *time = regs.rd64(ptp::TIME_LO, ptp::TIME_HI);
        return Status::success;
    });
}

Status ptp_settime(Hwfn& hwfn, uint64_t time)
{
    if (const Status rc = steering(hwfn, "ptp_settime"); rc != Status::success)
        return rc;
    return with_regs(hwfn, [&](PtpRegs& regs) {
        regs.wr64(ptp::SET_LO, ptp::SET_HI, time);
        return Status::success;
    });
}

Status ptp_adjtime(Hwfn& hwfn, int64_t delta)
{
    if (const Status rc = steering(hwfn, "ptp_adjtime"); rc != Status::success)
        return rc;
    return with_regs(hwfn, [&](PtpRegs& regs) {
        if (delta < 0 && regs.rd64(ptp::TIME_LO, ptp::TIME_HI) < static_cast<uint64_t>(-(delta + 1)) + 1) {
            DP_NOTICE(hwfn, "ptp_adjtime: a step of %" PRId64 " ns takes the clock before its epoch", delta);
            return Status::inval;
        }
        regs.wr64(ptp::STEP_LO, ptp::STEP_HI, static_cast<uint64_t>(delta));
        return Status::success;
    });
}

Status ptp_adjfreq(Hwfn& hwfn, int32_t ppb)
{
    if (const Status rc = steering(hwfn, "ptp_adjfreq"); rc != Status::success)
        return rc;
    if (ppb > ptp::MAX_FREQ_PPB || ppb < -ptp::MAX_FREQ_PPB) {
        DP_NOTICE(hwfn, "ptp_adjfreq: %d ppb is beyond the clock's +-%d", ppb, ptp::MAX_FREQ_PPB);
        return Status::inval;
    }
    return with_regs(hwfn, [&](PtpRegs& regs) {
        regs.wr(ptp::FREQ, static_cast<uint32_t>(ppb));
        return Status::success;
    });
}

Status ptp_get_stats(Hwfn& hwfn, Ptt& ptt, PtpStats* stats)
{
    /* Words of their own: nothing to serialise. */
    PtpRegs regs(hwfn, ptt);
    stats->rx_unstamped = regs.rd(ptp::RX_MISSED);
    stats->tx_unstamped = regs.rd(ptp::TX_MISSED);
    return Status::success;
}

} // namespace cna::ecore
