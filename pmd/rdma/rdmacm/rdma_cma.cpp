/* SPDX-License-Identifier: BSD-3-Clause
 * librdmacm's API (<rdma/rdma_cma.h>) on cna's CM: what each call checks
 * of its arguments, the service call it makes, and, for an ID made without
 * a channel, the wait for its event.
 */
#include <netdb.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "addresses.h"
#include "cm_service.h"

using namespace cna::rdmacm;

namespace {

int fail(int err)
{
    errno = err;
    return -1;
}

Channel* channel_of(rdma_event_channel* c) { return reinterpret_cast<Channel*>(c); }
static_assert(offsetof(Channel, public_channel) == 0);

/* The service with its lock held, or nullptr (errno ENODEV). */
struct Locked {
    Service* service = Service::get();
    std::unique_lock<std::mutex> held;
    Locked()
    {
        if (service != nullptr)
            held = std::unique_lock(service->lock());
    }
    explicit operator bool() const { return service != nullptr; }
    Service* operator->() const { return service; }
};

/* Runs `call` on the service, locked; then, for an ID without a channel,
 * waits for `expected` unlocked. */
template <typename Call> int call_and_complete(rdma_cm_id* cm_id, rdma_cm_event_type expected, Call call)
{
    if (cm_id == nullptr)
        return fail(EINVAL);
    Id* id = id_of(cm_id);
    Service* service;
    {
        Locked s;
        if (!s)
            return -1;
        if (call(*s.service, id) != 0)
            return -1;
        service = s.service;
    }
    return service->complete(id, expected);
}

} // namespace

extern "C" {

rdma_event_channel* rdma_create_event_channel(void)
{
    Locked s;
    if (!s)
        return nullptr;
    Channel* c = s->make_channel();
    return c != nullptr ? &c->public_channel : nullptr;
}

void rdma_destroy_event_channel(rdma_event_channel* channel)
{
    Locked s;
    if (s && channel != nullptr)
        s->destroy_channel(channel_of(channel));
}

int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps)
{
    if (id == nullptr)
        return fail(EINVAL);
    ibv_qp_type type;
    switch (ps) {
    case RDMA_PS_TCP: type = IBV_QPT_RC; break;
    case RDMA_PS_UDP: type = IBV_QPT_UD; break;
    default: return fail(EPROTONOSUPPORT); /* IPoIB and IB's own port space: not on RoCE here */
    }
    Locked s;
    if (!s)
        return -1;
    Id* made = s->make_id(channel != nullptr ? channel_of(channel) : nullptr, context, ps, type);
    if (made == nullptr)
        return -1;
    *id = &made->public_id;
    return 0;
}

int rdma_destroy_id(rdma_cm_id* id)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    if (!s)
        return -1;
    s->destroy_id(s.held, id_of(id));
    return 0;
}

int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr)
{
    if (id == nullptr || addr == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->bind(id_of(id), addr) : -1;
}

int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src_addr, sockaddr* dst_addr, int)
{
    if (dst_addr == nullptr)
        return fail(EINVAL);
    return call_and_complete(id, RDMA_CM_EVENT_ADDR_RESOLVED,
                             [&](Service& s, Id* i) { return s.resolve_addr(i, src_addr, dst_addr); });
}

int rdma_resolve_route(rdma_cm_id* id, int)
{
    return call_and_complete(id, RDMA_CM_EVENT_ROUTE_RESOLVED, [](Service& s, Id* i) { return s.resolve_route(i); });
}

int rdma_listen(rdma_cm_id* id, int backlog)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->listen(id_of(id), backlog) : -1;
}

int rdma_connect(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    return call_and_complete(id, RDMA_CM_EVENT_ESTABLISHED, [&](Service& s, Id* i) { return s.connect(i, conn_param); });
}

int rdma_accept(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    if (id != nullptr && id->event != nullptr) { /* rdma_get_request's */
        rdma_ack_cm_event(id->event);
        id->event = nullptr;
    }
    const bool datagram = id != nullptr && id->qp_type == IBV_QPT_UD;
    if (datagram) {
        Locked s;
        return s ? s->accept(id_of(id), conn_param) : -1;
    }
    return call_and_complete(id, RDMA_CM_EVENT_ESTABLISHED, [&](Service& s, Id* i) { return s.accept(i, conn_param); });
}

int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len)
{
    if (id == nullptr)
        return fail(EINVAL);
    if (id->event != nullptr) {
        rdma_ack_cm_event(id->event);
        id->event = nullptr;
    }
    Locked s;
    if (!s)
        return -1;
    const auto* data = static_cast<const uint8_t*>(private_data);
    return s->reject(id_of(id), data != nullptr ? std::span(data, private_data_len) : std::span<const uint8_t>());
}

