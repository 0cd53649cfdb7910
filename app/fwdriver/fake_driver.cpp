/* SPDX-License-Identifier: BSD-3-Clause */
#include "fake_driver.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <thread>
#include <utility>

namespace cna::fw::test {

using namespace hsi;
using namespace hsi::eth;

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

double thread_cpu_seconds(const std::string& comm)
{
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr)
        return -1;
    double seconds = -1;
    while (dirent* e = readdir(dir)) {
        std::string task = std::string("/proc/self/task/") + e->d_name;
        std::string name;
        unsigned long long run_ns = 0;
        if (e->d_name[0] != '.' && std::getline(std::ifstream(task + "/comm"), name) && name == comm &&
            std::ifstream(task + "/schedstat") >> run_ns)
            seconds = static_cast<double>(run_ns) / 1e9;
    }
    closedir(dir);
    return seconds;
}

FakeDriver::FakeDriver(Adapter& adapter, uint32_t pf)
    : adapter_(adapter), fn_(adapter.function(pf)), pf_(pf), next_iova_(0x10'0000'0000ull + (uint64_t{pf} << 32)),
      rx_(2 * MAX_QUEUES_PER_PF), tx_(2 * MAX_QUEUES_PER_PF) /* room for deliberately invalid ids */
{
}

FakeDriver::FakeDriver(Adapter& adapter, FakeDriver& pf, uint32_t vf)
    : adapter_(adapter), fn_(*adapter.vf_function(pf.pf(), vf)), pf_(pf.pf()),
      pf_driver_(&pf), vf_(vf), next_iova_(0x20'0000'0000ull + (uint64_t{pf.pf() * iov::MAX_VFS_PER_PF + vf} << 32)),
      rx_(2 * MAX_QUEUES_PER_PF), tx_(2 * MAX_QUEUES_PER_PF)
{
    sbs_ = alloc((MAX_SB_PER_PF + 1) * SB_MEM_SIZE / 64);
}

FwReturn FakeDriver::eth(EthCmd cmd, const void* data, std::size_t len)
{
    if (pf_driver_ == nullptr)
        return static_cast<FwReturn>(ramrod(ProtocolId::eth, static_cast<uint8_t>(cmd), data, len).fw_return_code);
    std::array<uint8_t, RAMROD_DATA_MAX> vf_data;
    std::memcpy(vf_data.data(), data, len);
    vf_data[0] = static_cast<uint8_t>(vf_data[0] + iov::vf_vport(vf_));
    return pf_driver_->eth(cmd, vf_data.data(), len);
}

FakeDriver::~FakeDriver()
{
    for (HostMem& m : allocations_) {
        fn_.dma_unmap(m.iova, m.len);
        std::free(m.va);
    }
}

uint32_t FakeDriver::rd(uint32_t addr)
{
    uint32_t base = addr & ~(WINDOW_SIZE - 1);
    if (base != ptt_base_) {
        fn_.bar0_write(bar0_ptt_entry(0), base);
        ptt_base_ = base;
    }
    return fn_.bar0_read(bar0_ptt_window(0) + (addr - base));
}

void FakeDriver::wr(uint32_t addr, uint32_t value)
{
    uint32_t base = addr & ~(WINDOW_SIZE - 1);
    if (base != ptt_base_) {
        fn_.bar0_write(bar0_ptt_entry(0), base);
        ptt_base_ = base;
    }
    fn_.bar0_write(bar0_ptt_window(0) + (addr - base), value);
}

HostMem FakeDriver::alloc(std::size_t len, bool map)
{
    std::size_t rounded = (len + 4095) & ~std::size_t{4095};
    HostMem m{next_iova_, static_cast<uint8_t*>(std::aligned_alloc(4096, rounded)), rounded};
    std::memset(m.va, 0, rounded);
    next_iova_ += rounded + 4096; /* a hole between mappings */
    if (map)
        fn_.dma_map(m.iova, m.va, m.len);
    allocations_.push_back(m);
    return m;
}

