/* SPDX-License-Identifier: BSD-3-Clause
 * The InfiniBand CM's state machine (IBTA Vol 1, 12.9) for one port: the
 * connections this side makes and takes, the MADs they exchange on QP1,
 * their timers and retries, and the events its consumer (the RDMA CM
 * library) acts on.
 *
 * It does no I/O and reads no clock. MADs go out through a MadSender; what
 * arrives is handed to receive(); time is what the caller says it is, and
 * next_deadline() says when it must next call expire(). Events queue until
 * the consumer takes them with next_event(), so a consumer may call back
 * into the manager while it handles one.
 *
 * A connection is named by its local comm ID for its whole life, which
 * ends when the consumer destroys it and its timewait, if any, is over.
 */
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <unordered_map>

#include "cm_mad.h"

namespace cna::cm {

/* Where MADs go: QP1 at the port with this GID. */
class MadSender {
public:
    virtual ~MadSender() = default;
    virtual void send(const Gid& to, const Mad& mad) = 0;
};

struct Config {
    uint64_t ca_guid = 0;
    /* The first local comm ID (the rest follow it): random in a process,
     * so that a peer does not mistake a new connection for a stale one. */
    uint32_t first_comm_id = 1;
    /* How long this side takes to answer (4.096 us << t), sent in REQs. */
    uint8_t response_timeout = 20;
    /* How long a MAD may take across the fabric (4.096 us << t): every
     * wait for an answer adds twice this. */
    uint8_t packet_lifetime = 16;
    /* Sends of a REQ, REP, DREQ or SIDR REQ after its first. */
    uint8_t max_retries = 15;
    /* What an MRA asks the peer to wait for this side (4.096 us << t). */
    uint8_t mra_service_timeout = 24;
};

enum class State : uint8_t {
    idle,
    req_sent,
    mra_req_received, /* REQ sent, the peer asked for time */
    req_received,
    mra_req_sent,     /* REQ received, this side asked for time */
    rep_sent,
    mra_rep_received, /* REP sent, the peer asked for time */
    rep_received,     /* the consumer readies its QP, then sends the RTU */
    established,
    dreq_sent,
    dreq_received,
    timewait,
    sidr_req_sent,
    sidr_req_received,
};

enum class EventType : uint8_t {
    req_received,      /* mad: the REQ; listener: whose service */
    rep_received,      /* mad: the REP; answer with send_rtu or reject */
    established,       /* the RTU (mad), or the QP's first packet (no mad) */
    rejected,          /* mad: the REJ */
    unreachable,       /* a REQ or REP went unanswered through every retry */
    mra_received,      /* mad: the MRA; the wait was lengthened */
    dreq_received,     /* mad: the DREQ; answer with send_drep */
    disconnected,      /* the DREP (mad), or the DREQ went unanswered */
    timewait_exit,     /* its QP may be reused */
    sidr_req_received, /* mad: the SIDR REQ; answer with sidr_reply */
    sidr_rep_received, /* mad: the SIDR REP */
};

struct Event {
    EventType type;
    uint32_t id;             /* the connection, or the SIDR request */
    uint32_t listener = 0;   /* req_received, sidr_req_received */
    Gid peer{};
    std::optional<Mad> mad;  /* the MAD that made it, if any */
};

/* What this side offers in a REQ. */
struct ConnectParams {
    uint64_t service_id = 0;
    Gid local_gid{};
    Gid remote_gid{};
    uint32_t qpn = 0;
    uint32_t starting_psn = 0;
    Transport transport = Transport::rc;
    uint8_t responder_resources = 0;
    uint8_t initiator_depth = 0;
    uint8_t path_mtu = 3; /* 1024 */
    uint8_t retry_count = 7;
    uint8_t rnr_retry_count = 7;
    bool srq = false;
    uint8_t local_ack_timeout = 14;
    uint32_t flow_label = 0;
    uint8_t traffic_class = 0;
    uint8_t hop_limit = 64;
    PrivateData private_data;
};

/* What this side offers in a REP. */
struct AcceptParams {
    uint32_t qpn = 0;
    uint32_t starting_psn = 0;
    uint8_t responder_resources = 0;
    uint8_t initiator_depth = 0;
    uint8_t rnr_retry_count = 7;
    bool srq = false;
    uint8_t target_ack_delay = 0;
    PrivateData private_data;
};

struct SidrRequestParams {
    uint64_t service_id = 0;
    Gid remote_gid{};
    PrivateData private_data;
};

struct SidrReplyParams {
    SidrStatus status = SidrStatus::valid;
    uint32_t qpn = 0;
    uint32_t qkey = 0;
    PrivateData private_data;
};

/* What the manager has counted: MADs that were not for it or not for any
 * connection, by why, and what it sent again. */
struct Counters {
    uint64_t received = 0;
    uint64_t sent = 0;
    uint64_t resent = 0;
    uint64_t not_cm = 0;          /* not a CM MAD (header) */
    uint64_t unknown_attribute = 0;
    uint64_t unmatched = 0;       /* names no connection of this side, or not in a state that takes it */
    uint64_t duplicates = 0;      /* a message this side had (a REQ, REP, DREQ, SIDR REQ again) */
    uint64_t rejected_reqs = 0;   /* REJ sent for a REQ */
};

class Manager {
public:
    Manager(const Config& config, MadSender& sender);

