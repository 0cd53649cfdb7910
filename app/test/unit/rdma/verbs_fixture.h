/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PMD's test fixture: two net_cna ports cabled in one process (or,
 * VfVerbs, two net_cna_vf ports of one PF), each with its RDMA device, a PD, a CQ, a buffer of DPDK memory and its
 * MR, and a QP of the test's type.
 */
#pragma once

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "cna_rdma.h"

constexpr size_t BUF = 256 * 1024;

struct Side {
    std::string name;
    uint16_t port = 0;
    rte_mempool* pool = nullptr;
    cna_rdma_dev* dev = nullptr;
    ibv_pd* pd = nullptr;
    ibv_cq* cq = nullptr;
    ibv_qp* qp = nullptr;
    uint8_t* buf = nullptr;   /* DPDK memory */
    ibv_mr* mr = nullptr;
    ibv_gid gid{};
};

inline std::vector<uint8_t> pattern(size_t len, uint8_t seed)
{
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; i++)
        v[i] = static_cast<uint8_t>(seed + i * 13 + (i >> 9));
    return v;
}

class Verbs : public ::testing::Test {
protected:
    virtual ibv_qp_type qp_type() const { return IBV_QPT_RC; }

    /* Sides a and b: two cabled PFs of one adapter. */
    virtual void probe(const std::string& adapter)
    {
        a.name = "net_cna_" + adapter + "a";
        b.name = "net_cna_" + adapter + "b";
        ASSERT_EQ(rte_vdev_init(a.name.c_str(), ("adapter=" + adapter + ",ports=2,wire=cable").c_str()), 0);
        ASSERT_EQ(rte_vdev_init(b.name.c_str(), ("adapter=" + adapter + ",port=1").c_str()), 0);
    }

    static void start(Side& s)
    {
        ASSERT_EQ(rte_eth_dev_get_port_by_name(s.name.c_str(), &s.port), 0);
        s.pool = rte_pktmbuf_pool_create((s.name + "p").c_str(), 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        ASSERT_NE(s.pool, nullptr);
        rte_eth_conf conf{};
        ASSERT_EQ(rte_eth_dev_configure(s.port, 1, 1, &conf), 0);
        ASSERT_EQ(rte_eth_rx_queue_setup(s.port, 0, 256, 0, nullptr, s.pool), 0);
        ASSERT_EQ(rte_eth_tx_queue_setup(s.port, 0, 256, 0, nullptr), 0);
        ASSERT_EQ(rte_eth_dev_start(s.port), 0);
    }

    static void stop(Side& s)
    {
        EXPECT_EQ(rte_eth_dev_stop(s.port), 0);
        EXPECT_EQ(rte_eth_dev_close(s.port), 0);
        rte_vdev_uninit(s.name.c_str());
        rte_mempool_free(s.pool);
    }

    void SetUp() override
    {
        ASSERT_NO_FATAL_FAILURE(probe("rdmat" + std::to_string(serial_++)));
        for (Side* s : {&a, &b})
            ASSERT_NO_FATAL_FAILURE(start(*s));
        for (Side* s : {&a, &b}) {
            rte_eth_link link{};
            for (int i = 0; i < 200 && link.link_status != RTE_ETH_LINK_UP; i++) {
                rte_delay_ms(5);
                rte_eth_link_get_nowait(s->port, &link);
            }
            ASSERT_EQ(link.link_status, RTE_ETH_LINK_UP);
            s->dev = cna_rdma_open(s->port);
            ASSERT_NE(s->dev, nullptr) << strerror(errno);
            ASSERT_EQ(cna_rdma_query_gid(s->dev, 1, 0, &s->gid), 0);
            s->pd = cna_rdma_alloc_pd(s->dev);
            ASSERT_NE(s->pd, nullptr);
            s->cq = cna_rdma_create_cq(s->dev, 255, s, 0);
            ASSERT_NE(s->cq, nullptr);
            s->buf = static_cast<uint8_t*>(rte_zmalloc("rdma_test", BUF, 4096));
            ASSERT_NE(s->buf, nullptr);
            s->mr = cna_rdma_reg_mr(s->pd, s->buf, BUF,
                                    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                        IBV_ACCESS_REMOTE_ATOMIC);
            ASSERT_NE(s->mr, nullptr) << strerror(errno);
            ibv_qp_init_attr init{};
            init.send_cq = init.recv_cq = s->cq;
            init.qp_type = qp_type();
            init.cap.max_send_wr = 64;
            init.cap.max_recv_wr = 64;
            init.cap.max_send_sge = 2;
            init.cap.max_recv_sge = 2;
            init.cap.max_inline_data = 64;
            s->qp = cna_rdma_create_qp(s->pd, &init);
            ASSERT_NE(s->qp, nullptr) << strerror(errno);
        }
    }

    void TearDown() override
    {
        for (Side* s : {&a, &b}) {
            if (s->qp != nullptr) {
                EXPECT_EQ(cna_rdma_destroy_qp(s->qp), 0);
            }
            if (s->mr != nullptr) {
                EXPECT_EQ(cna_rdma_dereg_mr(s->mr), 0);
            }
            if (s->cq != nullptr) {
                EXPECT_EQ(cna_rdma_destroy_cq(s->cq), 0);
            }
            if (s->pd != nullptr) {
                EXPECT_EQ(cna_rdma_dealloc_pd(s->pd), 0);
            }
            if (s->dev != nullptr) {
                EXPECT_EQ(cna_rdma_close(s->dev), 0);
            }
            rte_free(s->buf);
        }
        for (Side* s : {&a, &b})
            stop(*s);
    }

    /* RESET -> INIT -> RTR -> RTS towards `peer`, as ibv_rc_pingpong does. */
    void connect(Side& s, const Side& peer, uint32_t my_psn, uint32_t peer_psn, uint8_t rnr_retry = 7)
    {
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_INIT;
        attr.pkey_index = 0;
        attr.port_num = 1;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
                  0);
        attr = {};
        attr.qp_state = IBV_QPS_RTR;
        attr.path_mtu = IBV_MTU_1024;
        attr.dest_qp_num = peer.qp->qp_num;
        attr.rq_psn = peer_psn;
        attr.max_dest_rd_atomic = 4;
        attr.min_rnr_timer = 12;
        attr.ah_attr.is_global = 1;
        attr.ah_attr.grh.dgid = peer.gid;
        attr.ah_attr.grh.sgid_index = 0;
        attr.ah_attr.grh.hop_limit = 1;
        attr.ah_attr.port_num = 1;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr,
                                     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
                  0);
        attr = {};
        attr.qp_state = IBV_QPS_RTS;
        attr.timeout = 14;
        attr.retry_cnt = 7;
        attr.rnr_retry = rnr_retry;
        attr.sq_psn = my_psn;
        attr.max_rd_atomic = 4;
        ASSERT_EQ(cna_rdma_modify_qp(s.qp, &attr,
                                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                         IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
                  0);
    }

