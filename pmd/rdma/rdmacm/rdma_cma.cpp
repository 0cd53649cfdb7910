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

/* Runs `call` on the ID, the service locked. */
template <typename Call> int on_id(rdma_cm_id* cm_id, Call call)
{
    if (cm_id == nullptr)
        return fail(EINVAL);
    Locked s;
    return s ? call(*s.service, id_of(cm_id)) : -1;
}

/* on_id; then, for an ID without a channel, waits for `expected` unlocked. */
template <typename Call> int call_and_complete(rdma_cm_id* cm_id, rdma_cm_event_type expected, Call call)
{
    if (on_id(cm_id, call) != 0)
        return -1;
    return Service::get()->complete(id_of(cm_id), expected);
}

/* The request rdma_get_request handed out, acknowledged as the ID is
 * accepted or rejected. */
void ack_request(rdma_cm_id* id)
{
    if (id != nullptr && id->event != nullptr) {
        rdma_ack_cm_event(id->event);
        id->event = nullptr;
    }
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
    if (addr == nullptr)
        return fail(EINVAL);
    return on_id(id, [&](Service& s, Id* i) { return s.bind(i, addr); });
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
    return on_id(id, [&](Service& s, Id* i) { return s.listen(i, backlog); });
}

int rdma_connect(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    return call_and_complete(id, RDMA_CM_EVENT_ESTABLISHED, [&](Service& s, Id* i) { return s.connect(i, conn_param); });
}

int rdma_accept(rdma_cm_id* id, rdma_conn_param* conn_param)
{
    ack_request(id);
    auto accept = [&](Service& s, Id* i) { return s.accept(i, conn_param); };
    if (id != nullptr && id->qp_type == IBV_QPT_UD) /* the SIDR REP is all: no event follows */
        return on_id(id, accept);
    return call_and_complete(id, RDMA_CM_EVENT_ESTABLISHED, accept);
}

int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len)
{
    ack_request(id);
    const auto* data = static_cast<const uint8_t*>(private_data);
    const std::span<const uint8_t> bytes = data != nullptr ? std::span(data, private_data_len) : std::span<const uint8_t>();
    return on_id(id, [&](Service& s, Id* i) { return s.reject(i, bytes); });
}

int rdma_reject_ece(rdma_cm_id* id, const void* private_data, uint8_t private_data_len)
{
    return rdma_reject(id, private_data, private_data_len);
}

int rdma_establish(rdma_cm_id* id)
{
    return on_id(id, [](Service& s, Id* i) { return s.establish(i); });
}

int rdma_notify(rdma_cm_id* id, ibv_event_type event)
{
    return on_id(id, [&](Service& s, Id* i) { return s.notify(i, event); });
}

int rdma_disconnect(rdma_cm_id* id)
{
    return on_id(id, [](Service& s, Id* i) { return s.disconnect(i); });
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
    return on_id(id, [&](Service& s, Id* i) {
        Channel* to = channel != nullptr ? channel_of(channel) : s.make_channel();
        return to != nullptr ? s.migrate(i, to, channel == nullptr) : -1;
    });
}

int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr)
{
    if (qp_init_attr == nullptr)
        return fail(EINVAL);
    return on_id(id, [&](Service& s, Id* i) { return s.create_qp(i, pd, qp_init_attr); });
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
    on_id(id, [](Service& s, Id* i) {
        s.destroy_qp(i);
        return 0;
    });
}

int rdma_init_qp_attr(rdma_cm_id* id, ibv_qp_attr* qp_attr, int* qp_attr_mask)
{
    if (qp_attr == nullptr || qp_attr_mask == nullptr)
        return fail(EINVAL);
    return on_id(id, [&](Service& s, Id* i) { return s.init_qp_attr(i, qp_attr, qp_attr_mask); });
}

int rdma_create_srq(rdma_cm_id* id, ibv_pd* pd, ibv_srq_init_attr* attr)
{
    if (id == nullptr || attr == nullptr || id->verbs == nullptr)
        return fail(EINVAL);
    return on_id(id, [&](Service& s, Id* i) {
        ibv_pd* on = s.pd_for(i, pd);
        if (on == nullptr || (id->srq = ibv_create_srq(on, attr)) == nullptr)
            return -1;
        id->pd = on;
        return 0;
    });
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
    case RDMA_OPTION_ID_REUSEADDR: /* a port is free again as its ID goes, timewait or not */
    case RDMA_OPTION_ID_AFONLY:    /* an ID's address is of one family already */
        return optlen == sizeof(int) ? 0 : fail(EINVAL);
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
