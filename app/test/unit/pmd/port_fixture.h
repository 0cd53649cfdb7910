/* SPDX-License-Identifier: BSD-3-Clause
 * A net_cna port on a loopback wire (or a net_cna_vf port of one), probed
 * through the vdev bus and configured through ethdev, torn down (and checked
 * for lost mbufs) after each test.
 */
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

class PortTest : public ::testing::Test {
protected:
    static constexpr uint16_t RING = 512;
    static constexpr unsigned POOL = 8192;

    /* driver: the vdev driver whose device to make. */
    void open_port(const std::string& vdev_args, uint16_t nb_queues, const rte_eth_conf& conf,
                   const std::string& driver = "net_cna")
    {
        name_ = driver + "_t" + std::to_string(serial_++);
        ASSERT_EQ(rte_vdev_init(name_.c_str(), vdev_args.c_str()), 0);
        ASSERT_EQ(rte_eth_dev_get_port_by_name(name_.c_str(), &port_), 0);
        pool_ = rte_pktmbuf_pool_create((name_ + "_pool").c_str(), POOL, pool_cache_, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
                                        0);
        ASSERT_NE(pool_, nullptr);
        start_port(port_, pool_, nb_queues, conf);
    }

    void TearDown() override
    {
        if (pool_ != nullptr)
            remove_port(name_, port_, pool_, POOL);
        if (pf_pool_ != nullptr)
            remove_port(pf_name_, pf_port_, pf_pool_, PF_POOL);
    }

    /* VF 0 of a PF with one VF as the port, its queues configured by conf.
     * The VF's frames to its own MAC go out on the loopback wire and come
     * back to it, as the PF's do: the PF's port is up. */
    void open_vf_port(const rte_eth_conf& conf)
    {
        pf_name_ = "net_cna_pf" + std::to_string(serial_++);
        ASSERT_EQ(rte_vdev_init(pf_name_.c_str(), "vfs=1"), 0);
        ASSERT_EQ(rte_eth_dev_get_port_by_name(pf_name_.c_str(), &pf_port_), 0);
        pf_pool_ = rte_pktmbuf_pool_create((pf_name_ + "_pool").c_str(), PF_POOL, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
        ASSERT_NE(pf_pool_, nullptr);
        start_port(pf_port_, pf_pool_, 1, rte_eth_conf{});
        open_port("adapter=" + pf_name_ + ",port=0,vf=0", 1, conf, "net_cna_vf");
    }

    /* Configures nb_queues queue pairs of RING descriptors, Rx buffers from
     * pool, and starts the port: its link must be up. */
    static void start_port(uint16_t port, rte_mempool* pool, uint16_t nb_queues, const rte_eth_conf& conf)
    {
        ASSERT_EQ(rte_eth_dev_configure(port, nb_queues, nb_queues, &conf), 0);
        for (uint16_t q = 0; q < nb_queues; q++) {
            ASSERT_EQ(rte_eth_rx_queue_setup(port, q, RING, 0, nullptr, pool), 0);
            ASSERT_EQ(rte_eth_tx_queue_setup(port, q, RING, 0, nullptr), 0);
        }
        ASSERT_EQ(rte_eth_dev_start(port), 0);
        /* With LSC interrupts ethdev only reads what the last event said;
         * an adapter in another process, on a busy machine, may take a
         * while to say it. */
        rte_eth_link link{};
        for (int ms = 0; ms < 5000 && link.link_status != RTE_ETH_LINK_UP; ms += 10) {
            ASSERT_EQ(rte_eth_link_get(port, &link), 0);
            if (link.link_status != RTE_ETH_LINK_UP)
                rte_delay_ms(10);
        }
        ASSERT_EQ(link.link_status, RTE_ETH_LINK_UP);
    }

    /* Stops, closes and removes the vdev; every one of the pool's size mbufs
     * must be back before the pool goes. */
    static void remove_port(const std::string& name, uint16_t port, rte_mempool* pool, unsigned size)
    {
        EXPECT_EQ(rte_eth_dev_stop(port), 0);
        EXPECT_EQ(rte_eth_dev_close(port), 0);
        EXPECT_EQ(rte_mempool_avail_count(pool), size) << "mbufs lost";
        EXPECT_EQ(rte_vdev_uninit(name.c_str()), 0);
        rte_mempool_free(pool);
    }

    /* A UDP/IPv4 frame to the port's own MAC with the given source port. */
    static constexpr uint32_t UDP_PAYLOAD = 18;
    static constexpr uint32_t UDP_FRAME_LEN =
        sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + UDP_PAYLOAD;
    rte_mbuf* udp_frame(uint16_t src_port)
    {
        rte_mbuf* m = rte_pktmbuf_alloc(pool_);
        auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
        rte_eth_macaddr_get(port_, &eth->dst_addr);
        eth->src_addr = eth->dst_addr;
        eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
        auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
        *ip = rte_ipv4_hdr{};
        ip->version_ihl = RTE_IPV4_VHL_DEF;
        ip->total_length = rte_cpu_to_be_16(sizeof(rte_ipv4_hdr) + sizeof(rte_udp_hdr) + UDP_PAYLOAD);
        ip->time_to_live = 64;
        ip->next_proto_id = IPPROTO_UDP;
        ip->src_addr = rte_cpu_to_be_32(0x0a000001);
        ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
        ip->hdr_checksum = rte_ipv4_cksum(ip);
        auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
        udp->src_port = rte_cpu_to_be_16(src_port);
        udp->dst_port = rte_cpu_to_be_16(4789);
        udp->dgram_len = rte_cpu_to_be_16(sizeof(rte_udp_hdr) + UDP_PAYLOAD);
        udp->dgram_cksum = 0;
        m->data_len = m->pkt_len = UDP_FRAME_LEN;
        return m;
    }

    /* Sends n copies of udp_frame(src_port) on Tx queue q; true if all went. */
    bool send_udp(uint16_t q, uint16_t n, uint16_t src_port)
    {
        std::vector<rte_mbuf*> tx(n);
        for (auto& m : tx)
            m = udp_frame(src_port);
        return rte_eth_tx_burst(port_, q, tx.data(), n) == n;
    }

    /* Receives on queue q until n frames arrived or a second passed. */
    unsigned receive(uint16_t q, unsigned n, rte_mbuf** out = nullptr)
    {
        unsigned got = 0;
        for (int spin = 0; spin < 1000 && got < n; spin++) {
            rte_mbuf* pkts[32];
            const uint16_t k = rte_eth_rx_burst(port_, q, pkts, 32);
            for (uint16_t i = 0; i < k; i++) {
                if (out != nullptr && got < n)
                    out[got] = pkts[i];
                else
                    rte_pktmbuf_free(pkts[i]);
                got++;
            }
            if (k == 0)
                rte_delay_ms(1);
        }
        return got;
    }

    std::string name_;
    uint16_t port_ = 0;
    rte_mempool* pool_ = nullptr;
    unsigned pool_cache_ = 0; /* per-lcore mempool cache of the next open_port's pool */
    /* open_vf_port's PF. */
    static constexpr unsigned PF_POOL = 1024;
    std::string pf_name_;
    uint16_t pf_port_ = 0;
    rte_mempool* pf_pool_ = nullptr;
    static inline int serial_ = 0;
};