uint32_t FakeDriver::mcp_cmd(uint32_t command, uint32_t param, uint32_t* fw_param, std::chrono::milliseconds timeout)
{
    uint32_t mb = mfw::drv_mb_addr(pf_);
    if (mb_seq_ == 0)
        mb_seq_ = rd(mb + offsetof(mfw::DrvMailbox, drv_mb_header)) & mfw::DRV_MSG_SEQ_MASK;
    mb_seq_ = (mb_seq_ + 1) & mfw::DRV_MSG_SEQ_MASK;
    wr(mb + offsetof(mfw::DrvMailbox, drv_mb_param), param);
    wr(mb + offsetof(mfw::DrvMailbox, drv_mb_header), command | mb_seq_);
    uint32_t header = 0;
    bool answered = wait_until(
        [&] {
            header = rd(mb + offsetof(mfw::DrvMailbox, fw_mb_header));
            return (header & mfw::FW_MSG_SEQ_MASK) == mb_seq_;
        },
        timeout);
    if (!answered)
        return 0;
    if (fw_param != nullptr)
        *fw_param = rd(mb + offsetof(mfw::DrvMailbox, fw_mb_param));
    return header & mfw::FW_MSG_CODE_MASK;
}

void FakeDriver::write_union(const void* data, std::size_t len)
{
    uint32_t base = mfw::drv_mb_addr(pf_) + offsetof(mfw::DrvMailbox, union_data);
    for (std::size_t i = 0; i < len; i += 4) {
        uint32_t v = 0;
        std::memcpy(&v, static_cast<const uint8_t*>(data) + i, std::min<std::size_t>(4, len - i));
        wr(static_cast<uint32_t>(base + i), v);
    }
}

bool FakeDriver::run_phase(const uint8_t* image, std::size_t len, init::Phase phase, uint32_t modes)
{
    using namespace init;
    ecore::InitImage parsed;
    std::string why;
    if (ecore::init_image_parse({image, len}, &parsed, &why) != ecore::ImageError::none)
        return false;

    std::array<uint32_t, rt::SIZE> rt{};
    rt[rt::SPQ_BASE_LO] = static_cast<uint32_t>(spq_.iova);
    rt[rt::SPQ_BASE_HI] = static_cast<uint32_t>(spq_.iova >> 32);
    rt[rt::SPQ_SIZE] = SPQ_SIZE;
    rt[rt::ILT_BASE_LO] = static_cast<uint32_t>(ilt_.iova);
    rt[rt::ILT_BASE_HI] = static_cast<uint32_t>(ilt_.iova >> 32);
    rt[rt::ILT_CIDS] = ILT_CIDS;
    rt[rt::PORT_MAX_FRAME] = MAX_MTU + ETH_OVERHEAD;
    rt[rt::IGU_INT_MODE] = static_cast<uint32_t>(IntMode::msix);

    struct Io {
        FakeDriver& drv;
        const std::array<uint32_t, rt::SIZE>& rt;
        void write(uint32_t addr, uint32_t value) { drv.wr(addr, value); }
        bool runtime(uint32_t idx, uint32_t* value) const
        {
            *value = rt[idx];
            return true;
        }
        bool poll(const InitOp& op)
        {
            return wait_until([&] { return drv.rd(op.addr) == op.value; }, std::chrono::milliseconds(op.count));
        }
    } io{*this, rt};
    return ecore::init_image_run(parsed, phase, modes, io);
}

uint32_t FakeDriver::load(uint32_t modes)
{
    if (modes == 0) {
        uint32_t ports = adapter_.config().ports;
        modes = init::mode::ASIC | init::mode::SF | init::mode::MSIX |
                (ports == 1 ? init::mode::PORTS_1 : ports == 2 ? init::mode::PORTS_2 : init::mode::PORTS_4);
    }
    open_ptt_access();
    if (spq_.va == nullptr) {
        alloc_slowpath();
        sbs_ = alloc((MAX_SB_PER_PF + 1) * SB_MEM_SIZE / 64);
    }
    uint32_t response = mcp_cmd(mfw::DRV_MSG_CODE_LOAD_REQ, HSI_VERSION_MAJOR);
    const uint8_t* image = init::builtin_image;
    std::size_t len = init::builtin_image_size;
    bool ok = true;
    switch (response) {
    case mfw::FW_MSG_CODE_DRV_LOAD_ENGINE: ok = run_phase(image, len, init::Phase::engine, modes); [[fallthrough]];
    case mfw::FW_MSG_CODE_DRV_LOAD_PORT: ok = ok && run_phase(image, len, init::Phase::port, modes); [[fallthrough]];
    case mfw::FW_MSG_CODE_DRV_LOAD_FUNCTION: ok = ok && run_phase(image, len, init::Phase::pf, modes); break;
    default: return response;
    }
    if (!ok || mcp_cmd(mfw::DRV_MSG_CODE_LOAD_DONE) != mfw::FW_MSG_CODE_DRV_LOAD_DONE)
        return 0;
    return response;
}

