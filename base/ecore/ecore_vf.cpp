/* SPDX-License-Identifier: BSD-3-Clause
 * SR-IOV, the VF's side: the VF's end of the VF-PF channel (the guide's "HW
 * channel"), acquire and release, the bulletin board, and the L2 requests
 * the PF carries out for the VF.
 */
#include "ecore_vf.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>

#include "ecore_iov_tlv.h"
#include "ecore_log.h"

namespace cna::ecore {

using hsi::iov::ChannelState;
using hsi::iov::RequestHeader;
using hsi::iov::TlvType;
namespace vf_bar0 = hsi::iov::vf_bar0;
namespace vf_page = hsi::iov::vf_page;
using VfStatus = hsi::iov::Status;

/* A VF acknowledges its status blocks as a PF does, at the same BAR0 offsets. */
static_assert(vf_bar0::igu_cmd(0) == hsi::bar0_igu_cmd(0) && vf_bar0::igu_cmd(1) == hsi::bar0_igu_cmd(1));
static_assert(VfStatus::pending == VfStatus{0}, "a zeroed reply is pending");

namespace {

/* How often the VF looks at the channel's state: a request costs the PF an
 * interrupt and a ramrod or two. */
constexpr uint32_t CHANNEL_POLL_US = 20;

Status to_status(VfStatus status)
{
    switch (status) {
    case VfStatus::success: return Status::success;
    case VfStatus::failure: return Status::io;
    case VfStatus::not_supported: return Status::notimpl;
    case VfStatus::bad_request: return Status::inval;
    case VfStatus::no_resource: return Status::nospc;
    case VfStatus::forbidden: return Status::perm;
    case VfStatus::not_acquired: return Status::busy;
    case VfStatus::pending: break;
    }
    return Status::io;
}

/* Waits (bounded) while the channel holds a request: the PF completes it
 * once its reply is written, status last. The VF watches the channel's
 * state rather than the reply's status: a register read is ordered after
 * the device's writes to host memory (PCIe's read completion; the embedded
 * adapter's lock), so the reply is whole when it is read, and a PF that
 * completes without a reply is seen at once. The state, pending if the
 * wait ran out. */
ChannelState wait_while_pending(Hwfn& hwfn, uint32_t timeout_ms)
{
    osal::Deadline deadline(timeout_ms);
    for (;;) {
        const auto state = static_cast<ChannelState>(hwfn.dev->pci->reg_rd(vf_bar0::CHANNEL_STATE));
        if (state != ChannelState::pending || deadline.expired())
            return state;
        osal::usleep(CHANNEL_POLL_US);
    }
}

constexpr const char* CLOSED = "the PF has not enabled this VF, or took it for malicious";
constexpr const char* UNATTENDED =
    "the PF's driver unloaded leaving the VF enabled: its queues run on, requests wait for a PF's driver to load";

/* Before a request: the channel may take one. */
Status wait_channel_idle(Hwfn& hwfn, VfIov& iov)
{
    if (device_gone(hwfn)) {
        DP_VERBOSE(hwfn, osal::dp_module::HW, "no request: the device is gone");
        return Status::nodev;
    }
    const ChannelState state = wait_while_pending(hwfn, iov.timeout_ms);
    if (state == ChannelState::idle) {
        iov.unanswered = false;
        return Status::success;
    }
    if (state == ChannelState::pending) {
        DP_ERR(hwfn, "the PF has not completed the previous request within %u ms", iov.timeout_ms);
        return Status::timeout;
    }
    if (state == ChannelState::unattended) {
        DP_NOTICE(hwfn, "no request: %s", UNATTENDED);
        return Status::again;
    }
    DP_ERR(hwfn, "the channel to the PF is closed (state %u): %s", static_cast<uint32_t>(state), CLOSED);
    return Status::nodev;
}

RequestHeader& request_header(RequestHeader& header) { return header; }
template <typename Request> RequestHeader& request_header(Request& request) { return request.hdr; }

/* One request to the PF and its reply, under the channel's lock (from
 * construction on, so that what a request changes in VfIov is read and
 * written under it too). Once the channel is idle (the PF is done with the
 * request buffer), the request is built in place; send() hands it over and
 * waits for the reply, which stays readable until the exchange ends. */
class Exchange {
public:
    explicit Exchange(Hwfn& hwfn)
        : hwfn_(hwfn), iov_(*hwfn.vf_iov), guard_(iov_.lock),
          writer_(std::span(iov_.mem.as<uint8_t>() + VF_MEM_REQUEST, hsi::iov::CHANNEL_REQUEST_MAX)),
          idle_(wait_channel_idle(hwfn, iov_))
    {
    }
    Exchange(const Exchange&) = delete;
    Exchange& operator=(const Exchange&) = delete;

