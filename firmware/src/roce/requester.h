/* SPDX-License-Identifier: BSD-3-Clause
 * The requester: a reliable connection's SQ WQEs out as packets cut to the
 * path MTU, each WQE's PSNs remembered until its ACK (or its READ
 * responses, or its atomic ACK) retires it; go-back-N from the oldest
 * unacknowledged PSN on a timeout or a sequence NAK, a wait on an RNR NAK,
 * and the QP to ERR when the retries run out or the responder refuses.
 * A UD QP's SEND WQEs go out as single datagrams, each to the address its
 * WQE carries, completed once sent: nothing is acknowledged or retried.
 *
 * Its state is the QPs' (Qp::req); it holds only what it alone uses.
 */
#pragma once

#include <cstdint>

#include "hsi_rdma.h"
#include "frame/frame_burst.h"
#include "roce/completer.h"
#include "roce/context.h"
#include "roce/host_memory.h"
#include "roce/packet_writer.h"
#include "roce/transport.h"

namespace cna::fw::roce {

class Requester {
public:
    Requester(Context& ctx, Completer& completer, HostMemory& memory, PacketWriter& packets)
        : ctx_(ctx), completer_(completer), memory_(memory), packets_(packets)
    {
    }

    /* FUNC_INIT: the PF's MTU, which bounds a datagram. */
    void configure(uint16_t max_mtu);

    /* A reliable QP's pass in RTS or SQD: timers, then what is due of
     * its SQ. True if anything was done. */
    bool poll(Qp& qp, uint64_t now_ns, FrameBurst& out);
    /* A UD QP's pass: in RTS each SQ WQE one packet to its own address,
     * completed once sent; a WQE that cannot be sent completes in error
     * and the QP goes to SQE, where the SQ flushes and receiving goes on. */
    bool poll_datagrams(Qp& qp, FrameBurst& out);
    /* An ACK, NAK, READ response or atomic ACK for a reliable QP. */
    void on_response(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len,
                     uint64_t now_ns);

private:
    /* What may become of the next WQE of the SQ. */
    enum class Start : uint8_t { started, waits, failed };

    /* Sending. */
    bool ack_timed_out(Qp& qp, uint64_t now_ns);
    bool send_due(Qp& qp, uint32_t prod, uint64_t now_ns, FrameBurst& out);
    Start start_next(Qp& qp, uint32_t prod);
    /* Starts WQE sq_next: validates it and assigns its PSNs. */
    bool start_wqe(Qp& qp, const hsi::rdma::SqWqe& wqe);
    bool send_packet(Qp& qp, const hsi::rdma::SqWqe& wqe, FrameBurst& out);
    /* The packet of a WQE at its k-th PSN, by kind; a SEND's or WRITE's
     * false when its payload could not be read (the WQE failed). */
    void send_read_request(Qp& qp, const hsi::rdma::SqWqe& wqe, Bth bth, uint32_t k, FrameBurst& out);
    void send_atomic(Qp& qp, const hsi::rdma::SqWqe& wqe, Bth bth, FrameBurst& out);
    bool send_data(Qp& qp, const hsi::rdma::SqWqe& wqe, Bth bth, uint32_t k, FrameBurst& out);
    /* The bytes [offset, offset + len) of a WQE's message: inline in the
     * SQ at `inline_at`, or through its SGEs. */
    bool read_payload(Qp& qp, const hsi::rdma::SqWqe& wqe, uint64_t inline_at, const hsi::rdma::Sge* sges,
                      uint32_t offset, uint8_t* dst, uint32_t len, hsi::rdma::RdmaError& why);
    bool read_wqe(const Qp& qp, uint32_t index, hsi::rdma::SqWqe& wqe, hsi::rdma::Sge* sges);
    void go_back(Qp& qp, uint32_t psn);
    void arm_ack_timer(Qp& qp, uint64_t now_ns);

    /* Retiring. */
    void on_ack(Qp& qp, const Bth& bth, uint64_t now_ns);
    void on_read_response(Qp& qp, const Bth& bth, const uint8_t* payload, uint32_t len, uint64_t now_ns);
    void on_atomic_ack(Qp& qp, const Bth& bth, const uint8_t* payload, uint64_t now_ns);
    void on_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns);
    void on_rnr_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns);
    /* Every WQE whose PSNs all come before `psn` retires (READs and atomics
     * wait for their responses). */
    void retire_acked(Qp& qp, uint32_t psn, uint64_t now_ns);
    void retire(Qp& qp, hsi::rdma::CqeStatus status, hsi::rdma::RdmaError why);
    /* WQE `index` failed: the ones before it are flushed (completions keep
     * SQ order), it completes with the status the error calls for, and the
     * QP goes to ERR. */
    void fail_wqe(Qp& qp, uint32_t index, hsi::rdma::RdmaError why);

    /* Datagrams. */
    void send_datagram(Qp& qp, FrameBurst& out);
    /* Why a datagram's WQE cannot go out (none when it can); its SGEs read
     * into sges. */
    hsi::rdma::RdmaError check_datagram(Qp& qp, const hsi::rdma::SqWqe& wqe, const hsi::rdma::UdAddress& to,
                                        uint64_t data_at, hsi::rdma::Sge* sges);
    void fail_datagram(Qp& qp, hsi::rdma::RdmaError why);

    Context& ctx_;
    Completer& completer_;
    HostMemory& memory_;
    PacketWriter& packets_;
    uint16_t ud_mtu_ = 0;      /* the largest IB MTU within the PF's MTU: a datagram's payload at most */
};

} // namespace cna::fw::roce
