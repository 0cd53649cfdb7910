/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA interface the RDMA examples run on, and the environment its
 * devices live in: the RDMA PMD's own (cna_rdma.h, on the EAL and ethdev
 * ports), or libibverbs with cna's devices through its provider (built
 * with CNA_EXAMPLES_VERBS, run under cna-rdma-run). rdma_perf built on
 * both (rdma_perf_verbs the latter) measures what the provider costs.
 */
#pragma once

#include <cstdint>

#include <infiniband/verbs.h>
#include <rte_cycles.h>

#ifndef CNA_EXAMPLES_VERBS
#include "cna_rdma.h"
#endif

namespace cna::examples::api {

/* Up for the program's life, before any device is opened: for the RDMA
 * PMD the EAL and the ethdev ports under its devices; for libibverbs
 * nothing, the provider brings cna's devices up when first asked. */
class Environment {
public:
    /* rte_eal_init(argc, argv); args() is how many arguments it took (0
     * on libibverbs), or -1 if it failed (printed). */
    Environment(int argc, char** argv);
    /* Stops the ports start_ports() was given, then the EAL. */
    ~Environment();
    Environment(const Environment&) = delete;
    Environment& operator=(const Environment&) = delete;

    int args() const { return args_; }
    /* Ethdev ports first..last configured (with the MTU, unless 0),
     * started and their links up: a cabled port's comes up when its peer
     * has started too. False (printed) if not. */
    bool start_ports(uint16_t first, uint16_t last, uint16_t mtu = 0);

private:
    int args_ = 0;
    uint16_t first_ = 1, last_ = 0;  /* the ports start_ports() was given: none yet */
};

#ifdef CNA_EXAMPLES_VERBS

using Device = ibv_context;
/* Device cna<index>, as libibverbs lists it; null (printed) if none. */
Device* open(uint16_t index);
inline int close(Device* d) { return ibv_close_device(d); }
inline ibv_cq* create_cq(Device* d, int cqe) { return ibv_create_cq(d, cqe, nullptr, nullptr, 0); }
/* No EAL here: the TSC's rate, measured once against the monotonic clock. */
double tsc_hz();
#define CNA_EXAMPLES_CALL(name) ibv_##name

#else

using Device = cna_rdma_dev;
inline Device* open(uint16_t eth_port) { return cna_rdma_open(eth_port); }
inline int close(Device* d) { return cna_rdma_close(d); }
inline ibv_cq* create_cq(Device* d, int cqe) { return cna_rdma_create_cq(d, cqe, nullptr, 0); }
inline double tsc_hz() { return static_cast<double>(rte_get_tsc_hz()); }
#define CNA_EXAMPLES_CALL(name) cna_rdma_##name

#endif

/* The rest both interfaces spell alike but for the prefix (ibv_, cna_rdma_). */
inline int query_port(Device* d, ibv_port_attr* attr) { return CNA_EXAMPLES_CALL(query_port)(d, 1, attr); }
inline int query_gid(Device* d, int index, ibv_gid* gid) { return CNA_EXAMPLES_CALL(query_gid)(d, 1, index, gid); }
inline ibv_pd* alloc_pd(Device* d) { return CNA_EXAMPLES_CALL(alloc_pd)(d); }
inline ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t len, int access)
{
    return CNA_EXAMPLES_CALL(reg_mr)(pd, addr, len, access);
}
inline ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) { return CNA_EXAMPLES_CALL(create_qp)(pd, attr); }
inline int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) { return CNA_EXAMPLES_CALL(modify_qp)(qp, attr, mask); }
inline int destroy_qp(ibv_qp* qp) { return CNA_EXAMPLES_CALL(destroy_qp)(qp); }
inline int destroy_cq(ibv_cq* cq) { return CNA_EXAMPLES_CALL(destroy_cq)(cq); }
inline int dereg_mr(ibv_mr* mr) { return CNA_EXAMPLES_CALL(dereg_mr)(mr); }
inline int dealloc_pd(ibv_pd* pd) { return CNA_EXAMPLES_CALL(dealloc_pd)(pd); }
inline int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad)
{
    return CNA_EXAMPLES_CALL(post_send)(qp, wr, bad);
}
inline int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad)
{
    return CNA_EXAMPLES_CALL(post_recv)(qp, wr, bad);
}
inline int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return CNA_EXAMPLES_CALL(poll_cq)(cq, n, wc); }

#undef CNA_EXAMPLES_CALL

} // namespace cna::examples::api