void FakeDriver::setup_sb(uint32_t sb, uint32_t vector)
{
    uint64_t addr = sbs_.iova + uint64_t{sb} * 64;
    if (pf_driver_ != nullptr) {
        /* A VF's status block i raises its vector i. */
        pf_driver_->wr(reg::IOV_VF_SELECT, vf_);
        pf_driver_->wr(reg::iov_vf_cau(reg::cau_sb_addr_lo(sb)), static_cast<uint32_t>(addr));
        pf_driver_->wr(reg::iov_vf_cau(reg::cau_sb_addr_hi(sb)), static_cast<uint32_t>(addr >> 32));
        pf_driver_->wr(reg::iov_vf_cau(reg::cau_sb_conf(sb)), reg::CAU_SB_CONF_VALID | sb << reg::CAU_SB_CONF_VECTOR_SHIFT);
        return;
    }
    wr(reg::cau_sb_addr_lo(sb), static_cast<uint32_t>(addr));
    wr(reg::cau_sb_addr_hi(sb), static_cast<uint32_t>(addr >> 32));
    wr(reg::cau_sb_conf(sb), reg::CAU_SB_CONF_VALID | vector << reg::CAU_SB_CONF_VECTOR_SHIFT);
}

const StatusBlock& FakeDriver::sb(uint32_t sb) const
{
    return *sbs_.at<StatusBlock>(uint64_t{sb} * 64);
}

void FakeDriver::alloc_slowpath()
{
    spq_ = alloc(SPQ_SIZE * sizeof(SlowPathElement));
    spq_data_ = alloc(SPQ_SIZE * RAMROD_DATA_MAX);
    eq_ = alloc(EQ_SIZE * sizeof(EventRingElement));
    ilt_ = alloc(ILT_CIDS * CONN_CONTEXT_SIZE);
}

FwReturn FakeDriver::start_pf()
{
    setup_sb(SP_SB_ID, SP_MSIX_VECTOR);
    wr(reg::ATTN_MASK, attn::ALL);
    return post_pf_start();
}

FwReturn FakeDriver::start_vf_slowpath(uint32_t eq_sb)
{
    if (spq_.va == nullptr)
        alloc_slowpath();
    const auto set = [&](uint32_t storm_reg, uint32_t value) { fn_.bar0_write(iov::vf_bar0::slowpath(storm_reg), value); };
    set(reg::STORM_SPQ_BASE_LO, static_cast<uint32_t>(spq_.iova));
    set(reg::STORM_SPQ_BASE_HI, static_cast<uint32_t>(spq_.iova >> 32));
    set(reg::STORM_SPQ_SIZE, SPQ_SIZE);
    set(reg::STORM_ILT_BASE_LO, static_cast<uint32_t>(ilt_.iova));
    set(reg::STORM_ILT_BASE_HI, static_cast<uint32_t>(ilt_.iova >> 32));
    set(reg::STORM_ILT_CIDS, ILT_CIDS);
    set(reg::STORM_PF_ENABLE, 1);
    eq_sb_ = eq_sb;
    setup_sb(eq_sb, eq_sb);
    return post_pf_start();
}

FwReturn FakeDriver::post_pf_start()
{
    PfStartRamrodData d{};
    d.event_ring_base = make_regpair(eq_.iova);
    d.event_ring_size = EQ_SIZE;
    d.event_ring_sb_id = static_cast<uint16_t>(eq_sb_);
    d.event_ring_sb_pi = SP_PI_EQ;
    d.personality = 1;
    d.hsi_major = HSI_VERSION_MAJOR;
    d.hsi_minor = HSI_VERSION_MINOR;
    d.mtu = 1500;
    return static_cast<FwReturn>(
        ramrod(ProtocolId::common, static_cast<uint8_t>(CommonCmd::pf_start), &d, sizeof(d)).fw_return_code);
}

