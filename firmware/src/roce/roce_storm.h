/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' RoCE for one PF: the RDMA ramrods, the requester (SQ WQEs
 * out as packets, retransmission, completions on ACKs and responses), the
 * responder (requests in, placement, ACKs, NAKs, READ responses,
 * atomics), unreliable datagrams both ways, and the CQs and CNQs they
 * complete on.
 *
 * Threads: ramrods run on engine thread 0 while the PF's engine thread is
 * between two passes; poll() and receive() run on the PF's engine thread.
 * Frames go out through poll() only: what receive() owes the wire (ACKs,
 * responses) is queued on the QP and sent by the next poll(), so a frame
 * never causes a transmission from inside the wire's delivery.
 */
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "hsi_rdma.h"
#include "hsi_spq.h"
#include "frame/frame_burst.h"
#include "roce/mr_table.h"
#include "roce/neighbour.h"
#include "roce/objects.h"
#include "roce/transport.h"
#include "slowpath/resources.h"
#include "base/bytes.h"

namespace cna::fw {
class Dma;
class FunctionHw;
}

namespace cna::fw::roce {

/* Where the PF's connection contexts are (its ILT): the QP contexts go there. */
struct Ilt {
    uint64_t base = 0;
    uint32_t cids = 0;
};

/* Where a UD receive came from, for its CQE. */
struct Datagram {
    uint32_t src_qp = 0;
    uint8_t sl = 0;     /* hsi::rdma::cqe_sl */
};

class RoceStorm {
public:
    /* stats: the PF's counters in storm RAM. */
    RoceStorm(FunctionHw& hw, const Grant& grant, hsi::rdma::RoceStats& stats) : hw_(hw), grant_(grant), stats_(stats)
    {
    }

    bool active() const { return active_; }
    const std::array<uint8_t, 6>& mac() const { return mac_; }

    /* Slowpath: a ramrod of ProtocolId::roce; data is its completion data. */
    hsi::FwReturn ramrod(uint8_t cmd, uint64_t data_ptr, const Ilt& ilt, uint64_t& data);
    /* Function reset: every object forgotten. */
    void reset();

    /* Engine: sends what is due (new WQEs, retransmissions, ACKs, READ
     * responses) into `out`, whose frames stay valid until the next poll.
     * now_ns: the engine's monotonic clock. True if anything was done. */
    bool poll(uint64_t now_ns, FrameBurst& out);
    /* Engine: a RoCEv2 frame to the PF's MAC. */
    void receive(const WireFrame& frame, uint64_t now_ns);
    /* Engine: an ARP or ICMPv6 frame of the port (it goes to L2 too). */
    void neighbour_frame(const WireFrame& frame);

    /* Asynchronous events for the EQ: raised on the PF's engine thread,
     * taken by the slowpath (the pass locks order the two). */
    bool events_pending() const { return events_pending_.load(std::memory_order_acquire) != 0; }
    /* post(event, data) puts one on the EQ, false when it cannot: the rest
     * wait for the next slowpath pass. */
    template <typename Post> void take_events(Post&& post)
    {
        uint32_t done = 0;
        while (done < event_count_ && post(events_[done].event, events_[done].data))
            done++;
        std::copy(events_.begin() + done, events_.begin() + event_count_, events_.begin());
        event_count_ -= done;
        events_pending_.store(event_count_ != 0 ? 1 : 0, std::memory_order_release);
    }

    const Qp* qp(uint32_t id) const { return id < qps_.size() && qps_[id].exists ? &qps_[id] : nullptr; }

private:
    /* ramrods.cpp */
    template <typename Data> hsi::FwReturn run(uint64_t data_ptr, hsi::FwReturn (RoceStorm::*handler)(const Data&));
    hsi::FwReturn func_init(const hsi::rdma::FuncInitRamrodData& d);
    hsi::FwReturn func_close(const hsi::rdma::FuncCloseRamrodData& d);
    hsi::FwReturn create_cq(const hsi::rdma::CreateCqRamrodData& d);
    hsi::FwReturn resize_cq(const hsi::rdma::ResizeCqRamrodData& d);
    hsi::FwReturn destroy_cq(const hsi::rdma::DestroyCqRamrodData& d);
    hsi::FwReturn create_qp(const hsi::rdma::CreateQpRamrodData& d);
    hsi::FwReturn modify_qp(const hsi::rdma::ModifyQpRamrodData& d);
    hsi::FwReturn query_qp(const hsi::rdma::QueryQpRamrodData& d);
    hsi::FwReturn destroy_qp(const hsi::rdma::DestroyQpRamrodData& d);
    hsi::FwReturn register_tid(const hsi::rdma::RegisterTidRamrodData& d);
    hsi::FwReturn deregister_tid(const hsi::rdma::DeregisterTidRamrodData& d);
    hsi::FwReturn create_srq(const hsi::rdma::CreateSrqRamrodData& d);
    hsi::FwReturn modify_srq(const hsi::rdma::ModifySrqRamrodData& d);
    hsi::FwReturn destroy_srq(const hsi::rdma::DestroySrqRamrodData& d);
    hsi::FwReturn set_addresses(const hsi::rdma::SetAddressesRamrodData& d);
    hsi::FwReturn resolve_neighbour(const hsi::rdma::ResolveNeighbourRamrodData& d);
    hsi::FwReturn check_modify(const Qp& qp, const hsi::rdma::ModifyQpRamrodData& d) const;
    void enter_state(Qp& qp, hsi::rdma::QpState state);
    bool write_contexts(const Qp& qp);
    bool write_tid_context(uint32_t tid);