int rdma_reject_ece(rdma_cm_id* id, const void* private_data, uint8_t private_data_len)
{
    return rdma_reject(id, private_data, private_data_len);
}

int rdma_establish(rdma_cm_id* id)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->establish(id_of(id)) : -1;
}

int rdma_notify(rdma_cm_id* id, ibv_event_type event)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->notify(id_of(id), event) : -1;
}

int rdma_disconnect(rdma_cm_id* id)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->disconnect(id_of(id)) : -1;
}

int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** id)
{
    if (listen == nullptr || id == nullptr)
        return fail(EINVAL);
    Id* l = id_of(listen);
    if (!l->own_channel)
        return fail(EINVAL); /* a listener with a channel takes requests from it */
    Service* service = Service::get();
    if (service == nullptr)
        return -1;
    for (;;) {
        rdma_cm_event* e = nullptr;
        if (service->next_event(l->channel, &e) != 0)
            return -1;
        if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
            rdma_ack_cm_event(e);
            continue;
        }
        rdma_cm_id* request = e->id;
        request->event = e;
        if (l->qp_template) {
            ibv_qp_init_attr attr = *l->qp_template;
            std::unique_lock held(service->lock());
            if (service->create_qp(id_of(request), l->public_id.pd, &attr) != 0) {
                const int err = errno;
                held.unlock();
                rdma_reject(request, nullptr, 0);
                rdma_destroy_id(request);
                return fail(err);
            }
        }
        *id = request;
        return 0;
    }
}

int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event)
{
    if (channel == nullptr || event == nullptr)
        return fail(EINVAL);
    Service* service = Service::get();
    return service != nullptr ? service->next_event(channel_of(channel), event) : -1;
}

int rdma_ack_cm_event(rdma_cm_event* event)
{
    if (event == nullptr)
        return fail(EINVAL);
    Service* service = Service::get();
    if (service == nullptr)
        return -1;
    service->ack(event_of(event));
    return 0;
}

int rdma_migrate_id(rdma_cm_id* id, rdma_event_channel* channel)
{
    if (id == nullptr)
        return fail(EINVAL);
    Locked s;
    if (!s)
        return -1;
    Channel* to = channel != nullptr ? channel_of(channel) : s->make_channel();
    if (to == nullptr)
        return -1;
    Id* i = id_of(id);
    const int rc = s->migrate(i, to);
    i->own_channel = channel == nullptr;
    return rc;
}