EventRingElement FakeDriver::ramrod(ProtocolId protocol, uint8_t cmd, const void* data, std::size_t len, bool wait,
                                    uint64_t data_iova_override)
{
    uint32_t slot = spq_prod_ & (SPQ_SIZE - 1);
    if (len != 0)
        std::memcpy(spq_data_.va + slot * RAMROD_DATA_MAX, data, len);
    SlowPathElement elem{};
    elem.hdr.cmd_id = cmd;
    elem.hdr.protocol_id = static_cast<uint8_t>(protocol);
    elem.hdr.echo = ++echo_;
    elem.data_ptr = make_regpair(data_iova_override ? data_iova_override : spq_data_.iova + slot * RAMROD_DATA_MAX);
    std::memcpy(spq_.va + slot * sizeof(elem), &elem, sizeof(elem));
    spq_prod_++;
    ring_doorbell(fn_, CID_SPQ, spq_prod_);

    EventRingElement eqe{};
    eqe_timed_out_ = false;
    if (!wait)
        return eqe;
    /* Asynchronous events may come first: kept for take_async_events(). */
    for (;;) {
        if (!wait_until([&] { return sb_pi(eq_sb_, SP_PI_EQ) != eq_cons_; }, std::chrono::milliseconds(500))) {
            eqe_timed_out_ = true;
            eqe.fw_return_code = 0xff;
            return eqe;
        }
        eqe = next_eqe();
        if (!(eqe.flags & EQE_FLAG_ASYNC))
            return eqe;
        async_events_.push_back(eqe);
    }
}

EventRingElement FakeDriver::next_eqe()
{
    EventRingElement eqe;
    std::memcpy(&eqe, eq_.va + (eq_cons_ & (EQ_SIZE - 1)) * sizeof(eqe), sizeof(eqe));
    eq_cons_++;
    publish(fn_.gtt_memory() + (is_vf() ? iov::vf_page::EQ_CONS : iro::gtt::EQ_CONS), eq_cons_);
    return eqe;
}

std::vector<EventRingElement> FakeDriver::take_async_events()
{
    while (sb_pi(eq_sb_, SP_PI_EQ) != eq_cons_)
        async_events_.push_back(next_eqe());
    return std::exchange(async_events_, {});
}

FwReturn FakeDriver::vport_start(uint8_t vport, uint16_t mtu, uint8_t max_bds, bool strip, bool rx_csum)
{
    VportStartRamrodData d{};
    d.vport_id = vport;
    d.mtu = mtu;
    d.max_bds_per_packet = max_bds;
    d.vlan_strip = strip;
    d.rx_csum_en = rx_csum;
    return eth(EthCmd::vport_start, &d, sizeof(d));
}

FwReturn FakeDriver::vport_activate(uint8_t vport, uint16_t accept)
{
    VportUpdateRamrodData d{};
    d.vport_id = vport;
    d.active_rx = d.active_tx = 1;
    d.rx_accept = accept;
    d.update_flags = vport_update::UPDATE_ACTIVE_RX | vport_update::UPDATE_ACTIVE_TX | vport_update::UPDATE_RX_MODE;
    return eth(EthCmd::vport_update, &d, sizeof(d));
}

FwReturn FakeDriver::rx_queue_start(uint16_t queue, uint8_t vport, uint16_t sb, uint16_t bd_max_bytes, uint16_t ring,
                                    uint16_t cqe_ring, uint8_t flags)
{
    if (cqe_ring == 0)
        cqe_ring = ring;
    RxRing& r = rx_[queue];
    r = RxRing{};
    r.bds = alloc(ring * sizeof(RxBd));
    r.stamped = flags & rxq_flags::TIMESTAMP;
    r.cqes = alloc(cqe_ring * (sizeof(RxCqe) + (r.stamped ? RX_TIMESTAMP_BYTES : 0)));
    r.buffers = alloc(std::size_t{ring} * bd_max_bytes);
    r.size = ring;
    r.cqe_size = cqe_ring;
    r.bd_max = bd_max_bytes;
    r.sb = sb;
    /* Slot i always holds buffer i: rx_post writes the same address again,
     * and rx_recycle needs no BD write at all. */
    for (uint16_t slot = 0; slot < ring; slot++)
        r.bds.at<RxBd>()[slot].addr = make_regpair(r.buffers.iova + uint64_t{slot} * bd_max_bytes);
    setup_sb(sb, msix_vector_of_sb(sb));
    RxQueueStartRamrodData d{};
    d.vport_id = vport;
    d.sb_pi = L2_PI_RX;
    d.queue_id = queue;
    d.sb_id = sb;
    d.bd_max_bytes = bd_max_bytes;
    d.bd_base = make_regpair(r.bds.iova);
    d.cqe_base = make_regpair(r.cqes.iova);
    d.bd_ring_size = ring;
    d.cqe_ring_size = cqe_ring;
    d.flags = flags;
    return eth(EthCmd::rx_queue_start, &d, sizeof(d));
}

