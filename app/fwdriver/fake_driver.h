/* SPDX-License-Identifier: BSD-3-Clause
 * A tiny driver for the adapter unit tests and the engine benchmark:
 * register access through a PTT, host memory mapped into the function's
 * IOMMU, the MFW mailbox, an init tool for the firmware image, the SPQ/EQ
 * and minimal L2 rings. It only uses the four PCI-function resources, as the
 * real driver does. No googletest: the benchmark links it in builds without
 * tests.
 */
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cna_fw/adapter.h"
#include "ecore_init_image.h"
#include "hsi_eth.h"
#include "hsi_init_image.h"
#include "hsi_iov.h"
#include "hsi_mfw.h"
#include "hsi_rdma.h"
#include "hsi_spq.h"

namespace cna::fw::test {

/* Polls cond for up to timeout; true as soon as it holds. */
bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout = std::chrono::seconds(2));

/* CPU time, in seconds, that the thread of this process named `comm` (an
 * engine thread: engine_thread_name()) got so far, as the kernel counts it
 * (/proc/self/task/<tid>/schedstat); negative when there is no such thread. */
double thread_cpu_seconds(const std::string& comm);

/* Host DMA memory: page-aligned, mapped at an IOVA distinct from its VA. */
struct HostMem {
    uint64_t iova = 0;
    uint8_t* va = nullptr;
    std::size_t len = 0;
    template <typename T> T* at(std::size_t offset = 0) const { return reinterpret_cast<T*>(va + offset); }
};

class FakeDriver {
public:
    FakeDriver(Adapter& adapter, uint32_t pf);
    /* The host side of VF `vf` of the PF `pf` drives (which has enabled it):
     * its memory in the VF's IOMMU, its producers and doorbells in the VF's
     * pages, its status blocks configured through the PF's IOV block; its
     * L2 ramrods go on the PF's SPQ for the VF's vport (every L2 ramrod's
     * data starts with its vport_id: vport 0 becomes iov::vf_vport(vf)). */
    FakeDriver(Adapter& adapter, FakeDriver& pf, uint32_t vf);
    ~FakeDriver();

    DeviceFunction& fn() { return fn_; }
    uint32_t pf() const { return pf_; }
    bool is_vf() const { return pf_driver_ != nullptr; }
    uint32_t vf() const { return vf_; }

    /* GRC access through PTT 0. */
    uint32_t rd(uint32_t addr);
    void wr(uint32_t addr, uint32_t value);
    void open_ptt_access() { wr(hsi::reg::PGLUE_PTT_ACCESS_ENABLE, 1); }

    HostMem alloc(std::size_t len, bool map = true);

    /* MFW mailbox; 0 when unanswered within the timeout. */
    uint32_t mcp_cmd(uint32_t command, uint32_t param = 0, uint32_t* fw_param = nullptr,
                     std::chrono::milliseconds timeout = std::chrono::seconds(2));
    void write_union(const void* data, std::size_t len);

    /* Runs one phase of an image with ecore's init tool; false if the image
     * does not parse or a poll failed. */
    bool run_phase(const uint8_t* image, std::size_t len, hsi::init::Phase phase, uint32_t modes);
    /* LOAD_REQ, the phases it asks for, LOAD_DONE; the load response. */
    uint32_t load(uint32_t modes = 0);
    /* Slowpath SB, attentions, PF_START. */
    hsi::FwReturn start_pf();
    /* A VF's RDMA slowpath (hsi_iov.h): its own SPQ, ILT and EQ (on status
     * block eq_sb), set through its BAR0, then PF_START on it. */
    hsi::FwReturn start_vf_slowpath(uint32_t eq_sb);

    /* Posts a ramrod (data copied into the SPQ entry's data area); waits for
     * its EQE when wait is set. */
    hsi::EventRingElement ramrod(hsi::ProtocolId protocol, uint8_t cmd, const void* data, std::size_t len,
                                 bool wait = true, uint64_t data_iova_override = 0);
    hsi::FwReturn eth(hsi::eth::EthCmd cmd, const void* data, std::size_t len);
    bool eqe_timed_out() const { return eqe_timed_out_; }
    /* The asynchronous EQEs that arrived (while waiting for ramrods, or
     * pending now), oldest first. */
    std::vector<hsi::EventRingElement> take_async_events();

    /* Status blocks. */
    void setup_sb(uint32_t sb, uint32_t vector);
    /* An index of status block `sb` and its running index, as the adapter
     * wrote them (acquired: what they cover is visible). */
    uint16_t sb_pi(uint32_t sb, uint32_t pi) const { return observe(&this->sb(sb).pi_array[pi]); }
    uint32_t sb_prod(uint32_t sb) const { return __atomic_load_n(&this->sb(sb).prod_index, __ATOMIC_ACQUIRE); }
    uint32_t attn_status() { return rd(hsi::reg::ATTN_STATUS); }

