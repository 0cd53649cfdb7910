/* SPDX-License-Identifier: BSD-3-Clause
 * ecore's RDMA slowpath against the embedded adapter: the RDMA PF's start
 * and stop, users, what the device reports, the objects' life cycles with
 * their ids, the QP state machine as ecore drives it (every refusal
 * logged by name), and what ecore and the device both refuse.
 */
#include "fixture.h"

#include <cstring>
#include <vector>

#include "ecore_rdma_api.h"

using namespace cna;
using ecore::Status;
using namespace hsi::rdma;

namespace {

constexpr uint32_t QPS = 32;
constexpr uint32_t MRS = 64;

struct RdmaPf {
    test::Pf pf;
    osal::DmaMem cnq, sb, cq_ring, sq, rq, pbl, buf;

    Status start(uint32_t qps = QPS)
    {
        pf.hwfn().pf_params.rdma = ecore::RdmaPfParams{qps, MRS};
        if (Status rc = pf.bring_up(ecore::IntMode::msix); rc != Status::success)
            return rc;
        ecore::Hwfn& hwfn = pf.hwfn();
        EXPECT_EQ(cnq.alloc(64 * sizeof(CnqEntry), "test CNQ"), 0);
        EXPECT_EQ(sb.alloc(sizeof(hsi::StatusBlock), "test CNQ SB"), 0);
        ecore::SbInfo info;
        {
            ecore::PttGuard ptt(hwfn);
            EXPECT_EQ(ecore::int_sb_init(hwfn, *ptt, info, sb.va(), sb.iova(), ecore::rdma_get_sb_id(hwfn, 0)),
                      Status::success);
        }
        ecore::RdmaStartParams p;
        p.desired_cnq = 1;
        p.cnq[0] = {cnq.iova(), 64, ecore::rdma_get_sb_id(hwfn, 0)};
        p.max_mtu = 1500;
        p.mac_addr = hwfn.hw_info.mac;
        return ecore::rdma_start(hwfn, p);
    }
};

TEST(EcoreRdma, StartNeedsTheQpsAskedForBeforeResourcesAreAllocated)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "rdma_none", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(pf.bring_up(ecore::IntMode::msix), Status::success);
    ecore::RdmaStartParams p;
    EXPECT_EQ(ecore::rdma_start(pf.hwfn(), p), Status::inval);
    EXPECT_FALSE(ecore::rdma_started(pf.hwfn()));
    EXPECT_EQ(pf.tear_down(), Status::success);
}