    VfIov& iov() { return iov_; }

    /* The request's first TLV; its reply address is set here. */
    template <typename Request> void request(TlvType type, Request request)
    {
        type_ = type;
        request_header(request).reply_address = iov_.mem.iova() + VF_MEM_REPLY;
        fits_ = idle_ == Status::success && writer_.add(type, request);
    }
    /* A further part (vport_update's). */
    template <typename Part> void add(TlvType type, const Part& part) { fits_ = fits_ && writer_.add(type, part); }

    /* The PF's verdict on the request, or timeout, nodev (channel closed),
     * io (a reply that makes no sense); each logged. */
    Status send();

    /* The reply's first TLV as the request's reply type (a ReplyHeader and
     * what follows it), after send() succeeded. */
    template <typename Body> Status reply(Body* out) const
    {
        if (reader_ && reader_->find(TlvType::reply, out) == iov::TlvReader::Find::found)
            return Status::success;
        DP_ERR(hwfn_, "the PF's reply to %s is shorter than its %zu bytes", name(), sizeof(Body));
        return Status::io;
    }

private:
    const char* name() const { return iov::tlv_name(type_); }
    uint8_t* reply_buffer() const { return iov_.mem.as<uint8_t>() + VF_MEM_REPLY; }
    Status read_reply();

