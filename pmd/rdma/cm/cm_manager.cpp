/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's state machine: what each message does in each state (IBTA Vol 1,
 * 12.9.6-12.9.8 and 12.11 for SIDR), what a timer does when it fires, and
 * what a consumer's call sends.
 */
#include "cm_manager.h"

#include <algorithm>
#include <cerrno>

namespace cna::cm {

namespace {

constexpr uint16_t PERMISSIVE_LID = 0xffff;

constexpr bool waits_for_accept(State s) { return s == State::req_received || s == State::mra_req_sent; }

/* A request (REQ or SIDR REQ) its listener's consumer has not answered. */
constexpr bool waits_for_consumer(State s) { return waits_for_accept(s) || s == State::sidr_req_received; }

/* A connection between its REP and its DREQ, or past it, for the stale
 * check: the QP it uses is taken. */
constexpr bool holds_its_qp(State s)
{
    return s == State::rep_sent || s == State::mra_rep_received || s == State::established ||
           s == State::dreq_sent || s == State::dreq_received;
}

} // namespace

Manager::Manager(const Config& config, MadSender& sender)
    : config_(config), sender_(sender), next_comm_id_(config.first_comm_id)
{
    config_.max_retries = std::min<uint8_t>(config_.max_retries, 15);
    config_.response_timeout = std::min<uint8_t>(config_.response_timeout, 31);
}

uint32_t Manager::listen(uint64_t service_id, unsigned backlog)
{
    if (listener_of(service_id) != listeners_.end())
        return 0;
    const uint32_t id = next_listener_++;
    listeners_.emplace(id, Listener{service_id, std::max(backlog, 1u)});
    return id;
}

void Manager::stop_listening(uint32_t listener) { listeners_.erase(listener); }

Manager::Listeners::iterator Manager::listener_of(uint64_t service_id)
{
    return std::find_if(listeners_.begin(), listeners_.end(),
                        [&](const auto& l) { return l.second.service_id == service_id; });
}

/* Whether the listener has as many requests waiting for its consumer as
 * its backlog allows. */
bool Manager::backlog_full(const Listeners::value_type& listener) const
{
    const auto waiting = std::count_if(connections_.begin(), connections_.end(), [&](const auto& e) {
        return e.second.listener == listener.first && waits_for_consumer(e.second.state);
    });
    return static_cast<unsigned>(waiting) >= listener.second.backlog;
}

/* The connection a consumer's call names, if it is in one of the states
 * the call may be made in: 0, or -EINVAL (no such connection) or -EPROTO
 * (not now). */
int Manager::find_in(uint32_t id, std::initializer_list<State> states, Connection** c)
{
    *c = find(id);
    if (*c == nullptr)
        return -EINVAL;
    return std::find(states.begin(), states.end(), (*c)->state) != states.end() ? 0 : -EPROTO;
}

Manager::Connection* Manager::find(uint32_t id)
{
    auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : &it->second;
}

const Manager::Connection* Manager::find(uint32_t id) const
{
    auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : &it->second;
}

std::optional<State> Manager::state_of(uint32_t id) const
{
    const Connection* c = find(id);
    return c == nullptr ? std::nullopt : std::optional(c->state);
}

/* Comm IDs skip 0 (a REJ's "not known yet") and any still in use. */
Manager::Connection& Manager::make_connection(State state, const Gid& peer)
{
    uint32_t id;
    do
        id = next_comm_id_++;
    while (id == 0 || connections_.contains(id));
    Connection& c = connections_[id];
    c.local_id = id;
    c.state = state;
    c.peer = peer;
    c.transaction_id = uint64_t{id} << 32;
    c.max_retries = config_.max_retries;
    c.peer_response_timeout = config_.response_timeout;
    return c;
}

/* Idle and given up by its consumer: gone. Otherwise it waits for one. */
void Manager::release(Connection& c)
{
    c.state = State::idle;
    c.deadline.reset();
    if (c.destroyed)
        connections_.erase(c.local_id);
}

void Manager::post(EventType type, const Connection& c, const Mad* mad)
{
    if (c.destroyed)
        return;
    Event e{type, c.local_id, c.listener, c.peer, std::nullopt};
    if (mad != nullptr)
        e.mad = *mad;
    events_.push_back(e);
}

std::optional<Event> Manager::next_event()
{
    if (events_.empty())
        return std::nullopt;
    Event e = events_.front();
    events_.pop_front();
    return e;
}

uint64_t Manager::lifetime_ns() const { return 2 * iba_time_ns(config_.packet_lifetime); }

void Manager::send_once(const Gid& to, const Mad& mad)
{
    sender_.send(to, mad);
    counters_.sent++;
}

/* Sends `mad` for `c` and, when an answer is due, waits `wait_ns` for it
 * `retries` more times before giving up (on_timeout). */
void Manager::send(Connection& c, const Mad& mad, uint64_t now, uint64_t wait_ns, unsigned retries)
{
    c.last_sent = mad;
    c.wait_ns = wait_ns;
    c.retries_left = retries;
    c.deadline = wait_ns == 0 ? std::nullopt : std::optional(now + wait_ns);
    send_once(c.peer, mad);
}

void Manager::rej_for(const Gid& to, uint32_t remote_id, uint32_t local_id, MessageKind about, RejReason reason,
                      uint64_t transaction_id)
{
    Rej rej;
    rej.local_comm_id = local_id;
    rej.remote_comm_id = remote_id;
    rej.message = about;
    rej.reason = reason;
    if (reason == RejReason::timeout) { /* its ARI: the CA that gave up */
        for (unsigned i = 0; i < 8; i++)
            rej.additional_info.push_back(static_cast<uint8_t>(config_.ca_guid >> (56 - 8 * i)));
    }
    send_once(to, format(rej, transaction_id));
}

void Manager::enter_timewait(Connection& c, uint64_t now)
{
    c.state = State::timewait;
    c.deadline = now + lifetime_ns() + iba_time_ns(c.local_ack_timeout);
}

uint32_t Manager::connect(const ConnectParams& p, uint64_t now)
{
    Connection& c = make_connection(State::req_sent, p.remote_gid);
    c.local_qpn = p.qpn;
    c.local_ack_timeout = p.local_ack_timeout;
    Req req;
    req.local_comm_id = c.local_id;
    req.service_id = p.service_id;
    req.local_ca_guid = config_.ca_guid;
    req.local_qpn = p.qpn;
    req.responder_resources = p.responder_resources;
    req.initiator_depth = p.initiator_depth;
    req.remote_cm_response_timeout = config_.response_timeout;
    req.transport = p.transport;
    req.starting_psn = p.starting_psn;
    req.local_cm_response_timeout = config_.response_timeout;
    req.retry_count = p.retry_count;
    req.path_mtu = p.path_mtu;
    req.rnr_retry_count = p.rnr_retry_count;
    req.max_cm_retries = config_.max_retries;
    req.srq = p.srq;
    /* RoCE has no LIDs: the permissive LID, as Linux sends beyond a hop. */
    req.primary.local_lid = req.primary.remote_lid = PERMISSIVE_LID;
    req.primary.local_gid = p.local_gid;
    req.primary.remote_gid = p.remote_gid;
    req.primary.flow_label = p.flow_label;
    req.primary.traffic_class = p.traffic_class;
    req.primary.hop_limit = p.hop_limit;
    req.primary.local_ack_timeout = p.local_ack_timeout;
    req.private_data = p.private_data;
    send(c, format(req, c.transaction_id), now, iba_time_ns(config_.response_timeout) + lifetime_ns(),
         config_.max_retries);
    return c.local_id;
}

int Manager::accept(uint32_t id, const AcceptParams& p, uint64_t now)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::req_received, State::mra_req_sent}, &c); rc != 0)
        return rc;
    c->local_qpn = p.qpn;
    Rep rep;
    rep.local_comm_id = c->local_id;
    rep.remote_comm_id = c->remote_id;
    rep.local_qpn = p.qpn;
    rep.starting_psn = p.starting_psn;
    rep.responder_resources = p.responder_resources;
    rep.initiator_depth = p.initiator_depth;
    rep.target_ack_delay = p.target_ack_delay;
    rep.rnr_retry_count = p.rnr_retry_count;
    rep.srq = p.srq;
    rep.local_ca_guid = config_.ca_guid;
    rep.private_data = p.private_data;
    c->state = State::rep_sent;
    send(*c, format(rep, c->transaction_id), now, iba_time_ns(c->peer_response_timeout) + lifetime_ns(),
         c->max_retries);
    return 0;
}

