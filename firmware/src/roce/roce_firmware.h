/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' RoCE for one function, a PF or a VF: three engines, the requester (SQ WQEs out
 * as packets, retransmission, retirement on ACKs and responses), the
 * responder (requests in, their checks, placement, ACKs, NAKs, READ
 * responses, atomics) and the completer (CQEs, CNQs, events, flushes),
 * composed here. The storm holds the objects the RDMA ramrods create (the
 * engines' shared Context) and runs the ramrods, hands each packet
 * received to the responder or the requester by its opcode, and drives
 * the engines in the engine's pass over the QPs.
 *
 * Threads: ramrods run on engine thread 0 while the function's engine
 * thread is between two passes; poll() and receive() run on that thread.
 * Frames go out through poll() only: what receive() owes the wire (ACKs,
 * responses) is queued on the QP and sent by the next poll(), so a frame
 * never causes a transmission from inside the wire's delivery.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "base/published_list.h"
#include "hsi_rdma.h"
#include "hsi_spq.h"
#include "frame/frame_burst.h"
#include "roce/completer.h"
#include "roce/context.h"
#include "roce/host_memory.h"
#include "roce/neighbour.h"
#include "roce/packet_writer.h"
#include "roce/requester.h"
#include "roce/responder.h"
#include "slowpath/resources.h"
#include "slowpath/slowpath_queue.h"

namespace cna::fw {
class FunctionHw;
}

namespace cna::fw::roce {

class RoceFirmware;
/* The RoCE firmware of a port's functions, or of those a dataplane serves. */
class RoceList : public PublishedList<RoceFirmware, MAX_FUNCTIONS> {};

/* Where the function's connection contexts are (its ILT): the QP contexts go there. */
struct Ilt {
    uint64_t base = 0;
    uint32_t cids = 0;
};

class RoceFirmware {
public:
    /* stats: the function's counters (a PF's in storm RAM, a VF's in its
     * GTT page); grant: the objects it may create. */
    /* Which MACs FUNC_INIT may name: a VF's, those its PF gave it. */
    using MacPolicy = std::function<bool(const uint8_t* mac)>;

    RoceFirmware(FunctionHw& hw, const Grant& grant, hsi::rdma::RoceStats& stats, MacPolicy may_use_mac = {})
        : ctx_(hw, stats), grant_(grant), may_use_mac_(std::move(may_use_mac)), memory_(ctx_), packets_(stats),
          completer_(ctx_), requester_(ctx_, completer_, memory_, packets_),
          responder_(ctx_, completer_, memory_, packets_)
    {
    }

    bool active() const { return active_; }
    const std::array<uint8_t, 6>& mac() const { return mac_; }
    uint32_t port() const;

    /* Slowpath: a ramrod of ProtocolId::roce; data is its completion data. */
    hsi::FwReturn ramrod(uint8_t cmd, uint64_t data_ptr, const Ilt& ilt, uint64_t& data);
    /* Function reset: every object forgotten. */
    void reset();

    /* Engine: sends what is due (new WQEs, retransmissions, ACKs, READ
     * responses) into `out`, whose frames stay valid until the next poll.
     * now_ns: the engine's monotonic clock. True if anything was done. */
    bool poll(uint64_t now_ns, FrameBurst& out);
    /* Engine thread, each pass: the port's link. Coming up, the PF's
     * addresses are announced again, as a host does on carrier: those
     * announced while it was down never left. */
    void track_link(bool up)
    {
        if (up && !link_up_)
            neighbours_.announce();
        link_up_ = up;
    }
    /* Engine: a RoCEv2 frame to the PF's MAC. */
    void receive(const WireFrame& frame, uint64_t now_ns);
    /* Engine: an ARP or ICMPv6 frame of the port (it goes to L2 too). */
    void neighbour_frame(const WireFrame& frame);

    /* Asynchronous events for the EQ: raised on the function's engine
     * thread, taken by the slowpath (the pass locks order the two). */
    bool events_pending() const { return completer_.events_pending(); }
    /* Slowpath: the events onto the function's EQ while it takes them;
     * the rest wait for the next slowpath pass. */
    void post_events(SlowpathQueue& spq);

    const Qp* qp(uint32_t id) const { return id < ctx_.qps.size() && ctx_.qps[id].exists ? &ctx_.qps[id] : nullptr; }

private:
    /* The engine's pass over one QP. */
    bool poll_qp(Qp& qp, uint64_t now_ns, FrameBurst& out);
    /* Whether a frame to a connection comes from the peer it is connected to. */
    static bool from_peer(const Qp& qp, const WireFrame& frame);

    /* ramrods.cpp */
    template <typename Data> hsi::FwReturn run(uint64_t data_ptr, hsi::FwReturn (RoceFirmware::*handler)(const Data&));
    hsi::FwReturn func_init(const hsi::rdma::FuncInitRamrodData& d);
    hsi::FwReturn check_func_init(const hsi::rdma::FuncInitRamrodData& d);
    hsi::FwReturn func_close(const hsi::rdma::FuncCloseRamrodData& d);
    hsi::FwReturn create_cq(const hsi::rdma::CreateCqRamrodData& d);
    hsi::FwReturn resize_cq(const hsi::rdma::ResizeCqRamrodData& d);
    hsi::FwReturn destroy_cq(const hsi::rdma::DestroyCqRamrodData& d);
    hsi::FwReturn create_qp(const hsi::rdma::CreateQpRamrodData& d);
    hsi::FwReturn check_create_qp(const hsi::rdma::CreateQpRamrodData& d);
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

    Context ctx_;
    const Grant grant_;
    const MacPolicy may_use_mac_; /* empty: any unicast MAC */
    Ilt ilt_;                  /* as the ramrod being executed found it */
    uint64_t completion_data_ = 0;
    bool active_ = false;
    bool link_up_ = false;
    std::array<uint8_t, 6> mac_{};
    uint16_t max_mtu_ = 0;
    uint32_t num_qps_ = 0;
    uint64_t tid_context_base_ = 0;
    std::vector<uint16_t> live_qps_;  /* ids of the QPs that exist, for the engine's pass */
    static constexpr uint32_t NO_GSI_QP = UINT32_MAX;
    uint32_t gsi_qp_ = NO_GSI_QP;      /* the id of the QP GSI_QPN names */
    uint32_t poll_start_ = 0;          /* where the next pass starts in live_qps_: fairness */
    Neighbours neighbours_;

    HostMemory memory_;
    PacketWriter packets_;
    Completer completer_;
    Requester requester_;
    Responder responder_;
};

} // namespace cna::fw::roce
