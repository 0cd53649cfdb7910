/* SPDX-License-Identifier: BSD-3-Clause
 * Counting frames in the statistics the storms keep in storm RAM. The
 * fastpath tallies a burst in registers and adds the tally to storm RAM
 * once: each counter update is an atomic add (host threads read them, and
 * passes that run at once may add to one vport's), too dear to pay several
 * times per frame.
 */
#pragma once

#include <array>

#include "hsi_eth.h"
#include "frame/frame.h"
#include "base/bytes.h"

namespace cna::fw {

inline void count_frame(uint64_t& pkts, uint64_t& bytes, uint64_t len)
{
    counter_add(pkts, 1);
    counter_add(bytes, len);
}

/* Frames and bytes of a burst for one queue's statistics. */
struct QueueTally {
    void add(uint64_t len)
    {
        pkts++;
        bytes += len;
    }
    void flush(hsi::eth::QueueStats& s)
    {
        counter_add(s.pkts, pkts);
        counter_add(s.bytes, bytes);
        pkts = 0;
        bytes = 0;
    }

    uint64_t pkts = 0;
    uint64_t bytes = 0;
};

/* Frames and bytes of a burst by destination, for a vport's statistics. */
struct DestinationTally {
    void add(Destination dst, uint64_t len, uint64_t frames = 1)
    {
        pkts[static_cast<uint32_t>(dst)] += frames;
        bytes[static_cast<uint32_t>(dst)] += len;
    }
    /* Adds the tally to the vport's rx_* or tx_* counters and clears it. */
    void flush_rx(hsi::eth::VportStats& s)
    {
        flush({&s.rx_ucast_pkts, &s.rx_mcast_pkts, &s.rx_bcast_pkts},
              {&s.rx_ucast_bytes, &s.rx_mcast_bytes, &s.rx_bcast_bytes});
    }
    void flush_tx(hsi::eth::VportStats& s)
    {
        flush({&s.tx_ucast_pkts, &s.tx_mcast_pkts, &s.tx_bcast_pkts},
              {&s.tx_ucast_bytes, &s.tx_mcast_bytes, &s.tx_bcast_bytes});
    }

    void merge(const DestinationTally& other)
    {
        for (uint32_t d = 0; d < 3; d++) {
            pkts[d] += other.pkts[d];
            bytes[d] += other.bytes[d];
        }
    }

    QueueTally total() const
    {
        return {pkts[0] + pkts[1] + pkts[2], bytes[0] + bytes[1] + bytes[2]};
    }

    std::array<uint64_t, 3> pkts{}; /* indexed by Destination */
    std::array<uint64_t, 3> bytes{};

private:
    void flush(std::array<uint64_t*, 3> pkt_counters, std::array<uint64_t*, 3> byte_counters)
    {
        for (uint32_t d = 0; d < 3; d++) {
            if (pkts[d] != 0) {
                counter_add(*pkt_counters[d], pkts[d]);
                counter_add(*byte_counters[d], bytes[d]);
            }
        }
        pkts = {};
        bytes = {};
    }
};

} // namespace cna::fw
