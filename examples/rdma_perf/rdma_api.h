/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA interface rdma_perf runs on: the RDMA PMD's own (cna_rdma.h,
 * rdma_perf), or libibverbs with cna's devices through its provider
 * (rdma_perf_verbs, built with CNA_PERF_VERBS, run under cna-rdma-run).
 * The same test code on both measures what the provider costs.
 */
#pragma once

#include <cstdint>

#include <infiniband/verbs.h>
#include <rte_cycles.h>

#ifndef CNA_PERF_VERBS
#include "cna_rdma.h"
#endif

namespace cna::examples::perf::api {

#ifdef CNA_PERF_VERBS

using Device = ibv_context;
/* Device cna<index>, as libibverbs lists it; null (printed) if none. */
Device* open(uint16_t index);
inline int close(Device* d) { return ibv_close_device(d); }
inline int query_port(Device* d, ibv_port_attr* attr) { return ibv_query_port(d, 1, attr); }
inline int query_gid(Device* d, int index, ibv_gid* gid) { return ibv_query_gid(d, 1, index, gid); }
inline ibv_pd* alloc_pd(Device* d) { return ibv_alloc_pd(d); }
inline ibv_cq* create_cq(Device* d, int cqe) { return ibv_create_cq(d, cqe, nullptr, nullptr, 0); }
inline ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t len, int access) { return ibv_reg_mr(pd, addr, len, access); }
inline ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) { return ibv_create_qp(pd, attr); }
inline int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) { return ibv_modify_qp(qp, attr, mask); }
inline int destroy_qp(ibv_qp* qp) { return ibv_destroy_qp(qp); }
inline int destroy_cq(ibv_cq* cq) { return ibv_destroy_cq(cq); }
inline int dereg_mr(ibv_mr* mr) { return ibv_dereg_mr(mr); }
inline int dealloc_pd(ibv_pd* pd) { return ibv_dealloc_pd(pd); }
inline int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return ibv_post_send(qp, wr, bad); }
inline int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ibv_post_recv(qp, wr, bad); }
inline int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return ibv_poll_cq(cq, n, wc); }
/* No EAL here: the TSC's rate, measured once against the monotonic clock. */
double tsc_hz();

#else

using Device = cna_rdma_dev;
inline Device* open(uint16_t eth_port) { return cna_rdma_open(eth_port); }
inline int close(Device* d) { return cna_rdma_close(d); }
inline int query_port(Device* d, ibv_port_attr* attr) { return cna_rdma_query_port(d, 1, attr); }
inline int query_gid(Device* d, int index, ibv_gid* gid) { return cna_rdma_query_gid(d, 1, index, gid); }
inline ibv_pd* alloc_pd(Device* d) { return cna_rdma_alloc_pd(d); }
inline ibv_cq* create_cq(Device* d, int cqe) { return cna_rdma_create_cq(d, cqe, nullptr, 0); }
inline ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t len, int access) { return cna_rdma_reg_mr(pd, addr, len, access); }
inline ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) { return cna_rdma_create_qp(pd, attr); }
inline int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) { return cna_rdma_modify_qp(qp, attr, mask); }
inline int destroy_qp(ibv_qp* qp) { return cna_rdma_destroy_qp(qp); }
inline int destroy_cq(ibv_cq* cq) { return cna_rdma_destroy_cq(cq); }
inline int dereg_mr(ibv_mr* mr) { return cna_rdma_dereg_mr(mr); }
inline int dealloc_pd(ibv_pd* pd) { return cna_rdma_dealloc_pd(pd); }
inline int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return cna_rdma_post_send(qp, wr, bad); }
inline int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return cna_rdma_post_recv(qp, wr, bad); }
inline int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return cna_rdma_poll_cq(cq, n, wc); }
inline double tsc_hz() { return static_cast<double>(rte_get_tsc_hz()); }

#endif

} // namespace cna::examples::perf::api
