/* SPDX-License-Identifier: BSD-3-Clause
 * Counting frames in the statistics the storms keep in storm RAM.
 */
#pragma once

#include "hsi_eth.h"
#include "l2/frame.h"
#include "util/bytes.h"

namespace cna::fw {

inline void count_frame(uint64_t& pkts, uint64_t& bytes, uint64_t len)
{
    counter_add(pkts, 1);
    counter_add(bytes, len);
}

inline void count_rx(hsi::eth::VportStats& s, Destination dst, uint64_t len)
{
    switch (dst) {
    case Destination::unicast: return count_frame(s.rx_ucast_pkts, s.rx_ucast_bytes, len);
    case Destination::multicast: return count_frame(s.rx_mcast_pkts, s.rx_mcast_bytes, len);
    case Destination::broadcast: return count_frame(s.rx_bcast_pkts, s.rx_bcast_bytes, len);
    }
}

inline void count_tx(hsi::eth::VportStats& s, Destination dst, uint64_t len)
{
    switch (dst) {
    case Destination::unicast: return count_frame(s.tx_ucast_pkts, s.tx_ucast_bytes, len);
    case Destination::multicast: return count_frame(s.tx_mcast_pkts, s.tx_mcast_bytes, len);
    case Destination::broadcast: return count_frame(s.tx_bcast_pkts, s.tx_bcast_bytes, len);
    }
}

} // namespace cna::fw