    /* completions.cpp */
    /* Writes a CQE (phase last) and notifies an armed CQ; false when the CQ
     * is full (cq_error raised, the CQ takes no more). */
    bool complete(uint16_t cq_id, hsi::rdma::RdmaCqe& cqe);
    void notify(Cq& cq);
    /* The QP to ERR (the caller completed the WQE that failed, if any);
     * flush() then completes every WQE it still holds. */
    void fail_qp(Qp& qp, hsi::rdma::RdmaError why, std::optional<hsi::rdma::RdmaEvent> event);
    /* In ERR: completes whatever the driver posted, and posts, with
     * work_request_flushed. */
    bool flush(Qp& qp);
    /* WQEs [cons, end) of the SQ or the RQ completed as flushed; cons
     * moves to end unless a CQE could not be written. */
    bool flush_ring(Qp& qp, bool requester, uint32_t& cons, uint32_t end);
    void raise(hsi::rdma::RdmaEvent event, uint64_t data);
    uint32_t sq_prod(const Qp& qp) const;
    uint32_t rq_prod(const Qp& qp) const;
    uint32_t srq_prod(const Srq& srq) const;

    /* requester.cpp */
    bool poll_requester(Qp& qp, uint64_t now_ns, FrameBurst& out);
    /* Starts WQE sq_next: validates it and assigns its PSNs. */
    bool start_wqe(Qp& qp, const hsi::rdma::SqWqe& wqe);
    bool send_packet(Qp& qp, const hsi::rdma::SqWqe& wqe, FrameBurst& out);
    void go_back(Qp& qp, uint32_t psn);
    void on_ack(Qp& qp, const Bth& bth, uint64_t now_ns);
    /* Every WQE whose PSNs all come before `psn` retires (READs and atomics
     * wait for their responses). */
    void retire_acked(Qp& qp, uint32_t psn, uint64_t now_ns);
    void retire(Qp& qp, hsi::rdma::CqeStatus status, hsi::rdma::RdmaError why);
    /* WQE `index` failed: the ones before it are flushed (completions keep
     * SQ order), it completes with the status the error calls for, and the
     * QP goes to ERR. */
    void fail_wqe(Qp& qp, uint32_t index, hsi::rdma::RdmaError why);
    void on_read_response(Qp& qp, const Bth& bth, const uint8_t* payload, uint32_t len, uint64_t now_ns);
    void on_atomic_ack(Qp& qp, const Bth& bth, const uint8_t* payload, uint64_t now_ns);
    void on_nak(Qp& qp, const Bth& bth, uint8_t syndrome, uint64_t now_ns);
    void arm_ack_timer(Qp& qp, uint64_t now_ns);
    bool read_wqe(const Qp& qp, uint32_t index, hsi::rdma::SqWqe& wqe, hsi::rdma::Sge* sges);

    /* datagrams.cpp */
    /* A UD QP's pass: in RTS each SQ WQE one packet to its own address,
     * completed once sent; a WQE that cannot be sent completes in error
     * and the QP goes to SQE, where the SQ flushes and receiving goes on. */
    bool poll_datagrams(Qp& qp, FrameBurst& out);
    void send_datagram(Qp& qp, FrameBurst& out);
    void fail_datagram(Qp& qp, hsi::rdma::RdmaError why);
    /* A datagram to a UD QP: its Q_Key checked, then its GRH and payload
     * placed into the next receive. */
    void on_datagram(Qp& qp, const WireFrame& frame, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload,
                     uint32_t len);

