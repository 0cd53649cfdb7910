/* SPDX-License-Identifier: BSD-3-Clause
 * RDMA (guide chapter "RDMA protocol"): the RDMA PF, its users (DPIs),
 * protection domains, CQs, QPs, SRQs and memory regions (TIDs), and the
 * device's asynchronous events. RoCE-specific parts are named roce_*.
 *
 * Order: set Hwfn::pf_params.rdma before resc_alloc (it sizes the ILT),
 * then after hw_init: rdma_start -> rdma_add_user -> objects; tear-down in
 * reverse, rdma_stop before hw_stop. Every call that talks to the device
 * posts a ramrod and waits (bounded) for its completion: call from a
 * control thread, never from a fastpath lcore.
 *
 * On a VF, the same calls: its RDMA is its own, with its own slowpath
 * (SPQ, EQ, ILT), which rdma_start starts and rdma_stop stops; its EQ is on
 * CNQ 0's status block, whose handler calls rdma_process_eq. Its
 * pf_params.rdma stay within hsi::iov::VF_RDMA_QPS and VF_RDMA_TIDS; it has
 * one user (hsi::iov::VF_DPI); its link is its bulletin board's.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ecore.h"
#include "ecore_hw.h"
#include "ecore_rdma_qp_state.h"
#include "hsi_rdma.h"

namespace cna::ecore {

/* ---- The RDMA PF ---------------------------------------------------------- */

struct RdmaCnqParams {
    uint64_t ring_iova = 0;   /* hsi::rdma::CnqEntry ring */
    uint16_t ring_size = 0;   /* a power of two, at least one entry per CQ bound to it */
    uint16_t sb_id = 0;       /* rdma_get_sb_id(i): the CNQ's fastpath status block */
};

/* Affiliated events (a QP, CQ or SRQ id) and unaffiliated ones (port
 * active/down: the upper layer derives those from link_update). Runs on
 * whichever thread processes the EQ (the EAL interrupt thread, or a
 * control thread waiting for a ramrod): must not block or post ramrods. */
using RdmaEventCallback = std::function<void(hsi::rdma::RdmaEvent event, uint32_t id)>;

struct RdmaStartParams {
    RdmaEventCallback events;
    uint8_t desired_cnq = 1;
    std::array<RdmaCnqParams, hsi::rdma::MAX_CNQS> cnq{};
    uint16_t max_mtu = 1500;              /* the port's MTU: the largest path MTU is below it */
    std::array<uint8_t, 6> mac_addr{};    /* RoCE frames to this MAC are RDMA's */
};

/* The SB of CNQ `cnq`: RDMA takes the PF's last status blocks, one per
 * CNQ, so L2 keeps the first ones. */
uint16_t rdma_get_sb_id(const Hwfn& hwfn, uint32_t cnq);
/* How many SBs RDMA leaves to L2 with `cnqs` CNQs. */
uint32_t rdma_l2_sbs(const Hwfn& hwfn, uint32_t cnqs);

Status rdma_start(Hwfn& hwfn, const RdmaStartParams& params);
/* Every object must be gone (ecore refuses otherwise, as does the device). */
Status rdma_stop(Hwfn& hwfn);
bool rdma_started(const Hwfn& hwfn);

/* A user: a DPI, its page of the doorbell BAR. */
struct RdmaUser {
    uint16_t dpi = 0;
    volatile uint8_t* doorbells = nullptr; /* hsi::DPI_SIZE bytes */
};
Status rdma_add_user(Hwfn& hwfn, RdmaUser* user);
void rdma_remove_user(Hwfn& hwfn, uint16_t dpi);

/* What the device can do (verbs' query_device). */
struct RdmaDevice {
    uint32_t vendor_id = 0;
    uint32_t vendor_part_id = 0;
    uint32_t hw_ver = 0;
    uint64_t fw_ver = 0;
    uint64_t node_guid = 0;          /* EUI-64 of the MAC, network order */
    uint64_t max_mr_size = 0;
    uint64_t page_size_cap = 0;
    uint32_t max_qp = 0, max_qp_wr = 0, max_sge = 0, max_inline = 0;
    uint32_t max_cq = 0, max_cqe = 0, max_mr = 0, max_pd = 0;
    uint32_t max_qp_rd_atom = 0, max_qp_init_rd_atom = 0;
    uint32_t max_srq = 0, max_srq_wr = 0, max_srq_sge = 0;
    uint32_t max_pkeys = 1;
    uint32_t num_cnqs = 0;
};
RdmaDevice rdma_query_device(const Hwfn& hwfn);

