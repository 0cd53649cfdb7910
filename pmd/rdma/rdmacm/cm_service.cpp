/* SPDX-License-Identifier: BSD-3-Clause
 * The process's connection manager: devices, the CM thread, and what the
 * application's calls do to IDs, channels and the CM.
 */
#include "cm_service.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "addresses.h"
#include "cm_log.h"

namespace cna::rdmacm {

namespace {

constexpr uint16_t FIRST_EPHEMERAL_PORT = 32768;

unsigned env_number(const char* name, unsigned fallback, unsigned most)
{
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0')
        return fallback;
    char* end = nullptr;
    const unsigned long v = std::strtoul(text, &end, 10);
    if (*end != '\0' || v > most) {
        std::fprintf(stderr, "cna rdmacm: %s=%s: a number up to %u; using %u\n", name, text, most, fallback);
        return fallback;
    }
    return static_cast<unsigned>(v);
}

} // namespace

uint32_t random32()
{
    uint32_t v = 0;
    if (getrandom(&v, sizeof(v), 0) != sizeof(v))
        v = static_cast<uint32_t>(time(nullptr) ^ getpid());
    return v;
}

Service* Service::get()
{
    static Service* service = [] {
        auto* s = new Service();
        if (!s->start()) {
            const int err = errno;
            delete s;
            errno = err;
            return static_cast<Service*>(nullptr);
        }
        return s;
    }();
    if (service == nullptr)
        errno = ENODEV;
    return service;
}

bool Service::start()
{
    int count = 0;
    ibv_device** list = ibv_get_device_list(&count);
    if (list == nullptr)
        return false;
    cm::Config config;
    config.first_comm_id = random32();
    config.response_timeout = static_cast<uint8_t>(env_number("CNA_CM_RESPONSE_TIMEOUT", 18, 31));
    config.max_retries = static_cast<uint8_t>(env_number("CNA_CM_RETRIES", 7, 15));
    for (int i = 0; i < count; i++) {
        ibv_context* verbs = ibv_open_device(list[i]);
        if (verbs == nullptr)
            continue;
        std::unique_ptr<CmDevice> d = CmDevice::open(verbs, config);
        if (d == nullptr) {
            ibv_close_device(verbs);
            continue;
        }
        config.first_comm_id += 0x10000000; /* each device's IDs apart */
        devices_.push_back(std::move(d));
    }
    ibv_free_device_list(list);
    if (devices_.empty()) {
        errno = ENODEV;
        return false;
    }
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_fd_ < 0 || timer_fd_ < 0 || wake_fd_ < 0)
        return false;
    auto watch = [this](int fd, uint64_t tag) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag;
        return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
    };
    for (std::size_t i = 0; i < devices_.size(); i++) {
        fcntl(devices_[i]->completion_fd(), F_SETFL, O_NONBLOCK);
        if (!watch(devices_[i]->completion_fd(), i))
            return false;
    }
    if (!watch(timer_fd_, UINT64_MAX - 1) || !watch(wake_fd_, UINT64_MAX))
        return false;
    thread_ = std::thread([this] { run(); });
    /* Registered after the provider's teardown (its library came first),
     * so it runs before it: no CM call reaches a device gone. */
    std::atexit([] { if (Service* s = get()) s->stop(); });
    return true;
}

/* Only the CM thread stops: the devices' objects go with the provider's
 * teardown, which may run at the same time when two threads call exit
 * (rping's event thread does on an error while its main thread returns). */
void Service::stop()
{
    static std::once_flag once;
    std::call_once(once, [this] {
        {
            std::lock_guard guard(lock_);
            stopping_ = true;
        }
        const uint64_t one = 1;
        if (write(wake_fd_, &one, sizeof(one)) == sizeof(one) && thread_.joinable())
            thread_.join();
    });
}

uint64_t Service::now() const
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
}