    void connect_both()
    {
        connect(a, b, 0x100, 0xfffff8);
        connect(b, a, 0xfffff8, 0x100);
    }

    std::vector<ibv_wc> wait_wc(Side& s, size_t n)
    {
        std::vector<ibv_wc> out;
        for (int i = 0; i < 4000 && out.size() < n; i++) {
            ibv_wc wc[8];
            const int k = cna_rdma_poll_cq(s.cq, 8, wc);
            out.insert(out.end(), wc, wc + k);
            if (k == 0)
                rte_delay_us_sleep(500);
        }
        return out;
    }

    /* A work request of one SGE (sge, which the caller keeps); the rest
     * is the opcode's. */
    static ibv_send_wr one_sge(ibv_sge& sge, ibv_wr_opcode op, uint64_t id, unsigned flags)
    {
        ibv_send_wr wr{};
        wr.wr_id = id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = op;
        wr.send_flags = flags;
        return wr;
    }

    int post(Side& s, ibv_wr_opcode op, uint64_t id, uint8_t* local, uint32_t len, uint64_t remote = 0,
             uint32_t rkey = 0, unsigned flags = IBV_SEND_SIGNALED, ibv_send_wr** bad = nullptr)
    {
        ibv_sge sge{reinterpret_cast<uint64_t>(local), len, s.mr->lkey};
        ibv_send_wr wr = one_sge(sge, op, id, flags);
        wr.wr.rdma.remote_addr = remote;
        wr.wr.rdma.rkey = rkey;
        ibv_send_wr* ignored;
        return cna_rdma_post_send(s.qp, &wr, bad != nullptr ? bad : &ignored);
    }

    int recv(Side& s, uint64_t id, uint8_t* local, uint32_t len)
    {
        ibv_sge sge{reinterpret_cast<uint64_t>(local), len, s.mr->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad;
        return cna_rdma_post_recv(s.qp, &wr, &bad);
    }

    Side a, b;
    static inline int serial_ = 0;
};

/* Sides a and b are VFs 0 and 1 (rdma=1) of a PF on a loopback wire, with
 * a third VF enabled and not probed. */
class VfVerbs : public Verbs {
protected:
    void probe(const std::string& name) override
    {
        adapter = name;
        pf.name = "net_cna_" + adapter + "pf";
        ASSERT_EQ(rte_vdev_init(pf.name.c_str(), ("adapter=" + adapter + ",wire=loopback,rdma=0,vfs=3").c_str()), 0);
        ASSERT_NO_FATAL_FAILURE(start(pf));
        a.name = "net_cna_vf" + adapter + "a";
        b.name = "net_cna_vf" + adapter + "b";
        ASSERT_EQ(rte_vdev_init(a.name.c_str(), ("adapter=" + adapter + ",vf=0,rdma=1").c_str()), 0);
        ASSERT_EQ(rte_vdev_init(b.name.c_str(), ("adapter=" + adapter + ",vf=1,rdma=1").c_str()), 0);
    }

    void TearDown() override
    {
        Verbs::TearDown();
        stop(pf);
    }

    std::string adapter;
    Side pf;
};

