/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA device of a net_cna port: open and close (RDMA started on the
 * PF, a DPI, the CNQ with its status block and interrupt), what it can do,
 * its GID, protection domains, and the events it hands the application.
 */
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <rte_ethdev.h>

#include "cna_rdma_port.h"
#include "cna_rdma_log.h"
#include "cna_rdma_objects.h"

namespace cna::rdma {

namespace {

constexpr uint16_t CNQ_ENTRIES = hsi::rdma::MAX_CQS; /* one per CQ: no overrun */
constexpr size_t MAX_GIDS = 1 + hsi::rdma::MAX_IPV4_ADDRESSES + hsi::rdma::MAX_IPV6_ADDRESSES - 1;

/* The ibv_event_type of an affiliated event, and whether it names a QP,
 * CQ or SRQ. */
enum class Subject { qp, cq, srq };
bool event_type(hsi::rdma::RdmaEvent e, ibv_event_type* type, Subject* subject)
{
    using hsi::rdma::RdmaEvent;
    *subject = Subject::qp;
    switch (e) {
    case RdmaEvent::qp_fatal: *type = IBV_EVENT_QP_FATAL; return true;
    case RdmaEvent::qp_request_error: *type = IBV_EVENT_QP_REQ_ERR; return true;
    case RdmaEvent::qp_access_error: *type = IBV_EVENT_QP_ACCESS_ERR; return true;
    case RdmaEvent::qp_last_wqe: *type = IBV_EVENT_QP_LAST_WQE_REACHED; return true;
    case RdmaEvent::sq_drained: *type = IBV_EVENT_SQ_DRAINED; return true;
    case RdmaEvent::qp_comm_established: *type = IBV_EVENT_COMM_EST; return true;
    case RdmaEvent::cq_error: *type = IBV_EVENT_CQ_ERR; *subject = Subject::cq; return true;
    case RdmaEvent::srq_limit: *type = IBV_EVENT_SRQ_LIMIT_REACHED; *subject = Subject::srq; return true;
    case RdmaEvent::srq_error: *type = IBV_EVENT_SRQ_ERR; *subject = Subject::srq; return true;
    case RdmaEvent::neighbour: break; /* ecore's own */
    }
    return false;
}

/* With events_lock held, as the consumers drain the fd under it: the fd is
 * readable exactly while an event waits. */
void signal(Device* dev)
{
    const uint64_t one = 1;
    if (::write(dev->event_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        RDMA_LOG(ERR, dev, "event fd: %s", strerror(errno));
}

/* The device's asynchronous events, on the thread processing the EQ. */
void async_event(Device* dev, hsi::rdma::RdmaEvent e, uint32_t id)
{
    ibv_async_event ev{};
    Subject subject;
    if (!event_type(e, &ev.event_type, &subject))
        return;
    {
        std::lock_guard guard(dev->events_lock);
        if (subject == Subject::qp && id < dev->qps.size() && dev->qps[id] != nullptr)
            ev.element.qp = &dev->qps[id]->ibv;
        else if (subject == Subject::cq && id < dev->cqs.size() && dev->cqs[id] != nullptr)
            ev.element.cq = &dev->cqs[id]->ibv;
        else if (subject == Subject::srq && id < dev->srqs.size() && dev->srqs[id] != nullptr)
            ev.element.srq = &dev->srqs[id]->ibv;
        else
            return;
        if (subject == Subject::qp && ev.event_type != IBV_EVENT_SQ_DRAINED && ev.event_type != IBV_EVENT_COMM_EST &&
            ev.event_type != IBV_EVENT_QP_LAST_WQE_REACHED)
            dev->qps[id]->state.store(IBV_QPS_ERR, std::memory_order_relaxed);
        dev->async_events.push_back(ev);
        signal(dev);
    }
    RDMA_LOG(INFO, dev, "async event %d for %u", static_cast<int>(ev.event_type), id);
}

/* The CNQ's interrupt, on the EAL interrupt thread: armed CQs that
 * completed become completion events. */
void cnq_isr(void* arg)
{
    auto* dev = static_cast<Device*>(arg);
    ecore::sb_update_sb_idx(dev->cnq_sb);
    ecore::rdma_process_eq(*dev->hwfn); /* a VF's EQ is on this SB */
    const uint16_t prod = osal::observe(&dev->cnq_sb.sb_virt->pi_array[hsi::rdma::RDMA_PI_CNQ]);
    bool any = false;
    {
        std::lock_guard guard(dev->events_lock);
        for (; dev->cnq_cons != prod; dev->cnq_cons++) {
            const auto& entry = dev->cnq_ring.as<hsi::rdma::CnqEntry>()[dev->cnq_cons & (CNQ_ENTRIES - 1)];
            const uint64_t id = hsi::from_regpair(entry.cq_handle);
            if (id < dev->cqs.size() && dev->cqs[id] != nullptr) {
                dev->cq_events.push_back(CqEvent{dev->cqs[id]});
                any = true;
            }
        }
        if (any)
            signal(dev);
    }
    ecore::sb_ack(dev->cnq_sb, hsi::IguIntOp::enable);
}

/* Everything the device still holds of the port's RDMA, at ethdev close. */
void teardown(Device* dev)
{
    ecore::Hwfn& hwfn = *dev->hwfn;
    for (Qp* qp : dev->qps)
        if (qp != nullptr)
            ecore::rdma_destroy_qp(hwfn, qp->id);
    for (Srq* srq : dev->srqs)
        if (srq != nullptr)
            ecore::rdma_destroy_srq(hwfn, srq->id);
    for (Cq* cq : dev->cqs)
        if (cq != nullptr)
            ecore::rdma_destroy_cq(hwfn, cq->id);
    /* Its memory regions too: the RDMA function then closes, and the
     * storms let go of its memory before the port frees it. */
    ecore::rdma_release_tids(hwfn);
    RDMA_LOG(WARNING, dev, "port closed with its RDMA device open: %u objects abandoned", dev->objects);
}

void stop(Device* dev)
{
    ecore::Hwfn& hwfn = *dev->hwfn;
    dev->cnq_irq.release();
    if (ecore::Status st = ecore::rdma_stop(hwfn); st != ecore::Status::success)
        RDMA_LOG(WARNING, dev, "rdma_stop: %s", ecore::status_name(st));
    ecore::rdma_remove_user(hwfn, dev->user.dpi);
    ecore::FunctionPtt ptt(hwfn);
    if (ptt)
        ecore::int_sb_release(hwfn, *ptt, dev->cnq_sb);
    if (dev->event_fd >= 0)
        ::close(dev->event_fd);
}

int start(Device* dev)
{
    ecore::Hwfn& hwfn = *dev->hwfn;
    const uint16_t sb_id = ecore::rdma_get_sb_id(hwfn, 0);
    dev->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (dev->event_fd < 0)
        return -errno;
    if (dev->cnq_ring.alloc(CNQ_ENTRIES * sizeof(hsi::rdma::CnqEntry), "rdma_cnq") != 0 ||
        dev->cnq_sb_mem.alloc(sizeof(hsi::StatusBlock), "rdma_cnq_sb") != 0)
        return -ENOMEM;
    {
        ecore::FunctionPtt ptt(hwfn);
        if (!ptt)
            return -EBUSY;
        if (ecore::Status st = ecore::int_sb_init(hwfn, *ptt, dev->cnq_sb, dev->cnq_sb_mem.va(),
                                                  dev->cnq_sb_mem.iova(), sb_id);
            st != ecore::Status::success)
            return ecore::status_to_errno(st);
    }
    const int vector = net::port_pci(dev->port).msix_eventfd(net::port_sb_vector(dev->port, sb_id));
    if (int rc = dev->cnq_irq.request(vector, cnq_isr, dev); rc != 0)
        return rc;
    ecore::sb_ack(dev->cnq_sb, hsi::IguIntOp::enable);

    ecore::RdmaStartParams p;
    p.events = [dev](hsi::rdma::RdmaEvent e, uint32_t id) { async_event(dev, e, id); };
    p.desired_cnq = 1;
    p.cnq[0] = ecore::RdmaCnqParams{dev->cnq_ring.iova(), CNQ_ENTRIES, sb_id};
    p.max_mtu = dev->mtu;
    p.mac_addr = dev->mac;
    if (ecore::Status st = ecore::rdma_start(hwfn, p); st != ecore::Status::success)
        return ecore::status_to_errno(st);
    if (ecore::Status st = ecore::rdma_add_user(hwfn, &dev->user); st != ecore::Status::success) {
        ecore::rdma_stop(hwfn);
        return ecore::status_to_errno(st);
    }
    dev->gids = {link_local_gid(dev->mac)};
    for (const auto& ip : {net::port_devargs(dev->port).ipv4, net::port_devargs(dev->port).ipv6}) {
        if (ip) {
            ibv_gid gid;
            std::memcpy(gid.raw, ip->addr.data(), 16);
            dev->gids.push_back(gid);
        }
    }
    if (int rc = publish_gids(dev); rc != 0)
        return rc;
    const ecore::RdmaDevice caps = ecore::rdma_query_device(hwfn);
    dev->qps.assign(caps.max_qp, nullptr);
    dev->cqs.assign(caps.max_cq, nullptr);
    dev->srqs.assign(caps.max_srq, nullptr);
    return 0;
}

int fail(int err)
{
    errno = err;
    return -1;
}

} // namespace

void forget_events(Device* dev, const void* object)
{
    std::erase_if(dev->cq_events, [object](const CqEvent& e) { return &e.cq->ibv == object; });
    /* The element of an affiliated event is its object's address: no port
     * number equals one. */
    std::erase_if(dev->async_events, [object](const ibv_async_event& e) { return e.element.qp == object; });
    /* Nothing left: the event fd stops being readable. */
    uint64_t drained;
    if (dev->cq_events.empty() && dev->async_events.empty())
        (void)!::read(dev->event_fd, &drained, sizeof(drained));
}

int publish_gids(Device* dev)
{
    std::vector<ecore::RoceIp> addresses;
    for (size_t i = 1; i < dev->gids.size(); i++) {
        ecore::RoceIp ip;
        std::memcpy(ip.data(), dev->gids[i].raw, 16);
        addresses.push_back(ip);
    }
    return ecore::status_to_errno(ecore::roce_set_addresses(*dev->hwfn, addresses));
}

ibv_gid link_local_gid(const std::array<uint8_t, 6>& mac)
{
    ibv_gid gid{};
    gid.raw[0] = 0xfe;
    gid.raw[1] = 0x80;
    gid.raw[8] = mac[0] ^ 0x02;
    gid.raw[9] = mac[1];
    gid.raw[10] = mac[2];
    gid.raw[11] = 0xff;
    gid.raw[12] = 0xfe;
    gid.raw[13] = mac[3];
    gid.raw[14] = mac[4];
    gid.raw[15] = mac[5];
    return gid;
}

} // namespace cna::rdma

using namespace cna;
using namespace cna::rdma;

extern "C" {

cna_rdma_dev* cna_rdma_open(uint16_t port_id)
{
    net::EthPort* port = net::rdma_port(port_id);
    if (port == nullptr) {
        RDMA_LOG_PORT(ERR, port_id, "not a net_cna or net_cna_vf port");
        errno = ENODEV;
        return nullptr;
    }
    if (!net::port_devargs(port).rdma) {
        RDMA_LOG_PORT(ERR, port_id, "RDMA is off on this port (devarg rdma=0)");
        errno = ENOTSUP;
        return nullptr;
    }
    if (net::port_is_vf(port) && !net::port_started(port)) {
        RDMA_LOG_PORT(ERR, port_id, "a VF's RoCE takes the MAC its started port filters: start the port first");
        errno = EAGAIN;
        return nullptr;
    }
    if (net::rdma_teardown(port)) {
        RDMA_LOG_PORT(ERR, port_id, "its RDMA device is open already");
        errno = EBUSY;
        return nullptr;
    }
    auto dev = std::make_unique<Device>();
    dev->port = port;
    dev->hwfn = &net::port_hwfn(port);
    dev->inline_adapter = net::inline_adapter(port);
    dev->port_id = port_id;
    rte_ether_addr mac;
    rte_eth_macaddr_get(port_id, &mac);
    std::memcpy(dev->mac.data(), mac.addr_bytes, 6);
    rte_eth_dev_get_mtu(port_id, &dev->mtu);
    if (int rc = start(dev.get()); rc != 0) {
        RDMA_LOG(ERR, dev.get(), "cannot open: %s", strerror(-rc));
        stop(dev.get());
        errno = -rc;
        return nullptr;
    }
    Device* d = dev.release();
    net::rdma_teardown(port) = [d] {
        teardown(d);
        d->objects = 0;
        stop(d);
    };
    RDMA_LOG(INFO, d, "RDMA device open: DPI %u", d->user.dpi);
    return reinterpret_cast<cna_rdma_dev*>(d);
}

int cna_rdma_close(cna_rdma_dev* handle)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    if (dev->objects != 0) {
        RDMA_LOG(ERR, dev, "close: %u objects still exist", dev->objects);
        return fail(EBUSY);
    }
    net::rdma_teardown(dev->port) = nullptr;
    stop(dev);
    delete dev;
    return 0;
}

int cna_rdma_query_device(cna_rdma_dev* handle, ibv_device_attr* attr)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    const ecore::RdmaDevice c = ecore::rdma_query_device(*dev->hwfn);
    *attr = ibv_device_attr{};
    std::snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u", static_cast<unsigned>(c.fw_ver >> 24),
                  static_cast<unsigned>(c.fw_ver >> 16) & 0xff, static_cast<unsigned>(c.fw_ver >> 8) & 0xff);
    attr->node_guid = c.node_guid;
    attr->sys_image_guid = c.node_guid;
    attr->max_mr_size = c.max_mr_size;
    attr->page_size_cap = c.page_size_cap;
    attr->vendor_id = c.vendor_id;
    attr->vendor_part_id = c.vendor_part_id;
    attr->hw_ver = c.hw_ver;
    attr->max_qp = static_cast<int>(c.max_qp);
    attr->max_qp_wr = static_cast<int>(c.max_qp_wr);
    /* No IBV_DEVICE_SRQ_RESIZE: an SRQ's size is its creation's. */
    attr->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SHUTDOWN_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT;
    attr->max_sge = static_cast<int>(c.max_sge);
    attr->max_sge_rd = static_cast<int>(c.max_sge);
    attr->max_cq = static_cast<int>(c.max_cq);
    attr->max_cqe = static_cast<int>(c.max_cqe - 1);
    attr->max_mr = static_cast<int>(c.max_mr);
    attr->max_pd = static_cast<int>(c.max_pd);
    attr->max_qp_rd_atom = static_cast<int>(c.max_qp_rd_atom);
    attr->max_qp_init_rd_atom = static_cast<int>(c.max_qp_init_rd_atom);
    attr->max_res_rd_atom = static_cast<int>(c.max_qp * c.max_qp_rd_atom);
    attr->atomic_cap = IBV_ATOMIC_HCA;
    attr->max_srq = static_cast<int>(c.max_srq);
    attr->max_srq_wr = static_cast<int>(c.max_srq_wr);
    attr->max_srq_sge = static_cast<int>(c.max_srq_sge);
    attr->max_pkeys = static_cast<uint16_t>(c.max_pkeys);
    attr->max_ah = MAX_AHS;
    attr->phys_port_cnt = 1;
    return 0;
}