int Manager::reject(uint32_t id, RejReason reason, const PrivateData& private_data, uint64_t)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::req_received, State::mra_req_sent, State::rep_received}, &c); rc != 0)
        return rc;
    Rej rej;
    rej.local_comm_id = c->local_id;
    rej.remote_comm_id = c->remote_id;
    rej.message = c->state == State::rep_received ? MessageKind::rep : MessageKind::req;
    rej.reason = reason;
    rej.private_data = private_data;
    send_once(c->peer, format(rej, c->transaction_id));
    release(*c);
    return 0;
}

int Manager::send_mra(uint32_t id, uint64_t now)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::req_received}, &c); rc != 0)
        return rc;
    mra_req(*c, now);
    return 0;
}

void Manager::mra_req(Connection& c, uint64_t now)
{
    Mra mra;
    mra.local_comm_id = c.local_id;
    mra.remote_comm_id = c.remote_id;
    mra.message = MessageKind::req;
    mra.service_timeout = config_.mra_service_timeout;
    c.state = State::mra_req_sent;
    send(c, format(mra, c.transaction_id), now, 0, 0);
}

int Manager::send_rtu(uint32_t id, const PrivateData& private_data, uint64_t now)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::rep_received}, &c); rc != 0)
        return rc;
    c->state = State::established;
    c->transaction_id++;
    send(*c, format(Rtu{c->local_id, c->remote_id, private_data}, c->transaction_id), now, 0, 0);
    return 0;
}