void Service::arm_timer()
{
    std::optional<uint64_t> first;
    for (const auto& d : devices_)
        if (std::optional<uint64_t> next = d->cm().next_deadline(); next && (!first || *next < *first))
            first = next;
    itimerspec spec{};
    if (first) {
        const uint64_t at = std::max<uint64_t>(*first, 1);
        spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
        spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
    }
    timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void Service::kick()
{
    for (const auto& d : devices_)
        run_cm_events(*d);
    arm_timer();
}

void Service::run()
{
    for (;;) {
        epoll_event ready[8];
        const int n = epoll_wait(epoll_fd_, ready, 8, -1);
        std::lock_guard guard(lock_);
        if (stopping_)
            return;
        const uint64_t t = now();
        for (int i = 0; i < n; i++) {
            const uint64_t tag = ready[i].data.u64;
            uint64_t drained;
            if (tag == UINT64_MAX)
                (void)!read(wake_fd_, &drained, sizeof(drained));
            else if (tag == UINT64_MAX - 1)
                (void)!read(timer_fd_, &drained, sizeof(drained));
            else if (tag < devices_.size())
                devices_[tag]->on_completion_event(t);
        }
        for (const auto& d : devices_)
            d->cm().expire(t);
        kick();
    }
}

/* ---- Channels and events --------------------------------------------------------- */

/* An eventfd counting the events queued, read one at a time: a thread
 * blocked reading it stays so when the channel goes, as with the kernel's
 * rdma_cm (rping's event thread is left waiting as its main thread ends). */
Channel* Service::make_channel()
{
    const int fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
    if (fd < 0)
        return nullptr;
    auto* c = new Channel();
    c->public_channel.fd = fd;
    return c;
}

void Service::destroy_channel(Channel* c)
{
    for (Event* e : c->queue)
        delete e;
    close(c->public_channel.fd);
    delete c;
}

void Service::count_event(Channel* c)
{
    const uint64_t one = 1;
    (void)!write(c->public_channel.fd, &one, sizeof(one));
}

Event* Service::post(Id* to, rdma_cm_event_type type, int status, std::span<const uint8_t> private_data, Id* listen)
{
    Channel* channel = listen != nullptr ? listen->channel : to->channel;
    auto* e = new Event();
    e->owner = listen != nullptr ? listen : to;
    e->private_data.assign(private_data.begin(), private_data.end());
    rdma_cm_event& pe = e->public_event;
    pe.id = &to->public_id;
    pe.listen_id = listen != nullptr ? &listen->public_id : nullptr;
    pe.event = type;
    pe.status = status;
    if (!e->private_data.empty()) {
        pe.param.conn.private_data = e->private_data.data();
        pe.param.conn.private_data_len = static_cast<uint8_t>(std::min<std::size_t>(e->private_data.size(), 255));
    }
    e->owner->unacked++;
    channel->queue.push_back(e);
    count_event(channel);
    return e;
}

/* A token without its event (taken back by a destroy) is passed over. */
int Service::next_event(Channel* c, rdma_cm_event** event)
{
    for (;;) {
        uint64_t token;
        if (read(c->public_channel.fd, &token, sizeof(token)) != sizeof(token)) /* blocks as the application set its fd */
            return -1;
        std::lock_guard guard(lock_);
        if (c->queue.empty())
            continue;
        Event* e = c->queue.front();
        c->queue.pop_front();
        /* A connection refused or given up on takes its QP to the error
         * state here, in the application's thread as librdmacm does: the
         * CM's thread never touches a QP the application may be
         * destroying (rping destroys its QP with ibv_destroy_qp). A
         * disconnection waits for rdma_disconnect, as with the kernel. */
        if (e->public_event.event == RDMA_CM_EVENT_REJECTED || e->public_event.event == RDMA_CM_EVENT_UNREACHABLE)
            error_qp(id_of(e->public_event.id));
        *event = &e->public_event;
        return 0;
    }
}

void Service::ack(Event* e)
{
    {
        std::lock_guard guard(lock_);
        e->owner->unacked--;
    }
    acked_.notify_all();
    delete e;
}

int Service::complete(Id* id, rdma_cm_event_type expected)
{
    if (!id->own_channel)
        return 0;
    rdma_cm_event* e = nullptr;
    if (next_event(id->channel, &e) != 0)
        return -1;
    const bool ok = e->event == expected && e->status == 0;
    const int status = e->status;
    ack(event_of(e));
    if (ok)
        return 0;
    return fail(status < 0 ? -status : status != 0 ? ECONNREFUSED : EPROTO);
}

/* ---- IDs -------------------------------------------------------------------------- */

Id* Service::make_id(Channel* channel, void* context, rdma_port_space ps, ibv_qp_type qp_type)
{
    auto* id = new Id();
    if (channel == nullptr) {
        channel = make_channel();
        if (channel == nullptr) {
            delete id;
            return nullptr;
        }
        id->own_channel = true;
    }
    id->channel = channel;
    id->public_id.channel = &channel->public_channel;
    id->public_id.context = context;
    id->public_id.ps = ps;
    id->public_id.qp_type = qp_type;
    ids_.insert(id);
    return id;
}

uint16_t Service::take_port(rdma_port_space ps, uint16_t wanted)
{
    if (wanted != 0)
        return ports_.insert({ps, wanted}).second ? wanted : 0;
    const uint16_t start = static_cast<uint16_t>(FIRST_EPHEMERAL_PORT + random32() % 28000);
    for (uint32_t i = 0; i < 28000; i++) {
        const uint16_t port = static_cast<uint16_t>(FIRST_EPHEMERAL_PORT + (start - FIRST_EPHEMERAL_PORT + i) % 28000);
        if (ports_.insert({ps, port}).second)
            return port;
    }
    return 0;
}

void Service::give_back_port(Id* id)
{
    if (id->bound_port != 0)
        ports_.erase({id->public_id.ps, id->bound_port});
    id->bound_port = 0;
}

int Service::bind(Id* id, const sockaddr* addr)
{
    if (id->state != IdState::idle)
        return fail(EINVAL);
    const int family = family_of(addr);
    if (family == 0)
        return fail(EAFNOSUPPORT);
    CmDevice* device = nullptr;
    int index = 0;
    const Gid gid = gid_of(addr);
    if (!is_wildcard(addr)) {
        for (const auto& d : devices_)
            if (std::optional<int> i = d->gid_index(gid)) {
                device = d.get();
                index = *i;
                break;
            }
        if (device == nullptr)
            return fail(EADDRNOTAVAIL);
    }
    const uint16_t port = take_port(id->public_id.ps, port_of(addr));
    if (port == 0)
        return fail(EADDRINUSE);
    id->bound_port = port;
    id->wildcard = device == nullptr;
    if (device != nullptr)
        place(id, *device, index, gid);
    std::memcpy(&id->public_id.route.addr.src_storage, addr, length_of(addr));
    set_port(&id->public_id.route.addr.src_storage, port);
    id->state = IdState::bound;
    return 0;
}

int Service::resolve_addr(Id* id, const sockaddr* src, const sockaddr* dst)
{
    const int family = family_of(dst);
    if (family == 0)
        return fail(EAFNOSUPPORT);
    if (id->state == IdState::idle) {
        sockaddr_storage any{};
        any.ss_family = static_cast<sa_family_t>(src != nullptr ? src->sa_family : dst->sa_family);
        if (bind(id, src != nullptr ? src : reinterpret_cast<sockaddr*>(&any)) != 0)
            return -1;
    }
    if (id->state != IdState::bound)
        return fail(EINVAL);
    const Gid dgid = gid_of(dst);
    std::memcpy(&id->public_id.route.addr.dst_storage, dst, length_of(dst));
    id->dgid = dgid;
    /* A device with an address of the destination's family and scope
     * (link-local or not) that reaches it (its route resolves the peer's
     * MAC); an IPv6 address of the other scope only if none does. */
    int err = EADDRNOTAVAIL;
    for (const auto& d : devices_) {
        if (id->device != nullptr && id->device != d.get())
            continue;
        const std::vector<Gid> gids = d->gids();
        std::vector<std::size_t> candidates(gids.size());
        std::iota(candidates.begin(), candidates.end(), 0);
        std::stable_partition(candidates.begin(), candidates.end(),
                              [&](std::size_t i) { return is_link_local(gids[i]) == is_link_local(dgid); });
        for (std::size_t i : candidates) {
            const Gid& g = gids[i];
            const bool same_family = is_ipv4_mapped(g) == (family == AF_INET) && g != Gid{};
            if (!same_family || (id->device != nullptr && static_cast<int>(i) != id->sgid_index))
                continue;
            if (d->learn_route(dgid, static_cast<int>(i), id->tos) != 0) {
                err = errno == 0 ? EHOSTUNREACH : errno;
                continue;
            }
            place(id, *d, static_cast<int>(i), g);
            to_sockaddr(g, id->bound_port, &id->public_id.route.addr.src_storage);
            id->state = IdState::addr_resolved;
            post(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
            return 0;
        }
    }
    post(id, RDMA_CM_EVENT_ADDR_ERROR, -err);
    return 0;
}

int Service::resolve_route(Id* id)
{
    if (id->state != IdState::addr_resolved)
        return fail(EINVAL);
    id->state = IdState::route_resolved;
    id->path_mtu = static_cast<uint8_t>(id->device->mtu());
    post(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
    return 0;
}

int Service::listen(Id* id, int backlog)
{
    if (id->state == IdState::idle) {
        sockaddr_in any{};
        any.sin_family = AF_INET;
        if (bind(id, reinterpret_cast<sockaddr*>(&any)) != 0)
            return -1;
    }
    if (id->state != IdState::bound)
        return fail(EINVAL);
    const uint64_t service = service_id(id, id->bound_port);
    const unsigned depth = backlog > 0 ? static_cast<unsigned>(backlog) : 1024;
    for (const auto& d : devices_) {
        if (id->device != nullptr && id->device != d.get())
            continue;
        const uint32_t listener = d->cm().listen(service, depth);
        if (listener == 0) {
            for (auto [device, l] : id->listeners)
                device->cm().stop_listening(l);
            id->listeners.clear();
            return fail(EADDRINUSE);
        }
        id->listeners.emplace_back(d.get(), listener);
    }
    id->state = IdState::listening;
    cm_log("listening on port %u (%s), %zu device(s)", id->bound_port,
           id->public_id.ps == RDMA_PS_UDP ? "UDP" : id->public_id.ps == RDMA_PS_IB ? "IB" : "TCP",
           id->listeners.size());
    return 0;
}

void Service::place(Id* id, CmDevice& d, int sgid_index, const Gid& sgid)
{
    id->device = &d;
    id->sgid_index = sgid_index;
    id->sgid = sgid;
    id->public_id.verbs = d.verbs();
    id->public_id.port_num = 1;
}

ibv_pd* Service::pd_for(Id* id, ibv_pd* given)
{
    if (given != nullptr)
        return given;
    if (id->own_pd == nullptr)
        id->own_pd = ibv_alloc_pd(id->public_id.verbs);
    return id->own_pd;
}

int Service::migrate(Id* id, Channel* to, bool owned)
{
    /* Its unread events go along, each with its token. */
    std::deque<Event*> moving;
    std::erase_if(id->channel->queue, [&](Event* e) {
        const bool its = e->public_event.id == &id->public_id;
        if (its)
            moving.push_back(e);
        return its;
    });
    for (Event* e : moving) {
        to->queue.push_back(e);
        count_event(to);
    }
    if (id->own_channel)
        destroy_channel(id->channel);
    id->own_channel = owned;
    id->channel = to;
    id->public_id.channel = &to->public_channel;
    return 0;
}

void Service::forget(Id* id)
{
    by_connection_.erase({id->device, id->conn});
    ids_.erase(id);
    if (id->own_channel)
        destroy_channel(id->channel);
    delete id;
}

void Service::destroy_id(std::unique_lock<std::mutex>& held, Id* id)
{
    for (auto [device, listener] : id->listeners)
        device->cm().stop_listening(listener);
    id->listeners.clear();
    if (id->conn != 0) {
        id->device->cm().destroy(id->conn, now());
        by_connection_.erase({id->device, id->conn});
        id->conn = 0;
    }
    /* Events not read yet go unread; requests to a listener going away
     * are refused with it. */
    std::vector<Id*> refused;
    std::erase_if(id->channel->queue, [&](Event* e) {
        const bool its = e->owner == id;
        if (its) {
            if (e->public_event.listen_id == &id->public_id)
                refused.push_back(id_of(e->public_event.id));
            id->unacked--;
            delete e;
        }
        return its;
    });
    for (Id* request : refused)
        destroy_id(held, request);
    if (id->public_id.event != nullptr) { /* rdma_get_request's, never acknowledged */
        Event* e = event_of(id->public_id.event);
        id->public_id.event = nullptr;
        e->owner->unacked--;
        delete e;
    }
    acked_.wait(held, [id] { return id->unacked == 0; });
    kick();
    give_back_port(id);
    if (id->own_pd != nullptr && id->public_id.qp == nullptr)
        ibv_dealloc_pd(id->own_pd);
    ids_.erase(id);
    if (id->own_channel)
        destroy_channel(id->channel);
    delete id;
}

Id* Service::owner_of(CmDevice& d, uint32_t conn) const
{
    auto it = by_connection_.find({&d, conn});
    return it == by_connection_.end() ? nullptr : it->second;
}

} // namespace cna::rdmacm
