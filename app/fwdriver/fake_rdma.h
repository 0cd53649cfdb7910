/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter tests' RDMA driver: RDMA ramrods, CQ and QP rings in host
 * memory, memory regions, WQE posting through the DPI doorbells and CQE
 * polling by phase, on top of a FakeDriver — only the four resources of
 * the PCI function and the HSI, as the real driver.
 */
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "fake_driver.h"
#include "hsi_iov.h"
#include "hsi_rdma.h"

namespace cna::fw::test {

class FakeRdma {
public:
    /* RDMA on `drv`'s PF (loaded, started, link configured), or on its VF
     * (its RDMA slowpath started), its CNQ on status block cnq_sb. */
    FakeRdma(FakeDriver& drv, uint16_t cnq_sb = 8);

    hsi::FwReturn init(uint32_t num_qps = FakeDriver::RDMA_QPS, uint32_t num_tids = 64, uint16_t max_mtu = 4096);
    hsi::FwReturn close();
    hsi::EventRingElement rdma(hsi::rdma::RdmaCmd cmd, const void* data, std::size_t len)
    {
        return drv_.ramrod(hsi::ProtocolId::roce, static_cast<uint8_t>(cmd), data, len);
    }
    hsi::FwReturn rc(hsi::rdma::RdmaCmd cmd, const void* data, std::size_t len)
    {
        return static_cast<hsi::FwReturn>(rdma(cmd, data, len).fw_return_code);
    }

    /* ---- CQs ---- */
    hsi::FwReturn create_cq(uint16_t id, uint32_t size = 256);
    hsi::FwReturn destroy_cq(uint16_t id);
    /* CQEs the adapter completed since the last call. */
    std::vector<hsi::rdma::RdmaCqe> poll_cq(uint16_t id);
    std::vector<hsi::rdma::RdmaCqe> wait_cq(uint16_t id, std::size_t count,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(2));
    void arm_cq(uint16_t id, bool solicited_only = false);
    /* CNQ entries the adapter wrote, ever (RDMA_PI_CNQ of the CNQ's SB). */
    uint16_t cnq_prod() const { return drv_.sb_pi(cnq_sb_, hsi::rdma::RDMA_PI_CNQ); }
    uint64_t cnq_entry(uint16_t index) const;

    /* ---- MRs ---- */
    /* Registers [offset, offset + len) of mem (page-aligned pages of it)
     * as TID tid; returns the key. */
    uint32_t reg_mr(uint32_t tid, const HostMem& mem, std::size_t offset, std::size_t len, uint8_t access,
                    uint16_t pd = 1, hsi::FwReturn* rc = nullptr);
    hsi::FwReturn dereg_mr(uint32_t tid);
    /* The VA an MR registered over mem gives to byte `offset` of it. */
    static uint64_t va_of(const HostMem& mem, std::size_t offset) { return 0x7f0000000000ull + mem.iova + offset; }

    /* ---- QPs ---- */
    struct QpOptions {
        uint16_t sq_cq = 0, rq_cq = 0;
        uint16_t sq_size = 64, rq_size = 64;
        uint8_t max_sge = 4;
        uint16_t max_inline = 64;
        uint16_t srq = hsi::rdma::NO_SRQ;
        uint16_t pd = 1;
        bool signal_all = false;
        hsi::rdma::QpType type = hsi::rdma::QpType::rc;
    };
    hsi::FwReturn create_qp(uint16_t id, const QpOptions& o);
    hsi::FwReturn create_qp(uint16_t id) { return create_qp(id, QpOptions{}); }
    hsi::FwReturn modify_qp(const hsi::rdma::ModifyQpRamrodData& d);
    hsi::FwReturn destroy_qp(uint16_t id, uint64_t* data = nullptr);
    hsi::rdma::QpState state(uint16_t id);
    hsi::rdma::RoceRequesterContext requester_context(uint16_t id);
    hsi::rdma::RoceResponderContext responder_context(uint16_t id);

    /* Where a connection's peer is. */
    struct Peer {
        std::array<uint8_t, 6> mac{};
        uint32_t ipv4 = 0;   /* host order */
        uint32_t qpn = 0;
    };
    struct ConnectOptions {
        uint32_t sq_psn = 0x1000, rq_psn = 0x2000;
        uint16_t mtu = 1024;
        uint8_t access = hsi::rdma::access::ALL & ~hsi::rdma::access::LOCAL_WRITE;
        uint8_t timeout = 10;  /* 4 ms */
        uint8_t retry_cnt = 7, rnr_retry = 7, min_rnr_timer = 1;
        uint8_t max_rd_atomic = 4;
    };
    /* RESET -> INIT -> RTR -> RTS; the first refusal's code. */
    hsi::FwReturn connect(uint16_t id, const Peer& peer, const ConnectOptions& o);
    /* A UD QP: RESET -> INIT (with its Q_Key) -> RTR -> RTS. */
    hsi::FwReturn datagrams_ready(uint16_t id, uint32_t qkey);
    uint32_t ipv4() const { return ipv4_; }
    std::array<uint8_t, 6> mac() const { return mac_; }

    /* Writes WQEs and rings the doorbell. */
    void post_send(uint16_t qp, const hsi::rdma::SqWqe& wqe, const std::vector<hsi::rdma::Sge>& sges = {},
                   const std::vector<uint8_t>& inline_data = {});
    /* A UD QP's: the address after the WQE, then the SGEs. */
    void post_datagram(uint16_t qp, const hsi::rdma::SqWqe& wqe, const hsi::rdma::UdAddress& to,
                       const std::vector<hsi::rdma::Sge>& sges);
    void post_recv(uint16_t qp, uint64_t wr_id, const std::vector<hsi::rdma::Sge>& sges);
    uint32_t sq_posted(uint16_t qp) const { return qps_[qp].sq_prod; }

    FakeDriver& drv() { return drv_; }

private:
    struct Cq {
        HostMem ring;
        uint32_t size = 0;
        uint32_t cons = 0;
        uint32_t arm_seq = 0;
    };
    struct Qp {
        HostMem sq, rq;
        QpOptions o;
        uint32_t sq_prod = 0, rq_prod = 0;
    };
    void doorbell(uint32_t offset, uint32_t value);
    /* QUERY_QP, then the context the adapter wrote at cid (state 0xff if refused). */
    template <typename Context> Context context(uint16_t id, uint32_t cid);

    FakeDriver& drv_;
    const uint16_t cnq_sb_;
    const uint16_t dpi_; /* a PF's DPI 1, a VF's own */
    static constexpr uint32_t CNQ_SIZE = 256;
    HostMem cnq_, tids_, pbl_, query_;
    std::array<uint8_t, 6> mac_{};
    uint32_t ipv4_ = 0;
    std::vector<Cq> cqs_ = std::vector<Cq>(16);
    std::vector<Qp> qps_ = std::vector<Qp>(hsi::rdma::MAX_QPS);
};

} // namespace cna::fw::test