    /* responder.cpp */
    void on_request(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len);
    void on_duplicate(Qp& qp, const Bth& bth, const uint8_t* hdrs);
    bool take_receive(Qp& qp);
    bool poll_responder(Qp& qp, FrameBurst& out);
    Response* owe(Qp& qp);
    void owe_ack(Qp& qp, uint8_t syndrome, uint32_t psn);
    void owe_read(Qp& qp, uint32_t psn, const Reth& reth);
    /* Drops the responses owed whose last PSN is at or after `psn`. */
    void forget_responses_from(Qp& qp, uint32_t psn);
    void make_room_for_read(Qp& qp);
    void owe_atomic(Qp& qp, uint32_t psn, uint64_t original);
    /* A NAK for the expected PSN, and the QP to ERR. */
    void responder_error(Qp& qp, NakCode code, hsi::rdma::RdmaError why, std::optional<hsi::rdma::RdmaEvent> event);
    void complete_receive(Qp& qp, hsi::rdma::CqeOpcode opcode, uint32_t byte_len, const Bth& bth, const uint8_t* imm,
                          hsi::rdma::RdmaError why, Datagram from = {});
    /* READ and atomic responses queued, not all sent. */
    uint32_t reads_owed(const Qp& qp) const;

    /* Memory: SGE lists and MR ranges through the IOMMU. The bytes
     * [offset, offset + len) of the message an SGE list describes. */
    template <bool TO_HOST>
    bool copy_sges(uint16_t pd, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* buf,
                   uint32_t len, hsi::rdma::RdmaError& why);
    bool copy_from_sges(const Qp& qp, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* dst,
                        uint32_t len, hsi::rdma::RdmaError& why);
    bool copy_to_sges(const Qp& qp, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, const uint8_t* src,
                      uint32_t len, hsi::rdma::RdmaError& why);
    /* [addr, addr + len) of a region check() accepted, to (or from) buf. */
    bool copy_mr(const MemoryRegion& mr, uint64_t addr, uint8_t* buf, uint32_t len, bool to_host);
    void on_response(Qp& qp, const Bth& bth, const uint8_t* hdrs, const uint8_t* payload, uint32_t len,
                     uint64_t now_ns);

    /* Frames. */
    uint8_t* frame_buffer(FrameBurst& out);
    /* Headers for a packet along `path` of `payload` bytes (plus pad and
     * ICRC) after `ext` bytes of extended headers; returns where the BTH
     * goes. */
    uint8_t* begin_packet(const hsi::rdma::RocePath& path, FrameBurst& out, const Bth& bth, uint32_t ext,
                          uint32_t payload);
    void end_packet(FrameBurst& out);

    FunctionHw& hw_;
    const Grant grant_;
    Ilt ilt_;                  /* as the ramrod being executed found it */
    uint64_t completion_data_ = 0;
    bool active_ = false;
    std::array<uint8_t, 6> mac_{};
    uint16_t max_mtu_ = 0;
    uint16_t ud_mtu_ = 0;      /* the largest IB MTU within max_mtu_: a datagram's payload at most */
    uint32_t num_qps_ = 0;
    uint64_t tid_context_base_ = 0;
    std::array<Cnq, hsi::rdma::MAX_CNQS> cnqs_{};
    std::vector<Cq> cqs_;
    std::vector<Srq> srqs_;
    std::vector<Qp> qps_;
    std::vector<uint16_t> live_qps_;  /* ids of the QPs that exist, for the engine's pass */
    uint32_t poll_start_ = 0;          /* where the next pass starts in live_qps_: fairness */
    MrTable mrs_;
    Neighbours neighbours_;
    hsi::rdma::RoceStats& stats_;

    struct Event {
        hsi::rdma::RdmaEvent event;
        uint64_t data;   /* the object's id, or a neighbour_event() */
    };
    static constexpr uint32_t MAX_EVENTS = 64;
    std::array<Event, MAX_EVENTS> events_{};
    uint32_t event_count_ = 0;
    std::atomic<uint32_t> events_pending_{0};

    /* Transmit buffers: one per frame of a burst. */
    static constexpr uint32_t FRAME_BUFFER = 4096 + 128;
    std::vector<uint8_t> tx_buffers_ = std::vector<uint8_t>(FrameBurst::MAX * FRAME_BUFFER);
    FrameLayout building_;     /* the frame begin_packet() laid out */
};

} // namespace cna::fw::roce