    /* L2 helpers. */
    hsi::FwReturn vport_start(uint8_t vport, uint16_t mtu = 1500, uint8_t max_bds = 1, bool strip = false,
                                bool rx_csum = true);
    hsi::FwReturn vport_activate(uint8_t vport, uint16_t accept);
    /* cqe_ring: the CQE ring's size, 0 for the BD ring's; flags: eth::rxq_flags. */
    hsi::FwReturn rx_queue_start(uint16_t queue, uint8_t vport, uint16_t sb, uint16_t bd_max_bytes = 2048,
                                 uint16_t ring = 64, uint16_t cqe_ring = 0, uint8_t flags = 0);
    hsi::FwReturn tx_queue_start(uint16_t queue, uint8_t vport, uint16_t sb, uint16_t ring = 64);
    hsi::FwReturn filter(hsi::eth::FilterOpcode op, hsi::eth::FilterType type, uint8_t vport, const uint8_t* mac,
                         uint16_t vlan = 0, uint8_t dst_vport = 0);
    /* Posts `posted` Rx buffers on the queue. */
    void rx_post(uint16_t queue, uint16_t posted);
    /* Points the posted Rx BD `ahead` buffers past the driver's consumer at
     * iova (0: back at its own buffer), without moving the producer. */
    void rx_set_bd(uint16_t queue, uint16_t ahead, uint64_t iova = 0);

    struct TxOptions {
        uint8_t flags = 0;      /* txbd:: besides START */
        uint16_t vlan = 0;
        uint16_t mss = 0;
        uint32_t nbds = 1;      /* split the frame over this many BDs */
        uint64_t addr_override = 0;
    };
    /* Queues one packet and rings the doorbell. */
    void send(uint16_t queue, const std::vector<uint8_t>& frame, const TxOptions& options);
    void send(uint16_t queue, const std::vector<uint8_t>& frame) { send(queue, frame, TxOptions{}); }
    /* Queues the packets and rings the doorbell once: one Tx burst. */
    void send_burst(uint16_t queue, const std::vector<std::vector<uint8_t>>& frames);
    /* Writes raw BDs and rings the doorbell. */
    void send_bds(uint16_t queue, const std::vector<hsi::eth::TxBd>& bds);
    bool wait_tx_done(uint16_t queue);

    struct RxFrame {
        hsi::eth::RxCqe cqe;
        std::vector<uint8_t> data;
        /* Its time, on a queue started with rxq_flags::TIMESTAMP. */
        uint64_t stamp = 0;
    };
    /* Completed frames since the last call (buffers are re-posted). */
    std::vector<RxFrame> rx_poll(uint16_t queue);
    std::vector<RxFrame> rx_wait(uint16_t queue, std::size_t count,
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(500));

    /* Benchmark fastpath (app/bench/engine_bench): the rings keep fixed
     * buffers and no frame is read or copied, so the host's work per packet
     * is nil and the adapter's engine is what is measured. Only for queues
     * whose frames fit one Rx buffer (a vport with max_bds 1), as then every
     * CQE stands for exactly one BD. */
    /* CQEs the adapter completed that were not consumed yet. */
    uint16_t rx_completed(uint16_t queue) const
    {
        const RxRing& r = rx_[queue];
        uint16_t prod = sb_pi(r.sb, hsi::L2_PI_RX);
        return static_cast<uint16_t>(prod - r.cqe_cons);
    }
    /* Consumes `count` CQEs and posts their buffers again (every slot of the
     * BD ring always names the same buffer, written at rx_queue_start). */
    void rx_recycle(uint16_t queue, uint16_t count)
    {
        RxRing& r = rx_[queue];
        r.cqe_cons = static_cast<uint16_t>(r.cqe_cons + count);
        r.bd_cons = static_cast<uint16_t>(r.bd_cons + count);
        r.bd_prod = static_cast<uint16_t>(r.bd_prod + count);
        publish_rx(queue);
    }
    /* Makes every BD slot of Rx queue `queue` name the buffer of the same
     * slot of queue `with` (same ring size and buffer size), so that the
     * buffers the adapter writes stay one ring's worth whatever the number
     * of queues. Only for a reader that never looks at the frames; undone
     * by rx_post. */
    void rx_share_buffers(uint16_t queue, uint16_t with);
    /* Writes `bd` into every slot of the Tx ring: each later producer
     * increment sends it once more. */
    void tx_fill_ring(uint16_t queue, const hsi::eth::TxBd& bd);
    /* Slots of the Tx ring the adapter has consumed (free for producing). */
    uint16_t tx_free(uint16_t queue) const
    {
        const TxRing& t = tx_[queue];
        uint16_t cons = sb_pi(t.sb, hsi::L2_PI_TX);
        return static_cast<uint16_t>(t.size - static_cast<uint16_t>(t.prod - cons));
    }
    /* Produces `count` more of the BDs already in the ring: one doorbell. */
    void tx_produce(uint16_t queue, uint16_t count)
    {
        TxRing& t = tx_[queue];
        t.prod = static_cast<uint16_t>(t.prod + count);
        ring_tx_doorbell(t);
    }