int Manager::established(uint32_t id)
{
    Connection* c = find(id);
    if (c == nullptr)
        return -EINVAL;
    if (c->state == State::rep_sent || c->state == State::mra_rep_received) {
        c->state = State::established;
        c->deadline.reset();
    }
    return c->state == State::established ? 0 : -EPROTO;
}

int Manager::disconnect(uint32_t id, const PrivateData& private_data, uint64_t now)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::established}, &c); rc != 0)
        return rc;
    c->state = State::dreq_sent;
    c->transaction_id++;
    send(*c, format(Dreq{c->local_id, c->remote_id, c->remote_qpn, private_data}, c->transaction_id), now,
         iba_time_ns(c->peer_response_timeout) + lifetime_ns(), c->max_retries);
    return 0;
}

int Manager::send_drep(uint32_t id, const PrivateData& private_data, uint64_t now)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::dreq_received}, &c); rc != 0)
        return rc;
    send_once(c->peer, format(Drep{c->local_id, c->remote_id, private_data}, c->transaction_id));
    enter_timewait(*c, now);
    return 0;
}

void Manager::destroy(uint32_t id, uint64_t now)
{
    Connection* c = find(id);
    if (c == nullptr || c->destroyed)
        return;
    c->destroyed = true;
    std::erase_if(events_, [id](const Event& e) { return e.id == id; });
    switch (c->state) {
    case State::req_sent:
    case State::mra_req_received:
        rej_for(c->peer, 0, c->local_id, MessageKind::req, RejReason::timeout, c->transaction_id);
        break;
    case State::req_received:
    case State::mra_req_sent:
    case State::rep_received:
        reject(id, RejReason::consumer_reject, {}, now);
        return;
    case State::rep_sent:
    case State::mra_rep_received:
        rej_for(c->peer, c->remote_id, c->local_id, MessageKind::other, RejReason::consumer_reject,
                c->transaction_id);
        break;
    case State::established:
        disconnect(id, {}, now);
        return;
    case State::dreq_received:
        send_drep(id, {}, now);
        return;
    case State::dreq_sent:
    case State::timewait:
        return; /* they end on their own */
    case State::sidr_req_received:
        sidr_reply(id, {SidrStatus::rejected, 0, 0, {}});
        return;
    case State::idle:
    case State::sidr_req_sent:
        break;
    }
    release(*c);
}

uint32_t Manager::sidr_request(const SidrRequestParams& p, uint64_t now)
{
    Connection& c = make_connection(State::sidr_req_sent, p.remote_gid);
    const SidrReq req{c.local_id, 0xffff, p.service_id, p.private_data};
    send(c, format(req, c.transaction_id), now, iba_time_ns(config_.response_timeout) + lifetime_ns(),
         config_.max_retries);
    return c.local_id;
}

