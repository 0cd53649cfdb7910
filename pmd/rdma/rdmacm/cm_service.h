/* SPDX-License-Identifier: BSD-3-Clause
 * The process's connection manager: every cna device's CM (cm_device.h),
 * the IDs and channels of the application, and the CM thread, which waits
 * on the devices' completion channels and the CM's next deadline and
 * turns what the CM says into rdma_cm events.
 *
 * One lock covers all of it; the application's calls take it, and so
 * does the thread. A call that must wait (an ID made without a channel)
 * waits on its own channel, outside the lock.
 *
 *   CNA_CM_RESPONSE_TIMEOUT  how long this side says it takes to answer,
 *                            and how long it waits for a REQ's answer before
 *                            sending it again: 4.096 us << N (default 18,
 *                            about 1 s)
 *   CNA_CM_RETRIES           sends of a REQ, REP, DREQ or SIDR REQ after
 *                            the first (default 7; at most 15)
 */
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cm_id.h"

namespace cna::rdmacm {

/* Random bits for comm IDs, ports and PSNs. */
uint32_t random32();

class Service {
public:
    /* The service, started on first use; nullptr (errno set) if the
     * process has no cna device. */
    static Service* get();

    std::mutex& lock() { return lock_; }
    const std::vector<std::unique_ptr<CmDevice>>& devices() const { return devices_; }

    /* Channels and events. */
    Channel* make_channel();
    void destroy_channel(Channel* c);
    void count_event(Channel* c);
    /* Queues an event of `to` (of `listen`'s channel for a request); the
     * caller may fill in more of its parameters. */
    Event* post(Id* to, rdma_cm_event_type type, int status, std::span<const uint8_t> private_data = {},
                Id* listen = nullptr);
    /* rdma_get_cm_event: waits as the channel's fd says (blocking or not). */
    int next_event(Channel* c, rdma_cm_event** event);
    void ack(Event* e);
    /* An ID made without a channel waits for its call's event: 0 if it is
     * `expected`, else -1 with errno. */
    int complete(Id* id, rdma_cm_event_type expected);

    /* IDs (lock held). */
    Id* make_id(Channel* channel, void* context, rdma_port_space ps, ibv_qp_type qp_type);
    int bind(Id* id, const sockaddr* addr);
    int resolve_addr(Id* id, const sockaddr* src, const sockaddr* dst);
    int resolve_route(Id* id);
    int listen(Id* id, int backlog);
    int connect(Id* id, const rdma_conn_param* param);
    int accept(Id* id, const rdma_conn_param* param);
    int reject(Id* id, std::span<const uint8_t> private_data);
    int establish(Id* id);
    int disconnect(Id* id);
    int notify(Id* id, ibv_event_type event);
    int create_qp(Id* id, ibv_pd* pd, ibv_qp_init_attr* attr);
    void destroy_qp(Id* id);
    int init_qp_attr(Id* id, ibv_qp_attr* attr, int* mask);
    /* To `to`, which the ID owns (made for it) when `owned`. */
    int migrate(Id* id, Channel* to, bool owned);
    /* `given`, or the PD the ID makes for itself without one. */
    ibv_pd* pd_for(Id* id, ibv_pd* given);
    /* Waits (dropping the lock) until the application acknowledged every
     * event it read of `id`, then lets it go. */
    void destroy_id(std::unique_lock<std::mutex>& held, Id* id);

    /* After a call that made the CM send or arm a timer. */
    void kick();

private:
    Service() = default;
    bool start();
    void stop();
    void run();
    void run_cm_events(CmDevice& d);
    void on_cm_event(CmDevice& d, const cm::Event& e);
    void on_request(CmDevice& d, const cm::Event& e);
    void on_sidr_request(CmDevice& d, const cm::Event& e);
    void on_reply(Id* id, const cm::Event& e);
    /* The ID is on device `d`, speaking from its GID `sgid_index`. */
    static void place(Id* id, CmDevice& d, int sgid_index, const Gid& sgid);
    Id* request_id(CmDevice& d, const cm::Event& e, const cm::IpCmHeader& header);
    /* An ID no event named yet, gone at once. */
    void forget(Id* id);
    int ready_qp(Id* id, bool rts);
    void error_qp(Id* id);
    uint16_t take_port(rdma_port_space ps, uint16_t wanted);
    void give_back_port(Id* id);
    Id* owner_of(CmDevice& d, uint32_t conn) const;
    uint64_t now() const;
    void arm_timer();

    std::mutex lock_;
    std::condition_variable acked_;
    std::vector<std::unique_ptr<CmDevice>> devices_;
    std::set<Id*> ids_;
    std::map<std::pair<CmDevice*, uint32_t>, Id*> by_connection_;
    std::set<std::pair<int, uint16_t>> ports_; /* (port space, port) taken */
    std::thread thread_;
    int epoll_fd_ = -1, timer_fd_ = -1, wake_fd_ = -1;
    bool stopping_ = false;
};

} // namespace cna::rdmacm