/* The port as RDMA sees it (verbs' query_port). */
struct RdmaPort {
    bool active = false;             /* the link is up */
    uint32_t max_mtu = 0;            /* bytes: 256..4096 */
    uint32_t active_mtu = 0;         /* the largest IB MTU the port's MTU carries */
    uint32_t link_speed_mbps = 0;
    uint32_t gid_table_len = 0;
};
RdmaPort rdma_query_port(Hwfn& hwfn);

/* ---- Protection domains and memory regions -------------------------------- */

Status rdma_alloc_pd(Hwfn& hwfn, uint16_t* pd);
void rdma_free_pd(Hwfn& hwfn, uint16_t pd);

/* A TID: an MR's index, and the key byte it is registered with next. */
Status rdma_alloc_tid(Hwfn& hwfn, uint32_t* tid);
void rdma_free_tid(Hwfn& hwfn, uint32_t tid);

struct RdmaRegisterTidParams {
    uint32_t tid = 0;
    uint8_t key = 0;
    uint16_t pd = 0;
    uint8_t access = 0;               /* hsi::rdma::access::* */
    uint64_t va = 0;
    uint64_t length = 0;
    bool zero_based = false;
    uint8_t page_shift = 12;
    uint32_t first_page_offset = 0;
    uint64_t pbl_iova = 0;            /* uint64_t page IOVAs; may be freed on return */
    uint32_t num_pages = 0;
};
Status rdma_register_tid(Hwfn& hwfn, const RdmaRegisterTidParams& params);
Status rdma_deregister_tid(Hwfn& hwfn, uint32_t tid);
/* Every TID still allocated, deregistered and freed: what a close that
 * cannot wait for its application gives back, so that rdma_stop may
 * follow. */
void rdma_release_tids(Hwfn& hwfn);

/* ---- CQs ---------------------------------------------------------------- */

/* The CQ's CNQ entries carry its id. */
struct RdmaCreateCqParams {
    uint16_t dpi = 0;
    uint8_t cnq = 0;
    uint64_t ring_iova = 0;           /* hsi::rdma::RdmaCqe ring, zeroed */
    uint32_t ring_size = 0;           /* a power of two */
};
Status rdma_create_cq(Hwfn& hwfn, const RdmaCreateCqParams& params, uint16_t* cq_id);
/* *old_cqes: CQEs written to the old ring, ever (drain it up to there). */
Status rdma_resize_cq(Hwfn& hwfn, uint16_t cq_id, uint64_t ring_iova, uint32_t ring_size, uint32_t* old_cqes);
Status rdma_destroy_cq(Hwfn& hwfn, uint16_t cq_id);

/* ---- SRQs ----------------------------------------------------------------- */

struct RdmaCreateSrqParams {
    uint16_t pd = 0;
    uint16_t dpi = 0;
    uint64_t ring_iova = 0;
    uint16_t ring_size = 0;           /* WQEs, a power of two */
    uint8_t wqe_shift = 0;            /* slots of RQ_WQE_UNIT << shift bytes */
    uint8_t max_sge = 0;
    uint32_t limit = 0;
};
Status rdma_create_srq(Hwfn& hwfn, const RdmaCreateSrqParams& params, uint16_t* srq_id);
Status rdma_modify_srq(Hwfn& hwfn, uint16_t srq_id, uint32_t limit);
Status rdma_destroy_srq(Hwfn& hwfn, uint16_t srq_id);

/* ---- QPs ------------------------------------------------------------------ */