    Hwfn& hwfn_;
    VfIov& iov_;
    std::lock_guard<osal::Mutex> guard_;
    iov::TlvWriter writer_;
    const Status idle_;
    TlvType type_ = TlvType::none;
    bool fits_ = false;
    std::optional<iov::TlvReader> reader_;
};

Status Exchange::send()
{
    if (idle_ != Status::success)
        return idle_;
    if (!fits_ || !writer_.end()) {
        DP_ERR(hwfn_, "%s does not fit the channel's %u bytes", name(), hsi::iov::CHANNEL_REQUEST_MAX);
        return Status::inval;
    }
    /* Pending, until the PF's reply: a PF that completes without one is seen. */
    std::memset(reply_buffer(), 0, hsi::iov::CHANNEL_REPLY_MAX);
    osal::PciFunction& pci = *hwfn_.dev->pci;
    const uint64_t request = iov_.mem.iova() + VF_MEM_REQUEST;
    pci.reg_wr(vf_bar0::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(request));
    pci.reg_wr(vf_bar0::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(request >> 32));
    pci.reg_wr(vf_bar0::CHANNEL_TRIGGER, 1);

    const ChannelState state = wait_while_pending(hwfn_, iov_.timeout_ms);
    if (state == ChannelState::pending) {
        iov_.unanswered = true;
        DP_ERR(hwfn_, "the PF did not answer %s within %u ms", name(), iov_.timeout_ms);
        return Status::timeout;
    }
    if (state == ChannelState::unattended) {
        DP_NOTICE(hwfn_, "%s not answered: %s", name(), UNATTENDED);
        return Status::again;
    }
    if (state != ChannelState::idle) {
        DP_ERR(hwfn_, "the channel was closed with %s pending (state %u): %s", name(), static_cast<uint32_t>(state),
               CLOSED);
        return Status::nodev;
    }
    if (osal::observe(reply_buffer() + offsetof(hsi::iov::ReplyHeader, status)) ==
        static_cast<uint8_t>(VfStatus::pending)) {
        DP_ERR(hwfn_, "the PF completed %s without a reply", name());
        return Status::io;
    }
    return read_reply();
}

Status Exchange::read_reply()
{
    reader_.emplace(std::span<const uint8_t>(reply_buffer(), hsi::iov::CHANNEL_REPLY_MAX));
    hsi::iov::ReplyHeader header{};
    if (reader_->error() != nullptr || reader_->first_type() != TlvType::reply ||
        reader_->find(TlvType::reply, &header) != iov::TlvReader::Find::found) {
        DP_ERR(hwfn_, "the PF's reply to %s is malformed: %s", name(),
               reader_->error() != nullptr ? reader_->error() : "it does not start with a reply header");
        return Status::io;
    }
    if (header.request != static_cast<uint16_t>(type_)) {
        DP_ERR(hwfn_, "the PF's reply to %s answers request %u", name(), header.request);
        return Status::io;
    }
    const auto status = static_cast<VfStatus>(header.status);
    const Status rc = to_status(status);
    if (rc != Status::success)
        DP_ERR(hwfn_, "the PF refused %s: %s", name(), iov::status_name(status));
    return rc;
}

/* A request whose reply says nothing but its verdict. */
template <typename Request> Status simple_request(Hwfn& hwfn, TlvType type, const Request& request)
{
    Exchange x(hwfn);
    x.request(type, request);
    return x.send();
}

/* Channel memory the PF may still write (it never answered a request):
 * never freed, rather than handed to someone else with a reply to come. */
void keep_forever(osal::DmaMem mem)
{
    static osal::Mutex lock;
    static auto* kept = new std::vector<osal::DmaMem>;
    std::lock_guard guard(lock);
    kept->push_back(std::move(mem));
}

void vf_free(Hwfn& hwfn)
{
    VfIov& iov = *hwfn.vf_iov;
    if (iov.unanswered &&
        hwfn.dev->pci->reg_rd(vf_bar0::CHANNEL_STATE) == static_cast<uint32_t>(ChannelState::pending)) {
        DP_NOTICE(hwfn, "the PF never answered the last request: its memory is kept, the PF may still write it");
        keep_forever(std::move(iov.mem));
    }
    hwfn.vf_iov.reset();
    hwfn.hw_prepared = false;
    hwfn.hw_init_done = false;
}

/* Within what a VF can have: the PF is trusted, but its reply is memory. */
bool grant_ok(const hsi::iov::AcquireReply& r)
{
    using namespace hsi::iov;
    return r.rx_queues >= 1 && r.rx_queues <= MAX_VF_QUEUES && r.tx_queues >= 1 && r.tx_queues <= MAX_VF_QUEUES &&
           r.sbs >= 1 && r.sbs <= MAX_VF_SBS && r.mac_filters <= MAX_VF_MAC_FILTERS &&
           r.vlan_filters <= MAX_VF_VLAN_FILTERS && r.mcast_filters <= MAX_VF_MCAST_FILTERS &&
           r.bulletin_size >= iov::BULLETIN_MIN_SIZE && r.bulletin_size <= sizeof(Bulletin);
}

Status acquire(Hwfn& hwfn, const VfAcquireParams& p)
{
    Exchange x(hwfn);
    VfIov& iov = x.iov();
    hsi::iov::AcquireRequest req{};
    req.driver_version = p.driver_version;
    req.hsi_major = hsi::HSI_VERSION_MAJOR;
    req.hsi_minor = hsi::HSI_VERSION_MINOR;
    req.rx_queues = p.rx_queues;
    req.tx_queues = p.tx_queues;
    req.sbs = p.sbs;
    req.mac_filters = p.mac_filters;
    req.vlan_filters = p.vlan_filters;
    req.mcast_filters = p.mcast_filters;
    req.bulletin_size = sizeof(hsi::iov::Bulletin);
    req.bulletin_address = iov.mem.iova() + VF_MEM_BULLETIN;
    x.request(TlvType::acquire, req);
    hsi::iov::AcquireReply r{};
    Status rc = x.send();
    if (rc == Status::success)
        rc = x.reply(&r);
    if (rc != Status::success)
        return rc;
    if (!grant_ok(r)) {
        DP_ERR(hwfn, "the PF granted more than a VF can have (%u/%u Rx/Tx queues, %u SBs, a %u-byte bulletin)",
               r.rx_queues, r.tx_queues, r.sbs, r.bulletin_size);
        return Status::io;
    }
    iov.pf_hsi_minor = r.hsi_minor;
    if (r.hsi_minor != hsi::HSI_VERSION_MINOR)
        DP_NOTICE(hwfn, "the PF speaks HSI %u.%u, this VF %u.%u", hsi::HSI_VERSION_MAJOR, r.hsi_minor,
                  hsi::HSI_VERSION_MAJOR, hsi::HSI_VERSION_MINOR);

    HwInfo& info = hwfn.hw_info;
    info = HwInfo{};
    info.pf_id = r.pf_id;
    info.port_id = r.port_id;
    info.fw_version = r.fw_version;
    std::copy(std::begin(r.mac), std::end(r.mac), info.mac.begin());
    info.mtu = r.mtu;
    info.resc = Resources{.num_sbs = r.sbs, .num_rx_queues = r.rx_queues, .num_tx_queues = r.tx_queues,
                          .num_vports = 1, .num_mac_filters = r.mac_filters, .num_vlan_filters = r.vlan_filters};
    iov.vf_id = r.vf_id;
    iov.mcast_filters = r.mcast_filters;
    iov.bulletin_size = r.bulletin_size;
    return Status::success;
}

template <typename Stats> void read_page_stats(Hwfn& hwfn, uint32_t page_offset, Stats* out)
{
    osal::PciFunction& pci = *hwfn.dev->pci;
    read_counters([&](uint32_t bar0) { return pci.reg_rd(bar0); }, pci.gtt_base() + page_offset, out);
}

/* The channel's RSS part holds 8 bits of hash types and of each queue. */
bool rss_fits(Hwfn& hwfn, const RssParams& rss)
{
    const uint32_t queues = hwfn.hw_info.resc.num_rx_queues;
    if (rss.hash_types <= 0xff &&
        (!rss.enable || std::all_of(rss.reta.begin(), rss.reta.end(), [&](uint16_t q) { return q < queues; })))
        return true;
    DP_ERR(hwfn, "RSS of a VF: hash types 0x%x, indirection within its %u Rx queues", rss.hash_types, queues);
    return false;
}

using Mac = std::array<uint8_t, 6>;

/* The PF filters multicast for a VF by a list, which a vport_update
 * replaces whole: the VF keeps it and adds or removes one address. */
Status mcast_filter(Hwfn& hwfn, bool add, const Mac& mac)
{
    Exchange x(hwfn);
    VfIov& iov = x.iov();
    std::vector<Mac> list = iov.mcast;
    const auto at = std::find(list.begin(), list.end(), mac);
    if (add && at != list.end())
        return Status::success;
    if (!add && at == list.end())
        return Status::noent;
    if (add && list.size() >= iov.mcast_filters) {
        DP_ERR(hwfn, "the multicast list is full: %u addresses granted", iov.mcast_filters);
        return Status::nospc;
    }
    if (add)
        list.push_back(mac);
    else
        list.erase(at);
    hsi::iov::VportMcastTlv tlv{};
    tlv.count = static_cast<uint16_t>(list.size());
    for (std::size_t i = 0; i < list.size(); i++)
        std::copy(list[i].begin(), list[i].end(), tlv.macs[i]);
    x.request(TlvType::vport_update, RequestHeader{});
    x.add(TlvType::vport_mcast, tlv);
    const Status rc = x.send();
    if (rc == Status::success)
        iov.mcast = std::move(list);
    return rc;
}

} // namespace

/* ---- life cycle ------------------------------------------------------------ */

Status vf_hw_prepare(Hwfn& hwfn, const VfAcquireParams& params)
{
    if (!is_vf(hwfn)) {
        DP_ERR(hwfn, "vf_hw_prepare on a PF");
        return Status::inval;
    }
    if (hwfn.hw_prepared) {
        DP_ERR(hwfn, "hw_prepare called twice");
        return Status::busy;
    }
    auto iov = std::make_unique<VfIov>();
    if (iov->mem.alloc(VF_MEM_SIZE, "VF channel and bulletin") < 0)
        return Status::nomem;
    iov->timeout_ms = params.channel_timeout_ms;
    hwfn.vf_iov = std::move(iov);
    const Status rc = acquire(hwfn, params);
    if (rc != Status::success) {
        DP_ERR(hwfn, "acquire failed: %s", status_name(rc));
        vf_free(hwfn);
        return rc;
    }
    hwfn.hw_prepared = true;
    const HwInfo& info = hwfn.hw_info;
    DP_INFO(hwfn, "VF %u of PF %u: MAC %02x:%02x:%02x:%02x:%02x:%02x, %u SBs, %u/%u Rx/Tx queues, "
                  "%u MAC, %u VLAN and %u multicast filters",
            hwfn.vf_iov->vf_id, info.pf_id, info.mac[0], info.mac[1], info.mac[2], info.mac[3], info.mac[4],
            info.mac[5], info.resc.num_sbs, info.resc.num_rx_queues, info.resc.num_tx_queues,
            info.resc.num_mac_filters, info.resc.num_vlan_filters, hwfn.vf_iov->mcast_filters);
    return Status::success;
}

Status vf_close(Hwfn& hwfn)
{
    hwfn.hw_init_done = false;
    Exchange x(hwfn);
    x.request(TlvType::close, RequestHeader{});
    const Status rc = x.send();
    x.iov().mcast.clear();
    return rc;
}

void vf_release(Hwfn& hwfn)
{
    if (!hwfn.vf_iov)
        return;
    const Status closed = hwfn.hw_init_done ? vf_close(hwfn) : Status::success;
    /* A closed or unattended channel, or a PF that did not answer close,
     * takes no release. */
    if (closed != Status::nodev && closed != Status::again && !hwfn.vf_iov->unanswered)
        simple_request(hwfn, TlvType::release, RequestHeader{});
    vf_free(hwfn);
}

bool vf_bulletin_read(Hwfn& hwfn, hsi::iov::Bulletin* out)
{
    VfIov* iov = hwfn.vf_iov.get();
    if (iov == nullptr)
        return false;
    /* The PF may be writing it: each word is read whole, the board is
     * taken whole only if its CRC holds. */
    uint32_t words[sizeof(hsi::iov::Bulletin) / 4];
    const auto* board = reinterpret_cast<const uint32_t*>(iov->mem.as<uint8_t>() + VF_MEM_BULLETIN);
    for (std::size_t i = 0; i < std::size(words); i++)
        words[i] = __atomic_load_n(&board[i], __ATOMIC_RELAXED);
    hsi::iov::Bulletin read;
    if (!iov::bulletin_read(std::span(reinterpret_cast<const uint8_t*>(words), iov->bulletin_size), &read) ||
        read.version == iov->bulletin_version.load(std::memory_order_relaxed))
        return false;
    iov->bulletin_version.store(read.version, std::memory_order_relaxed);
    iov->link.store(uint64_t{read.link_up != 0} << 32 | read.speed_mbps, std::memory_order_relaxed);
    *out = read;
    return true;
}

/* ---- status blocks --------------------------------------------------------- */

void vf_sb_init(Hwfn& hwfn, const SbInfo& sb_info)
{
    VfIov& iov = *hwfn.vf_iov;
    std::lock_guard guard(iov.lock);
    iov.sbs[sb_info.sb_id] = &sb_info;
}

void vf_sb_release(Hwfn& hwfn, const SbInfo& sb_info)
{
    VfIov& iov = *hwfn.vf_iov;
    std::lock_guard guard(iov.lock);
    iov.sbs[sb_info.sb_id] = nullptr;
}

Status vf_sb_setup(Hwfn& hwfn, uint32_t sb_id, bool on)
{
    if (sb_id >= hwfn.hw_info.resc.num_sbs) {
        DP_ERR(hwfn, "status block %u is beyond the %u granted", sb_id, hwfn.hw_info.resc.num_sbs);
        return Status::inval;
    }
    Exchange x(hwfn);
    VfIov& iov = x.iov();
    const SbInfo* sb = iov.sbs[sb_id];
    if (on && sb == nullptr) {
        DP_ERR(hwfn, "status block %u was not initialised (int_sb_init)", sb_id);
        return Status::inval;
    }
    hsi::iov::SbSetupRequest req{};
    req.sb = static_cast<uint8_t>(sb_id);
    req.sb_addr = on ? sb->sb_phys : 0;
    /* Recorded before it is sent: a request that timed out may still be
     * carried out, and vf_sb_setup_clear_all must clear it then too. */
    const auto bit = static_cast<uint8_t>(1u << sb_id);
    iov.set_up_sbs = on ? iov.set_up_sbs | bit : iov.set_up_sbs & static_cast<uint8_t>(~bit);
    x.request(TlvType::sb_setup, req);
    return x.send();
}

void vf_sb_setup_clear_all(Hwfn& hwfn)
{
    uint8_t set_up;
    {
        std::lock_guard guard(hwfn.vf_iov->lock);
        set_up = hwfn.vf_iov->set_up_sbs;
    }
    for (uint32_t sb = 0; sb < hsi::iov::MAX_VF_SBS; sb++)
        if (set_up & (1u << sb))
            vf_sb_setup(hwfn, sb, false);
}

void vf_hold_sb(Hwfn& hwfn, uint32_t sb_id, bool held)
{
    VfIov& iov = *hwfn.vf_iov;
    std::lock_guard guard(iov.lock);
    const auto bit = static_cast<uint8_t>(1u << sb_id);
    iov.held_sbs = held ? iov.held_sbs | bit : iov.held_sbs & static_cast<uint8_t>(~bit);
}

/* ---- L2 -------------------------------------------------------------------- */

Status vf_vport_start(Hwfn& hwfn, const SpVportStartParams& p)
{
    Exchange x(hwfn);
    VfIov& iov = x.iov();
    hsi::iov::VportStartRequest req{};
    req.mtu = p.mtu;
    req.vlan_strip = p.vlan_strip;
    req.max_bds_per_packet = p.max_bds_per_packet;
    req.rx_csum = p.rx_csum;
    /* The SBs the PF configures: 0..n-1, each initialised (int_sb_init),
     * but those apart from the vport (held, or programmed by sb_setup). */
    std::array<const SbInfo*, hsi::iov::MAX_VF_SBS> vport_sbs = iov.sbs;
    for (uint32_t sb = 0; sb < vport_sbs.size(); sb++)
        if ((iov.held_sbs | iov.set_up_sbs) & (1u << sb))
            vport_sbs[sb] = nullptr;
    const auto end = std::find(vport_sbs.begin(), vport_sbs.end(), nullptr);
    req.sbs = static_cast<uint8_t>(end - vport_sbs.begin());
    if (req.sbs == 0 || std::any_of(end, vport_sbs.end(), [](const SbInfo* sb) { return sb != nullptr; })) {
        DP_ERR(hwfn, "vport_start needs status blocks 0..n-1 initialised (int_sb_init) before: the PF "
                     "configures them with the vport");
        return Status::inval;
    }
    for (uint32_t i = 0; i < req.sbs; i++)
        req.sb_addr[i] = vport_sbs[i]->sb_phys;
    x.request(TlvType::vport_start, req);
    const Status rc = x.send();
    if (rc == Status::success)
        iov.mcast.clear();
    DP_VERBOSE(hwfn, osal::dp_module::L2, "vport_start: MTU %u, %u SBs: %s", p.mtu, req.sbs, status_name(rc));
    return rc;
}

Status vf_vport_update(Hwfn& hwfn, const SpVportUpdateParams& p)
{
    if (p.rss_params != nullptr && !rss_fits(hwfn, *p.rss_params))
        return Status::inval;
    if (p.update_mtu) {
        hsi::iov::UpdateMtuRequest req{};
        req.mtu = p.mtu;
        if (Status rc = simple_request(hwfn, TlvType::update_mtu, req); rc != Status::success)
            return rc;
    }
    Exchange x(hwfn);
    x.request(TlvType::vport_update, RequestHeader{});
    bool any = false;
    if (p.update_vport_active_rx_flg || p.update_vport_active_tx_flg) {
        x.add(TlvType::vport_activate,
              hsi::iov::VportActivateTlv{{}, p.update_vport_active_rx_flg, p.vport_active_rx_flg,
                                         p.update_vport_active_tx_flg, p.vport_active_tx_flg});
        any = true;
    }
    if (p.update_accept_flags) {
        /* What the VF's filters match, it always accepts. */
        namespace accept = hsi::eth::accept;
        x.add(TlvType::vport_rx_mode,
              hsi::iov::VportRxModeTlv{{}, (p.rx_accept & accept::UCAST_UNMATCHED) != 0,
                                       (p.rx_accept & accept::MCAST_UNMATCHED) != 0,
                                       (p.rx_accept & accept::BCAST) != 0, 0});
        any = true;
    }
    if (p.update_vlan_strip) {
        x.add(TlvType::vport_vlan_strip, hsi::iov::VportVlanStripTlv{{}, p.vlan_strip, {}});
        any = true;
    }
    if (p.rss_params != nullptr) {
        const RssParams& rss = *p.rss_params;
        hsi::iov::VportRssTlv tlv{};
        tlv.enable = rss.enable;
        tlv.hash_types = static_cast<uint8_t>(rss.hash_types);
        std::copy(rss.key.begin(), rss.key.end(), tlv.key);
        std::transform(rss.reta.begin(), rss.reta.end(), tlv.reta, [](uint16_t q) { return static_cast<uint8_t>(q); });
        x.add(TlvType::vport_rss, tlv);
        any = true;
    }
    return any ? x.send() : Status::success;
}

Status vf_vport_stop(Hwfn& hwfn)
{
    Exchange x(hwfn);
    x.request(TlvType::vport_teardown, RequestHeader{});
    const Status rc = x.send();
    if (rc == Status::success)
        x.iov().mcast.clear();
    return rc;
}

/* A queue start's exchange; the reply says where the queue's producer goes. */
template <typename Request>
Status start_queue(Hwfn& hwfn, TlvType type, const Request& req, hsi::iov::StartQueueReply* reply)
{
    Exchange x(hwfn);
    x.request(type, req);
    const Status rc = x.send();
    return rc != Status::success ? rc : x.reply(reply);
}

Status vf_rx_queue_start(Hwfn& hwfn, const RxQueueStartParams& p, RxQueueStartRet* ret)
{
    const uint16_t queue = p.queue.queue_id;
    if (p.bd_ring_size != p.cqe_ring_size) {
        DP_ERR(hwfn, "Rx queue %u: a VF's BD and CQE rings have one size (%u and %u given)", queue, p.bd_ring_size,
               p.cqe_ring_size);
        return Status::inval;
    }
    /* A PF's driver of an older HSI would not pass the flag on: the stamp
     * ring would stay empty. */
    if (p.timestamp && hwfn.vf_iov->pf_hsi_minor < hsi::eth::RXQ_FLAGS_HSI_MINOR) {
        DP_ERR(hwfn, "Rx queue %u: the PF's driver (HSI %u.%u) has no Rx timestamps", queue, hsi::HSI_VERSION_MAJOR,
               hwfn.vf_iov->pf_hsi_minor);
        return Status::notimpl;
    }
    osal::PciFunction& pci = *hwfn.dev->pci;
    /* The storm restarts the queue at 0: so must the producers it reads. */
    pci.reg_wr(vf_bar0::rx_prod(queue), 0);

    hsi::iov::StartRxqRequest req{};
    req.bd_ring = p.bd_ring_iova;
    req.cqe_ring = p.cqe_ring_iova;
    req.ring_size = p.bd_ring_size;
    req.buf_size = p.bd_max_bytes;
    req.queue = static_cast<uint8_t>(queue);
    req.sb = static_cast<uint8_t>(p.queue.sb_id);
    req.sb_pi = p.queue.sb_idx;
    req.flags = p.timestamp ? hsi::eth::rxq_flags::TIMESTAMP : 0;
    hsi::iov::StartQueueReply reply{};
    if (const Status rc = start_queue(hwfn, TlvType::start_rxq, req, &reply); rc != Status::success)
        return rc;
    const uint32_t in_page = reply.offset - pci.gtt_base(); /* an offset below the page wraps around */
    if (in_page > hsi::WINDOW_SIZE - sizeof(uint32_t) || in_page % 4 != 0) {
        DP_ERR(hwfn, "Rx queue %u: the PF put its producer at BAR0 offset 0x%x, outside this VF's GTT page", queue,
               reply.offset);
        return Status::io;
    }
    ret->rx_prod_addr = reinterpret_cast<volatile uint32_t*>(pci.gtt() + in_page);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "Rx queue %u, SB %u, producer at BAR0 0x%x", queue, p.queue.sb_id,
               reply.offset);
    return Status::success;
}

