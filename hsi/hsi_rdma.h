/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: RDMA (RoCEv2 reliable connections and unreliable datagrams)
 * formats, doorbells, ramrods and contexts.
 *
 * Objects. ecore numbers every object the storms know per PF: QPs, CQs,
 * SRQs, MRs (TIDs) and DPIs (doorbell pages, one per RDMA user). Protection
 * domains are ecore's alone: the storms only compare a QP's PD with an MR's.
 *
 * Fastpath. The driver writes WQEs into a QP's SQ or RQ ring (host memory,
 * fixed-size slots) and the free-running WQE producer into the QP's slot of
 * its DPI page in the doorbell BAR. The storms read WQEs and payloads by
 * DMA, and write an RdmaCqe into the CQ ring for every completion; a CQE is
 * the driver's once its phase byte (written last) equals the phase of the
 * pass the driver expects, so polling reads no producer. The driver returns
 * CQEs by writing the CQ consumer into the CQ's doorbell slot and arms the
 * CQ there too; an armed CQ's next completion posts a CnqEntry on the CQ's
 * CNQ (a ring per CNQ, its producer in RDMA_PI_CNQ of the CNQ's status
 * block) and raises the status block's MSI-X vector.
 *
 * Slowpath. RDMA ramrods (ProtocolId::roce) go through the SPQ like the L2
 * ones; the storms complete them on the EQ. Affiliated and unaffiliated
 * asynchronous events come as EQEs with EQE_FLAG_ASYNC, opcode RdmaEvent and
 * the object's id in data.
 */
#pragma once

#include "hsi_common.h"