int Manager::sidr_reply(uint32_t id, const SidrReplyParams& p)
{
    Connection* c = nullptr;
    if (int rc = find_in(id, {State::sidr_req_received}, &c); rc != 0)
        return rc;
    SidrRep rep;
    rep.request_id = c->remote_id;
    rep.status = p.status;
    rep.qpn = p.qpn;
    rep.service_id = c->service_id;
    rep.qkey = p.qkey;
    rep.private_data = p.private_data;
    send_once(c->peer, format(rep, c->transaction_id));
    release(*c);
    return 0;
}

std::optional<uint64_t> Manager::next_deadline() const
{
    std::optional<uint64_t> first;
    for (const auto& [id, c] : connections_)
        if (c.deadline && (!first || *c.deadline < *first))
            first = c.deadline;
    return first;
}

void Manager::expire(uint64_t now)
{
    std::vector<uint32_t> due;
    for (const auto& [id, c] : connections_)
        if (c.deadline && *c.deadline <= now)
            due.push_back(id);
    std::sort(due.begin(), due.end());
    for (uint32_t id : due)
        if (Connection* c = find(id); c != nullptr && c->deadline && *c->deadline <= now)
            on_timeout(*c, now);
}

void Manager::on_timeout(Connection& c, uint64_t now)
{
    if (c.state == State::timewait) {
        post(EventType::timewait_exit, c, nullptr);
        release(c);
        return;
    }
    if (c.retries_left > 0) {
        c.retries_left--;
        c.deadline = now + c.wait_ns;
        send_once(c.peer, c.last_sent);
        counters_.resent++;
        return;
    }
    switch (c.state) {
    case State::req_sent:
    case State::mra_req_received:
        rej_for(c.peer, 0, c.local_id, MessageKind::req, RejReason::timeout, c.transaction_id);
        post(EventType::unreachable, c, nullptr);
        release(c);
        break;
    case State::rep_sent:
    case State::mra_rep_received:
        rej_for(c.peer, c.remote_id, c.local_id, MessageKind::rep, RejReason::timeout, c.transaction_id);
        post(EventType::unreachable, c, nullptr);
        release(c);
        break;
    case State::dreq_sent:
        post(EventType::disconnected, c, nullptr);
        enter_timewait(c, now);
        break;
    case State::sidr_req_sent:
        post(EventType::unreachable, c, nullptr);
        release(c);
        break;
    default:
        c.deadline.reset();
        break;
    }
}

void Manager::receive(const Gid& from, std::span<const uint8_t> bytes, uint64_t now)
{
    counters_.received++;
    const std::optional<MadHeader> header = parse_cm_header(bytes);
    if (!header) {
        counters_.not_cm++;
        return;
    }
    Mad mad;
    std::copy(bytes.begin(), bytes.end(), mad.begin());
    switch (header->attribute) {
    case Attribute::req: on_req(from, mad, header->transaction_id, now); break;
    case Attribute::mra: on_mra(mad, now); break;
    case Attribute::rej: on_rej(mad, now); break;
    case Attribute::rep: on_rep(from, mad); break;
    case Attribute::rtu: on_rtu(mad); break;
    case Attribute::dreq: on_dreq(from, mad, header->transaction_id, now); break;
    case Attribute::drep: on_drep(mad, now); break;
    case Attribute::sidr_req: on_sidr_req(from, mad, header->transaction_id); break;
    case Attribute::sidr_rep: on_sidr_rep(mad); break;
    default: counters_.unknown_attribute++; break;
    }
}

void Manager::on_req(const Gid& from, const Mad& mad, uint64_t tid, uint64_t now)
{
    const Req req = parse_req(mad);
    for (auto& [id, c] : connections_) {
        if (c.remote_id == req.local_comm_id && c.peer_guid == req.local_ca_guid && c.listener != 0) {
            on_duplicate_req(c, now);
            return;
        }
    }
    auto reject_req = [&](RejReason reason) {
        rej_for(from, req.local_comm_id, 0, MessageKind::req, reason, tid);
        counters_.rejected_reqs++;
    };
    /* A QP of the peer's CA that this side still has a connection with:
     * the peer lost that connection (it restarted, or missed the DREQ). */
    for (auto& [id, c] : connections_) {
        if (c.peer_guid == req.local_ca_guid && c.remote_qpn == req.local_qpn && holds_its_qp(c.state)) {
            reject_req(RejReason::stale_connection);
            post(EventType::disconnected, c, nullptr);
            enter_timewait(c, now);
            return;
        }
    }
    auto listener = listener_of(req.service_id);
    if (listener == listeners_.end())
        return reject_req(RejReason::invalid_service_id);
    if (req.transport != Transport::rc && req.transport != Transport::uc)
        return reject_req(RejReason::invalid_transport_type);
    if (req.path_mtu < 1 || req.path_mtu > 5)
        return reject_req(RejReason::invalid_mtu);
    if (backlog_full(*listener))
        return reject_req(RejReason::no_resources);

    Connection& c = make_connection(State::req_received, from);
    c.remote_id = req.local_comm_id;
    c.peer_guid = req.local_ca_guid;
    c.remote_qpn = req.local_qpn;
    c.listener = listener->first;
    c.transaction_id = tid;
    c.peer_response_timeout = req.local_cm_response_timeout;
    c.max_retries = req.max_cm_retries;
    c.local_ack_timeout = req.primary.local_ack_timeout;
    post(EventType::req_received, c, &mad);
}

