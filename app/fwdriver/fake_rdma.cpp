/* SPDX-License-Identifier: BSD-3-Clause */
#include "fake_rdma.h"

#include <atomic>
#include <cstring>

namespace cna::fw::test {

using namespace hsi;
using namespace hsi::rdma;

FakeRdma::FakeRdma(FakeDriver& drv, uint16_t cnq_sb)
    : drv_(drv), cnq_sb_(cnq_sb), dpi_(drv.is_vf() ? iov::VF_DPI : 1)
{
    cnq_ = drv_.alloc(CNQ_SIZE * sizeof(CnqEntry));
    tids_ = drv_.alloc(64 * 1024);
    pbl_ = drv_.alloc(64 * 1024);
    mac_ = drv_.mac();
    ipv4_ = drv_.is_vf() ? 0x0a000100 + drv_.pf() * iov::MAX_VFS_PER_PF + drv_.vf() : 0x0a000001 + drv_.pf();
}

FwReturn FakeRdma::init(uint32_t num_qps, uint32_t num_tids, uint16_t max_mtu)
{
    drv_.setup_sb(cnq_sb_, cnq_sb_ + 1);
    FuncInitRamrodData d{};
    d.num_cnqs = 1;
    std::memcpy(d.mac, mac_.data(), 6);
    d.num_qps = num_qps;
    d.num_tids = num_tids;
    d.max_mtu = max_mtu;
    d.tid_context_base = make_regpair(tids_.iova);
    d.cnq[0].ring_base = make_regpair(cnq_.iova);
    d.cnq[0].ring_size = CNQ_SIZE;
    d.cnq[0].sb_id = cnq_sb_;
    return rc(RdmaCmd::func_init, &d, sizeof(d));
}

FwReturn FakeRdma::close()
{
    FuncCloseRamrodData d{};
    return rc(RdmaCmd::func_close, &d, sizeof(d));
}

void FakeRdma::doorbell(uint32_t offset, uint32_t value)
{
    __atomic_store_n(reinterpret_cast<volatile uint32_t*>(drv_.fn().doorbell_memory() + offset), value,
                     __ATOMIC_RELEASE);
}

/* ---- CQs ---- */

FwReturn FakeRdma::create_cq(uint16_t id, uint32_t size)
{
    Cq& cq = cqs_.at(id);
    cq = Cq{};
    cq.ring = drv_.alloc(size * sizeof(RdmaCqe));
    cq.size = size;
    CreateCqRamrodData d{};
    d.cq_id = id;
    d.dpi = dpi_;
    d.ring_base = make_regpair(cq.ring.iova);
    d.ring_size = size;
    d.cq_handle = make_regpair(0xc0000000ull + id);
    return rc(RdmaCmd::create_cq, &d, sizeof(d));
}

FwReturn FakeRdma::destroy_cq(uint16_t id)
{
    DestroyCqRamrodData d{};
    d.cq_id = id;
    return rc(RdmaCmd::destroy_cq, &d, sizeof(d));
}

std::vector<RdmaCqe> FakeRdma::poll_cq(uint16_t id)
{
    Cq& cq = cqs_.at(id);
    std::vector<RdmaCqe> out;
    for (;;) {
        const auto* slot = cq.ring.va + (cq.cons & (cq.size - 1)) * sizeof(RdmaCqe);
        const uint8_t expected = ((cq.cons / cq.size) & 1) == 0 ? 1 : 0;
        if (__atomic_load_n(slot + offsetof(RdmaCqe, phase), __ATOMIC_ACQUIRE) != expected)
            break;
        RdmaCqe cqe;
        std::memcpy(&cqe, slot, sizeof(cqe));
        out.push_back(cqe);
        cq.cons++;
    }
    if (!out.empty())
        doorbell(cq_db_offset(dpi_, id), cq.cons);
    return out;
}

std::vector<RdmaCqe> FakeRdma::wait_cq(uint16_t id, std::size_t count, std::chrono::milliseconds timeout)
{
    std::vector<RdmaCqe> all;
    wait_until(
        [&] {
            for (const RdmaCqe& c : poll_cq(id))
                all.push_back(c);
            return all.size() >= count;
        },
        timeout);
    return all;
}

void FakeRdma::arm_cq(uint16_t id, bool solicited_only)
{
    Cq& cq = cqs_.at(id);
    doorbell(cq_db_offset(dpi_, id) + 4, cq_arm::make(++cq.arm_seq, solicited_only));
}

uint64_t FakeRdma::cnq_entry(uint16_t index) const
{
    CnqEntry e;
    std::memcpy(&e, cnq_.va + (index & (CNQ_SIZE - 1)) * sizeof(e), sizeof(e));
    return from_regpair(e.cq_handle);
}

/* ---- MRs ---- */

uint32_t FakeRdma::reg_mr(uint32_t tid, const HostMem& mem, std::size_t offset, std::size_t len, uint8_t access,
                          uint16_t pd, FwReturn* result)
{
    const uint64_t start = mem.iova + offset;
    const uint64_t first = start & ~uint64_t{4095};
    const uint32_t pages = static_cast<uint32_t>((start + len - first + 4095) / 4096);
    for (uint32_t i = 0; i < pages; i++)
        pbl_.at<uint64_t>()[i] = first + uint64_t{i} * 4096;
    RegisterTidRamrodData d{};
    d.tid = tid;
    d.key = static_cast<uint8_t>(0x30 + tid);
    d.access = access;
    d.pd = pd;
    d.page_shift = 12;
    d.first_page_offset = static_cast<uint32_t>(start - first);
    d.va = va_of(mem, offset);
    d.length = len;
    d.pbl_base = make_regpair(pbl_.iova);
    d.num_pages = pages;
    FwReturn r = rc(RdmaCmd::register_tid, &d, sizeof(d));
    if (result != nullptr)
        *result = r;
    return mr_key(tid, d.key);
}

FwReturn FakeRdma::dereg_mr(uint32_t tid)
{
    DeregisterTidRamrodData d{};
    d.tid = tid;
    return rc(RdmaCmd::deregister_tid, &d, sizeof(d));
}

/* ---- QPs ---- */

FwReturn FakeRdma::create_qp(uint16_t id, const QpOptions& o)
{
    Qp& qp = qps_.at(id);
    qp = Qp{};
    qp.o = o;
    const uint8_t sq_shift = 2, rq_shift = 3; /* 256-byte SQ slots, 128-byte RQ slots */
    qp.sq = drv_.alloc(uint64_t{o.sq_size} << (sq_shift + 6));
    if (o.srq == NO_SRQ)
        qp.rq = drv_.alloc(uint64_t{o.rq_size} << (rq_shift + 4));
    CreateQpRamrodData d{};
    d.qp_id = id;
    d.pd = o.pd;
    d.dpi = dpi_;
    d.srq_id = o.srq;
    d.sq_cq_id = o.sq_cq;
    d.rq_cq_id = o.rq_cq;
    d.sq_wqe_shift = sq_shift;
    d.rq_wqe_shift = rq_shift;
    d.max_send_sge = o.max_sge;
    d.max_recv_sge = o.max_sge;
    d.sq_base = make_regpair(qp.sq.iova);
    d.rq_base = make_regpair(qp.rq.iova);
    d.sq_size = o.sq_size;
    d.rq_size = o.srq == NO_SRQ ? o.rq_size : 0;
    d.max_inline = o.max_inline;
    d.signal_all = o.signal_all;
    d.qp_type = static_cast<uint8_t>(o.type);
    return rc(RdmaCmd::create_qp, &d, sizeof(d));
}

FwReturn FakeRdma::modify_qp(const ModifyQpRamrodData& d) { return rc(RdmaCmd::modify_qp, &d, sizeof(d)); }

FwReturn FakeRdma::destroy_qp(uint16_t id, uint64_t* data)
{
    DestroyQpRamrodData d{};
    d.qp_id = id;
    EventRingElement eqe = rdma(RdmaCmd::destroy_qp, &d, sizeof(d));
    if (data != nullptr)
        *data = eqe.data;
    return static_cast<FwReturn>(eqe.fw_return_code);
}

template <typename Context> Context FakeRdma::context(uint16_t id, uint32_t cid)
{
    QueryQpRamrodData d{};
    d.qp_id = id;
    Context ctx{};
    if (rc(RdmaCmd::query_qp, &d, sizeof(d)) == FwReturn::ok)
        std::memcpy(&ctx, drv_.ilt_context(cid), sizeof(ctx));
    else
        ctx.state = 0xff;
    return ctx;
}

RoceRequesterContext FakeRdma::requester_context(uint16_t id)
{
    return context<RoceRequesterContext>(id, requester_cid(id));
}

RoceResponderContext FakeRdma::responder_context(uint16_t id)
{
    return context<RoceResponderContext>(id, responder_cid(id));
}

QpState FakeRdma::state(uint16_t id) { return static_cast<QpState>(requester_context(id).state); }

FwReturn FakeRdma::connect(uint16_t id, const Peer& peer, const ConnectOptions& o)
{
    ModifyQpRamrodData d{};
    d.qp_id = id;
    d.cur_state = static_cast<uint8_t>(QpState::reset);
    d.new_state = static_cast<uint8_t>(QpState::init);
    d.modify = qp_modify::ACCESS;
    d.access = o.access;
    if (FwReturn r = modify_qp(d); r != FwReturn::ok)
        return r;

    d = ModifyQpRamrodData{};
    d.qp_id = id;
    d.cur_state = static_cast<uint8_t>(QpState::init);
    d.new_state = static_cast<uint8_t>(QpState::rtr);
    d.modify = qp_modify::PATH | qp_modify::PATH_MTU | qp_modify::DEST_QPN | qp_modify::RQ_PSN |
               qp_modify::MAX_DEST_RD_ATOMIC | qp_modify::MIN_RNR_TIMER;
    d.path_mtu = o.mtu;
    d.dest_qpn = peer.qpn;
    d.rq_psn = o.rq_psn;
    d.max_dest_rd_atomic = o.max_rd_atomic;
    d.min_rnr_timer = o.min_rnr_timer;
    std::memcpy(d.path.dst_mac, peer.mac.data(), 6);
    std::memcpy(d.path.src_mac, mac_.data(), 6);
    d.path.vlan_tci = NO_VLAN;
    d.path.ip_version = IP_VERSION_4;
    d.path.hop_limit = 64;
    d.path.udp_src_port = static_cast<uint16_t>(0xc000 | id);
    for (int i = 0; i < 4; i++) {
        d.path.src_ip[12 + i] = static_cast<uint8_t>(ipv4_ >> (24 - 8 * i));
        d.path.dst_ip[12 + i] = static_cast<uint8_t>(peer.ipv4 >> (24 - 8 * i));
    }
    if (FwReturn r = modify_qp(d); r != FwReturn::ok)
        return r;

    d = ModifyQpRamrodData{};
    d.qp_id = id;
    d.cur_state = static_cast<uint8_t>(QpState::rtr);
    d.new_state = static_cast<uint8_t>(QpState::rts);
    d.modify = qp_modify::SQ_PSN | qp_modify::TIMEOUT | qp_modify::RETRY_CNT | qp_modify::RNR_RETRY |
               qp_modify::MAX_RD_ATOMIC;
    d.sq_psn = o.sq_psn;
    d.timeout = o.timeout;
    d.retry_cnt = o.retry_cnt;
    d.rnr_retry = o.rnr_retry;
    d.max_rd_atomic = o.max_rd_atomic;
    return modify_qp(d);
}

void FakeRdma::post_send(uint16_t id, const SqWqe& wqe, const std::vector<Sge>& sges,
                         const std::vector<uint8_t>& inline_data)
{
    Qp& qp = qps_.at(id);
    uint8_t* slot = qp.sq.va + (qp.sq_prod & (qp.o.sq_size - 1)) * 256u;
    SqWqe w = wqe;
    w.num_sge = static_cast<uint8_t>(sges.size());
    std::memcpy(slot, &w, sizeof(w));
    if (!sges.empty())
        std::memcpy(slot + sizeof(w), sges.data(), sges.size() * sizeof(Sge));
    if (!inline_data.empty())
        std::memcpy(slot + sizeof(w), inline_data.data(), inline_data.size());
    qp.sq_prod++;
    doorbell(qp_db_offset(dpi_, id), qp.sq_prod);
}

void FakeRdma::post_datagram(uint16_t id, const SqWqe& wqe, const UdAddress& to, const std::vector<Sge>& sges)
{
    Qp& qp = qps_.at(id);
    uint8_t* slot = qp.sq.va + (qp.sq_prod & (qp.o.sq_size - 1)) * 256u;
    SqWqe w = wqe;
    w.num_sge = static_cast<uint8_t>(sges.size());
    std::memcpy(slot, &w, sizeof(w));
    std::memcpy(slot + sizeof(w), &to, sizeof(to));
    if (!sges.empty())
        std::memcpy(slot + sizeof(w) + sizeof(to), sges.data(), sges.size() * sizeof(Sge));
    qp.sq_prod++;
    doorbell(qp_db_offset(dpi_, id), qp.sq_prod);
}

FwReturn FakeRdma::datagrams_ready(uint16_t id, uint32_t qkey)
{
    ModifyQpRamrodData d{};
    d.qp_id = id;
    const QpState steps[] = {QpState::reset, QpState::init, QpState::rtr, QpState::rts};
    for (QpState next : steps) {
        d.cur_state = static_cast<uint8_t>(state(id));
        d.new_state = static_cast<uint8_t>(next);
        d.modify = next == QpState::init ? qp_modify::QKEY : next == QpState::rts ? qp_modify::SQ_PSN : 0;
        d.qkey = qkey;
        d.sq_psn = 0x100;
        if (FwReturn r = modify_qp(d); r != FwReturn::ok)
            return r;
    }
    return FwReturn::ok;
}

void FakeRdma::post_recv(uint16_t id, uint64_t wr_id, const std::vector<Sge>& sges)
{
    Qp& qp = qps_.at(id);
    uint8_t* slot = qp.rq.va + (qp.rq_prod & (qp.o.rq_size - 1)) * 128u;
    RqWqe w{};
    w.wr_id = wr_id;
    w.num_sge = static_cast<uint8_t>(sges.size());
    std::memcpy(slot, &w, sizeof(w));
    std::memcpy(slot + sizeof(w), sges.data(), sges.size() * sizeof(Sge));
    qp.rq_prod++;
    doorbell(qp_db_offset(dpi_, id) + 4, qp.rq_prod);
}

} // namespace cna::fw::test