    /* A misbehaving driver, for the adapter's malicious-driver checks:
     * rings a doorbell or writes an Rx queue's producers with any value,
     * the rings' own bookkeeping unchanged. tx_produce(queue, 0) and
     * rx_recycle(queue, 0) write the true producers back. */
    void ring_doorbell_at(uint32_t cid, uint16_t prod) { ring_doorbell(fn_, cid, prod); }
    uint32_t tx_cid(uint16_t queue) const { return tx_[queue].cid; }
    uint16_t tx_prod(uint16_t queue) const { return tx_[queue].prod; }
    uint16_t spq_prod() const { return spq_prod_; }
    void rx_write_producers(uint16_t queue, uint16_t bd_prod, uint16_t cqe_cons)
    {
        write_rx_producers(queue, hsi::RxProdData{bd_prod, cqe_cons});
    }
    uint16_t rx_bd_prod(uint16_t queue) const { return rx_[queue].bd_prod; }
    uint16_t rx_cqe_cons(uint16_t queue) const { return rx_[queue].cqe_cons; }

    /* A connection context the adapter wrote into the ILT. */
    const uint8_t* ilt_context(uint32_t cid) const { return ilt_.va + uint64_t{cid} * hsi::CONN_CONTEXT_SIZE; }

    /* The PF's MAC address, as the MFW publishes it in SHMEM; a VF's, the
     * one the tests give VF v of PF p: 02:00:00:00:fp:v. */
    std::array<uint8_t, 6> mac();

    hsi::eth::VportStats vport_stats(uint32_t vport);
    hsi::eth::QueueStats rx_queue_stats(uint32_t queue);
    uint64_t stat64(uint32_t storm_ram_offset);

    static constexpr uint32_t SPQ_SIZE = 64;
    /* Connection contexts: the L2 ones and RDMA_QPS QPs'. */
    static constexpr uint32_t RDMA_QPS = 64;
    static constexpr uint32_t ILT_CIDS = hsi::rdma::requester_cid(RDMA_QPS);
    static constexpr uint32_t EQ_SIZE = 64;
    static constexpr uint32_t SB_MEM_SIZE = 4096;

private:
    const hsi::StatusBlock& sb(uint32_t sb) const;
    hsi::EventRingElement next_eqe();
    void alloc_slowpath();
    hsi::FwReturn post_pf_start();
    struct RxRing {
        HostMem bds, cqes, buffers;
        uint16_t size = 0, cqe_size = 0, bd_max = 0, bd_prod = 0, bd_cons = 0, cqe_cons = 0;
        uint16_t sb = 0;
        bool stamped = false; /* the stamp ring behind the CQEs */
    };
    struct TxRing {
        HostMem bds, buffers;
        uint16_t size = 0, prod = 0, sb = 0;
        uint32_t cid = 0;
    };
    void publish_rx(uint16_t queue)
    {
        const RxRing& r = rx_[queue];
        write_rx_producers(queue, hsi::RxProdData{r.bd_prod, r.cqe_cons});
    }
    void write_rx_producers(uint16_t queue, hsi::RxProdData p)
    {
        uint32_t raw;
        std::memcpy(&raw, &p, sizeof(raw));
        publish(fn_.gtt_memory() + (pf_driver_ != nullptr ? hsi::iov::vf_page::rx_prod(queue)
                                                           : hsi::iro::gtt::rx_prod(queue)),
                raw);
    }
    static void ring_doorbell(DeviceFunction& fn, uint32_t cid, uint16_t prod)
    {
        hsi::DoorbellData db{prod, 0, 0};
        uint32_t raw;
        std::memcpy(&raw, &db, sizeof(raw));
        publish(fn.doorbell_memory() + hsi::db_offset(cid), raw);
    }
    /* Hand-overs with the adapter, as the OSAL's publish and observe: a
     * producer or doorbell releases what it covers, an index the adapter
     * wrote is acquired before what it covers is read. */
    static void publish(volatile uint8_t* at, uint32_t value)
    {
        __atomic_store_n(reinterpret_cast<volatile uint32_t*>(at), value, __ATOMIC_RELEASE);
    }
    static uint16_t observe(const volatile uint16_t* index) { return __atomic_load_n(index, __ATOMIC_ACQUIRE); }
    /* The packet into the queue's buffer space, its BDs appended to bds. */
    void stage(uint16_t queue, const std::vector<uint8_t>& frame, const TxOptions& o, std::vector<hsi::eth::TxBd>& bds);
    void ring_tx_doorbell(const TxRing& t) { ring_doorbell(fn_, t.cid, t.prod); }