Status vf_tx_queue_start(Hwfn& hwfn, const TxQueueStartParams& p, TxQueueStartRet* ret)
{
    const uint16_t queue = p.queue.queue_id;
    const uint32_t cid = hsi::cid_tx_queue(queue);
    /* The storm restarts the queue at 0: so must the doorbell it polls. */
    doorbell(doorbell_addr(hwfn, cid), 0);

    hsi::iov::StartTxqRequest req{};
    req.bd_ring = p.bd_ring_iova;
    req.ring_size = p.bd_ring_size;
    req.queue = static_cast<uint8_t>(queue);
    req.sb = static_cast<uint8_t>(p.queue.sb_id);
    req.sb_pi = p.queue.sb_idx;
    hsi::iov::StartQueueReply reply{};
    if (const Status rc = start_queue(hwfn, TlvType::start_txq, req, &reply); rc != Status::success)
        return rc;
    if (reply.offset > hsi::iov::VF_DB_BAR_SIZE - sizeof(uint32_t) || reply.offset % 4 != 0) {
        DP_ERR(hwfn, "Tx queue %u: the PF put its doorbell at 0x%x, outside this VF's doorbell page", queue,
               reply.offset);
        return Status::io;
    }
    ret->doorbell_addr = reinterpret_cast<volatile uint32_t*>(hwfn.dev->pci->doorbells() + reply.offset);
    DP_VERBOSE(hwfn, osal::dp_module::L2, "Tx queue %u, SB %u, doorbell at 0x%x", queue, p.queue.sb_id, reply.offset);
    return Status::success;
}

