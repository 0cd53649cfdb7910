/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the slowpath queue (SPQ) and event queue (EQ).
 *
 * ecore posts a SlowPathElement on the SPQ ring (base and size come from the
 * runtime array) and rings the doorbell of CID_SPQ with the new producer. The
 * storm DMA-reads the element and its ramrod data, executes it and posts an
 * EventRingElement on the EQ (set up by PF_START), then bumps the slowpath
 * status block's SP_PI_EQ. ecore returns consumed EQ slots by writing the
 * consumer to iro::gtt::EQ_CONS of its GTT window.
 */
#pragma once

#include "hsi_common.h"

namespace cna::hsi {

enum class ProtocolId : uint8_t { common = 0, eth = 1, roce = 2, iov = 3 /* async events only: hsi_iov.h */ };

/* Common ramrods (ProtocolId::common). */
/* vf_cleanup (VfCleanupRamrodData): the final cleanup after a VF's function
 * level reset, before the PF acks it to the MFW: nothing of the VF is left
 * in the storms. */
enum class CommonCmd : uint8_t { pf_start = 1, pf_stop = 2, empty = 3, vf_cleanup = 4 };

/* Completion codes in EventRingElement::fw_return_code. */
enum class FwReturn : uint8_t {
    ok = 0,
    invalid_command = 1,   /* unknown protocol / command id */
    invalid_param = 2,     /* a field is out of range */
    bad_state = 3,         /* e.g. VPORT_START on an active vport, PF not started */
    no_resource = 4,       /* filter table full, queue id beyond the PF's grant */
    dma_error = 5,         /* ramrod data could not be read */
    not_found = 6,         /* removing a filter that is not there */
};

struct RamrodHeader {
    uint32_t cid;
    uint8_t cmd_id;
    uint8_t protocol_id;   /* ProtocolId */
    uint16_t echo;         /* returned in the EQE: identifies the SPQ entry */
};
static_assert(sizeof(RamrodHeader) == 8);

struct SlowPathElement {
    RamrodHeader hdr;
    RegPair data_ptr;      /* IOVA of the ramrod data */
};
static_assert(sizeof(SlowPathElement) == 16);

struct EventRingElement {
    uint8_t opcode;        /* cmd_id of the ramrod completed, or an async event */
    uint8_t protocol_id;
    uint8_t fw_return_code;/* FwReturn */
    uint8_t flags;         /* EQE_FLAG_* */
    uint16_t echo;
    uint16_t reserved;
    uint64_t data;         /* command-specific result */
};
static_assert(sizeof(EventRingElement) == 16);
inline constexpr uint8_t EQE_FLAG_ASYNC = 1u << 0; /* not a ramrod completion */

struct PfStartRamrodData {
    RegPair event_ring_base;  /* IOVA of the EQ ring */
    uint16_t event_ring_size; /* elements, power of two */
    uint16_t event_ring_sb_id;/* SP_SB_ID */
    uint8_t event_ring_sb_pi; /* SP_PI_EQ */
    uint8_t personality;      /* 1: ethernet */
    uint8_t hsi_major;
    uint8_t hsi_minor;
    uint16_t mtu;             /* default MTU of the function */
    uint16_t reserved;
    uint32_t reserved2[2];
};
static_assert(sizeof(PfStartRamrodData) == 28);

struct PfStopRamrodData {
    uint32_t reserved[2];
};
static_assert(sizeof(PfStopRamrodData) == 8);

struct VfCleanupRamrodData {
    uint8_t vf;               /* relative to the PF; its FLR pending */
    uint8_t reserved[7];
};
static_assert(sizeof(VfCleanupRamrodData) == 8);

/* Largest ramrod data any command carries; ecore reserves this per SPQ entry. */
inline constexpr uint32_t RAMROD_DATA_MAX = 512;

} // namespace cna::hsi