void Manager::on_duplicate_req(Connection& c, uint64_t now)
{
    counters_.duplicates++;
    if (c.state == State::req_received) {
        /* The requester waited its response time and the consumer has not
         * answered yet (an application slow to accept): an MRA, so that
         * the requester waits the MRA's service time instead of giving up
         * after its retries. */
        mra_req(c, now);
    } else if (c.state == State::mra_req_sent) {
        send_once(c.peer, c.last_sent);
        counters_.resent++;
    } else if (c.state == State::timewait) {
        rej_for(c.peer, c.remote_id, c.local_id, MessageKind::req, RejReason::stale_connection, c.transaction_id);
    }
}

void Manager::on_mra(const Mad& mad, uint64_t now)
{
    const Mra mra = parse_mra(mad);
    Connection* c = find(mra.remote_comm_id);
    const bool about_req = mra.message == MessageKind::req && c != nullptr && c->state == State::req_sent;
    const bool about_rep = mra.message == MessageKind::rep && c != nullptr && c->state == State::rep_sent &&
                           c->remote_id == mra.local_comm_id;
    if (!about_req && !about_rep) {
        counters_.unmatched++;
        return;
    }
    c->remote_id = mra.local_comm_id;
    c->state = about_req ? State::mra_req_received : State::mra_rep_received;
    c->wait_ns = iba_time_ns(mra.service_timeout) + lifetime_ns();
    c->deadline = now + c->wait_ns;
    post(EventType::mra_received, *c, &mad);
}

void Manager::on_rej(const Mad& mad, uint64_t now)
{
    const Rej rej = parse_rej(mad);
    Connection* c = nullptr;
    if (rej.remote_comm_id != 0) {
        /* Linux's REJ of a REQ says 0 for its own ID, even after an MRA
         * that named it. */
        c = find(rej.remote_comm_id);
        if (c != nullptr && c->remote_id != 0 && rej.local_comm_id != 0 && c->remote_id != rej.local_comm_id)
            c = nullptr;
    } else { /* the peer gave up on its REQ before it learnt our ID */
        for (auto& [id, candidate] : connections_)
            if (candidate.listener != 0 && candidate.remote_id == rej.local_comm_id)
                c = &candidate;
    }
    if (c == nullptr) {
        counters_.unmatched++;
        return;
    }
    switch (c->state) {
    case State::req_sent:
    case State::mra_req_received:
    case State::req_received:
    case State::mra_req_sent:
    case State::rep_sent:
    case State::mra_rep_received:
    case State::rep_received:
        post(EventType::rejected, *c, &mad);
        if (rej.reason == RejReason::stale_connection)
            enter_timewait(*c, now);
        else
            release(*c);
        break;
    case State::established:
    case State::dreq_sent:
        if (rej.reason != RejReason::stale_connection) {
            counters_.unmatched++;
            break;
        }
        post(EventType::rejected, *c, &mad);
        enter_timewait(*c, now);
        break;
    default:
        counters_.unmatched++;
        break;
    }
}

void Manager::on_rep(const Gid& from, const Mad& mad)
{
    const Rep rep = parse_rep(mad);
    Connection* c = find(rep.remote_comm_id);
    if (c == nullptr || c->peer != from) {
        counters_.unmatched++;
        return;
    }
    if (c->state == State::req_sent || c->state == State::mra_req_received) {
        c->remote_id = rep.local_comm_id;
        c->remote_qpn = rep.local_qpn;
        c->peer_guid = rep.local_ca_guid;
        c->state = State::rep_received;
        c->deadline.reset();
        post(EventType::rep_received, *c, &mad);
        return;
    }
    if (c->remote_id != rep.local_comm_id) {
        counters_.unmatched++;
        return;
    }
    counters_.duplicates++;
    if (c->state == State::established) { /* our RTU was lost */
        send_once(c->peer, c->last_sent);
        counters_.resent++;
    }
}