int cna_rdma_query_port(cna_rdma_dev* handle, uint8_t port_num, ibv_port_attr* attr)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    if (port_num != 1)
        return EINVAL;
    const ecore::RdmaPort p = ecore::rdma_query_port(*dev->hwfn);
    *attr = ibv_port_attr{};
    attr->state = p.active ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    attr->max_mtu = IBV_MTU_4096;
    attr->active_mtu = p.active_mtu >= 4096 ? IBV_MTU_4096
                       : p.active_mtu >= 2048 ? IBV_MTU_2048
                       : p.active_mtu >= 1024 ? IBV_MTU_1024
                       : p.active_mtu >= 512  ? IBV_MTU_512
                                              : IBV_MTU_256;
    attr->gid_tbl_len = MAX_GIDS;
    attr->port_cap_flags = 0;
    attr->max_msg_sz = static_cast<uint32_t>(hsi::rdma::MAX_MSG_SIZE);
    attr->pkey_tbl_len = 1;
    attr->link_layer = IBV_LINK_LAYER_ETHERNET;
    attr->phys_state = p.active ? 5 /* LinkUp */ : 3 /* Disabled */;
    attr->max_vl_num = 1;     /* VL0 only */
    attr->active_width = 2;   /* 4x */
    attr->active_speed = 32;  /* 25 Gb/s per lane: 100 Gb/s on 4x */
    return 0;
}

