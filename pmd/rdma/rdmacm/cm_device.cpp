/* SPDX-License-Identifier: BSD-3-Clause
 * A device's GSI QP through verbs: receives of a GRH and a MAD each, a ring
 * of MAD sends, and address handles to the peers' ports.
 */
#include "cm_device.h"

#include <arpa/inet.h>
#include <endian.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cna_rdma.h"
#include "cm_log.h"

namespace cna::rdmacm {

namespace {

constexpr uint32_t GSI_QPN = 1;
constexpr uint32_t GSI_QKEY = 0x80010000;
constexpr unsigned IPV4_HEADER_AT = 20; /* in the GRH area: RoCEv2 over IPv4 */

/* The source and destination GIDs of a received datagram, from its GRH
 * area: an IPv6 header, or an IPv4 header in its last 20 bytes. */
std::pair<Gid, Gid> gids_of(const uint8_t* grh)
{
    Gid source{}, destination{};
    if (grh[0] >> 4 == 6) {
        std::memcpy(source.data(), grh + 8, 16);
        std::memcpy(destination.data(), grh + 24, 16);
    } else {
        source[10] = source[11] = destination[10] = destination[11] = 0xff;
        std::memcpy(source.data() + 12, grh + IPV4_HEADER_AT + 12, 4);
        std::memcpy(destination.data() + 12, grh + IPV4_HEADER_AT + 16, 4);
    }
    return {source, destination};
}

void complain(const char* what) { std::fprintf(stderr, "cna rdmacm: %s: %s\n", what, std::strerror(errno)); }

const char* attribute_name(const cm::Mad& mad)
{
    switch (static_cast<cm::Attribute>(mad[16] << 8 | mad[17])) {
    case cm::Attribute::req: return "REQ";
    case cm::Attribute::mra: return "MRA";
    case cm::Attribute::rej: return "REJ";
    case cm::Attribute::rep: return "REP";
    case cm::Attribute::rtu: return "RTU";
    case cm::Attribute::dreq: return "DREQ";
    case cm::Attribute::drep: return "DREP";
    case cm::Attribute::sidr_req: return "SIDR REQ";
    case cm::Attribute::sidr_rep: return "SIDR REP";
    default: return "MAD";
    }
}

void log_mad(const char* way, const Gid& peer, const cm::Mad& mad)
{
    if (!cm_log_on())
        return;
    char address[INET6_ADDRSTRLEN];
    if (peer[10] == 0xff && peer[11] == 0xff)
        inet_ntop(AF_INET, peer.data() + 12, address, sizeof(address));
    else
        inet_ntop(AF_INET6, peer.data(), address, sizeof(address));
    cm_log("%s %s %s, comm IDs %08x %08x", way, attribute_name(mad), address, cm::sender_comm_id(mad),
           cm::receiver_comm_id(mad));
}

} // namespace

std::unique_ptr<CmDevice> CmDevice::open(ibv_context* verbs, cm::Config config)
{
    std::unique_ptr<CmDevice> d(new CmDevice());
    if (!d->set_up(verbs, config))
        return nullptr;
    return d;
}

bool CmDevice::set_up(ibv_context* verbs, cm::Config config)
{
    verbs_ = verbs;
    ibv_device_attr device{};
    ibv_port_attr port{};
    if (ibv_query_device(verbs, &device) != 0 || ibv_query_port(verbs, 1, &port) != 0) {
        complain("querying the device");
        return false;
    }
    guid_ = be64toh(device.node_guid);
    active_mtu_ = static_cast<uint16_t>(port.active_mtu);
    pd_ = ibv_alloc_pd(verbs);
    channel_ = pd_ != nullptr ? ibv_create_comp_channel(verbs) : nullptr;
    recv_cq_ = channel_ != nullptr ? ibv_create_cq(verbs, RECEIVES, this, channel_, 0) : nullptr;
    send_cq_ = recv_cq_ != nullptr ? ibv_create_cq(verbs, SENDS, this, channel_, 0) : nullptr;
    if (send_cq_ == nullptr || ibv_req_notify_cq(recv_cq_, 0) != 0) {
        complain("the GSI QP's PD, completion channel and CQs");
        return false;
    }
    ibv_qp_init_attr init{};
    init.send_cq = send_cq_;
    init.recv_cq = recv_cq_;
    init.cap.max_send_wr = SENDS;
    init.cap.max_recv_wr = RECEIVES;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.qp_type = CNA_RDMA_QPT_GSI;
    qp_ = ibv_create_qp(pd_, &init);
    if (qp_ == nullptr) {
        complain("the GSI QP (another process's CM may hold the port)");
        return false;
    }
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qkey = GSI_QKEY;
    if (ibv_modify_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0) {
        complain("the GSI QP to INIT");
        return false;
    }
    attr = {};
    attr.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp_, &attr, IBV_QP_STATE) != 0) {
        complain("the GSI QP to RTR");
        return false;
    }
    attr.qp_state = IBV_QPS_RTS;
    if (ibv_modify_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
        complain("the GSI QP to RTS");
        return false;
    }
    buffers_ = std::make_unique<Buffers>();
    mr_ = ibv_reg_mr(pd_, buffers_.get(), sizeof(Buffers), IBV_ACCESS_LOCAL_WRITE);
    if (mr_ == nullptr) {
        complain("the GSI QP's buffers");
        return false;
    }
    for (unsigned slot = 0; slot < RECEIVES; slot++)
        if (!post_receive(slot))
            return false;
    for (unsigned slot = SENDS; slot-- > 0;)
        free_sends_.push_back(slot);
    config.ca_guid = guid_;
    cm_ = std::make_unique<cm::Manager>(config, *this);
    return true;
}