void FakeDriver::rx_post(uint16_t queue, uint16_t posted)
{
    RxRing& r = rx_[queue];
    for (uint16_t i = 0; i < posted; i++, r.bd_prod++) {
        uint16_t slot = r.bd_prod & (r.size - 1);
        r.bds.at<RxBd>()[slot].addr = make_regpair(r.buffers.iova + uint64_t{slot} * r.bd_max);
    }
    publish_rx(queue);
}

void FakeDriver::rx_set_bd(uint16_t queue, uint16_t ahead, uint64_t iova)
{
    RxRing& r = rx_[queue];
    uint16_t slot = static_cast<uint16_t>(r.bd_cons + ahead) & (r.size - 1);
    r.bds.at<RxBd>()[slot].addr = make_regpair(iova != 0 ? iova : r.buffers.iova + uint64_t{slot} * r.bd_max);
    publish_rx(queue); /* the same producers, releasing the rewritten BD */
}

std::vector<FakeDriver::RxFrame> FakeDriver::rx_poll(uint16_t queue)
{
    RxRing& r = rx_[queue];
    std::vector<RxFrame> frames;
    uint16_t prod = sb_pi(r.sb, L2_PI_RX);
    while (r.cqe_cons != prod) {
        RxFrame f;
        std::memcpy(&f.cqe, r.cqes.va + (r.cqe_cons & (r.cqe_size - 1)) * sizeof(RxCqe), sizeof(RxCqe));
        if (r.stamped)
            std::memcpy(&f.stamp,
                        r.cqes.va + r.cqe_size * sizeof(RxCqe) + (r.cqe_cons & (r.cqe_size - 1)) * RX_TIMESTAMP_BYTES,
                        sizeof f.stamp);
        for (uint32_t i = 0, left = f.cqe.pkt_len; i < f.cqe.bd_num; i++) {
            uint16_t slot = (r.bd_cons + i) & (r.size - 1);
            uint32_t chunk = std::min<uint32_t>(left, r.bd_max);
            const uint8_t* buf = r.buffers.va + std::size_t{slot} * r.bd_max;
            f.data.insert(f.data.end(), buf, buf + chunk);
            left -= chunk;
        }
        r.bd_cons = static_cast<uint16_t>(r.bd_cons + f.cqe.bd_num);
        r.cqe_cons++;
        frames.push_back(std::move(f));
    }
    if (!frames.empty()) {
        uint16_t consumed = 0;
        for (const RxFrame& f : frames)
            consumed = static_cast<uint16_t>(consumed + f.cqe.bd_num);
        rx_post(queue, consumed);
    }
    return frames;
}

std::vector<FakeDriver::RxFrame> FakeDriver::rx_wait(uint16_t queue, std::size_t count, std::chrono::milliseconds timeout)
{
    std::vector<RxFrame> all;
    wait_until(
        [&] {
            for (RxFrame& f : rx_poll(queue))
                all.push_back(std::move(f));
            return all.size() >= count;
        },
        timeout);
    return all;
}

FwReturn FakeDriver::tx_queue_start(uint16_t queue, uint8_t vport, uint16_t sb, uint16_t ring)
{
    TxRing& t = tx_[queue];
    t = TxRing{};
    t.bds = alloc(ring * sizeof(TxBd));
    t.buffers = alloc(std::size_t{ring} * 2048 + 65536 * 2);
    t.size = ring;
    t.sb = sb;
    t.cid = cid_tx_queue(queue);
    setup_sb(sb, msix_vector_of_sb(sb));
    TxQueueStartRamrodData d{};
    d.vport_id = vport;
    d.sb_pi = L2_PI_TX;
    d.queue_id = queue;
    d.sb_id = sb;
    d.bd_ring_size = ring;
    d.bd_base = make_regpair(t.bds.iova);
    d.cid = t.cid;
    return eth(EthCmd::tx_queue_start, &d, sizeof(d));
}