Status vf_queue_stop(Hwfn& hwfn, uint16_t queue_id, bool rx)
{
    hsi::iov::StopQueuesRequest req{};
    req.first = static_cast<uint8_t>(queue_id);
    req.count = 1;
    return simple_request(hwfn, rx ? TlvType::stop_rxqs : TlvType::stop_txqs, req);
}

Status vf_filter_ucast(Hwfn& hwfn, const FilterUcast& f)
{
    const bool add = f.opcode == FilterOpcode::add;
    if (!add && f.opcode != FilterOpcode::remove) {
        DP_ERR(hwfn, "filter opcode %u: a VF adds and removes its own filters only", static_cast<uint32_t>(f.opcode));
        return Status::notimpl;
    }
    if (f.type != FilterType::mac && f.type != FilterType::vlan) {
        DP_ERR(hwfn, "filter type %u: a VF filters on a MAC or a VLAN", static_cast<uint32_t>(f.type));
        return Status::notimpl;
    }
    if (f.type == FilterType::mac && (f.mac[0] & 1) != 0)
        return mcast_filter(hwfn, add, f.mac);
    hsi::iov::UcastFilterRequest req{};
    req.op = static_cast<uint8_t>(add ? hsi::iov::FilterOp::add : hsi::iov::FilterOp::remove);
    req.kind = static_cast<uint8_t>(f.type == FilterType::mac ? hsi::iov::FilterKind::mac : hsi::iov::FilterKind::vlan);
    std::copy(f.mac.begin(), f.mac.end(), req.mac);
    req.vlan = f.vlan;
    return simple_request(hwfn, TlvType::ucast_filter, req);
}

