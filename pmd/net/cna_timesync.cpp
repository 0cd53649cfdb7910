/* SPDX-License-Identifier: BSD-3-Clause
 * ethdev timesync (IEEE 1588) on the adapter's PTP block (ecore_ptp_api.h,
 * doc/hsi.md section 14): the port's clock in nanoseconds, the Rx latch a
 * PTP event message's mbuf names in its timesync field, the Tx latch of
 * the last send with RTE_MBUF_F_TX_IEEE1588_TMST. A VF reads the clock and
 * its own latches; only a PF steers the clock (the VF has no adjust_time
 * nor write_time: -ENOTSUP). The clock and the latches are the function's,
 * not its queues': every call works on a stopped port.
 */
#include <rte_time.h>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_ptp_api.h"

namespace cna::net {
namespace {

/* The primary's: a secondary process has no ecore of its port. */
ecore::Hwfn* function_of(rte_eth_dev* dev)
{
    return rte_eal_process_type() == RTE_PROC_PRIMARY ? &port_of(dev)->edev.hwfn : nullptr;
}

/* No stamp is -EINVAL, as rte_ethdev.h documents. */
int stamp_errno(ecore::Status st) { return st == ecore::Status::again ? -EINVAL : ecore::status_to_errno(st); }

int timesync_enable(rte_eth_dev* dev)
{
    ecore::Hwfn* hwfn = function_of(dev);
    return hwfn != nullptr ? ecore::status_to_errno(ecore::ptp_enable(*hwfn)) : -ENOTSUP;
}

int timesync_disable(rte_eth_dev* dev)
{
    ecore::Hwfn* hwfn = function_of(dev);
    return hwfn != nullptr ? ecore::status_to_errno(ecore::ptp_disable(*hwfn)) : -ENOTSUP;
}

int timesync_read_rx_timestamp(rte_eth_dev* dev, timespec* ts, uint32_t flags)
{
    ecore::Hwfn* hwfn = function_of(dev);
    if (hwfn == nullptr)
        return -ENOTSUP;
    ecore::PtpStamp stamp;
    if (const ecore::Status st = ecore::ptp_read_rx_ts(*hwfn, flags, &stamp); st != ecore::Status::success)
        return stamp_errno(st);
    *ts = rte_ns_to_timespec(stamp.time);
    return 0;
}

int timesync_read_tx_timestamp(rte_eth_dev* dev, timespec* ts)
{
    ecore::Hwfn* hwfn = function_of(dev);
    if (hwfn == nullptr)
        return -ENOTSUP;
    ecore::PtpStamp stamp;
    if (const ecore::Status st = ecore::ptp_read_tx_ts(*hwfn, &stamp); st != ecore::Status::success)
        return stamp_errno(st);
    *ts = rte_ns_to_timespec(stamp.time);
    return 0;
}

int timesync_adjust_time(rte_eth_dev* dev, int64_t delta)
{
    ecore::Hwfn* hwfn = function_of(dev);
    return hwfn != nullptr ? ecore::status_to_errno(ecore::ptp_adjtime(*hwfn, delta)) : -ENOTSUP;
}

int read_clock(rte_eth_dev* dev, uint64_t* clock)
{
    ecore::Hwfn* hwfn = function_of(dev);
    return hwfn != nullptr ? ecore::status_to_errno(ecore::ptp_read_cc(*hwfn, clock)) : -ENOTSUP;
}

int timesync_read_time(rte_eth_dev* dev, timespec* ts)
{
    uint64_t now = 0;
    if (const int rc = read_clock(dev, &now); rc != 0)
        return rc;
    *ts = rte_ns_to_timespec(now);
    return 0;
}

int timesync_write_time(rte_eth_dev* dev, const timespec* ts)
{
    ecore::Hwfn* hwfn = function_of(dev);
    if (hwfn == nullptr)
        return -ENOTSUP;
    if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= static_cast<long>(NS_PER_S)) {
        PMD_LOG(ERR, port_of(dev), "timesync_write_time: %ld s %ld ns is no time of the clock", ts->tv_sec,
                ts->tv_nsec);
        return -EINVAL;
    }
    return ecore::status_to_errno(ecore::ptp_settime(*hwfn, rte_timespec_to_ns(ts)));
}

} // namespace

void timesync_ops(eth_dev_ops& ops)
{
    ops.timesync_enable = timesync_enable;
    ops.timesync_disable = timesync_disable;
    ops.timesync_read_rx_timestamp = timesync_read_rx_timestamp;
    ops.timesync_read_tx_timestamp = timesync_read_tx_timestamp;
    ops.timesync_adjust_time = timesync_adjust_time;
    ops.timesync_read_time = timesync_read_time;
    ops.timesync_write_time = timesync_write_time;
    ops.read_clock = read_clock;
}

} // namespace cna::net