TEST(EcoreRdma, DeviceUsersAndLimits)
{
    RdmaPf r;
    ATTACH_OR_SKIP(r.pf, "rdma_dev", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(r.start(), Status::success);
    ecore::Hwfn& hwfn = r.pf.hwfn();
    EXPECT_TRUE(ecore::rdma_started(hwfn));
    EXPECT_EQ(ecore::rdma_start(hwfn, ecore::RdmaStartParams{}), Status::busy);

    const ecore::RdmaDevice dev = ecore::rdma_query_device(hwfn);
    EXPECT_EQ(dev.max_qp, QPS);
    EXPECT_EQ(dev.max_mr, MRS);
    EXPECT_EQ(dev.max_sge, MAX_SGE);
    EXPECT_EQ(dev.max_qp_rd_atom, hsi::rdma::MAX_RD_ATOMIC);
    EXPECT_EQ(dev.num_cnqs, 1u);
    const uint8_t* guid = reinterpret_cast<const uint8_t*>(&dev.node_guid);
    EXPECT_EQ(guid[3], 0xff);
    EXPECT_EQ(guid[4], 0xfe);
    EXPECT_EQ(guid[5], hwfn.hw_info.mac[3]);
    EXPECT_EQ(ecore::rdma_query_port(hwfn).active_mtu, 1024u) << "the largest IB MTU within 1500";
    EXPECT_EQ(ecore::rdma_l2_sbs(hwfn, 1), hwfn.hw_info.resc.num_sbs - 1);

    std::vector<ecore::RdmaUser> users(hsi::MAX_DPIS);
    for (uint32_t i = 0; i < hsi::MAX_DPIS; i++) {
        ASSERT_EQ(ecore::rdma_add_user(hwfn, &users[i]), Status::success);
        EXPECT_EQ(users[i].dpi, i);
        EXPECT_EQ(users[i].doorbells, r.pf.pci->doorbells() + hsi::dpi_offset(i));
    }
    ecore::RdmaUser extra;
    EXPECT_EQ(ecore::rdma_add_user(hwfn, &extra), Status::nospc);
    ecore::rdma_remove_user(hwfn, 5);
    ASSERT_EQ(ecore::rdma_add_user(hwfn, &extra), Status::success);
    EXPECT_EQ(extra.dpi, 5u) << "the freed DPI";

    EXPECT_EQ(ecore::rdma_stop(hwfn), Status::success);
    EXPECT_EQ(r.pf.tear_down(), Status::success);
}

TEST(EcoreRdma, ObjectsLiveAndDieWithTheirIds)
{
    RdmaPf r;
    ATTACH_OR_SKIP(r.pf, "rdma_obj", 0, osal::EmbeddedConfig{});
    ASSERT_EQ(r.start(), Status::success);
    ecore::Hwfn& hwfn = r.pf.hwfn();
    ecore::RdmaUser user;
    ASSERT_EQ(ecore::rdma_add_user(hwfn, &user), Status::success);
    uint16_t pd;
    ASSERT_EQ(ecore::rdma_alloc_pd(hwfn, &pd), Status::success);

    ASSERT_EQ(r.cq_ring.alloc(256 * sizeof(RdmaCqe), "test CQ"), 0);
    uint16_t cq;
    ASSERT_EQ(ecore::rdma_create_cq(hwfn, {user.dpi, 0, r.cq_ring.iova(), 256}, &cq), Status::success);
    uint16_t bad_cq;
    EXPECT_EQ(ecore::rdma_create_cq(hwfn, {user.dpi, 0, r.cq_ring.iova(), 100}, &bad_cq), Status::inval)
        << "not a power of two: the device refuses";

    /* A memory region over a buffer, through a page list. */
    ASSERT_EQ(r.buf.alloc(8192, "test MR"), 0);
    ASSERT_EQ(r.pbl.alloc(4096, "test PBL"), 0);
    r.pbl.as<uint64_t>()[0] = r.buf.iova();
    r.pbl.as<uint64_t>()[1] = r.buf.iova() + 4096;
    uint32_t tid;
    ASSERT_EQ(ecore::rdma_alloc_tid(hwfn, &tid), Status::success);
    ecore::RdmaRegisterTidParams mr;
    mr.tid = tid;
    mr.key = 7;
    mr.pd = pd;
    mr.access = access::LOCAL_WRITE | access::REMOTE_WRITE;
    mr.va = 0x10000;
    mr.length = 8192;
    mr.pbl_iova = r.pbl.iova();
    mr.num_pages = 2;
    EXPECT_EQ(ecore::rdma_register_tid(hwfn, mr), Status::success);
    EXPECT_EQ(ecore::rdma_register_tid(hwfn, mr), Status::busy) << "registered twice";
    mr.tid = MRS - 1;
    EXPECT_EQ(ecore::rdma_register_tid(hwfn, mr), Status::inval) << "a TID never allocated";

    ASSERT_EQ(r.sq.alloc(64 * 256, "test SQ"), 0);
    ASSERT_EQ(r.rq.alloc(64 * 128, "test RQ"), 0);
    ecore::RdmaCreateQpParams qp;
    qp.pd = pd;
    qp.dpi = user.dpi;
    qp.sq_cq = qp.rq_cq = cq;
    qp.sq_iova = r.sq.iova();
    qp.rq_iova = r.rq.iova();
    qp.sq_size = qp.rq_size = 64;
    qp.sq_wqe_shift = 2;
    qp.rq_wqe_shift = 3;
    qp.max_send_sge = qp.max_recv_sge = 4;
    uint16_t qp_id;
    uint32_t qpn;
    ASSERT_EQ(ecore::rdma_create_qp(hwfn, qp, &qp_id, &qpn), Status::success);
    EXPECT_EQ(qpn, qpn_of(qp_id));

    /* The state machine, as ecore judges it before the device. */
    using namespace ecore::rdma_qp_attr;
    ecore::RdmaModifyQpParams m;
    m.new_state = ecore::RdmaQpState::init;
    m.modify_flags = PKEY_INDEX | ACCESS;
    EXPECT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::inval) << "port_num missing";
    m.modify_flags = PKEY_INDEX | PORT | ACCESS;
    m.port = 2;
    EXPECT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::inval) << "no port 2";
    m.port = 1;
    m.access = access::REMOTE_WRITE;
    ASSERT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::success);

    m = {};
    m.new_state = ecore::RdmaQpState::rtr;
    m.modify_flags = PATH | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER;
    m.path_mtu = 2048;
    EXPECT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::inval) << "above the port's MTU";
    m.path_mtu = 1024;
    m.dest_qpn = qpn;
    m.rq_psn = 0x123;
    m.path.ip_version = IP_VERSION_4;
    m.path.vlan_tci = NO_VLAN;
    std::memcpy(m.path.dst_mac, hwfn.hw_info.mac.data(), 6);
    std::memcpy(m.path.src_mac, hwfn.hw_info.mac.data(), 6);
    ASSERT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::success);
    m = {};
    m.new_state = ecore::RdmaQpState::rts;
    m.modify_flags = SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | ecore::rdma_qp_attr::MAX_RD_ATOMIC;
    m.sq_psn = 0x456;
    m.timeout = 14;
    m.retry_cnt = 7;
    ASSERT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::success);

    ecore::RdmaQueryQpOut q;
    ASSERT_EQ(ecore::rdma_query_qp(hwfn, qp_id, &q), Status::success);
    EXPECT_EQ(q.state, ecore::RdmaQpState::rts);
    EXPECT_EQ(q.sq_psn, 0x456u);
    EXPECT_EQ(q.rq_psn, 0x123u);
    EXPECT_EQ(q.path_mtu, 1024);
    EXPECT_EQ(q.dest_qpn, qpn);
    EXPECT_EQ(q.timeout, 14);

    /* Objects in use hold the others. */
    EXPECT_EQ(ecore::rdma_destroy_cq(hwfn, cq), Status::busy) << "the QP completes on it";
    EXPECT_EQ(ecore::rdma_stop(hwfn), Status::busy) << "objects left";

    m = {};
    m.new_state = ecore::RdmaQpState::err;
    ASSERT_EQ(ecore::rdma_modify_qp(hwfn, qp_id, m), Status::success);
    ASSERT_EQ(ecore::rdma_destroy_qp(hwfn, qp_id), Status::success);
    EXPECT_EQ(ecore::rdma_destroy_qp(hwfn, qp_id), Status::noent);
    ASSERT_EQ(ecore::rdma_destroy_cq(hwfn, cq), Status::success);
    ASSERT_EQ(ecore::rdma_deregister_tid(hwfn, tid), Status::success);
    ecore::rdma_free_tid(hwfn, tid);
    ecore::rdma_free_pd(hwfn, pd);
    ecore::rdma_remove_user(hwfn, user.dpi);
    EXPECT_EQ(ecore::rdma_stop(hwfn), Status::success);
    EXPECT_EQ(r.pf.tear_down(), Status::success);
}

TEST(EcoreRdma, TooManyQpsForTheDeviceAreRefusedBeforeTheIlt)
{
    test::Pf pf;
    ATTACH_OR_SKIP(pf, "rdma_big", 0, osal::EmbeddedConfig{});
    pf.hwfn().pf_params.rdma = ecore::RdmaPfParams{MAX_QPS + 1, MRS};
    EXPECT_EQ(pf.bring_up(ecore::IntMode::msix), Status::inval);
}

} // namespace
