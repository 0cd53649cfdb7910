/* SPDX-License-Identifier: BSD-3-Clause
 * Connections: what rdma_connect, rdma_accept and rdma_disconnect ask of
 * the CM, what its events become for the application, and the QP's steps
 * from INIT to RTS with what the two sides agreed.
 */
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "addresses.h"
#include "cm_service.h"

namespace cna::rdmacm {

namespace {

constexpr uint8_t MIN_RNR_TIMER = 12; /* 0.64 ms */
constexpr uint8_t MAX_RETRY = 7;

uint32_t random_psn() { return random32() & 0xffffff; }

bool is_datagram(const Id* id) { return id->public_id.qp_type == IBV_QPT_UD; }

/* What the application's rdma_conn_param says of a value, or the fallback. */
template <typename T> T offered(const rdma_conn_param* p, T rdma_conn_param::*field, T fallback)
{
    return p != nullptr ? p->*field : fallback;
}

std::span<const uint8_t> private_data_of(const rdma_conn_param* p)
{
    if (p == nullptr || p->private_data == nullptr)
        return {};
    return {static_cast<const uint8_t*>(p->private_data), p->private_data_len};
}

/* The RDMA READs and atomics a QP of the device takes in flight, as
 * responder and as initiator. */
struct RdAtomicLimits {
    uint8_t responder;
    uint8_t initiator;
};

RdAtomicLimits rd_atomic_limits(ibv_context* verbs)
{
    ibv_device_attr attr{};
    ibv_query_device(verbs, &attr);
    return {static_cast<uint8_t>(std::min(attr.max_qp_rd_atom, 255)),
            static_cast<uint8_t>(std::min(attr.max_qp_init_rd_atom, 255))};
}

cm::IpCmHeader header_of(const Id* id)
{
    cm::IpCmHeader h;
    h.ip_version = is_ipv4_mapped(id->sgid) ? 4 : 6;
    h.source_port = id->bound_port;
    h.source = ip_bytes_of(id->sgid);
    h.destination = ip_bytes_of(id->dgid);
    return h;
}

} // namespace

/* ---- The QP ----------------------------------------------------------------------- */

/* The starting PSN each side's REQ or REP carries is the one its QP expects
 * to receive first, and the other side sends from it: Linux's rdma_cm gives
 * its QP's RTR the PSN it announced (rq_psn = its seq_num), and rxe NAKs a
 * first SEND numbered from the requester's own announcement. */

int Service::init_qp_attr(Id* id, ibv_qp_attr* attr, int* mask)
{
    const ibv_qp_state to = attr->qp_state;
    std::memset(attr, 0, sizeof(*attr));
    attr->qp_state = to;
    switch (to) {
    case IBV_QPS_INIT:
        attr->port_num = 1;
        *mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
        if (is_datagram(id)) {
            attr->qkey = id->remote_qkey != 0 ? id->remote_qkey : RDMA_UDP_QKEY;
            *mask |= IBV_QP_QKEY;
        } else {
            attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
            *mask |= IBV_QP_ACCESS_FLAGS;
        }
        return 0;
    case IBV_QPS_RTR: {
        *mask = IBV_QP_STATE;
        if (is_datagram(id))
            return 0;
        const std::optional<ibv_ah_attr> route = id->device != nullptr ? id->device->route_to(id->dgid) : std::nullopt;
        if (!route || id->remote_qpn == 0)
            return fail(EINVAL);
        attr->ah_attr = *route;
        attr->path_mtu = static_cast<ibv_mtu>(id->path_mtu);
        attr->dest_qp_num = id->remote_qpn;
        attr->rq_psn = id->local_psn;
        attr->max_dest_rd_atomic = id->responder_resources;
        attr->min_rnr_timer = MIN_RNR_TIMER;
        *mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                 IBV_QP_MIN_RNR_TIMER;
        return 0;
    }
    case IBV_QPS_RTS:
        attr->sq_psn = id->remote_psn;
        *mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
        if (is_datagram(id))
            return 0;
        attr->timeout = id->ack_timeout;
        attr->retry_cnt = id->retry_count;
        attr->rnr_retry = id->rnr_retry_count;
        attr->max_rd_atomic = id->initiator_depth;
        *mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        return 0;
    default:
        return fail(EINVAL);
    }
}

/* The ID's QP to RTR and, when `rts`, on to RTS. */
int Service::ready_qp(Id* id, bool rts)
{
    ibv_qp* qp = id->public_id.qp;
    if (qp == nullptr)
        return 0;
    for (ibv_qp_state to : {IBV_QPS_RTR, IBV_QPS_RTS}) {
        if (to == IBV_QPS_RTS && !rts)
            break;
        ibv_qp_attr attr{};
        int mask = 0;
        attr.qp_state = to;
        if (init_qp_attr(id, &attr, &mask) != 0 || ibv_modify_qp(qp, &attr, mask) != 0)
            return -1;
    }
    return 0;
}

void Service::error_qp(Id* id)
{
    if (id->public_id.qp == nullptr)
        return;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(id->public_id.qp, &attr, IBV_QP_STATE);
}

int Service::create_qp(Id* id, ibv_pd* pd, ibv_qp_init_attr* attr)
{
    ibv_context* verbs = id->public_id.verbs;
    if (verbs == nullptr || id->public_id.qp != nullptr)
        return fail(EINVAL);
    pd = pd_for(id, pd);
    if (pd == nullptr)
        return -1;
    if (pd->context != verbs)
        return fail(EINVAL);
    if (attr->send_cq == nullptr && attr->recv_cq == nullptr) { /* rdma_create_ep's way: CQs of the ID's own */
        id->public_id.send_cq_channel = ibv_create_comp_channel(verbs);
        id->public_id.recv_cq_channel = ibv_create_comp_channel(verbs);
        if (id->public_id.send_cq_channel == nullptr || id->public_id.recv_cq_channel == nullptr)
            return -1;
        id->public_id.send_cq = ibv_create_cq(verbs, std::max<int>(attr->cap.max_send_wr, 1), &id->public_id,
                                              id->public_id.send_cq_channel, 0);
        id->public_id.recv_cq = ibv_create_cq(verbs, std::max<int>(attr->cap.max_recv_wr, 1), &id->public_id,
                                              id->public_id.recv_cq_channel, 0);
        if (id->public_id.send_cq == nullptr || id->public_id.recv_cq == nullptr)
            return -1;
        id->own_cqs = true;
        attr->send_cq = id->public_id.send_cq;
        attr->recv_cq = id->public_id.recv_cq;
    }
    if (attr->qp_type != id->public_id.qp_type)
        return fail(EINVAL);
    ibv_qp* qp = ibv_create_qp(pd, attr);
    if (qp == nullptr)
        return -1;
    id->public_id.qp = qp;
    id->public_id.pd = pd;
    const ibv_qp_state steps_rc[] = {IBV_QPS_INIT};
    const ibv_qp_state steps_ud[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};
    const std::span<const ibv_qp_state> steps = is_datagram(id) ? std::span<const ibv_qp_state>(steps_ud)
                                                                : std::span<const ibv_qp_state>(steps_rc);
    for (ibv_qp_state to : steps) {
        ibv_qp_attr qp_attr{};
        int mask = 0;
        qp_attr.qp_state = to;
        if (init_qp_attr(id, &qp_attr, &mask) != 0 || ibv_modify_qp(qp, &qp_attr, mask) != 0) {
            const int err = errno;
            destroy_qp(id);
            return fail(err != 0 ? err : EINVAL);
        }
    }
    return 0;
}

void Service::destroy_qp(Id* id)
{
    if (id->public_id.qp != nullptr)
        ibv_destroy_qp(id->public_id.qp);
    id->public_id.qp = nullptr;
    if (id->own_cqs) {
        for (ibv_cq** cq : {&id->public_id.send_cq, &id->public_id.recv_cq})
            if (*cq != nullptr)
                ibv_destroy_cq(*cq), *cq = nullptr;
        for (ibv_comp_channel** c : {&id->public_id.send_cq_channel, &id->public_id.recv_cq_channel})
            if (*c != nullptr)
                ibv_destroy_comp_channel(*c), *c = nullptr;
        id->own_cqs = false;
    }
}

/* ---- What the application asks ---------------------------------------------------- */

int Service::connect(Id* id, const rdma_conn_param* param)
{
    if (id->state != IdState::route_resolved)
        return fail(EINVAL);
    const uint64_t service = service_id(id, port_of(&id->public_id.route.addr.dst_addr));
    const uint64_t t = now();
    if (is_datagram(id)) {
        id->conn = id->device->cm().sidr_request(
            {service, id->dgid, cm::with_ip_cm_header(header_of(id), private_data_of(param), cm::SIDR_REQ_PRIVATE_DATA)},
            t);
    } else {
        ibv_qp* qp = id->public_id.qp;
        const uint32_t qpn = qp != nullptr ? qp->qp_num : offered(param, &rdma_conn_param::qp_num, 0u);
        if (qpn == 0)
            return fail(EINVAL);
        const RdAtomicLimits limits = rd_atomic_limits(id->public_id.verbs);
        id->local_psn = random_psn();
        id->responder_resources = std::min(
            offered<uint8_t>(param, &rdma_conn_param::responder_resources, RDMA_MAX_RESP_RES), limits.responder);
        id->initiator_depth = std::min(
            offered<uint8_t>(param, &rdma_conn_param::initiator_depth, RDMA_MAX_INIT_DEPTH), limits.initiator);
        id->retry_count = std::min(offered<uint8_t>(param, &rdma_conn_param::retry_count, MAX_RETRY), MAX_RETRY);
        id->rnr_retry_count = std::min(offered<uint8_t>(param, &rdma_conn_param::rnr_retry_count, MAX_RETRY), MAX_RETRY);
        cm::ConnectParams p;
        p.service_id = service;
        p.local_gid = id->sgid;
        p.remote_gid = id->dgid;
        p.qpn = qpn;
        p.starting_psn = id->local_psn;
        p.responder_resources = id->responder_resources;
        p.initiator_depth = id->initiator_depth;
        p.path_mtu = id->path_mtu;
        p.retry_count = id->retry_count;
        p.rnr_retry_count = id->rnr_retry_count;
        p.srq = qp != nullptr ? qp->srq != nullptr : offered<uint8_t>(param, &rdma_conn_param::srq, 0) != 0;
        p.local_ack_timeout = id->ack_timeout;
        p.traffic_class = id->tos;
        p.private_data = cm::with_ip_cm_header(header_of(id), private_data_of(param), cm::REQ_PRIVATE_DATA);
        id->conn = id->device->cm().connect(p, t);
    }
    by_connection_[{id->device, id->conn}] = id;
    id->state = IdState::connecting;
    kick();
    return 0;
}

int Service::accept(Id* id, const rdma_conn_param* param)
{
    if (id->state != IdState::request_received)
        return fail(EINVAL);
    if (is_datagram(id)) {
        ibv_qp* qp = id->public_id.qp;
        cm::SidrReplyParams reply{cm::SidrStatus::valid, qp != nullptr ? qp->qp_num : offered(param, &rdma_conn_param::qp_num, 0u),
                                  RDMA_UDP_QKEY, {}};
        const std::span<const uint8_t> data = private_data_of(param);
        reply.private_data.assign(data.begin(), data.end());
        id->device->cm().sidr_reply(id->conn, reply);
        by_connection_.erase({id->device, id->conn});
        id->conn = 0;
        id->state = IdState::connected;
        kick();
        return 0;
    }
    /* What the peer offered bounds what this side takes. */
    id->responder_resources = std::min(offered(param, &rdma_conn_param::responder_resources, id->responder_resources),
                                       id->responder_resources);
    id->initiator_depth = std::min(offered(param, &rdma_conn_param::initiator_depth, id->initiator_depth),
                                   id->initiator_depth);
    id->rnr_retry_count = std::min(offered<uint8_t>(param, &rdma_conn_param::rnr_retry_count, MAX_RETRY), MAX_RETRY);
    id->local_psn = random_psn();
    if (ready_qp(id, true) != 0)
        return -1;
    ibv_qp* qp = id->public_id.qp;
    cm::AcceptParams p;
    p.qpn = qp != nullptr ? qp->qp_num : offered(param, &rdma_conn_param::qp_num, 0u);
    p.starting_psn = id->local_psn;
    p.responder_resources = id->responder_resources;
    p.initiator_depth = id->initiator_depth;
    p.rnr_retry_count = id->rnr_retry_count;
    p.srq = qp != nullptr && qp->srq != nullptr;
    const std::span<const uint8_t> data = private_data_of(param);
    p.private_data.assign(data.begin(), data.end());
    if (int rc = id->device->cm().accept(id->conn, p, now()); rc != 0)
        return fail(-rc);
    id->state = IdState::accepted;
    kick();
    return 0;
}

int Service::reject(Id* id, std::span<const uint8_t> private_data)
{
    if (id->state != IdState::request_received)
        return fail(EINVAL);
    cm::Manager& cm = id->device->cm();
    if (is_datagram(id)) {
        cm::SidrReplyParams reply{cm::SidrStatus::rejected, 0, 0, {}};
        reply.private_data.assign(private_data.begin(), private_data.end());
        cm.sidr_reply(id->conn, reply);
    } else {
        cm.reject(id->conn, cm::RejReason::consumer_reject, {private_data.begin(), private_data.end()}, now());
    }
    id->state = IdState::disconnected;
    kick();
    return 0;
}

int Service::establish(Id* id)
{
    if (id->state != IdState::response_received)
        return fail(EINVAL);
    id->device->cm().send_rtu(id->conn, {}, now());
    id->state = IdState::connected;
    kick();
    return 0;
}

int Service::disconnect(Id* id)
{
    error_qp(id);
    if (id->conn == 0 || id->device == nullptr)
        return fail(EINVAL);
    cm::Manager& cm = id->device->cm();
    const std::optional<cm::State> state = cm.state_of(id->conn);
    if (state == cm::State::established || state == cm::State::rep_sent || state == cm::State::mra_rep_received) {
        cm.established(id->conn);
        cm.disconnect(id->conn, {}, now());
    } else if (state == cm::State::dreq_received) {
        cm.send_drep(id->conn, {}, now());
    } else if (state != cm::State::dreq_sent && state != cm::State::timewait) {
        return fail(EINVAL);
    }
    if (id->state != IdState::disconnected)
        id->state = IdState::disconnecting;
    kick();
    return 0;
}

int Service::notify(Id* id, ibv_event_type event)
{
    if (event != IBV_EVENT_COMM_EST)
        return 0;
    if (id->state != IdState::accepted || id->device->cm().established(id->conn) != 0)
        return fail(EINVAL);
    id->state = IdState::connected;
    post(id, RDMA_CM_EVENT_ESTABLISHED, 0);
    return 0;
}

/* ---- What the CM says ------------------------------------------------------------- */

void Service::run_cm_events(CmDevice& d)
{
    while (std::optional<cm::Event> e = d.cm().next_event())
        on_cm_event(d, *e);
}

void Service::on_cm_event(CmDevice& d, const cm::Event& e)
{
    if (e.type == cm::EventType::req_received)
        return on_request(d, e);
    if (e.type == cm::EventType::sidr_req_received)
        return on_sidr_request(d, e);
    Id* id = owner_of(d, e.id);
    if (id == nullptr)
        return;
    switch (e.type) {
    case cm::EventType::rep_received:
    case cm::EventType::sidr_rep_received:
        on_reply(id, e);
        break;
    case cm::EventType::established:
        id->state = IdState::connected;
        post(id, RDMA_CM_EVENT_ESTABLISHED, 0);
        break;
    case cm::EventType::rejected: {
        const cm::Rej rej = cm::parse_rej(*e.mad);
        id->state = IdState::disconnected;
        post(id, RDMA_CM_EVENT_REJECTED, static_cast<int>(rej.reason), rej.private_data);
        break;
    }
    case cm::EventType::unreachable:
        id->state = IdState::disconnected;
        post(id, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
        break;
    case cm::EventType::dreq_received: /* the peer ends it: rdma_disconnect answers */
    case cm::EventType::disconnected:  /* the DREP came, or the DREQ went unanswered */
        if (id->state != IdState::disconnected) {
            id->state = IdState::disconnected;
            post(id, RDMA_CM_EVENT_DISCONNECTED, 0);
        }
        break;
    case cm::EventType::timewait_exit:
        post(id, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
        break;
    default:
        break;
    }
}

void Service::on_reply(Id* id, const cm::Event& e)
{
    if (e.type == cm::EventType::sidr_rep_received) {
        const cm::SidrRep rep = cm::parse_sidr_rep(*e.mad);
        by_connection_.erase({id->device, id->conn});
        id->device->cm().destroy(id->conn, now());
        id->conn = 0;
        if (rep.status != cm::SidrStatus::valid) {
            id->state = IdState::disconnected;
            post(id, RDMA_CM_EVENT_UNREACHABLE, static_cast<int>(rep.status));
            return;
        }
        id->state = IdState::connected;
        Event* ev = post(id, RDMA_CM_EVENT_ESTABLISHED, 0, rep.private_data);
        rdma_ud_param& ud = ev->public_event.param.ud;
        ud.ah_attr = *id->device->route_to(id->dgid);
        ud.qp_num = rep.qpn;
        ud.qkey = rep.qkey;
        return;
    }
    const cm::Rep rep = cm::parse_rep(*e.mad);
    id->remote_qpn = rep.local_qpn;
    id->remote_psn = rep.starting_psn;
    id->initiator_depth = std::min(id->initiator_depth, rep.responder_resources);
    id->responder_resources = std::min(id->responder_resources, rep.initiator_depth);
    auto answer = [&](rdma_cm_event_type type) {
        Event* ev = post(id, type, 0, rep.private_data);
        rdma_conn_param& conn = ev->public_event.param.conn;
        conn.responder_resources = rep.responder_resources;
        conn.initiator_depth = rep.initiator_depth;
        conn.flow_control = rep.end_to_end_flow_control;
        conn.rnr_retry_count = rep.rnr_retry_count;
        conn.srq = rep.srq;
        conn.qp_num = rep.local_qpn;
    };
    if (id->public_id.qp == nullptr) {
        id->state = IdState::response_received;
        answer(RDMA_CM_EVENT_CONNECT_RESPONSE);
        return;
    }
    if (ready_qp(id, true) != 0) {
        id->device->cm().reject(id->conn, cm::RejReason::no_qp, {}, now());
        id->state = IdState::disconnected;
        post(id, RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL);
        return;
    }
    id->device->cm().send_rtu(id->conn, {}, now());
    id->state = IdState::connected;
    answer(RDMA_CM_EVENT_ESTABLISHED);
}

/* The listening ID a request is for, and the new ID that takes it; nullptr
 * when no listener's address is the one asked for. */
Id* Service::request_id(CmDevice& d, const cm::Event& e, const cm::IpCmHeader& header)
{
    Id* listen = nullptr;
    const Gid destination = gid_of(header.destination, header.ip_version);
    for (Id* candidate : ids_)
        for (auto [device, l] : candidate->listeners)
            if (device == &d && l == e.listener && (candidate->wildcard || candidate->sgid == destination))
                listen = candidate;
    if (listen == nullptr)
        return nullptr;
    Id* id = make_id(listen->own_channel ? nullptr : listen->channel, listen->public_id.context, listen->public_id.ps,
                     listen->public_id.qp_type);
    if (id == nullptr)
        return nullptr;
    id->listen_id = listen;
    place(id, d, d.gid_index(destination).value_or(0), destination);
    id->dgid = e.peer;
    id->conn = e.id;
    id->tos = listen->tos;
    id->ack_timeout = listen->ack_timeout;
    to_sockaddr(destination, listen->bound_port, &id->public_id.route.addr.src_storage);
    to_sockaddr(gid_of(header.source, header.ip_version), header.source_port, &id->public_id.route.addr.dst_storage);
    by_connection_[{&d, e.id}] = id;
    id->state = IdState::request_received;
    return id;
}

void Service::on_request(CmDevice& d, const cm::Event& e)
{
    const cm::Req req = cm::parse_req(*e.mad);
    const std::optional<cm::IpCmHeader> header = cm::parse_ip_cm_header(req.private_data);
    Id* id = header && req.transport == cm::Transport::rc ? request_id(d, e, *header) : nullptr;
    if (id == nullptr || id->public_id.qp_type != IBV_QPT_RC) {
        if (id != nullptr)
            forget(id);
        d.cm().reject(e.id, cm::RejReason::consumer_reject, {}, now());
        return;
    }
    id->remote_qpn = req.local_qpn;
    id->remote_psn = req.starting_psn;
    id->path_mtu = std::min<uint8_t>(req.path_mtu, static_cast<uint8_t>(d.mtu()));
    id->retry_count = req.retry_count;
    /* What the requester offers, as far as this device goes: accepting
     * with no parameters takes this (rxe's offer, its own 128, is more than
     * cna's QPs take). */
    const RdAtomicLimits limits = rd_atomic_limits(d.verbs());
    id->responder_resources = std::min(req.initiator_depth, limits.responder);
    id->initiator_depth = std::min(req.responder_resources, limits.initiator);
    id->ack_timeout = req.primary.local_ack_timeout; /* the requester's, as its QP's */
    Event* ev = post(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
                     std::span(req.private_data).subspan(cm::IP_CM_HEADER_SIZE), id->listen_id);
    rdma_conn_param& conn = ev->public_event.param.conn;
    conn.responder_resources = req.responder_resources;
    conn.initiator_depth = req.initiator_depth;
    conn.flow_control = req.end_to_end_flow_control;
    conn.retry_count = req.retry_count;
    conn.rnr_retry_count = req.rnr_retry_count;
    conn.srq = req.srq;
    conn.qp_num = req.local_qpn;
}

void Service::on_sidr_request(CmDevice& d, const cm::Event& e)
{
    const cm::SidrReq req = cm::parse_sidr_req(*e.mad);
    const std::optional<cm::IpCmHeader> header = cm::parse_ip_cm_header(req.private_data);
    Id* id = header ? request_id(d, e, *header) : nullptr;
    if (id == nullptr || id->public_id.qp_type != IBV_QPT_UD) {
        if (id != nullptr)
            forget(id);
        d.cm().sidr_reply(e.id, {cm::SidrStatus::rejected, 0, 0, {}});
        return;
    }
    Event* ev = post(id, RDMA_CM_EVENT_CONNECT_REQUEST, 0,
                     std::span(req.private_data).subspan(cm::IP_CM_HEADER_SIZE), id->listen_id);
    rdma_ud_param& ud = ev->public_event.param.ud;
    if (std::optional<ibv_ah_attr> route = d.route_to(e.peer))
        ud.ah_attr = *route;
}

} // namespace cna::rdmacm