CmDevice::~CmDevice()
{
    for (auto& [gid, route] : routes_)
        ibv_destroy_ah(route.ah);
    if (qp_ != nullptr)
        ibv_destroy_qp(qp_);
    if (mr_ != nullptr)
        ibv_dereg_mr(mr_);
    for (ibv_cq* cq : {send_cq_, recv_cq_})
        if (cq != nullptr)
            ibv_destroy_cq(cq);
    if (channel_ != nullptr)
        ibv_destroy_comp_channel(channel_);
    if (pd_ != nullptr)
        ibv_dealloc_pd(pd_);
}

bool CmDevice::post_receive(unsigned slot)
{
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffers_->receives[slot].data()),
                static_cast<uint32_t>(buffers_->receives[slot].size()), mr_->lkey};
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (ibv_post_recv(qp_, &wr, &bad) != 0) {
        complain("a receive on the GSI QP");
        return false;
    }
    return true;
}

std::vector<Gid> CmDevice::gids() const
{
    ibv_port_attr port{};
    std::vector<Gid> all;
    if (ibv_query_port(verbs_, 1, &port) != 0)
        return all;
    for (int i = 0; i < port.gid_tbl_len; i++) {
        ibv_gid gid;
        if (ibv_query_gid(verbs_, 1, i, &gid) != 0)
            break;
        Gid g;
        std::memcpy(g.data(), gid.raw, g.size());
        all.push_back(g);
    }
    return all;
}

std::optional<int> CmDevice::gid_index(const Gid& gid) const
{
    const std::vector<Gid> all = gids();
    for (std::size_t i = 0; i < all.size(); i++)
        if (all[i] == gid)
            return static_cast<int>(i);
    return std::nullopt;
}

int CmDevice::learn_route(const Gid& peer, int sgid_index, uint8_t traffic_class)
{
    if (routes_.contains(peer))
        return 0;
    return make_route(peer, sgid_index, traffic_class);
}

int CmDevice::make_route(const Gid& peer, int sgid_index, uint8_t traffic_class)
{
    ibv_ah_attr attr{};
    attr.is_global = 1;
    std::memcpy(attr.grh.dgid.raw, peer.data(), peer.size());
    attr.grh.sgid_index = static_cast<uint8_t>(sgid_index);
    attr.grh.hop_limit = 64;
    attr.grh.traffic_class = traffic_class;
    attr.port_num = 1;
    ibv_ah* ah = ibv_create_ah(pd_, &attr);
    if (ah == nullptr)
        return -1;
    /* MADs in flight keep the old way: a datagram's WQE carries its path. */
    if (auto old = routes_.find(peer); old != routes_.end())
        ibv_destroy_ah(old->second.ah);
    routes_.insert_or_assign(peer, Route{ah, attr});
    return 0;
}

