/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: precise time (doc/hsi.md section 14).
 *
 * Each port has a PTP hardware clock: 64-bit nanoseconds, set at power-on
 * from the host's real-time clock, then free-running from its monotonic raw
 * clock at the nominal rate corrected by a frequency offset (parts per
 * billion). Any PF of the port may read, set, step and steer it; a VF reads
 * it.
 *
 * Each function has a PTP block of registers: a PF reaches it through its
 * PTT windows at reg::PTP_BASE, a VF in its BAR0 at iov::vf_bar0::PTP_BASE,
 * at the same offsets (the clock's control registers are a PF's: a VF's
 * access to them is a bad access).
 *
 * Timestamps are latched, as NICs do. With ctrl::RX_* on, the PTP messages
 * of the transports the bits name that the function receives say so in
 * their CQE (eth::pars::PTP); an event message (messageType 0-3: Sync,
 * Delay_Req, Pdelay_Req, Pdelay_Resp) is stamped with the port's clock
 * when it came off the wire, into the first free of its RX_LATCHES Rx
 * latches, and its CQE says which (eth::pars::PTP_LATCH). A latch holds
 * its stamp, its valid bit set, until the driver reads its TS_HI; an event
 * message that finds every latch full is counted in RX_MISSED and its CQE
 * names no latch. With ctrl::TX on, a frame
 * sent with txbd::PTP_TIMESTAMP is stamped when it goes on the wire (or
 * into the port's switch, for a function of the port) into the one Tx
 * latch, under the same rule (TX_MISSED).
 */
#pragma once

#include <cstdint>

#include "hsi_common.h"

namespace cna::hsi::ptp {

/* PTP over Ethernet (IEEE 1588 annex F) and over UDP (annexes D, E). */
inline constexpr uint16_t ETHERTYPE = 0x88f7;
inline constexpr uint16_t UDP_EVENT_PORT = 319;
inline constexpr uint16_t UDP_GENERAL_PORT = 320;
/* The common header's fields the adapter reads: messageType in the low
 * nibble of byte 0, versionPTP in byte 1, sequenceId at byte 30. */
inline constexpr uint32_t HEADER_SIZE = 34;
inline constexpr uint32_t MSG_TYPE_OFFSET = 0;
inline constexpr uint32_t VERSION_OFFSET = 1;
inline constexpr uint32_t SEQUENCE_ID_OFFSET = 30;
inline constexpr uint8_t LAST_EVENT_MSG = 3; /* messageType 0-3 are event messages */

/* The steering a PF may ask of the clock, in parts per billion: beyond it
 * the adapter saturates (and ecore refuses). */
inline constexpr int32_t MAX_FREQ_PPB = 100'000'000;

inline constexpr uint32_t RX_LATCHES = 3;

/* Offsets in the PTP block. */
inline constexpr uint32_t CTRL = 0x00;      /* RW: ctrl:: */
inline constexpr uint32_t TIME_LO = 0x04;   /* RO: reading it latches the clock; its low word */
inline constexpr uint32_t TIME_HI = 0x08;   /* RO: the high word latched with TIME_LO */
inline constexpr uint32_t SET_LO = 0x0c;    /* WO, PF: the time to set, low word */
inline constexpr uint32_t SET_HI = 0x10;    /* WO, PF: its high word; the write sets the clock */
inline constexpr uint32_t STEP_LO = 0x14;   /* WO, PF: a signed step in ns, low word */
inline constexpr uint32_t STEP_HI = 0x18;   /* WO, PF: its high word; the write steps the clock */
inline constexpr uint32_t FREQ = 0x1c;      /* RW, PF: int32 ppb, saturated at +-MAX_FREQ_PPB */
inline constexpr uint32_t RX_VALID = 0x20;  /* RO: a bit per Rx latch holding a stamp */
inline constexpr uint32_t TX_VALID = 0x24;  /* RO: bit 0, the Tx latch holds a stamp */
inline constexpr uint32_t RX_MISSED = 0x28; /* RO: event messages that found every Rx latch full */
inline constexpr uint32_t TX_MISSED = 0x2c; /* RO: stamped sends that found the Tx latch full */
/* Rx latch i: its stamp, and what it stamped (latch::SEQ). Reading TS_HI
 * frees the latch: read TS_LO first. */
inline constexpr uint32_t rx_ts_lo(uint32_t latch) { return 0x40 + latch * 0x10; }
inline constexpr uint32_t rx_ts_hi(uint32_t latch) { return rx_ts_lo(latch) + 4; }
inline constexpr uint32_t rx_seq(uint32_t latch) { return rx_ts_lo(latch) + 8; }
inline constexpr uint32_t TX_TS_LO = 0x80;
inline constexpr uint32_t TX_TS_HI = 0x84; /* reading it frees the Tx latch */
inline constexpr uint32_t TX_SEQ = 0x88;
inline constexpr uint32_t BLOCK_SIZE = 0x100;
static_assert(rx_seq(RX_LATCHES - 1) < TX_TS_LO);

namespace ctrl {
inline constexpr uint32_t RX_L2 = 1u << 0;   /* PTP over Ethernet */
inline constexpr uint32_t RX_UDP4 = 1u << 1; /* ... over UDP/IPv4 to port 319 or 320 */
inline constexpr uint32_t RX_UDP6 = 1u << 2; /* ... over UDP/IPv6 to port 319 or 320 */
inline constexpr uint32_t TX = 1u << 3;      /* honour txbd::PTP_TIMESTAMP */
inline constexpr uint32_t RX_ALL = RX_L2 | RX_UDP4 | RX_UDP6;
inline constexpr uint32_t ALL = RX_ALL | TX;
} // namespace ctrl

/* A latch's SEQ register: what the stamped message said. */
namespace latch {
inline constexpr uint32_t SEQUENCE_ID_MASK = 0xffff;
inline constexpr uint32_t MSG_TYPE_SHIFT = 16; /* 4 bits */
} // namespace latch

} // namespace cna::hsi::ptp

namespace cna::hsi::reg {
inline constexpr uint32_t PTP_BASE = 0x080000;
} // namespace cna::hsi::reg