    /* Takes REQs and SIDR REQs for `service_id`, at most `backlog` waiting
     * for an answer at a time (more are rejected: no resources). Returns
     * the listener's ID, 0 if the service is taken. */
    uint32_t listen(uint64_t service_id, unsigned backlog);
    void stop_listening(uint32_t listener);

    /* The calls on a connection return 0, or -EINVAL for an ID that is
     * not a connection's, -EPROTO for one not in the state the call needs. */
    uint32_t connect(const ConnectParams& params, uint64_t now);
    int accept(uint32_t id, const AcceptParams& params, uint64_t now);
    int reject(uint32_t id, RejReason reason, const PrivateData& private_data, uint64_t now);
    int send_mra(uint32_t id, uint64_t now);
    int send_rtu(uint32_t id, const PrivateData& private_data, uint64_t now);
    /* The QP saw its first packet before the RTU came: established. */
    int established(uint32_t id);
    int disconnect(uint32_t id, const PrivateData& private_data, uint64_t now);
    int send_drep(uint32_t id, const PrivateData& private_data, uint64_t now);
    /* The consumer is done with it: what the state needs is sent (a REJ, a
     * DREQ, a DREP) and the connection goes when its timewait ends. */
    void destroy(uint32_t id, uint64_t now);

    uint32_t sidr_request(const SidrRequestParams& params, uint64_t now);
    int sidr_reply(uint32_t id, const SidrReplyParams& params);

    void receive(const Gid& from, std::span<const uint8_t> mad, uint64_t now);
    void expire(uint64_t now);
    std::optional<uint64_t> next_deadline() const;

    std::optional<Event> next_event();

    std::optional<State> state_of(uint32_t id) const;
    std::size_t connections() const { return connections_.size(); }
    const Counters& counters() const { return counters_; }

private:
    struct Connection {
        uint32_t local_id = 0;
        uint32_t remote_id = 0;
        State state = State::idle;
        Gid peer{};
        uint64_t peer_guid = 0;
        uint32_t local_qpn = 0;
        uint32_t remote_qpn = 0;
        uint32_t listener = 0;
        uint64_t service_id = 0; /* a SIDR REQ's, for its REP */
        uint64_t transaction_id = 0;
        /* What a retry sends again, and how long each wait lasts. */
        Mad last_sent{};
        unsigned retries_left = 0;
        uint64_t wait_ns = 0;
        std::optional<uint64_t> deadline;
        /* The peer's answer times, from its REQ (or ours, active). */
        uint8_t peer_response_timeout = 0;
        uint8_t max_retries = 0;
        uint8_t local_ack_timeout = 0;
        bool destroyed = false;
    };

    Connection* find(uint32_t id);
    const Connection* find(uint32_t id) const;
    int find_in(uint32_t id, std::initializer_list<State> states, Connection** c);
    Connection& make_connection(State state, const Gid& peer);
    void release(Connection& c);
    void post(EventType type, const Connection& c, const Mad* mad);

    void send(Connection& c, const Mad& mad, uint64_t now, uint64_t wait_ns, unsigned retries);
    void send_once(const Gid& to, const Mad& mad);
    void rej_for(const Gid& to, uint32_t remote_id, uint32_t local_id, MessageKind about, RejReason reason,
                 uint64_t transaction_id);
    void enter_timewait(Connection& c, uint64_t now);
    uint64_t lifetime_ns() const;

    /* tid: the MAD's transaction ID, which answers to it carry. */
    void on_req(const Gid& from, const Mad& mad, uint64_t tid, uint64_t now);
    void on_duplicate_req(Connection& c, uint64_t now);
    void mra_req(Connection& c, uint64_t now);
    void on_mra(const Mad& mad, uint64_t now);
    void on_rej(const Mad& mad, uint64_t now);
    void on_rep(const Gid& from, const Mad& mad);
    void on_rtu(const Mad& mad);
    void on_dreq(const Gid& from, const Mad& mad, uint64_t tid, uint64_t now);
    void on_drep(const Mad& mad, uint64_t now);
    void on_sidr_req(const Gid& from, const Mad& mad, uint64_t tid);
    void on_sidr_rep(const Mad& mad);
    void on_timeout(Connection& c, uint64_t now);

    Config config_;
    MadSender& sender_;
    uint32_t next_comm_id_;
    uint32_t next_listener_ = 1;
    struct Listener {
        uint64_t service_id;
        unsigned backlog;
    };
    using Listeners = std::map<uint32_t, Listener>;
    Listeners::iterator listener_of(uint64_t service_id);
    bool backlog_full(const Listeners::value_type& listener) const;
    Listeners listeners_;
    std::unordered_map<uint32_t, Connection> connections_;
    std::deque<Event> events_;
    Counters counters_;
};

} // namespace cna::cm