void vf_get_vport_stats(Hwfn& hwfn, hsi::eth::VportStats* stats)
{
    read_page_stats(hwfn, vf_page::VPORT_STATS, stats);
}

void vf_get_queue_stats(Hwfn& hwfn, uint16_t queue_id, bool rx, hsi::eth::QueueStats* stats)
{
    read_page_stats(hwfn, rx ? vf_page::rx_queue_stats(queue_id) : vf_page::tx_queue_stats(queue_id), stats);
}

void vf_get_roce_stats(Hwfn& hwfn, hsi::rdma::RoceStats* stats)
{
    read_page_stats(hwfn, vf_page::ROCE_STATS, stats);
}

bool vf_link_up(const Hwfn& hwfn, uint32_t* speed_mbps)
{
    const uint64_t link = hwfn.vf_iov->link.load(std::memory_order_relaxed);
    *speed_mbps = static_cast<uint32_t>(link);
    return (link >> 32) != 0;
}

ChannelState vf_channel_state(Hwfn& hwfn)
{
    return static_cast<ChannelState>(hwfn.dev->pci->reg_rd(vf_bar0::CHANNEL_STATE));
}

bool vf_channel_open(Hwfn& hwfn) { return vf_channel_state(hwfn) != ChannelState::disabled; }

} // namespace cna::ecore