void Manager::on_rtu(const Mad& mad)
{
    const Rtu rtu = parse_rtu(mad);
    Connection* c = find(rtu.remote_comm_id);
    if (c == nullptr || c->remote_id != rtu.local_comm_id) {
        counters_.unmatched++;
        return;
    }
    if (c->state == State::rep_sent || c->state == State::mra_rep_received) {
        c->state = State::established;
        c->deadline.reset();
        post(EventType::established, *c, &mad);
    } else if (c->state == State::established) {
        counters_.duplicates++;
    } else {
        counters_.unmatched++;
    }
}

void Manager::on_dreq(const Gid& from, const Mad& mad, uint64_t tid, uint64_t now)
{
    const Dreq dreq = parse_dreq(mad);
    Connection* c = find(dreq.remote_comm_id);
    if (c == nullptr) { /* gone after its timewait, or never: the peer may stop asking */
        counters_.unmatched++;
        send_once(from, format(Drep{dreq.remote_comm_id, dreq.local_comm_id, {}}, tid));
        return;
    }
    if (c->peer != from || c->remote_id != dreq.local_comm_id || c->local_qpn != dreq.remote_qpn) {
        counters_.unmatched++;
        return;
    }
    switch (c->state) {
    case State::dreq_sent: /* both ends at once: this one wants it over too */
        send_once(c->peer, format(Drep{c->local_id, c->remote_id, {}}, tid));
        break;
    case State::rep_sent:
    case State::mra_rep_received:
    case State::established:
        c->state = State::dreq_received;
        c->deadline.reset();
        c->transaction_id = tid;
        if (c->destroyed)
            send_drep(c->local_id, {}, now);
        else
            post(EventType::dreq_received, *c, &mad);
        break;
    case State::timewait: /* our DREP was lost */
    case State::idle:
        counters_.duplicates++;
        send_once(c->peer, format(Drep{c->local_id, c->remote_id, {}}, tid));
        counters_.resent++;
        break;
    case State::dreq_received:
        counters_.duplicates++;
        break;
    default:
        counters_.unmatched++;
        break;
    }
}

void Manager::on_drep(const Mad& mad, uint64_t now)
{
    const Drep drep = parse_drep(mad);
    Connection* c = find(drep.remote_comm_id);
    if (c == nullptr || c->remote_id != drep.local_comm_id || c->state != State::dreq_sent) {
        counters_.unmatched++;
        return;
    }
    post(EventType::disconnected, *c, &mad);
    enter_timewait(*c, now);
}

void Manager::on_sidr_req(const Gid& from, const Mad& mad, uint64_t tid)
{
    const SidrReq req = parse_sidr_req(mad);
    for (const auto& [id, c] : connections_) {
        if (c.state == State::sidr_req_received && c.remote_id == req.request_id && c.peer == from) {
            counters_.duplicates++;
            return;
        }
    }
    auto refuse = [&](SidrStatus status) {
        SidrRep rep;
        rep.request_id = req.request_id;
        rep.status = status;
        rep.service_id = req.service_id;
        send_once(from, format(rep, tid));
    };
    auto listener = listener_of(req.service_id);
    if (listener == listeners_.end())
        return refuse(SidrStatus::service_id_not_supported);
    if (backlog_full(*listener))
        return refuse(SidrStatus::rejected);
    Connection& c = make_connection(State::sidr_req_received, from);
    c.remote_id = req.request_id;
    c.listener = listener->first;
    c.transaction_id = tid;
    c.service_id = req.service_id;
    post(EventType::sidr_req_received, c, &mad);
}

void Manager::on_sidr_rep(const Mad& mad)
{
    const SidrRep rep = parse_sidr_rep(mad);
    Connection* c = find(rep.request_id);
    if (c == nullptr || c->state != State::sidr_req_sent) {
        counters_.unmatched++;
        return;
    }
    post(EventType::sidr_rep_received, *c, &mad);
    release(*c);
}

} // namespace cna::cm
