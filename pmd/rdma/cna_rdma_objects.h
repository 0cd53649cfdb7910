/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PMD's objects: each verbs object (ibv_pd, ibv_mr, ibv_cq,
 * ibv_qp, ibv_srq, ibv_ah) is the first member of ours, so the pointer the
 * application holds is ours too. What the fastpath touches per call sits
 * in the queue objects: ring, producer or consumer, doorbell.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "cna_rdma.h"
#include "cna_rdma_port.h"
#include "ecore_int_api.h"
#include "ecore_rdma_api.h"
#include "hsi_rdma.h"
#include "osal.h"

namespace cna::net {
struct EthPort;
}

namespace cna::rdma {

struct Device;

struct Pd {
    ibv_pd ibv{};
    Device* dev = nullptr;
    uint16_t id = 0;
    uint32_t users = 0;  /* MRs, QPs and SRQs of the PD */
};

struct Mr {
    ibv_mr ibv{};
    Pd* pd = nullptr;
    uint32_t tid = 0;
    std::vector<uint64_t> runs; /* the device's AppRuns it uses (not DPDK memory) */
};

/* An address handle (cna_rdma_ah): the RoCEv2 path a UD QP's WQEs carry,
 * its MACs resolved when it was made; in host memory only. */
inline constexpr uint32_t MAX_AHS = 65536;
static_assert(sizeof(hsi::rdma::RocePath) <= sizeof(cna_rdma_ah::path));

/* Application memory the device reaches at IOVA = VA, mapped in runs of
 * pages: a region maps what no other region mapped yet and shares the
 * runs that are, so regions may overlap; a run goes when no region uses
 * it. */
struct AppRun {
    uint64_t len = 0;
    uint32_t users = 0;
};

struct Cq {
    ibv_cq ibv{};
    Device* dev = nullptr;
    uint16_t id = 0;
    osal::DmaMem ring;
    uint32_t mask = 0;
    uint32_t shift = 0;                 /* log2 of the ring size: the phase of a pass */
    uint32_t cons = 0;                  /* CQEs consumed, ever */
    uint32_t ring_start = 0;            /* cons when the ring began: a resize starts a new one */
    /* The completions a resize took from the ring it replaced, which
     * poll_cq returns first (resize_cq and poll_cq are never concurrent). */
    std::vector<ibv_wc> carried;
    std::size_t carried_next = 0;
    uint32_t arm_seq = 0;
    volatile uint32_t* db_cons = nullptr;
    volatile uint32_t* db_arm = nullptr;
    uint32_t users = 0;
    std::atomic<uint32_t> events{0};    /* completion events handed out */
    std::atomic<uint32_t> events_acked{0};
};

struct Srq {
    ibv_srq ibv{};
    Device* dev = nullptr;
    Pd* pd = nullptr;
    uint16_t id = 0;
    osal::DmaMem ring;
    uint32_t mask = 0;
    uint8_t wqe_shift = 0;
    uint32_t max_sge = 0;
    uint32_t prod = 0;
    std::atomic<uint32_t> cons{0};      /* WQEs completed: poll_cq's */
    volatile uint32_t* db = nullptr;
    uint32_t users = 0;
};

struct Qp {
    ibv_qp ibv{};
    Device* dev = nullptr;
    Pd* pd = nullptr;
    Cq* send_cq = nullptr;
    Cq* recv_cq = nullptr;
    Srq* srq = nullptr;
    uint16_t id = 0;
    bool ud = false;                    /* IBV_QPT_UD: a UdAddress follows each SqWqe */
    bool sq_sig_all = false;
    uint32_t max_send_sge = 0, max_recv_sge = 0, max_inline = 0;
    /* Send queue: post_send's. */
    osal::DmaMem sq;
    uint32_t sq_mask = 0;
    uint8_t sq_shift = 0;               /* slot = 64 << sq_shift bytes */
    uint32_t sq_data = 0;               /* where a slot's SGEs or inline data start */
    uint32_t sq_prod = 0;
    std::atomic<uint32_t> sq_cons{0};   /* WQEs retired: poll_cq's */
    volatile uint32_t* sq_db = nullptr;
    /* Receive queue: post_recv's. */
    osal::DmaMem rq;
    uint32_t rq_mask = 0;
    uint8_t rq_shift = 0;               /* slot = 16 << rq_shift bytes */
    uint32_t rq_prod = 0;
    std::atomic<uint32_t> rq_cons{0};
    volatile uint32_t* rq_db = nullptr;
    /* The attributes query_qp reports that the device does not keep. */
    ibv_ah_attr ah{};
    std::atomic<ibv_qp_state> state{IBV_QPS_RESET};
};

struct CqEvent {
    Cq* cq;
};

struct Device {
    net::EthPort* port = nullptr;
    ecore::Hwfn* hwfn = nullptr;
    /* engine=inline: the adapter a post's doorbell and an empty poll give a
     * pass (net::inline_adapter); nullptr where it runs on its own. */
    osal::PciFunction* inline_adapter = nullptr;
    uint16_t port_id = 0;
    ecore::RdmaUser user;
    std::array<uint8_t, 6> mac{};
    uint16_t mtu = 0;

    /* The CNQ: its ring, status block and interrupt. */
    osal::DmaMem cnq_ring;
    osal::DmaMem cnq_sb_mem;
    ecore::SbInfo cnq_sb;
    osal::MsixIrq cnq_irq;
    uint16_t cnq_cons = 0;

    /* Objects by the device's ids, for poll_cq's CQE -> QP and the CNQ's
     * handle -> CQ (read on lcores and the interrupt thread; written by
     * the control calls while the object cannot complete). */
    std::vector<Qp*> qps;
    std::vector<Cq*> cqs;
    std::vector<Srq*> srqs;
    std::map<uint64_t, AppRun> app_runs; /* by start */
    uint8_t next_key = 1;
    /* The GID table: 0 the link-local address of the MAC, then the port's
     * IPv4 (IPv4-mapped) and IPv6 addresses. */
    std::vector<ibv_gid> gids;

    /* Events for the application. */
    int event_fd = -1;
    std::mutex events_lock;
    std::deque<CqEvent> cq_events;
    std::deque<ibv_async_event> async_events;
    uint32_t objects = 0;               /* PDs, MRs, CQs, QPs, SRQs and AHs alive */
    uint32_t ahs = 0;
};

/* The GID of index 0: fe80::/64 with the MAC's EUI-64. */
ibv_gid link_local_gid(const std::array<uint8_t, 6>& mac);
/* The device learns the GID table's addresses (it answers ARP and ND for
 * them); 0 or -errno. */
int publish_gids(Device* dev);

/* The RoCEv2 path to ah's destination (its GRH): the source a GID of the
 * table, the destination's MAC from its EUI-64 when it is a link-local
 * address made from one, else from ARP or neighbour discovery. entropy
 * picks the UDP source port. 0 or an errno, the reason logged as `what`'s. */
int roce_path(Device* dev, const ibv_ah_attr& ah, uint32_t entropy, const char* what, hsi::rdma::RocePath* path);

/* An object being destroyed: the events still queued for it go, so none
 * names it once it is gone (dev->events_lock held). */
void forget_events(Device* dev, const void* object);

/* The work completion of a CQE the device wrote on cq; the WQE's ring
 * slot is free again. */
void take_cqe(Cq* cq, const hsi::rdma::RdmaCqe& c, ibv_wc& w);

} // namespace cna::rdma
