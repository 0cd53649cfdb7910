/* SPDX-License-Identifier: BSD-3-Clause
 * librdmacm's objects as this library keeps them: an event channel (an
 * eventfd counting the events queued), an event (what the application
 * reads, with the private data it points at), and an ID (the public
 * rdma_cm_id first, then what the CM needs of it).
 */
#pragma once

#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "cm_device.h"
#include "cm_ip_service.h"

namespace cna::rdmacm {

struct Channel {
    rdma_event_channel public_channel{};
    std::deque<struct Event*> queue;
};

struct Id;

struct Event {
    rdma_cm_event public_event{};
    Id* owner = nullptr; /* whose count of unacknowledged events it is in */
    std::vector<uint8_t> private_data;
};

enum class IdState : uint8_t {
    idle,
    bound,
    addr_resolved,
    route_resolved,
    listening,
    connecting,        /* REQ or SIDR REQ sent */
    response_received, /* REP taken, no QP: rdma_establish sends the RTU */
    request_received,  /* a REQ for this new ID: accept or reject */
    accepted,          /* REP sent, waiting for the RTU */
    connected,
    disconnecting,     /* rdma_disconnect called: DISCONNECTED comes with the DREP */
    disconnected,
};

struct Id {
    rdma_cm_id public_id{};
    Channel* channel = nullptr;
    bool own_channel = false; /* made without one: calls wait for their event */
    IdState state = IdState::idle;
    CmDevice* device = nullptr; /* once bound to an address, or resolved */
    int sgid_index = 0;
    Gid sgid{};
    Gid dgid{};
    uint16_t bound_port = 0;    /* host order; 0 until bound */
    bool wildcard = false;      /* bound to any address */

    uint32_t conn = 0;                  /* the CM's connection or SIDR request */
    std::vector<std::pair<CmDevice*, uint32_t>> listeners; /* listening: the CM's on each device */
    Id* listen_id = nullptr;            /* a request's listener */
    unsigned unacked = 0;               /* events read, not yet acknowledged */

    /* Options (rdma_set_option). */
    uint8_t tos = 0;
    uint8_t ack_timeout = 14;

    /* What the connection agreed, for the QP's transitions. */
    uint32_t local_psn = 0;
    uint32_t remote_qpn = 0;
    uint32_t remote_psn = 0;
    uint32_t remote_qkey = 0;
    uint8_t path_mtu = 0;               /* IBV_MTU_* */
    uint8_t responder_resources = 0;    /* what this side lets the peer have in flight */
    uint8_t initiator_depth = 0;        /* what this side has in flight */
    uint8_t retry_count = 7;
    uint8_t rnr_retry_count = 7;

    /* rdma_create_ep's QP attributes of a passive ID: each request's ID
     * gets its QP made from them (rdma_get_request). */
    std::optional<ibv_qp_init_attr> qp_template;
    /* The PD made for rdma_create_qp without one, and CQs made for it. */
    ibv_pd* own_pd = nullptr;
    bool own_cqs = false;
};

inline Id* id_of(rdma_cm_id* id) { return reinterpret_cast<Id*>(id); }
/* The CM service ID of the ID's port space and `port`. */
inline uint64_t service_id(const Id* id, uint16_t port)
{
    return cm::service_id_of(static_cast<cm::PortSpace>(id->public_id.ps), port);
}

/* librdmacm's way of failing: -1, the reason in errno. */
inline int fail(int err)
{
    errno = err;
    return -1;
}
inline Event* event_of(rdma_cm_event* e) { return reinterpret_cast<Event*>(e); }
static_assert(offsetof(Id, public_id) == 0 && offsetof(Event, public_event) == 0);

} // namespace cna::rdmacm