int cna_rdma_query_gid(cna_rdma_dev* handle, uint8_t port_num, int index, ibv_gid* gid)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    if (port_num != 1 || index < 0 || static_cast<size_t>(index) >= dev->gids.size())
        return fail(EINVAL);
    *gid = dev->gids[static_cast<size_t>(index)];
    return 0;
}

int cna_rdma_add_gid(cna_rdma_dev* handle, const ibv_gid* gid)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    for (const ibv_gid& g : dev->gids)
        if (std::memcmp(g.raw, gid->raw, 16) == 0)
            return fail(EEXIST);
    if (dev->gids.size() == MAX_GIDS)
        return fail(ENOSPC);
    dev->gids.push_back(*gid);
    if (int rc = publish_gids(dev); rc != 0) {
        dev->gids.pop_back();
        return fail(-rc);
    }
    return static_cast<int>(dev->gids.size() - 1);
}

ibv_pd* cna_rdma_alloc_pd(cna_rdma_dev* handle)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    auto pd = std::make_unique<Pd>();
    pd->dev = dev;
    if (ecore::Status st = ecore::rdma_alloc_pd(*dev->hwfn, &pd->id); st != ecore::Status::success) {
        errno = -ecore::status_to_errno(st);
        return nullptr;
    }
    pd->ibv.handle = pd->id;
    dev->objects++;
    return &pd.release()->ibv;
}