int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr)
{
    if (id == nullptr || qp_init_attr == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->create_qp(id_of(id), pd, qp_init_attr) : -1;
}

int rdma_create_qp_ex(rdma_cm_id* id, ibv_qp_init_attr_ex* attr)
{
    if (attr == nullptr)
        return fail(EINVAL);
    if (attr->comp_mask & ~IBV_QP_INIT_ATTR_PD)
        return fail(EOPNOTSUPP); /* only what ibv_create_qp takes */
    ibv_qp_init_attr basic{};
    basic.qp_context = attr->qp_context;
    basic.send_cq = attr->send_cq;
    basic.recv_cq = attr->recv_cq;
    basic.srq = attr->srq;
    basic.cap = attr->cap;
    basic.qp_type = attr->qp_type;
    basic.sq_sig_all = attr->sq_sig_all;
    const int rc = rdma_create_qp(id, attr->pd, &basic);
    attr->cap = basic.cap;
    return rc;
}

void rdma_destroy_qp(rdma_cm_id* id)
{
    if (id == nullptr)
        return;
    Locked s;
    if (s)
        s->destroy_qp(id_of(id));
}

int rdma_init_qp_attr(rdma_cm_id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask)
{
    if (id == nullptr || qp_attr == nullptr || qp_attr_mask == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? s->init_qp_attr(id_of(id), qp_attr, qp_attr_mask) : -1;
}

int rdma_create_srq(rdma_cm_id* id, ibv_pd* pd, ibv_srq_init_attr* attr)
{
    if (id == nullptr || attr == nullptr || id->verbs == nullptr)
        return fail(EINVAL);
    Locked s;
    if (!s)
        return -1;
    Id* i = id_of(id);
    if (pd == nullptr) {
        if (i->own_pd == nullptr && (i->own_pd = ibv_alloc_pd(id->verbs)) == nullptr)
            return -1;
        pd = i->own_pd;
    }
    id->srq = ibv_create_srq(pd, attr);
    if (id->srq == nullptr)
        return -1;
    id->pd = pd;
    return 0;
}

int rdma_create_srq_ex(rdma_cm_id* id, ibv_srq_init_attr_ex* attr)
{
    if (attr == nullptr)
        return fail(EINVAL);
    if (attr->comp_mask & ~IBV_SRQ_INIT_ATTR_PD)
        return fail(EOPNOTSUPP); /* XRC and tag matching SRQs: not on cna */
    ibv_srq_init_attr basic{};
    basic.srq_context = attr->srq_context;
    basic.attr = attr->attr;
    return rdma_create_srq(id, attr->pd, &basic);
}

void rdma_destroy_srq(rdma_cm_id* id)
{
    if (id == nullptr || id->srq == nullptr)
        return;
    ibv_destroy_srq(id->srq);
    id->srq = nullptr;
}

int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen)
{
    if (id == nullptr || optval == nullptr)
        return fail(EINVAL);
    if (level != RDMA_OPTION_ID)
        return fail(ENOSYS); /* RDMA_OPTION_IB_PATH: InfiniBand's path records, not RoCE's */
    Locked s;
    if (!s)
        return -1;
    Id* i = id_of(id);
    switch (optname) {
    case RDMA_OPTION_ID_TOS:
        if (optlen != sizeof(uint8_t))
            return fail(EINVAL);
        i->tos = *static_cast<uint8_t*>(optval);
        return 0;
    case RDMA_OPTION_ID_REUSEADDR:
    case RDMA_OPTION_ID_AFONLY:
        if (optlen != sizeof(int))
            return fail(EINVAL);
        if (optname == RDMA_OPTION_ID_REUSEADDR)
            i->reuse_address = *static_cast<int*>(optval) != 0;
        return 0;
    case RDMA_OPTION_ID_ACK_TIMEOUT:
        if (optlen != sizeof(uint8_t) || *static_cast<uint8_t*>(optval) > 31)
            return fail(EINVAL);
        i->ack_timeout = *static_cast<uint8_t*>(optval);
        return 0;
    default:
        return fail(ENOSYS);
    }
}

__be16 rdma_get_src_port(rdma_cm_id* id)
{
    return id != nullptr ? htons(port_of(&id->route.addr.src_addr)) : 0;
}

__be16 rdma_get_dst_port(rdma_cm_id* id)
{
    return id != nullptr ? htons(port_of(&id->route.addr.dst_addr)) : 0;
}

ibv_context** rdma_get_devices(int* num_devices)
{
    Locked s;
    if (!s)
        return nullptr;
    const auto& devices = s->devices();
    auto** list = static_cast<ibv_context**>(std::calloc(devices.size() + 1, sizeof(ibv_context*)));
    if (list == nullptr)
        return nullptr;
    for (std::size_t i = 0; i < devices.size(); i++)
        list[i] = devices[i]->verbs();
    if (num_devices != nullptr)
        *num_devices = static_cast<int>(devices.size());
    return list;
}

void rdma_free_devices(ibv_context** list) { std::free(list); }

const char* rdma_event_str(rdma_cm_event_type event)
{
    switch (event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED: return "RDMA_CM_EVENT_ADDR_RESOLVED";
    case RDMA_CM_EVENT_ADDR_ERROR: return "RDMA_CM_EVENT_ADDR_ERROR";
    case RDMA_CM_EVENT_ROUTE_RESOLVED: return "RDMA_CM_EVENT_ROUTE_RESOLVED";
    case RDMA_CM_EVENT_ROUTE_ERROR: return "RDMA_CM_EVENT_ROUTE_ERROR";
    case RDMA_CM_EVENT_CONNECT_REQUEST: return "RDMA_CM_EVENT_CONNECT_REQUEST";
    case RDMA_CM_EVENT_CONNECT_RESPONSE: return "RDMA_CM_EVENT_CONNECT_RESPONSE";
    case RDMA_CM_EVENT_CONNECT_ERROR: return "RDMA_CM_EVENT_CONNECT_ERROR";
    case RDMA_CM_EVENT_UNREACHABLE: return "RDMA_CM_EVENT_UNREACHABLE";
    case RDMA_CM_EVENT_REJECTED: return "RDMA_CM_EVENT_REJECTED";
    case RDMA_CM_EVENT_ESTABLISHED: return "RDMA_CM_EVENT_ESTABLISHED";
    case RDMA_CM_EVENT_DISCONNECTED: return "RDMA_CM_EVENT_DISCONNECTED";
    case RDMA_CM_EVENT_DEVICE_REMOVAL: return "RDMA_CM_EVENT_DEVICE_REMOVAL";
    case RDMA_CM_EVENT_MULTICAST_JOIN: return "RDMA_CM_EVENT_MULTICAST_JOIN";
    case RDMA_CM_EVENT_MULTICAST_ERROR: return "RDMA_CM_EVENT_MULTICAST_ERROR";
    case RDMA_CM_EVENT_ADDR_CHANGE: return "RDMA_CM_EVENT_ADDR_CHANGE";
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
    }
    return "UNKNOWN EVENT";
}

} // extern "C"