void FakeDriver::send_bds(uint16_t queue, const std::vector<TxBd>& bds)
{
    TxRing& t = tx_[queue];
    for (const TxBd& bd : bds) {
        t.bds.at<TxBd>()[t.prod & (t.size - 1)] = bd;
        t.prod++;
    }
    ring_tx_doorbell(t);
}

void FakeDriver::rx_share_buffers(uint16_t queue, uint16_t with)
{
    RxRing& r = rx_[queue];
    const RxRing& w = rx_[with];
    for (uint16_t slot = 0; slot < r.size && slot < w.size; slot++)
        r.bds.at<RxBd>()[slot].addr = make_regpair(w.buffers.iova + uint64_t{slot} * w.bd_max);
}

void FakeDriver::tx_fill_ring(uint16_t queue, const TxBd& bd)
{
    TxRing& t = tx_[queue];
    for (uint16_t slot = 0; slot < t.size; slot++)
        t.bds.at<TxBd>()[slot] = bd;
}

void FakeDriver::stage(uint16_t queue, const std::vector<uint8_t>& frame, const TxOptions& o, std::vector<TxBd>& bds)
{
    TxRing& t = tx_[queue];
    /* Each packet's data goes to a fresh area of the queue's buffer space. */
    static thread_local std::size_t cursor = 0;
    if (cursor + frame.size() > t.buffers.len)
        cursor = 0;
    std::memcpy(t.buffers.va + cursor, frame.data(), frame.size());
    std::size_t first = bds.size();
    std::size_t per_bd = (frame.size() + o.nbds - 1) / o.nbds;
    for (std::size_t off = 0; off < frame.size(); off += per_bd) {
        TxBd bd{};
        bd.addr = make_regpair(o.addr_override ? o.addr_override : t.buffers.iova + cursor + off);
        bd.nbytes = static_cast<uint16_t>(std::min(per_bd, frame.size() - off));
        bds.push_back(bd);
    }
    bds[first].flags = txbd::START | o.flags;
    bds[first].nbds = static_cast<uint8_t>(bds.size() - first);
    bds[first].vlan = o.vlan;
    bds[first].mss = o.mss;
    cursor += (frame.size() + 63) & ~std::size_t{63};
}

void FakeDriver::send(uint16_t queue, const std::vector<uint8_t>& frame, const TxOptions& o)
{
    std::vector<TxBd> bds;
    stage(queue, frame, o, bds);
    send_bds(queue, bds);
}

void FakeDriver::send_burst(uint16_t queue, const std::vector<std::vector<uint8_t>>& frames)
{
    std::vector<TxBd> bds;
    for (const auto& frame : frames)
        stage(queue, frame, TxOptions{}, bds);
    send_bds(queue, bds);
}

bool FakeDriver::wait_tx_done(uint16_t queue)
{
    TxRing& t = tx_[queue];
    return wait_until([&] { return sb_pi(t.sb, L2_PI_TX) == t.prod; }, std::chrono::milliseconds(500));
}

std::array<uint8_t, 6> FakeDriver::mac()
{
    if (is_vf())
        return {0x02, 0x00, 0x00, 0x00, static_cast<uint8_t>(0xf0 | pf_), static_cast<uint8_t>(vf_)};
    uint32_t upper = rd(mfw::func_addr(pf_) + offsetof(mfw::PublicFunc, mac_upper));
    uint32_t lower = rd(mfw::func_addr(pf_) + offsetof(mfw::PublicFunc, mac_lower));
    return {static_cast<uint8_t>(upper >> 8), static_cast<uint8_t>(upper),       static_cast<uint8_t>(lower >> 24),
            static_cast<uint8_t>(lower >> 16), static_cast<uint8_t>(lower >> 8), static_cast<uint8_t>(lower)};
}

uint64_t FakeDriver::stat64(uint32_t offset)
{
    /* high, low, high again until the high half is stable (hsi.md). */
    uint32_t hi, lo;
    do {
        hi = rd(reg::STORM_RAM_BASE + offset + 4);
        lo = rd(reg::STORM_RAM_BASE + offset);
    } while (hi != rd(reg::STORM_RAM_BASE + offset + 4));
    return uint64_t{hi} << 32 | lo;
}