    Adapter& adapter_;
    DeviceFunction& fn_;
    uint32_t pf_;
    FakeDriver* const pf_driver_ = nullptr; /* a VF's: its PF */
    const uint32_t vf_ = 0;
    uint32_t ptt_base_ = UINT32_MAX;
    uint32_t mb_seq_ = 0;
    uint64_t next_iova_;
    std::vector<HostMem> allocations_;
    HostMem spq_, spq_data_, eq_, ilt_, sbs_;
    uint16_t spq_prod_ = 0, eq_cons_ = 0, echo_ = 0;
    uint32_t eq_sb_ = hsi::SP_SB_ID;
    bool eqe_timed_out_ = false;
    std::vector<hsi::EventRingElement> async_events_;
    std::vector<RxRing> rx_;
    std::vector<TxRing> tx_;
};

/* The tests' usual adapter: two ports joined by a cable whose link comes
 * up as soon as both ends are up. */
inline AdapterConfig cabled_ports(const char* name)
{
    AdapterConfig config;
    config.name = name;
    config.ports = 2;
    config.wire = Wire::cable;
    config.link_up_delay_ms = 0;
    return config;
}

/* What bring_up_l2 sets up: a PF loaded and started, the PHY initialised,
 * vport 0 started with Rx queues 0..rx_queues-1 on SBs 0..rx_queues-1 (each
 * with ring-1 buffers posted) and Tx queues 0..tx_queues-1 on SBs
 * rx_queues.., then activated with `accept`. */
struct L2Setup {
    uint16_t rx_queues = 1;
    uint16_t tx_queues = 1;
    uint16_t accept = 0;           /* 0: unmatched unicast and multicast, broadcast */
    uint16_t mtu = 1500;
    uint8_t max_bds = 1;
    bool strip = false;
    bool rx_csum = true;           /* checksum results in the CQEs */
    uint16_t bd_max_bytes = 2048;
    uint16_t ring = 64;            /* elements of every Rx and Tx ring */
    uint8_t rxq_flags = 0;         /* eth::rxq_flags of every Rx queue */
};
/* Empty on success, else which step failed. Does not wait for the link. */
std::string bring_up_l2(FakeDriver& drv, const L2Setup& setup);
/* Waits (bounded) for the MFW to report the PF's port link up. */
bool wait_link(FakeDriver& drv, std::chrono::milliseconds timeout = std::chrono::seconds(2));

/* Frame builders. */
std::vector<uint8_t> eth_frame(const uint8_t* dst, const uint8_t* src, uint16_t ethertype, std::size_t payload_len);
std::vector<uint8_t> udp4_frame(const uint8_t* dst, const uint8_t* src, uint32_t sip, uint32_t dip, uint16_t sport,
                                uint16_t dport, std::size_t payload_len, bool checksums = true);
std::vector<uint8_t> tcp4_frame(const uint8_t* dst, const uint8_t* src, uint32_t sip, uint32_t dip, uint16_t sport,
                                uint16_t dport, std::size_t payload_len, uint8_t tcp_flags = 0x18);
std::vector<uint8_t> tcp6_frame(const uint8_t* dst, const uint8_t* src, uint16_t sport, uint16_t dport,
                                std::size_t payload_len);
std::vector<uint8_t> with_vlan(const std::vector<uint8_t>& frame, uint16_t tci);
/* Independent reference checksum (RFC 1071, bytewise). */
uint16_t ref_checksum(const uint8_t* data, std::size_t len, uint32_t initial = 0);
bool ipv4_header_valid(const std::vector<uint8_t>& frame, std::size_t l3_off = 14);
bool l4_valid(const std::vector<uint8_t>& frame, std::size_t l3_off = 14);

inline constexpr uint8_t BCAST[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
inline constexpr uint8_t PEER_MAC[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

} // namespace cna::fw::test