struct RdmaCreateQpParams {
    RdmaQpType type = RdmaQpType::rc;
    uint16_t pd = 0;
    uint16_t dpi = 0;
    uint16_t sq_cq = 0, rq_cq = 0;
    std::optional<uint16_t> srq;
    uint64_t sq_iova = 0, rq_iova = 0;
    uint16_t sq_size = 0, rq_size = 0; /* WQEs, powers of two (rq_size 0 with an SRQ) */
    uint8_t sq_wqe_shift = 0, rq_wqe_shift = 0;
    uint8_t max_send_sge = 0, max_recv_sge = 0;
    uint16_t max_inline = 0;
    bool signal_all = false;
};
/* The QP (in RESET) and its number on the wire. */
Status rdma_create_qp(Hwfn& hwfn, const RdmaCreateQpParams& params, uint16_t* qp_id, uint32_t* qpn);

/* Only what modify_flags (rdma_qp_attr::*) names is applied; the
 * transition's required attributes must be among them. */
struct RdmaModifyQpParams {
    uint32_t modify_flags = 0;
    RdmaQpState new_state = RdmaQpState::reset;
    RdmaQpState cur_state = RdmaQpState::reset;  /* with CUR_STATE */
    uint8_t access = 0;                          /* hsi::rdma::access::REMOTE_* | LOCAL_WRITE */
    uint16_t pkey_index = 0;
    uint8_t port = 1;
    hsi::rdma::RocePath path{};                  /* PATH: where the peer is, MACs resolved */
    uint16_t path_mtu = 0;                       /* bytes */
    uint32_t dest_qpn = 0;
    uint32_t rq_psn = 0, sq_psn = 0;
    uint8_t timeout = 0, retry_cnt = 0, rnr_retry = 0, min_rnr_timer = 0;
    uint8_t max_rd_atomic = 0, max_dest_rd_atomic = 0;
    bool sqd_async_notify = false;
    uint32_t qkey = 0;                           /* QKEY (UD) */
};
Status rdma_modify_qp(Hwfn& hwfn, uint16_t qp_id, const RdmaModifyQpParams& params);

struct RdmaQueryQpOut {
    RdmaQpType type = RdmaQpType::rc;
    RdmaQpState state = RdmaQpState::reset;
    hsi::rdma::RdmaError last_error = hsi::rdma::RdmaError::none;
    uint16_t path_mtu = 0;
    uint32_t dest_qpn = 0;
    uint32_t sq_psn = 0, rq_psn = 0;
    uint8_t access = 0, timeout = 0, retry_cnt = 0, rnr_retry = 0, min_rnr_timer = 0;
    uint8_t max_rd_atomic = 0, max_dest_rd_atomic = 0;
    uint32_t qkey = 0;
    hsi::rdma::RoceRequesterContext requester{};
    hsi::rdma::RoceResponderContext responder{};
};
Status rdma_query_qp(Hwfn& hwfn, uint16_t qp_id, RdmaQueryQpOut* out);
Status rdma_destroy_qp(Hwfn& hwfn, uint16_t qp_id);

/* The port's RoCE counters (storm RAM); they count from PF start. */
Status rdma_get_stats(Hwfn& hwfn, Ptt& ptt, hsi::rdma::RoceStats* stats);

/* A VF's EQ shares the status block of its first CNQ: the handler of that
 * SB's interrupt calls this, which completes ramrods and hands out the
 * asynchronous events. A PF's EQ is its slowpath DPC's: nothing to do. */
void rdma_process_eq(Hwfn& hwfn);

/* ---- RoCE addresses and neighbours ------------------------------------------ */

/* An IP address as a GID holds it: IPv4 in its last four bytes (IPv4-mapped). */
using RoceIp = std::array<uint8_t, 16>;
bool roce_is_ipv4(const RoceIp& ip);

/* The PF's IPv4 and IPv6 addresses: the device answers ARP and neighbour
 * solicitations for them (and for the RDMA MAC's link-local address). */
Status roce_set_addresses(Hwfn& hwfn, const std::vector<RoceIp>& addresses);

/* The MAC of `target`, asked from `source` (one of the PF's addresses, of
 * the same family): from the neighbour cache, or by ARP or neighbour
 * discovery on the wire (3 tries within timeout_ms). Status::timeout,
 * logged with the address, when nobody answers. */
Status roce_resolve_neighbour(Hwfn& hwfn, const RoceIp& target, const RoceIp& source, std::array<uint8_t, 6>* mac,
                              uint32_t timeout_ms = 3000);

} // namespace cna::ecore
