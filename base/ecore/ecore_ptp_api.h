/* SPDX-License-Identifier: BSD-3-Clause
 * Precise time (the guide's PTP chapter; doc/hsi.md section 14): the port's
 * PTP hardware clock and the function's timestamp latches.
 *
 * ptp_enable frees every latch and turns stamping on: the Rx event messages
 * of every transport, and the sends that ask with txbd::PTP_TIMESTAMP;
 * ptp_cfg_rx_filters and ptp_hwtstamp_tx_on narrow it, ptp_disable turns
 * it off. A stamp stays latched until ptp_read_rx_ts or
 * ptp_read_tx_ts takes it: the latch then takes the next event message.
 * The clock is read by PFs and VFs (ptp_read_cc); only a PF sets, steps
 * and steers it (Status::perm on a VF).
 *
 * Each call is a few register accesses, none waits on the device: any
 * thread, the fastpath's included (a PF's takes a PTT window).
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"
#include "hsi_ptp.h"

namespace cna::ecore {

/* Which event messages are stamped on Rx: hsi::ptp::ctrl::RX_* bits. */
using PtpRxFilters = uint32_t;

struct PtpStamp {
    uint64_t time = 0;        /* the port's clock, ns */
    uint16_t sequence_id = 0; /* of the message stamped */
    uint8_t msg_type = 0;
};

Status ptp_enable(Hwfn& hwfn);
Status ptp_disable(Hwfn& hwfn);
Status ptp_cfg_rx_filters(Hwfn& hwfn, PtpRxFilters filters);
Status ptp_hwtstamp_tx_on(Hwfn& hwfn, bool on);

/* Status::again: the latch holds no stamp. latch: the CQE's (the mbuf's
 * timesync), 0..RX_LATCHES-1, else Status::inval. */
Status ptp_read_rx_ts(Hwfn& hwfn, uint32_t latch, PtpStamp* stamp);
Status ptp_read_tx_ts(Hwfn& hwfn, PtpStamp* stamp);

Status ptp_read_cc(Hwfn& hwfn, uint64_t* time);
Status ptp_settime(Hwfn& hwfn, uint64_t time);
/* A step; Status::inval for one before the clock's epoch. */
Status ptp_adjtime(Hwfn& hwfn, int64_t delta);
/* The rate's offset from nominal, in parts per billion: Status::inval
 * beyond +-hsi::ptp::MAX_FREQ_PPB. */
Status ptp_adjfreq(Hwfn& hwfn, int32_t ppb);

/* Since the function's reset: event messages received, and sends that
 * asked for their time, that found every latch full. */
struct PtpStats {
    uint64_t rx_unstamped = 0;
    uint64_t tx_unstamped = 0;
};
/* ptt: the caller's, as the other statistics' (a VF's is unused). */
Status ptp_get_stats(Hwfn& hwfn, Ptt& ptt, PtpStats* stats);

} // namespace cna::ecore