VportStats FakeDriver::vport_stats(uint32_t vport)
{
    VportStats s;
    if (pf_driver_ != nullptr) {
        /* A VF's, from its GTT page. */
        std::memcpy(&s, const_cast<uint8_t*>(fn_.gtt_memory()) + iov::vf_page::VPORT_STATS, sizeof(s));
        return s;
    }
    auto* words = reinterpret_cast<uint64_t*>(&s);
    for (uint32_t i = 0; i < sizeof(s) / 8; i++)
        words[i] = stat64(iro::vport_stats(pf_, vport) + i * 8);
    return s;
}

QueueStats FakeDriver::rx_queue_stats(uint32_t queue)
{
    QueueStats s;
    auto* words = reinterpret_cast<uint64_t*>(&s);
    for (uint32_t i = 0; i < sizeof(s) / 8; i++)
        words[i] = stat64(iro::rx_queue_stats(pf_, queue) + i * 8);
    return s;
}

FwReturn FakeDriver::filter(FilterOpcode op, FilterType type, uint8_t vport, const uint8_t* mac, uint16_t vlan,
                            uint8_t dst_vport)
{
    FiltersUpdateRamrodData d{};
    d.vport_id = vport;
    d.opcode = static_cast<uint8_t>(op);
    d.type = static_cast<uint8_t>(type);
    d.dst_vport_id = dst_vport;
    if (mac != nullptr)
        std::memcpy(d.mac, mac, 6);
    d.vlan = vlan;
    return eth(EthCmd::filters_update, &d, sizeof(d));
}

std::string bring_up_l2(FakeDriver& drv, const L2Setup& s)
{
    if (const uint32_t rc = drv.load(); rc != mfw::FW_MSG_CODE_DRV_LOAD_ENGINE && rc != mfw::FW_MSG_CODE_DRV_LOAD_PORT &&
                                        rc != mfw::FW_MSG_CODE_DRV_LOAD_FUNCTION) {
        char code[16];
        std::snprintf(code, sizeof code, "0x%08x", rc);
        return rc == 0 ? "load: the image's phases or LOAD_DONE failed or went unanswered"
                       : std::string("load: LOAD_REQ refused, MFW answered ") + code;
    }
    if (FwReturn rc = drv.start_pf(); rc != FwReturn::ok)
        return "PF_START ramrod: fw_return " + std::to_string(static_cast<int>(rc));
    mfw::DrvPhyCfg cfg{};
    drv.write_union(&cfg, sizeof(cfg));
    if (uint32_t rc = drv.mcp_cmd(mfw::DRV_MSG_CODE_INIT_PHY); rc != mfw::FW_MSG_CODE_LINK_DONE)
        return "INIT_PHY: MFW answered " + std::to_string(rc);
    if (FwReturn rc = drv.vport_start(0, s.mtu, s.max_bds, s.strip, s.rx_csum); rc != FwReturn::ok)
        return "VPORT_START: fw_return " + std::to_string(static_cast<int>(rc));
    for (uint16_t q = 0; q < s.rx_queues; q++) {
        if (FwReturn rc = drv.rx_queue_start(q, 0, q, s.bd_max_bytes, s.ring, 0, s.rxq_flags); rc != FwReturn::ok)
            return "RX_QUEUE_START " + std::to_string(q) + ": fw_return " + std::to_string(static_cast<int>(rc));
        drv.rx_post(q, static_cast<uint16_t>(s.ring - 1));
    }
    for (uint16_t q = 0; q < s.tx_queues; q++) {
        uint16_t sb = static_cast<uint16_t>(s.rx_queues + q);
        if (FwReturn rc = drv.tx_queue_start(q, 0, sb, s.ring); rc != FwReturn::ok)
            return "TX_QUEUE_START " + std::to_string(q) + ": fw_return " + std::to_string(static_cast<int>(rc));
    }
    uint16_t accept = s.accept != 0 ? s.accept : accept::UCAST_UNMATCHED | accept::MCAST_UNMATCHED | accept::BCAST;
    if (FwReturn rc = drv.vport_activate(0, accept); rc != FwReturn::ok)
        return "VPORT_UPDATE (activate): fw_return " + std::to_string(static_cast<int>(rc));
    return {};
}

bool wait_link(FakeDriver& drv, std::chrono::milliseconds timeout)
{
    return wait_until(
        [&] {
            return drv.rd(mfw::port_addr(drv.fn().port_id()) + offsetof(mfw::PublicPort, link_status)) &
                   mfw::LINK_STATUS_LINK_UP;
        },
        timeout);
}

} // namespace cna::fw::test