int cna_rdma_dealloc_pd(ibv_pd* ibv)
{
    auto* pd = reinterpret_cast<Pd*>(ibv);
    if (pd->users != 0) {
        RDMA_LOG(ERR, pd->dev, "dealloc_pd: %u objects still use PD %u", pd->users, pd->id);
        return EBUSY;
    }
    ecore::rdma_free_pd(*pd->dev->hwfn, pd->id);
    pd->dev->objects--;
    delete pd;
    return 0;
}

int cna_rdma_query_port_counters(cna_rdma_dev* handle, cna_rdma_port_counters* counters)
{
    ecore::Hwfn& hwfn = *reinterpret_cast<Device*>(handle)->hwfn;
    ecore::FunctionPtt ptt(hwfn);
    if (!ptt)
        return EBUSY;
    hsi::rdma::RoceStats s;
    if (ecore::Status st = ecore::rdma_get_stats(hwfn, *ptt, &s); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    *counters = cna_rdma_port_counters{
        .rx_packets = s.rx_packets,
        .tx_packets = s.tx_packets,
        .rx_bytes = s.rx_bytes,
        .tx_bytes = s.tx_bytes,
        .icrc_errors = s.icrc_errors,
        .bad_packets = s.bad_packets,
        .retransmitted = s.retransmitted,
        .timeouts = s.timeouts,
        .naks_sent = s.naks_sent,
        .naks_received = s.naks_received,
        .rnr_naks_sent = s.rnr_naks_sent,
        .rnr_naks_received = s.rnr_naks_received,
        .duplicates = s.duplicates,
        .out_of_sequence = s.out_of_sequence,
        .qkey_violations = s.qkey_violations,
        .ud_dropped = s.ud_dropped,
        .mads_dropped = s.mads_dropped,
        .pkey_violations = s.pkey_violations,
    };
    return 0;
}

int cna_rdma_event_fd(cna_rdma_dev* handle) { return reinterpret_cast<Device*>(handle)->event_fd; }

int cna_rdma_get_cq_event(cna_rdma_dev* handle, ibv_cq** cq, void** cq_context)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    std::lock_guard guard(dev->events_lock);
    if (dev->cq_events.empty())
        return fail(EAGAIN);
    Cq* c = dev->cq_events.front().cq;
    dev->cq_events.pop_front();
    c->events.fetch_add(1, std::memory_order_relaxed);
    *cq = &c->ibv;
    *cq_context = c->ibv.cq_context;
    uint64_t drained;
    if (dev->cq_events.empty() && dev->async_events.empty())
        (void)!::read(dev->event_fd, &drained, sizeof(drained));
    return 0;
}

void cna_rdma_ack_cq_events(ibv_cq* ibv, unsigned int nevents)
{
    reinterpret_cast<Cq*>(ibv)->events_acked.fetch_add(nevents, std::memory_order_relaxed);
}

int cna_rdma_get_async_event(cna_rdma_dev* handle, ibv_async_event* event)
{
    auto* dev = reinterpret_cast<Device*>(handle);
    std::lock_guard guard(dev->events_lock);
    if (dev->async_events.empty())
        return fail(EAGAIN);
    *event = dev->async_events.front();
    dev->async_events.pop_front();
    uint64_t drained;
    if (dev->cq_events.empty() && dev->async_events.empty())
        (void)!::read(dev->event_fd, &drained, sizeof(drained));
    return 0;
}

} // extern "C"