namespace cna::hsi::rdma {

/* ---- Limits per PF ---------------------------------------------------- */
inline constexpr uint32_t MAX_QPS = 1024;
inline constexpr uint32_t MAX_CQS = 2048;
inline constexpr uint32_t MAX_SRQS = 256;
inline constexpr uint32_t MAX_TIDS = 4096;     /* memory regions */
inline constexpr uint32_t MAX_CNQS = 8;
inline constexpr uint32_t MAX_PDS = 65536;
inline constexpr uint32_t MAX_SGE = 16;         /* per WQE */
inline constexpr uint32_t MAX_INLINE = 256;     /* bytes of inline data per SQ WQE */
inline constexpr uint32_t MIN_WQES = 2;
inline constexpr uint32_t MAX_WQES = 32768;     /* per SQ, RQ or SRQ ring */
inline constexpr uint32_t MAX_CQES = 65536;     /* per CQ ring */
inline constexpr uint32_t MAX_RD_ATOMIC = 16;   /* outstanding READ/atomic per QP, each way */
inline constexpr uint64_t MAX_MSG_SIZE = 1ull << 31;
inline constexpr uint64_t MAX_MR_SIZE = 1ull << 40;
inline constexpr uint32_t MIN_PAGE_SHIFT = 12;
inline constexpr uint32_t MAX_PAGE_SHIFT = 30;

/* A QP's number on the wire (BTH DestQP) is its id plus QPN_BASE: QPNs 0
 * and 1 are InfiniBand's SMI and GSI QPs. */
inline constexpr uint32_t QPN_BASE = 0x40;
inline constexpr uint32_t qpn_of(uint32_t qp_id) { return qp_id + QPN_BASE; }

/* Two connection ids per QP (requester and responder contexts), after the
 * L2 connections: the ILT holds CONN_CONTEXT_SIZE bytes for each. */
inline constexpr uint32_t CIDS_PER_QP = 2;
inline constexpr uint32_t CID_BASE = MAX_CIDS_PER_PF;
inline constexpr uint32_t requester_cid(uint32_t qp_id) { return CID_BASE + qp_id * CIDS_PER_QP; }
inline constexpr uint32_t responder_cid(uint32_t qp_id) { return requester_cid(qp_id) + 1; }

/* Fastpath status blocks: RDMA_PI_CNQ is the CNQ producer of a CNQ's SB. */
inline constexpr uint32_t RDMA_PI_CNQ = 3;

/* ------------------------------------------------------------------------
 * The slots of a DPI page (hsi_common.h: MAX_DPIS pages, one per RDMA
 * user). A QP, CQ or SRQ has its slot in the page of the DPI it was
 * created with; the
 * storms read no other, so a user cannot ring another user's queues.
 * Slots carry absolute, free-running values (last write wins), each word
 * written by one thread: post_send the SQ producer, post_recv the RQ's.
 * ---------------------------------------------------------------------- */
inline constexpr uint32_t DPI_QP_SLOTS = 0x0000;  /* QpDoorbell[MAX_QPS] */
inline constexpr uint32_t DPI_CQ_SLOTS = 0x2000;  /* CqDoorbell[MAX_CQS] */
inline constexpr uint32_t DPI_SRQ_SLOTS = 0x6000; /* SrqDoorbell[MAX_SRQS] */
inline constexpr uint32_t qp_db_offset(uint32_t dpi, uint32_t qp_id) { return dpi_offset(dpi) + DPI_QP_SLOTS + qp_id * 8; }
inline constexpr uint32_t cq_db_offset(uint32_t dpi, uint32_t cq_id) { return dpi_offset(dpi) + DPI_CQ_SLOTS + cq_id * 8; }
inline constexpr uint32_t srq_db_offset(uint32_t dpi, uint32_t srq_id) { return dpi_offset(dpi) + DPI_SRQ_SLOTS + srq_id * 8; }
static_assert(DPI_QP_SLOTS + MAX_QPS * 8 <= DPI_CQ_SLOTS && DPI_CQ_SLOTS + MAX_CQS * 8 <= DPI_SRQ_SLOTS &&
              DPI_SRQ_SLOTS + MAX_SRQS * 8 <= DPI_SIZE);

struct QpDoorbell {
    uint32_t sq_prod;  /* SQ WQEs posted, ever */
    uint32_t rq_prod;  /* RQ WQEs posted, ever */
};
static_assert(sizeof(QpDoorbell) == 8);

/* CqDoorbell::arm: a new value (its sequence differs from the last one the
 * storms saw) arms the CQ for its next completion, or with ARM_SOLICITED
 * for its next solicited or error completion. One notification per arm. */
namespace cq_arm {
inline constexpr uint32_t SOLICITED = 1u << 0;
inline constexpr uint32_t SEQ_SHIFT = 1;
inline constexpr uint32_t make(uint32_t seq, bool solicited_only) { return seq << SEQ_SHIFT | (solicited_only ? SOLICITED : 0); }
} // namespace cq_arm

struct CqDoorbell {
    uint32_t cons;  /* CQEs consumed, ever: frees ring slots */
    uint32_t arm;   /* cq_arm::make(seq, solicited_only) */
};
static_assert(sizeof(CqDoorbell) == 8);

struct SrqDoorbell {
    uint32_t prod;  /* SRQ WQEs posted, ever */
    uint32_t reserved;
};
static_assert(sizeof(SrqDoorbell) == 8);

/* ------------------------------------------------------------------------
 * Work queue elements. An SQ WQE slot is 64 << sq_wqe_shift bytes: the
 * SqWqe, on a UD QP its UdAddress, then num_sge Sges or `length` bytes of
 * inline data. An RQ (or SRQ) WQE slot is 16 << rq_wqe_shift bytes: the
 * RqWqe, then its Sges.
 * ---------------------------------------------------------------------- */
enum class SqOpcode : uint8_t {
    send = 0,
    send_with_imm = 1,
    rdma_write = 2,
    rdma_write_with_imm = 3,
    rdma_read = 4,
    atomic_cmp_swap = 5,
    atomic_fetch_add = 6,
};

namespace sq_wqe {
inline constexpr uint8_t SIGNALED = 1u << 0;  /* completes with a CQE (else only on error) */
inline constexpr uint8_t SOLICITED = 1u << 1; /* sets BTH SE on the last packet */
inline constexpr uint8_t FENCE = 1u << 2;     /* waits for earlier READs and atomics */
inline constexpr uint8_t INLINE = 1u << 3;    /* payload follows the WQE, no SGEs */
} // namespace sq_wqe

struct Sge {
    uint64_t addr;     /* in the MR's address space (its VA, or offset if zero-based) */
    uint32_t length;
    uint32_t lkey;
};
static_assert(sizeof(Sge) == 16);

struct SqWqe {
    uint64_t wr_id;        /* returned in the CQE */
    uint8_t opcode;        /* SqOpcode */
    uint8_t flags;         /* sq_wqe::* */
    uint8_t num_sge;
    uint8_t reserved;
    uint32_t length;       /* message length: the SGEs' sum, or the inline bytes */
    uint32_t imm_data;     /* network byte order, as verbs carries it */
    uint32_t rkey;         /* RDMA and atomics */
    uint64_t remote_addr;  /* RDMA and atomics: 8-byte aligned for atomics */
    uint64_t compare_add;  /* CMP_SWAP: compare; FETCH_ADD: add */
    uint64_t swap;         /* CMP_SWAP: swap */
    uint64_t reserved2[2];
};
static_assert(sizeof(SqWqe) == 64);
inline constexpr uint32_t SQ_WQE_UNIT = 64;

struct RqWqe {
    uint64_t wr_id;
    uint8_t num_sge;
    uint8_t reserved[7];
};
static_assert(sizeof(RqWqe) == 16);
inline constexpr uint32_t RQ_WQE_UNIT = 16;

/* A UD receive places the packet's 40-byte global route header first, as
 * RoCEv2 devices do: the IPv6 header, or 20 zero bytes then the IPv4
 * header; then the payload. byte_len counts both. */
inline constexpr uint32_t GRH_LEN = 40;

/* ------------------------------------------------------------------------
 * Completions. The status numbering is the InfiniBand specification's
 * completion status order (verbs' enum ibv_wc_status uses it too).
 * ---------------------------------------------------------------------- */
enum class CqeStatus : uint8_t {
    success = 0,
    local_length_error = 1,
    local_qp_operation_error = 2,
    local_protection_error = 4,
    work_request_flushed = 5,
    bad_response = 7,
    local_access_error = 8,
    remote_invalid_request = 9,
    remote_access_error = 10,
    remote_operation_error = 11,
    transport_retry_exceeded = 12,
    rnr_retry_exceeded = 13,
    fatal = 19,
    general = 21,
};

enum class CqeOpcode : uint8_t {
    /* requester: the SqOpcode it completes */
    send = 0,
    rdma_write = 1,
    rdma_read = 2,
    atomic_cmp_swap = 3,
    atomic_fetch_add = 4,
    /* responder */
    recv = 128,
    recv_rdma_with_imm = 129,
};

namespace cqe {
inline constexpr uint8_t REQUESTER = 1u << 0; /* an SQ WQE's completion, else an RQ's or SRQ's */
inline constexpr uint8_t WITH_IMM = 1u << 1;  /* imm_data is valid */
inline constexpr uint8_t SOLICITED = 1u << 2; /* the message had BTH SE set */
inline constexpr uint8_t FROM_SRQ = 1u << 3;  /* wqe_index counts the QP's SRQ */
inline constexpr uint8_t GRH = 1u << 4;       /* a UD receive: GRH_LEN bytes of GRH lead the data */
} // namespace cqe

/* RdmaCqe::sl of a UD receive: what carried the datagram, as RoCE devices
 * of the mlx5 family report it in verbs' wc.sl (RoCE has no service level
 * of its own), and as UCX 1.13's ud_verbs reads it to find the address in
 * the GRH. */
namespace cqe_sl {
inline constexpr uint8_t IPV6 = 0x1;
inline constexpr uint8_t IPV4 = 0x2;
inline constexpr uint8_t UDP = 0x8;   /* RoCEv2 */
} // namespace cqe_sl

struct RdmaCqe {
    uint64_t wr_id;
    uint32_t byte_len;   /* responder: bytes placed */
    uint32_t imm_data;   /* network byte order, with cqe::WITH_IMM */
    uint32_t src_qp;     /* a UD receive: the sender's QPN */
    uint16_t qp_id;
    uint16_t wqe_index;  /* requester: the WQE retired (and every earlier one) */
    uint8_t status;      /* CqeStatus */
    uint8_t opcode;      /* CqeOpcode */
    uint8_t flags;       /* cqe::* */
    uint8_t vendor_error;/* why, for errors: RdmaError */
    uint8_t sl;          /* a UD receive: cqe_sl::* */
    uint8_t reserved[2];
    uint8_t phase;       /* written last: 1 on the ring's first pass, then 0, 1... */
};
static_assert(sizeof(RdmaCqe) == 32);

/* RdmaCqe::vendor_error and QueryQp's last_error: what the storms saw. */
enum class RdmaError : uint8_t {
    none = 0,
    dma_fault = 1,          /* a host address outside the IOMMU */
    bad_lkey = 2,           /* no such MR, wrong key byte, other PD */
    lkey_bounds = 3,        /* an SGE outside its MR */
    lkey_access = 4,        /* MR lacks local write for a placement */
    bad_wqe = 5,            /* opcode, SGE count, length or alignment */
    recv_too_small = 6,     /* the message does not fit the receive buffers */
    nak_sequence = 7,
    nak_invalid_request = 8,
    nak_remote_access = 9,
    nak_remote_operation = 10,
    retry_exhausted = 11,
    rnr_retry_exhausted = 12,
    flushed = 13,
    cq_overflow = 14,
    sges_too_short = 15,    /* the SGEs hold less than the WQE's length */
    bad_response = 16,      /* a response that does not fit its request */
    ud_too_long = 17,       /* a UD SEND beyond the port's MTU */
};

struct CnqEntry {
    RegPair cq_handle;   /* CreateCqRamrodData::cq_handle of the CQ to notify */
};
static_assert(sizeof(CnqEntry) == 8);

/* ------------------------------------------------------------------------
 * Ramrods (ProtocolId::roce).
 * ---------------------------------------------------------------------- */
enum class RdmaCmd : uint8_t {
    func_init = 1,
    func_close = 2,
    create_cq = 3,
    resize_cq = 4,
    destroy_cq = 5,
    create_qp = 6,
    modify_qp = 7,
    query_qp = 8,
    destroy_qp = 9,
    register_tid = 10,
    deregister_tid = 11,
    create_srq = 12,
    modify_srq = 13,
    destroy_srq = 14,
    set_addresses = 15,
    resolve_neighbour = 16,
};

/* Affiliated (the object's id in EQE data) and unaffiliated events. */
enum class RdmaEvent : uint8_t {
    qp_fatal = 64,         /* QP in ERR: a DMA fault or broken WQE (IBV_EVENT_QP_FATAL) */
    qp_request_error = 65, /* the responder saw an invalid request (IBV_EVENT_QP_REQ_ERR) */
    qp_access_error = 66,  /* the responder refused an access (IBV_EVENT_QP_ACCESS_ERR) */
    qp_last_wqe = 67,      /* an SRQ QP in ERR has no more WQEs (IBV_EVENT_QP_LAST_WQE_REACHED) */
    sq_drained = 68,       /* SQD reached with nothing outstanding (IBV_EVENT_SQ_DRAINED) */
    cq_error = 69,         /* CQ overrun (IBV_EVENT_CQ_ERR) */
    srq_limit = 70,        /* fewer WQEs than the armed limit (IBV_EVENT_SRQ_LIMIT_REACHED) */
    srq_error = 71,        /* SRQ unusable (IBV_EVENT_SRQ_ERR) */
    qp_comm_established = 72,
    /* A RESOLVE_NEIGHBOUR answered: data = neighbour_event(mac, tag). */
    neighbour = 73,
};

inline constexpr uint64_t neighbour_event(const uint8_t (&mac)[6], uint16_t tag)
{
    uint64_t v = 0;
    for (uint8_t b : mac)
        v = v << 8 | b;
    return v << 16 | tag;
}
inline constexpr uint16_t neighbour_event_tag(uint64_t data) { return static_cast<uint16_t>(data); }
inline constexpr void neighbour_event_mac(uint64_t data, uint8_t (&mac)[6])
{
    for (int i = 0; i < 6; i++)
        mac[i] = static_cast<uint8_t>(data >> (16 + 8 * (5 - i)));
}

/* A CNQ holds an entry per CQ bound to it (an armed CQ notifies once):
 * the storms keep no consumer. */
struct CnqParams {
    RegPair ring_base;     /* CnqEntry ring */
    uint16_t ring_size;    /* entries, power of two */
    uint16_t sb_id;        /* fastpath SB whose RDMA_PI_CNQ is the producer */
    uint32_t reserved;
};
static_assert(sizeof(CnqParams) == 16);

struct FuncInitRamrodData {
    uint8_t num_cnqs;
    uint8_t reserved;
    uint8_t mac[6];        /* RoCE frames to this MAC (on the PF's port) are the PF's */
    uint32_t num_qps;      /* ILT holds contexts for requester/responder_cid(< num_qps) */
    uint32_t num_tids;
    uint16_t max_mtu;      /* the port's MTU: no path MTU beyond it */
    uint16_t reserved2;
    RegPair tid_context_base; /* TidContext[num_tids] in host memory */
    CnqParams cnq[MAX_CNQS];
};
static_assert(sizeof(FuncInitRamrodData) == 28 + MAX_CNQS * 16);

struct FuncCloseRamrodData {
    uint32_t reserved[2];
};
static_assert(sizeof(FuncCloseRamrodData) == 8);

struct CreateCqRamrodData {
    uint16_t cq_id;
    uint8_t cnq_id;
    uint8_t reserved;
    uint16_t dpi;
    uint16_t reserved2;
    RegPair ring_base;     /* RdmaCqe ring, zeroed by the driver */
    uint32_t ring_size;    /* entries, power of two */
    uint32_t reserved3;
    RegPair cq_handle;     /* echoed in CNQ entries */
};
static_assert(sizeof(CreateCqRamrodData) == 32);

/* The storms finish the old ring at a CQE boundary and continue in the new
 * one at index 0, phase 1; EQE data: CQEs written to the old ring, ever
 * (the driver drains the old ring up to there before moving on). */
struct ResizeCqRamrodData {
    uint16_t cq_id;
    uint16_t reserved;
    uint32_t ring_size;
    RegPair ring_base;
};
static_assert(sizeof(ResizeCqRamrodData) == 16);

/* EQE data: CQEs written, ever. */
struct DestroyCqRamrodData {
    uint16_t cq_id;
    uint16_t reserved[3];
};
static_assert(sizeof(DestroyCqRamrodData) == 8);

enum class QpState : uint8_t { reset = 0, init = 1, rtr = 2, rts = 3, sqd = 4, sqe = 5, err = 6 };
/* Reliable connection, or unreliable datagram: a UD QP sends single-packet
 * SENDs (payload up to the port's IB MTU) to the address each WQE names,
 * completes them once sent, and receives from any peer whose Q_Key
 * matches; no ACKs, no retries, a datagram without a receive posted is
 * dropped.
 * gsi: the port's General Services Interface QP (InfiniBand's QP1), for a
 * connection manager: a datagram QP that receives what is sent to GSI_QPN
 * and sends as GSI_QPN, with GSI_QKEY both ways (a modify may not change
 * it); one per PF. What it receives are MADs, MAD_SIZE bytes of base
 * version MAD_BASE_VERSION: any other datagram to it is dropped and
 * counted (RoceStats::mads_dropped). */
enum class QpType : uint8_t { rc = 0, ud = 1, gsi = 2 };
inline constexpr bool is_datagram(QpType type) { return type != QpType::rc; }
inline constexpr uint32_t GSI_QPN = 1;
inline constexpr uint32_t GSI_QKEY = 0x80010000;
inline constexpr uint32_t MAD_SIZE = 256;
inline constexpr uint8_t MAD_BASE_VERSION = 1;
inline constexpr uint32_t QP_STATES = 7;

/* The transitions a modify may ask for (the InfiniBand QP state machine):
 * to RESET or ERR from anywhere, and RESET->INIT->RTR->RTS, RTS<->SQD,
 * SQE->RTS, RESET/INIT/RTS/SQD to themselves. The storms move a QP to ERR
 * (and, for unreliable transports, to SQE) on their own. */
constexpr bool qp_transition_allowed(QpState from, QpState to)
{
    using enum QpState;
    if (static_cast<uint32_t>(from) >= QP_STATES || static_cast<uint32_t>(to) >= QP_STATES)
        return false;
    if (to == reset || to == err)
        return true;
    switch (from) {
    case reset: return to == init;
    case init: return to == init || to == rtr;
    case rtr: return to == rts;
    case rts: return to == rts || to == sqd;
    case sqd: return to == sqd || to == rts;
    case sqe: return to == rts;
    case err: return false;
    }
    return false;
}

/* Access rights of a QP (remote) and of an MR (local and remote). */
namespace access {
inline constexpr uint8_t LOCAL_WRITE = 1u << 0;
inline constexpr uint8_t REMOTE_WRITE = 1u << 1;
inline constexpr uint8_t REMOTE_READ = 1u << 2;
inline constexpr uint8_t REMOTE_ATOMIC = 1u << 3;
inline constexpr uint8_t ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;
} // namespace access

inline constexpr uint16_t NO_SRQ = 0xffff;

/* The QP starts in RESET. */
struct CreateQpRamrodData {
    uint16_t qp_id;
    uint16_t pd;
    uint16_t dpi;
    uint16_t srq_id;       /* NO_SRQ: receives come from the QP's RQ */
    uint16_t sq_cq_id;
    uint16_t rq_cq_id;
    uint8_t sq_wqe_shift;  /* SQ slots of SQ_WQE_UNIT << shift bytes */
    uint8_t rq_wqe_shift;  /* RQ slots of RQ_WQE_UNIT << shift bytes */
    uint8_t max_send_sge;
    uint8_t max_recv_sge;
    RegPair sq_base;
    RegPair rq_base;
    uint16_t sq_size;      /* WQEs, power of two */
    uint16_t rq_size;      /* WQEs, power of two; 0 with an SRQ */
    uint16_t max_inline;
    uint8_t signal_all;    /* every SQ WQE completes with a CQE */
    uint8_t qp_type;       /* QpType */
};
static_assert(sizeof(CreateQpRamrodData) == 40);

/* ModifyQpRamrodData::modify: the attributes carried (verbs' attribute mask
 * in the storms' terms). The state change always is. */
namespace qp_modify {
inline constexpr uint32_t ACCESS = 1u << 0;
inline constexpr uint32_t PATH = 1u << 1;          /* addresses, ports, TC, hop limit */
inline constexpr uint32_t PATH_MTU = 1u << 2;
inline constexpr uint32_t DEST_QPN = 1u << 3;
inline constexpr uint32_t RQ_PSN = 1u << 4;
inline constexpr uint32_t SQ_PSN = 1u << 5;
inline constexpr uint32_t TIMEOUT = 1u << 6;
inline constexpr uint32_t RETRY_CNT = 1u << 7;
inline constexpr uint32_t RNR_RETRY = 1u << 8;
inline constexpr uint32_t MIN_RNR_TIMER = 1u << 9;
inline constexpr uint32_t MAX_RD_ATOMIC = 1u << 10;
inline constexpr uint32_t MAX_DEST_RD_ATOMIC = 1u << 11;
inline constexpr uint32_t SQD_ASYNC_NOTIFY = 1u << 12;
inline constexpr uint32_t QKEY = 1u << 13;         /* UD */
} // namespace qp_modify

inline constexpr uint8_t IP_VERSION_4 = 4;
inline constexpr uint8_t IP_VERSION_6 = 6;
inline constexpr uint16_t NO_VLAN = 0xffff;

/* Where a QP's packets go. Addresses are in network byte order; an IPv4
 * address takes the last four bytes (as in an IPv4-mapped GID). */
struct RocePath {
    uint8_t dst_mac[6];
    uint8_t src_mac[6];
    uint16_t vlan_tci;     /* NO_VLAN: untagged */
    uint8_t ip_version;    /* IP_VERSION_4 or IP_VERSION_6 */
    uint8_t traffic_class; /* IPv4 TOS / IPv6 traffic class (DSCP and ECN) */
    uint8_t hop_limit;     /* IPv4 TTL / IPv6 hop limit */
    uint8_t reserved;
    uint32_t flow_label;   /* IPv6 only, 20 bits */
    uint16_t udp_src_port; /* the QP's ECMP entropy */
    uint16_t reserved2;
    uint8_t src_ip[16];
    uint8_t dst_ip[16];
};
static_assert(sizeof(RocePath) == 60);

/* A path the storms can build headers for: an IP version, a VLAN id other
 * than 0xfff, a 20-bit flow label. (A connection's also needs a unicast
 * destination MAC; a datagram may go to a group.) */
constexpr bool path_well_formed(const RocePath& p)
{
    return (p.ip_version == IP_VERSION_4 || p.ip_version == IP_VERSION_6) &&
           (p.vlan_tci == NO_VLAN || (p.vlan_tci & 0x0fff) != 0x0fff) && p.flow_label <= 0xfffff;
}

/* The largest InfiniBand MTU (256 to 4096 bytes) within an Ethernet MTU:
 * a port's active MTU, and the most a datagram carries; 0 if none. */
constexpr uint16_t ib_mtu_within(uint32_t mtu)
{
    for (uint16_t ib = 4096; ib >= 256; ib /= 2)
        if (ib <= mtu)
            return ib;
    return 0;
}

/* Where a UD QP's SEND goes (verbs' address handle, remote QPN and
 * Q_Key): after the SqWqe in its slot. A Q_Key with its top bit set means
 * the QP's own (IBA 10.2.5). */
inline constexpr uint32_t QKEY_USE_QPS = 1u << 31;
struct UdAddress {
    uint32_t dest_qpn;     /* 24 bits */
    uint32_t qkey;         /* QKEY_USE_QPS: the QP's */
    RocePath path;
    uint8_t reserved[12];
};
static_assert(sizeof(UdAddress) == 80);

struct ModifyQpRamrodData {
    uint16_t qp_id;
    uint8_t cur_state;     /* QpState the driver believes: a mismatch is refused */
    uint8_t new_state;     /* QpState */
    uint32_t modify;       /* qp_modify::* */
    uint8_t access;        /* access::REMOTE_* */
    uint8_t timeout;       /* local ACK timeout: 4.096 us << timeout; 0 = infinite */
    uint8_t retry_cnt;     /* 0..7 */
    uint8_t rnr_retry;     /* 0..7; 7 = infinite */
    uint8_t min_rnr_timer; /* IB RNR timer code 0..31 */
    uint8_t max_rd_atomic; /* READs/atomics outstanding as requester */
    uint8_t max_dest_rd_atomic; /* ... accepted as responder */
    uint8_t sqd_async_notify;
    uint16_t path_mtu;     /* bytes: 256, 512, 1024, 2048 or 4096 */
    uint16_t reserved;
    uint32_t dest_qpn;
    uint32_t rq_psn;       /* 24 bits: the PSN the responder expects next */
    uint32_t sq_psn;       /* 24 bits: the requester's next PSN */
    uint32_t qkey;         /* UD: what a datagram must carry to be received */
    RocePath path;
};
static_assert(sizeof(ModifyQpRamrodData) == 36 + sizeof(RocePath));

/* The storms write the QP's contexts into the ILT (requester_cid and
 * responder_cid) and complete. */
struct QueryQpRamrodData {
    uint16_t qp_id;
    uint16_t reserved[3];
};
static_assert(sizeof(QueryQpRamrodData) == 8);

/* Any state; in-flight work is dropped without completions (verbs' destroy
 * does not flush). EQE data: SQ WQEs retired << 32 | RQ WQEs consumed. */
struct DestroyQpRamrodData {
    uint16_t qp_id;
    uint16_t reserved[3];
};
static_assert(sizeof(DestroyQpRamrodData) == 8);

/* The requester half of a QP's context (ILT, requester_cid). */
struct RoceRequesterContext {
    uint8_t state;          /* QpState */
    uint8_t last_error;     /* RdmaError that took the QP to ERR */
    uint8_t access;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t max_rd_atomic;
    uint8_t sq_wqe_shift;
    uint16_t pd;
    uint16_t dpi;
    uint16_t sq_cq_id;
    uint16_t sq_size;
    uint32_t dest_qpn;
    uint32_t sq_psn;        /* next PSN to send */
    uint32_t unacked_psn;   /* oldest PSN not acknowledged */
    uint32_t sq_prod;       /* WQEs posted */
    uint32_t sq_cons;       /* WQEs retired */
    uint16_t path_mtu;
    uint16_t reserved;
    RegPair sq_base;
    uint64_t packets_sent;
    uint64_t retransmitted;
    uint64_t naks_received;
    uint64_t rnr_naks_received;
    uint64_t timeouts;
    uint8_t reserved2[CONN_CONTEXT_SIZE - 88];
};
static_assert(sizeof(RoceRequesterContext) == CONN_CONTEXT_SIZE);

/* The responder half (ILT, responder_cid). */
struct RoceResponderContext {
    uint8_t state;          /* QpState */
    uint8_t min_rnr_timer;
    uint8_t max_dest_rd_atomic;
    uint8_t rq_wqe_shift;
    uint16_t rq_cq_id;
    uint16_t srq_id;
    uint16_t rq_size;
    uint16_t reserved;
    uint32_t rq_psn;        /* next PSN expected */
    uint32_t msn;           /* messages completed */
    uint32_t rq_prod;
    uint32_t rq_cons;
    RegPair rq_base;
    uint64_t packets_received;
    uint64_t duplicates;
    uint64_t naks_sent;
    uint64_t rnr_naks_sent;
    uint64_t out_of_sequence;
    uint32_t qkey;
    uint8_t qp_type;        /* QpType */
    uint8_t reserved2[CONN_CONTEXT_SIZE - 85];
};
static_assert(sizeof(RoceResponderContext) == CONN_CONTEXT_SIZE);

/* A memory region: `length` bytes from `va` (0 when zero-based) over
 * num_pages pages of 1 << page_shift bytes whose IOVAs the PBL lists; va
 * lies first_page_offset bytes into the first page. The storms read the
 * PBL at registration: the driver may free it after the completion. */
struct RegisterTidRamrodData {
    uint32_t tid;           /* MR index < num_tids; lkey = rkey = tid << 8 | key */
    uint8_t key;
    uint8_t access;         /* access::* */
    uint16_t pd;
    uint8_t page_shift;
    uint8_t zero_based;
    uint16_t reserved;
    uint32_t first_page_offset;
    uint64_t va;
    uint64_t length;
    RegPair pbl_base;       /* uint64_t IOVAs, num_pages of them */
    uint32_t num_pages;
    uint32_t reserved2;
};
static_assert(sizeof(RegisterTidRamrodData) == 48);
inline constexpr uint32_t mr_key(uint32_t tid, uint8_t key) { return tid << 8 | key; }
inline constexpr uint32_t tid_of_key(uint32_t key) { return key >> 8; }

struct DeregisterTidRamrodData {
    uint32_t tid;
    uint32_t reserved;
};
static_assert(sizeof(DeregisterTidRamrodData) == 8);

/* An MR as the storms hold it (host memory, FuncInitRamrodData::
 * tid_context_base): written at registration, cleared at deregistration. */
struct TidContext {
    uint8_t valid;
    uint8_t key;
    uint8_t access;
    uint8_t page_shift;
    uint16_t pd;
    uint8_t zero_based;
    uint8_t reserved;
    uint64_t va;
    uint64_t length;
    uint32_t first_page_offset;
    uint32_t num_pages;
    uint64_t reserved2[4];
};
static_assert(sizeof(TidContext) == 64);

struct CreateSrqRamrodData {
    uint16_t srq_id;
    uint16_t pd;
    uint16_t dpi;
    uint8_t wqe_shift;     /* slots of RQ_WQE_UNIT << shift bytes */
    uint8_t max_sge;
    RegPair ring_base;
    uint16_t ring_size;    /* WQEs, power of two */
    uint16_t reserved;
    uint32_t limit;        /* srq_limit event below this many WQEs; 0 = disarmed */
};
static_assert(sizeof(CreateSrqRamrodData) == 24);

/* Arms (or with 0 disarms) the limit event. */
struct ModifySrqRamrodData {
    uint16_t srq_id;
    uint16_t reserved;
    uint32_t limit;
};
static_assert(sizeof(ModifySrqRamrodData) == 8);

struct DestroySrqRamrodData {
    uint16_t srq_id;
    uint16_t reserved[3];
};
static_assert(sizeof(DestroySrqRamrodData) == 8);

/* ------------------------------------------------------------------------
 * Neighbours. The storms answer ARP requests and IPv6 neighbour
 * solicitations for the PF's addresses (those SET_ADDRESSES gives, and the
 * link-local IPv6 address of its RDMA MAC) from that MAC, so any RoCE peer
 * on the wire can resolve them; and RESOLVE_NEIGHBOUR asks the wire who
 * has an address (an ARP request, or a solicitation to the solicited-node
 * multicast group), each answer becoming an RdmaEvent::neighbour. The
 * frames still reach L2 as well.
 * ---------------------------------------------------------------------- */
inline constexpr uint32_t MAX_IPV4_ADDRESSES = 4;
inline constexpr uint32_t MAX_IPV6_ADDRESSES = 4;

struct SetAddressesRamrodData {
    uint8_t num_ipv4;
    uint8_t num_ipv6;
    uint8_t reserved[2];
    uint8_t ipv4[MAX_IPV4_ADDRESSES][4];   /* network order */
    uint8_t ipv6[MAX_IPV6_ADDRESSES][16];
};
static_assert(sizeof(SetAddressesRamrodData) == 4 + 16 + 64);

/* Completes at once; the answer (if any) comes as an event with the tag. */
struct ResolveNeighbourRamrodData {
    uint8_t ip_version;    /* IP_VERSION_4 or IP_VERSION_6 */
    uint8_t reserved;
    uint16_t tag;
    uint8_t target[16];    /* IPv4: the last four bytes */
    uint8_t source[16];    /* the PF's address the question comes from */
};
static_assert(sizeof(ResolveNeighbourRamrodData) == 36);

/* ---- Statistics (storm RAM, iro::roce_stats) --------------------------------
 * The RoCE engine's counters of a PF's port, each a single 64-bit store like
 * the L2 statistics, read by ecore through a PTT; zeroed by PF_START. The
 * per-QP counters come with QUERY_QP, in the QP's contexts. */
struct RoceStats {
    uint64_t rx_packets;        /* RoCEv2 frames to the PF, the dropped ones too */
    uint64_t tx_packets;
    uint64_t rx_bytes;          /* of those frames, Ethernet header to ICRC */
    uint64_t tx_bytes;
    uint64_t icrc_errors;       /* dropped: ICRC wrong */
    uint64_t bad_packets;       /* dropped: malformed, or for no QP of the PF */
    uint64_t retransmitted;     /* requester packets sent again (timeout, sequence NAK) */
    uint64_t timeouts;          /* ACK timer expiries */
    uint64_t naks_sent;         /* sequence, access and invalid-request NAKs */
    uint64_t naks_received;
    uint64_t rnr_naks_sent;
    uint64_t rnr_naks_received;
    uint64_t duplicates;        /* requests with a PSN already executed */
    uint64_t out_of_sequence;   /* requests with a PSN beyond the expected one */
    uint64_t qkey_violations;   /* UD datagrams dropped: their Q_Key is not the QP's */
    uint64_t ud_dropped;        /* UD datagrams dropped: no receive posted */
    uint64_t mads_dropped;      /* datagrams to the GSI QP dropped: not a MAD */
    uint64_t pkey_violations;   /* dropped: a P_Key not of the port's partition */
    uint64_t reserved[14];
};
static_assert(sizeof(RoceStats) == iro::ROCE_STATS_SIZE);
static_assert(iro::roce_stats(MAX_PFS - 1) + iro::ROCE_STATS_SIZE <= reg::STORM_MICROCODE - reg::STORM_RAM_BASE);

} // namespace cna::hsi::rdma
