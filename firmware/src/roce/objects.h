/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA objects of one PF as the storms hold them: CNQs, CQs, SRQs and
 * QPs with their requester and responder state. Ramrods create and change
 * them on engine thread 0 while the PF's own engine thread is between two
 * passes; the PF's engine thread works on them without a lock.
 */
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hsi_rdma.h"
#include "bus/dma_ring.h"
#include "roce/request_checks.h"

namespace cna::fw::roce {

struct Cnq {
    bool exists = false;
    DmaRing ring;
    uint32_t mask = 0;
    uint16_t prod = 0;         /* entries written, ever (the SB index is 16 bits) */
    uint16_t sb_id = 0;
};

struct Cq {
    bool exists = false;
    uint16_t dpi = 0;
    uint8_t cnq = 0;
    DmaRing ring;
    uint32_t mask = 0;
    uint32_t prod = 0;         /* CQEs written, ever */
    uint32_t ring_start = 0;   /* prod when the ring (re)started: RESIZE_CQ */
    uint32_t arm_seen = 0;     /* the CqDoorbell::arm value last acted on */
    bool armed = false;
    bool solicited_only = false;
    bool overflowed = false;   /* no CQE is written after an overflow */
    uint64_t handle = 0;
    uint32_t users = 0;        /* QPs completing on it */
};

struct Srq {
    bool exists = false;
    uint16_t pd = 0;
    uint16_t dpi = 0;
    uint8_t wqe_shift = 0;
    uint8_t max_sge = 0;
    DmaRing ring;
    uint32_t mask = 0;
    uint32_t cons = 0;         /* WQEs taken, ever */
    uint32_t limit = 0;        /* srq_limit event below this many; 0: disarmed */
    uint32_t users = 0;        /* QPs receiving from it */
};

/* The requester CQE opcode of an SQ opcode. */
constexpr uint8_t requester_opcode(uint8_t sq_opcode)
{
    using hsi::rdma::CqeOpcode;
    using hsi::rdma::SqOpcode;
    switch (static_cast<SqOpcode>(sq_opcode)) {
    case SqOpcode::rdma_write:
    case SqOpcode::rdma_write_with_imm: return static_cast<uint8_t>(CqeOpcode::rdma_write);
    case SqOpcode::rdma_read: return static_cast<uint8_t>(CqeOpcode::rdma_read);
    case SqOpcode::atomic_cmp_swap: return static_cast<uint8_t>(CqeOpcode::atomic_cmp_swap);
    case SqOpcode::atomic_fetch_add: return static_cast<uint8_t>(CqeOpcode::atomic_fetch_add);
    default: return static_cast<uint8_t>(CqeOpcode::send);
    }
}
/* The completion status of a WQE the storms failed for this reason. */
constexpr hsi::rdma::CqeStatus status_of(hsi::rdma::RdmaError why)
{
    using hsi::rdma::CqeStatus;
    using hsi::rdma::RdmaError;
    switch (why) {
    case RdmaError::none: return CqeStatus::success;
    case RdmaError::dma_fault: return CqeStatus::fatal;
    case RdmaError::bad_lkey:
    case RdmaError::lkey_bounds:
    case RdmaError::lkey_access: return CqeStatus::local_protection_error;
    case RdmaError::bad_wqe: return CqeStatus::local_qp_operation_error;
    case RdmaError::recv_too_small:
    case RdmaError::sges_too_short:
    case RdmaError::ud_too_long: return CqeStatus::local_length_error;
    case RdmaError::bad_response: return CqeStatus::bad_response;
    case RdmaError::nak_invalid_request: return CqeStatus::remote_invalid_request;
    case RdmaError::nak_remote_access: return CqeStatus::remote_access_error;
    case RdmaError::nak_remote_operation: return CqeStatus::remote_operation_error;
    case RdmaError::retry_exhausted: return CqeStatus::transport_retry_exceeded;
    case RdmaError::rnr_retry_exhausted: return CqeStatus::rnr_retry_exceeded;
    case RdmaError::nak_sequence:
    case RdmaError::cq_overflow: return CqeStatus::general;
    case RdmaError::flushed: return CqeStatus::work_request_flushed;
    }
    return CqeStatus::general;
}

constexpr bool is_read_or_atomic(uint8_t sq_opcode)
{
    using hsi::rdma::SqOpcode;
    auto op = static_cast<SqOpcode>(sq_opcode);
    return op == SqOpcode::rdma_read || op == SqOpcode::atomic_cmp_swap || op == SqOpcode::atomic_fetch_add;
}

/* An SQ WQE the requester started: the PSNs it took. */
struct SentWqe {
    uint32_t first_psn = 0;
    uint32_t packets = 0;      /* PSNs it spans; a READ's are its responses */
    uint8_t opcode = 0;        /* hsi::rdma::SqOpcode */
    bool signaled = false;
};

/* A QP's side as requester, the Requester engine's books of its SQ. */
struct RequesterState {
    uint32_t sq_cons = 0;      /* WQEs retired */
    uint32_t sq_next = 0;      /* WQEs started: PSNs assigned */
    uint32_t next_psn = 0;     /* the PSN the next WQE starts at */
    uint32_t unacked_psn = 0;  /* the oldest PSN not acknowledged */
    uint32_t sent_psn = 0;     /* one past the highest PSN sent */
    /* Where transmission stands: the WQE and the PSN it sends next (behind
     * next_psn while going back to retransmit). */
    uint32_t tx_wqe = 0;
    uint32_t tx_psn = 0;
    uint32_t reads_outstanding = 0; /* READ and atomic WQEs started, not retired */
    uint8_t retries_left = 0;
    uint8_t rnr_retries_left = 0;
    uint64_t ack_deadline_ns = 0;   /* 0: no timer (nothing outstanding, or timeout 0) */
    uint64_t rnr_until_ns = 0;      /* sending waits out an RNR NAK until then */
    uint32_t nak_psn_seen = UINT32_MAX; /* a sequence NAK acted on (once per PSN) */
    uint32_t read_next_psn = 0;     /* the response the oldest READ expects next */
    std::vector<SentWqe> sent;      /* per SQ slot */
    /* The WQE being sent, as read from the SQ (cur_index: its index). */
    uint32_t cur_index = UINT32_MAX;
    hsi::rdma::SqWqe cur{};
    std::array<hsi::rdma::Sge, hsi::rdma::MAX_SGE> cur_sges{};
};

/* What the responder owes the requester, sent in order. */
struct Response {
    enum class Kind : uint8_t { ack, read, atomic };
    Kind kind = Kind::ack;
    uint8_t syndrome = 0;      /* ack: the AETH syndrome (an ACK or a NAK) */
    uint32_t psn = 0;          /* ack: the PSN acknowledged; read: of the first response */
    uint32_t msn = 0;
    uint64_t va = 0;           /* read */
    uint32_t rkey = 0;
    uint32_t length = 0;
    uint32_t sent = 0;         /* read: bytes already sent */
    uint64_t original = 0;     /* atomic: the value before the operation */
};

/* An atomic the responder executed, kept to answer its duplicate. */
struct AtomicReplay {
    bool valid = false;
    uint32_t psn = 0;
    uint64_t original = 0;
};

/* The receive WQE a multi-packet SEND is being placed into. */
struct Receive {
    bool active = false;
    bool from_srq = false;
    uint32_t index = 0;
    uint64_t wr_id = 0;
    uint32_t placed = 0;
    uint8_t num_sge = 0;
    std::array<hsi::rdma::Sge, hsi::rdma::MAX_SGE> sges{};
};

/* A QP's side as responder: what the Responder engine expects, places
 * and owes. */
struct ResponderState {
    uint32_t epsn = 0;         /* the PSN expected next */
    uint32_t msn = 0;
    uint32_t rq_cons = 0;      /* RQ WQEs taken, ever */
    InProgress in_progress = InProgress::none;
    bool nak_sent = false;     /* a sequence NAK for epsn went out */
    Receive recv;
    /* The WRITE being placed. */
    uint64_t write_va = 0;
    uint32_t write_rkey = 0;
    uint32_t write_left = 0;   /* bytes its RETH announced, not yet received */
    uint32_t write_length = 0;
    /* Responses owed, oldest first. */
    static constexpr uint32_t MAX_RESPONSES = 2 * hsi::rdma::MAX_RD_ATOMIC + 2;
    std::array<Response, MAX_RESPONSES> out{};
    uint32_t out_head = 0, out_tail = 0;
    /* New requests the owed ACK covers, whether one came since the last
     * poll, and whether every one of them left nothing for the host to see
     * but memory (WRITEs without immediate): Responder::poll holds such an
     * ACK back while they keep coming. */
    uint32_t requests_unacked = 0;
    bool request_since_poll = false;
    bool ack_may_wait = true;
    std::array<AtomicReplay, hsi::rdma::MAX_RD_ATOMIC> atomics{};
    uint32_t atomic_next = 0;
};

struct QpCounters {
    uint64_t packets_sent = 0;
    uint64_t retransmitted = 0;
    uint64_t naks_received = 0;
    uint64_t rnr_naks_received = 0;
    uint64_t timeouts = 0;
    uint64_t packets_received = 0;
    uint64_t duplicates = 0;
    uint64_t naks_sent = 0;
    uint64_t rnr_naks_sent = 0;
    uint64_t out_of_sequence = 0;
};

struct Qp {
    bool exists = false;
    hsi::rdma::QpType type = hsi::rdma::QpType::rc;
    hsi::rdma::QpState state = hsi::rdma::QpState::reset;
    hsi::rdma::RdmaError last_error = hsi::rdma::RdmaError::none;
    bool last_wqe_reported = false; /* an SRQ QP in ERR said qp_last_wqe */
    uint16_t id = 0;
    uint16_t pd = 0;
    uint16_t dpi = 0;
    uint16_t srq = hsi::rdma::NO_SRQ;
    uint16_t sq_cq = 0;
    uint16_t rq_cq = 0;
    uint8_t sq_wqe_shift = 0;
    uint8_t rq_wqe_shift = 0;
    uint8_t max_send_sge = 0;
    uint8_t max_recv_sge = 0;
    uint16_t max_inline = 0;
    bool signal_all = false;
    DmaRing sq, rq;
    uint32_t sq_mask = 0;
    uint32_t rq_mask = 0;

    /* Attributes (MODIFY_QP). */
    uint8_t access = 0;
    uint8_t timeout = 0;
    uint8_t retry_cnt = 0;
    uint8_t rnr_retry = 0;
    uint8_t min_rnr_timer = 0;
    uint8_t max_rd_atomic = 0;
    uint8_t max_dest_rd_atomic = 0;
    bool sqd_notify = false;
    uint16_t path_mtu = 0;
    uint32_t dest_qpn = 0;
    uint32_t qkey = 0;         /* UD; GSI_QKEY for the GSI QP */
    hsi::rdma::RocePath path{};

    RequesterState req{};
    ResponderState resp{};
    QpCounters counters{};
};

} // namespace cna::fw::roce
