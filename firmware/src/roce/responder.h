/* SPDX-License-Identifier: BSD-3-Clause
 * The responder: each request packet of a reliable connection taken
 * through the transport's steps in order (its PSN, its opcode against the
 * message in progress, the R_Key, VA, length and access it asks for, the
 * receive it needs), then executed (placed into a receive buffer or a
 * memory region, a READ accepted, an atomic done) and acknowledged. What
 * the requester is owed (ACKs, coalesced; NAKs; READ responses; atomic
 * ACKs) goes out in order by the next poll, but for an ACK of WRITEs
 * while more keep coming: held back one poll at a time, up to ACK_HOLD
 * requests, so that a requester posting one WRITE per pass gets one ACK
 * for many (the transport lets an ACK cover every PSN before it). A poll
 * that finds no new request sends it, and an ACK covering a request the
 * host saw complete (a SEND's or an immediate's receive) is never held:
 * the host may act on that completion at once (exit, destroy the QP), and
 * the requester must not wait for its ACK meanwhile. A duplicate is
 * acknowledged again, a duplicate READ answered again, a duplicate atomic
 * answered from the replay cache without executing it twice.
 *
 * Datagrams to a UD QP: the Q_Key checked, then placed with their GRH
 * into the QP's next receive. Nothing is acknowledged: a datagram no
 * receive waits for is dropped and counted, as the transport allows
 * (IBA 9.7.2).
 *
 * Its state is the QPs' (Qp::resp).
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

/* Where a UD receive came from, for its CQE. */
struct Datagram {
    uint32_t src_qp = 0;
    uint8_t sl = 0;     /* hsi::rdma::cqe_sl */
};

class Responder {
public:
    Responder(Context& ctx, Completer& completer, HostMemory& memory, PacketWriter& packets)
        : ctx_(ctx), completer_(completer), memory_(memory), packets_(packets)
    {
    }

    /* A request packet to a reliable QP: hdrs, its extended headers. */
    void on_request(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len);
    /* A datagram to a UD QP. */
    void on_datagram(Qp& qp, const WireFrame& frame, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload,
                     uint32_t len);
    /* Sends what the QP owes, in order, while the burst has room. */
    bool poll(Qp& qp, FrameBurst& out);
    /* The most new requests an ACK is held back for. */
    static constexpr uint32_t ACK_HOLD = 16;

private:
    /* What a step makes of a request: on to the next step, or what the
     * requester gets instead. */
    enum class Verdict : uint8_t {
        next,              /* passed: the next step takes it */
        done,              /* executed and acknowledged */
        duplicate,         /* an earlier PSN: answered again, not executed again */
        out_of_sequence,   /* a PSN past the expected one: a sequence NAK, once */
        invalid_request,   /* NAK invalid request, the QP to ERR */
        access_error,      /* NAK remote access error, the QP to ERR */
        no_receive,        /* no receive posted for it: an RNR NAK, the requester retries */
        placement_failed,  /* a SEND its receive could not take: completed in error, NAK, the QP to ERR */
    };
    /* A request on its way through the steps, and what they found. */
    struct Request {
        const Bth& bth;
        uint16_t flags;            /* opcode_flags() */
        const uint8_t* hdrs;
        const uint8_t* payload;
        uint32_t len;
        const uint8_t* imm;        /* its immediate data, if it carries one */
        Reth reth{};               /* READ, and the first packet of a WRITE */
        AtomicEth atomic{};
        const MemoryRegion* mr = nullptr;  /* atomic: the region its R_Key names */
        uint64_t original = 0;     /* atomic: the value before it */
        hsi::rdma::RdmaError why = hsi::rdma::RdmaError::none; /* placement_failed: what refused it */
    };
    using Step = Verdict (Responder::*)(Qp& qp, Request& req);

    /* The steps, in their order. */
    Verdict check_psn(Qp& qp, Request& req);
    Verdict check_opcode(Qp& qp, Request& req);
    Verdict check_rkey(Qp& qp, Request& req);
    Verdict check_length(Qp& qp, Request& req);
    Verdict check_resources(Qp& qp, Request& req);
    Verdict execute(Qp& qp, Request& req);
    Verdict acknowledge(Qp& qp, Request& req);
    /* What a request a step stopped gets instead. */
    void refuse(Qp& qp, const Request& req, Verdict verdict);

    Verdict execute_send(Qp& qp, Request& req);
    Verdict execute_write(Qp& qp, Request& req);
    Verdict execute_atomic(Qp& qp, Request& req);
    void on_duplicate(Qp& qp, const Request& req);
    /* The QP's next receive WQE (its RQ's or its SRQ's) becomes the one in
     * progress; false when none is posted. */
    bool take_receive(Qp& qp);
    void complete_receive(Qp& qp, hsi::rdma::CqeOpcode opcode, uint32_t byte_len, const Bth& bth, const uint8_t* imm,
                          hsi::rdma::RdmaError why, Datagram from = {});

    /* What is owed. */
    Response* owe(Qp& qp);
    void owe_ack(Qp& qp, uint8_t syndrome, uint32_t psn);
    /* A NAK for the expected PSN. */
    void owe_nak(Qp& qp, NakCode code);
    void owe_read(Qp& qp, uint32_t psn, const Reth& reth);
    void owe_atomic(Qp& qp, uint32_t psn, uint64_t original);
    /* Drops the responses owed whose last PSN is at or after `psn`. */
    void forget_responses_from(Qp& qp, uint32_t psn);
    void make_room_for_read(Qp& qp);
    /* READ and atomic responses queued, not all sent. */
    uint32_t reads_owed(const Qp& qp) const;
    /* A NAK for the expected PSN, and the QP to ERR. */
    void responder_error(Qp& qp, NakCode code, hsi::rdma::RdmaError why, std::optional<hsi::rdma::RdmaEvent> event);
    void send_ack(Qp& qp, const Response& resp, Bth bth, FrameBurst& out);
    /* The next packet of a READ's responses; false when its region went
     * away (or faulted) under it. */
    bool send_read_response(Qp& qp, Response& resp, Bth bth, FrameBurst& out);

    Context& ctx_;
    Completer& completer_;
    HostMemory& memory_;
    PacketWriter& packets_;
};

} // namespace cna::fw::roce
