/* SPDX-License-Identifier: BSD-3-Clause
 * One RDMA device's end of connection management: its GSI QP (QP1, made
 * through the verbs provider as the driver QP type), the MADs it sends to
 * and receives from other ports' QP1, and the CM state machine they feed.
 * The device's completion channel is what the CM thread waits on.
 *
 * Not thread-safe: the service's lock is held around every call.
 */
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "cm_manager.h"

namespace cna::rdmacm {

using cm::Gid;

class CmDevice final : public cm::MadSender {
public:
    /* Opens the GSI QP of `verbs`'s port 1; nullptr (errno set) if the
     * device has none to give, with why on stderr. */
    static std::unique_ptr<CmDevice> open(ibv_context* verbs, cm::Config config);
    ~CmDevice() override;

    ibv_context* verbs() const { return verbs_; }
    cm::Manager& cm() { return *cm_; }
    uint64_t guid() const { return guid_; }
    uint16_t mtu() const { return active_mtu_; }
    int completion_fd() const { return channel_->fd; }

    /* The port's GIDs as they are now (its addresses come and go). */
    std::vector<Gid> gids() const;
    std::optional<int> gid_index(const Gid& gid) const;

    /* The address handle to `peer` from local GID `sgid_index`, made on
     * first use (it resolves the peer's MAC): what MADs and, copied, QPs
     * use to reach it. Fails with errno. */
    int learn_route(const Gid& peer, int sgid_index, uint8_t traffic_class);
    std::optional<ibv_ah_attr> route_to(const Gid& peer) const;

    /* MadSender: to the peer's QP1 through its route (learnt from what it
     * sent us, or from learn_route). */
    void send(const Gid& to, const cm::Mad& mad) override;

    /* Takes a completion event: the receive CQ's hands every MAD received
     * to the CM and re-arms (the caller then runs the CM's events); the
     * send CQ's sends the MADs waiting for a slot. */
    void on_completion_event(uint64_t now);

private:
    CmDevice() = default;
    bool set_up(ibv_context* verbs, cm::Config config);
    bool post_receive(unsigned slot);
    /* The address handle to `peer` made (its MAC resolved), replacing the
     * one it had; the old one kept if that fails. */
    int make_route(const Gid& peer, int sgid_index, uint8_t traffic_class);
    void take(const ibv_wc& wc, uint64_t now);
    /* The send slots whose MADs went: send()'s, on a CQ of their own, so
     * that making room never hands the CM a MAD while it sends one. */
    void reap_sends();
    /* The MADs waiting, in order, into the slots free; the send CQ armed
     * while some still wait. */
    void send_waiting();
    void post_send(const Gid& to, const cm::Mad& mad);

    /* As deep as Linux's MAD layer's receive queue: a peer's burst of
     * MADs lands while the CM thread waits for the CPU. */
    static constexpr unsigned RECEIVES = 512;
    static constexpr unsigned SENDS = 64;
    /* What may wait for a send slot: a thousand connections' MADs. */
    static constexpr std::size_t MAX_WAITING = 4096;
    static constexpr unsigned GRH_SIZE = 40;
    /* What the QP's MR covers. */
    struct Buffers {
        std::array<std::array<uint8_t, GRH_SIZE + cm::MAD_SIZE>, RECEIVES> receives;
        std::array<cm::Mad, SENDS> sends;
    };

    ibv_context* verbs_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_comp_channel* channel_ = nullptr;
    ibv_cq* recv_cq_ = nullptr; /* its events: the channel's */
    ibv_cq* send_cq_ = nullptr;
    ibv_qp* qp_ = nullptr;
    ibv_mr* mr_ = nullptr;
    std::unique_ptr<Buffers> buffers_;
    std::vector<unsigned> free_sends_;
    std::deque<std::pair<Gid, cm::Mad>> waiting_;
    uint64_t guid_ = 0;
    uint16_t active_mtu_ = 0;
    struct Route {
        ibv_ah* ah;
        ibv_ah_attr attr;
    };
    std::map<Gid, Route> routes_;
    std::unique_ptr<cm::Manager> cm_;
};

} // namespace cna::rdmacm