std::optional<ibv_ah_attr> CmDevice::route_to(const Gid& peer) const
{
    auto it = routes_.find(peer);
    return it == routes_.end() ? std::nullopt : std::optional(it->second.attr);
}

void CmDevice::send(const Gid& to, const cm::Mad& mad)
{
    if (waiting_.size() == MAX_WAITING)
        return; /* the CM's timer decides, as for a MAD lost */
    waiting_.emplace_back(to, mad);
    send_waiting();
}

/* A burst of MADs (a thousand DREQs at once, then their retries, due
 * together) would otherwise lose all but a send queue's worth each time,
 * the same ones every time. */
void CmDevice::send_waiting()
{
    while (!waiting_.empty()) {
        if (free_sends_.empty())
            reap_sends();
        if (free_sends_.empty()) {
            /* A send that completed between the reap and the arm would
             * notify no one: reaped once more after it. */
            ibv_req_notify_cq(send_cq_, 0);
            reap_sends();
            if (free_sends_.empty())
                return;
        }
        const auto& [to, mad] = waiting_.front();
        post_send(to, mad);
        waiting_.pop_front();
    }
}

void CmDevice::post_send(const Gid& to, const cm::Mad& mad)
{
    auto route = routes_.find(to);
    if (route == routes_.end())
        return; /* no way to the peer: the CM's timer decides, as for a MAD lost */
    const unsigned slot = free_sends_.back();
    free_sends_.pop_back();
    buffers_->sends[slot] = mad;
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffers_->sends[slot].data()), cm::MAD_SIZE, mr_->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = route->second.ah;
    wr.wr.ud.remote_qpn = GSI_QPN;
    wr.wr.ud.remote_qkey = GSI_QKEY;
    if (ibv_post_send(qp_, &wr, &bad) != 0) {
        free_sends_.push_back(slot);
        return;
    }
    log_mad("sent", to, mad);
}

void CmDevice::reap_sends()
{
    ibv_wc wc[16];
    int n;
    while ((n = ibv_poll_cq(send_cq_, 16, wc)) > 0)
        for (int i = 0; i < n; i++)
            free_sends_.push_back(static_cast<unsigned>(wc[i].wr_id));
}

void CmDevice::take(const ibv_wc& wc, uint64_t now)
{
    const unsigned slot = static_cast<unsigned>(wc.wr_id);
    const uint8_t* bytes = buffers_->receives[slot].data();
    if (wc.status == IBV_WC_SUCCESS && wc.byte_len == GRH_SIZE + cm::MAD_SIZE) {
        const auto [source, destination] = gids_of(bytes);
        cm::Mad mad;
        std::memcpy(mad.data(), bytes + GRH_SIZE, mad.size());
        /* A request comes from a peer that is there to be answered: its
         * route is made anew, since a process restarted behind the same
         * address speaks through another adapter, with another MAC. */
        const std::optional<cm::MadHeader> header = cm::parse_cm_header(mad);
        const bool request =
            header && (header->attribute == cm::Attribute::req || header->attribute == cm::Attribute::sidr_req);
        if (request || !routes_.contains(source)) {
            const std::optional<int> local = gid_index(destination);
            if (!local || make_route(source, *local, 0) != 0)
                complain("a route to a peer that sent a MAD");
        }
        log_mad("received", source, mad);
        cm_->receive(source, mad, now);
    }
    if (wc.status != IBV_WC_WR_FLUSH_ERR)
        post_receive(slot);
}

void CmDevice::on_completion_event(uint64_t now)
{
    ibv_cq* cq;
    void* context;
    if (ibv_get_cq_event(channel_, &cq, &context) == 0) {
        ibv_ack_cq_events(cq, 1);
        if (cq == send_cq_) {
            send_waiting();
            return;
        }
    }
    ibv_req_notify_cq(recv_cq_, 0);
    ibv_wc wc[16];
    int n;
    while ((n = ibv_poll_cq(recv_cq_, 16, wc)) > 0)
        for (int i = 0; i < n; i++)
            take(wc[i], now);
}

} // namespace cna::rdmacm
