/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/client_session.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "hsi_common.h"
#include "vm_protocol.h"
#include "base/log.h"

namespace cna::adapterd {

using namespace fw;

using namespace transport::daemon;

namespace {

constexpr uint64_t PAGE = 4096;
/* What one client may lend the device: far more than a DPDK process has. */
constexpr uint64_t MAX_CLIENT_MEMORY = 1ull << 40;

/* Whether fd is an eventfd: what the adapter writes MSI-X interrupts into
 * must never block or reach a file. */
bool is_eventfd(int fd)
{
    char link[64];
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
    return n > 0 && std::string_view(link, static_cast<std::size_t>(n)) == "anon_inode:[eventfd]";
}

/* The file behind a piece of client memory must be a file (a memfd, a
 * hugetlbfs or tmpfs file) holding the whole piece. */
bool piece_fits(int fd, uint64_t offset, uint64_t len)
{
    struct stat st;
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && offset % PAGE == 0 && len % PAGE == 0 && len != 0 &&
           offset <= static_cast<uint64_t>(st.st_size) && len <= static_cast<uint64_t>(st.st_size) - offset;
}

} // namespace

int FunctionOwners::claim(const FunctionId& id, const void* session, uint32_t pid, bool vm)
{
    if (id.pf >= adapter_.num_functions() || (id.is_vf && adapter_.vf_function(id.pf, id.vf) == nullptr))
        return -ENODEV;
    Owner& owner = owner_.at(index(id));
    if (owner.session != nullptr)
        return -EBUSY;
    owner = Owner{session, pid, vm};
    return 0;
}

ClientSession::ClientSession(int sock, uint32_t id, FunctionOwners& owners) : sock_(sock), id_(id), owners_(owners) {}

ClientSession::~ClientSession()
{
    detach();
    ::close(sock_);
}

std::string ClientSession::name() const
{
    std::string n = "client " + std::to_string(id_);
    if (client_pid_ != 0)
        n += " (pid " + std::to_string(client_pid_) + ")";
    if (function_ != nullptr)
        n += " on " + id_of_function_.name();
    return n;
}

bool ClientSession::on_message()
{
    Message m;
    const int rc = recv_message(sock_, m);
    if (rc == -ECONNRESET) {
        log(LogLevel::notice, "%s: disconnected", name().c_str());
        return false;
    }
    if (rc < 0) {
        log(LogLevel::warning, "%s: %s: disconnecting it", name().c_str(),
            rc == -EPROTO ? "a malformed message" : std::strerror(-rc));
        return false;
    }
    return handle(m);
}

bool ClientSession::handle(Message& m)
{
    const auto type = static_cast<MsgType>(m.header.type);
    if (!greeted_ && type != MsgType::hello) {
        log(LogLevel::warning, "%s: message %u before hello: disconnecting it", name().c_str(), m.header.type);
        reply_status(m.header, -EPROTO);
        return false;
    }
    switch (type) {
    case MsgType::hello: return on_hello(m);
    case MsgType::attach: return on_attach(m);
    case MsgType::set_msix: return on_set_msix(m);
    case MsgType::dma_map: return on_dma_map(m);
    case MsgType::dma_map_process: return on_dma_map_process(m);
    case MsgType::dma_unmap: return on_dma_unmap(m);
    case MsgType::control: return on_control(m);
    case MsgType::status: return on_status(m);
    case MsgType::attach_vm: return on_attach_vm(m);
    }
    log(LogLevel::warning, "%s: unknown message type %u: disconnecting it", name().c_str(), m.header.type);
    reply_status(m.header, -EPROTO);
    return false;
}

bool ClientSession::reply(const Header& request, const void* body, uint32_t len, const int* fds, uint32_t nfds)
{
    return send_message(sock_, static_cast<uint16_t>(request.type | REPLY), request.seq, body, len, fds, nfds) == 0;
}

bool ClientSession::reply_status(const Header& request, int status)
{
    const Status s{status, 0};
    return reply(request, &s, sizeof s);
}

bool ClientSession::on_hello(const Message& m)
{
    const auto* hello = m.body_as<Hello>();
    if (hello == nullptr || greeted_ || m.nfds != 0) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (hello->version != VERSION) {
        log(LogLevel::warning, "%s: speaks version %u of the protocol, the daemon %u", name().c_str(),
            hello->version, VERSION);
        reply_status(m.header, -EPROTONOSUPPORT);
        return false;
    }
    greeted_ = true;
    client_pid_ = hello->pid;
    HelloReply r{};
    r.version = VERSION;
    r.functions = static_cast<uint16_t>(owners_.adapter().num_functions());
    r.ports = static_cast<uint16_t>(owners_.adapter().config().ports);
    std::strncpy(r.adapter, owners_.adapter().config().name.c_str(), sizeof r.adapter - 1);
    log(LogLevel::info, "%s: connected", name().c_str());
    return reply(m.header, &r, sizeof r);
}

bool ClientSession::on_attach(const Message& m)
{
    const auto* req = m.body_as<Attach>();
    if (req == nullptr || m.nfds != 0) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (const int rc = claim(FunctionId{req->pf, req->is_vf != 0, req->vf}, false); rc != 0)
        return reply_status(m.header, rc);
    errno = 0;
    mailbox_ = std::make_unique<SharedMemory>("cna-bar0-mailbox", MAILBOX_SIZE);
    kick_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    done_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!mailbox_->valid() || kick_fd_ < 0 || done_fd_ < 0 || ::pipe2(alive_, O_CLOEXEC | O_NONBLOCK) != 0) {
        const int rc = errno != 0 ? -errno : -ENOMEM;
        detach();
        return reply_status(m.header, rc);
    }
    const DeviceFunction::SharedBars bars = function_->shared_bars();
    const bool vf = id_of_function_.is_vf;
    AttachReply r{};
    r.msix_vectors = function_->msix_count();
    r.port = function_->port_id();
    r.gtt_offset = bars.gtt_offset;
    r.gtt_size = vf ? hsi::WINDOW_SIZE : hsi::GTT_SIZE;
    r.doorbells_offset = bars.doorbell_offset;
    r.doorbells_size = vf ? hsi::iov::VF_DB_BAR_SIZE : hsi::DB_BAR_SIZE;
    r.mailbox_size = MAILBOX_SIZE;
    int fds[ATTACH_FDS];
    fds[FD_GTT] = bars.gtt_fd;
    fds[FD_DOORBELLS] = bars.doorbell_fd;
    fds[FD_MAILBOX] = mailbox_->fd();
    fds[FD_KICK] = kick_fd_;
    fds[FD_DONE] = done_fd_;
    fds[FD_ALIVE] = alive_[0];
    log(LogLevel::notice, "%s: attached", name().c_str());
    return reply(m.header, &r, sizeof r, fds, ATTACH_FDS);
}

int ClientSession::claim(const FunctionId& id, bool vm)
{
    if (function_ != nullptr)
        return -EALREADY;
    if (const int rc = owners_.claim(id, this, client_pid_, vm); rc != 0) {
        log(LogLevel::warning, "%s: cannot attach %s: %s", name().c_str(), id.name().c_str(),
            rc == -EBUSY ? "another client has it"
            : id.is_vf   ? "no such VF (its PF has not enabled it)"
                         : "no such PF");
        return rc;
    }
    function_ = id.is_vf ? owners_.adapter().vf_function(id.pf, id.vf) : &owners_.adapter().function(id.pf);
    id_of_function_ = id;
    served_seq_ = 0;
    return 0;
}

/* The guest's RAM is mapped whole; the guest's driver chooses which of it
 * the function's IOMMU maps (vm_dma_map). */
bool ClientSession::on_attach_vm(Message& m)
{
    const auto* req = m.body_as<AttachVm>();
    if (req == nullptr || m.nfds != 1) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (req->guest_ram == 0 || req->guest_ram % PAGE != 0 || req->guest_ram > transport::vm::MAX_GUEST_RAM ||
        !piece_fits(m.fds[0], 0, req->guest_ram)) {
        log(LogLevel::warning, "%s: a VM's RAM must be a file of whole pages, at most %llu MiB", name().c_str(),
            static_cast<unsigned long long>(transport::vm::MAX_GUEST_RAM >> 20));
        return reply_status(m.header, -EINVAL);
    }
    if (const int rc = claim(FunctionId{req->pf, true, req->vf}, true); rc != 0)
        return reply_status(m.header, rc);
    void* ram = ::mmap(nullptr, req->guest_ram, PROT_READ | PROT_WRITE, MAP_SHARED, m.fds[0], 0);
    kick_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    const itimerspec period{{0, transport::vm::POLL_PERIOD_US * 1000}, {0, transport::vm::POLL_PERIOD_US * 1000}};
    if (ram == MAP_FAILED || kick_fd_ < 0 || ::timerfd_settime(kick_fd_, 0, &period, nullptr) != 0) {
        const int rc = -errno;
        if (ram != MAP_FAILED)
            ::munmap(ram, req->guest_ram);
        detach();
        return reply_status(m.header, rc);
    }
    guest_ram_ = static_cast<uint8_t*>(ram);
    guest_ram_size_ = req->guest_ram;
    vm_bar_ = function_->vm_bar().base;
    std::memset(vm_bar_ + transport::vm::MAILBOX_OFFSET, 0, transport::vm::GTT_OFFSET - transport::vm::MAILBOX_OFFSET);
    function_served_seq_ = 0;
    transport::vm::Header header{};
    header.version = transport::vm::VERSION;
    header.header_size = sizeof header;
    header.pf = req->pf;
    header.vf = req->vf;
    header.port = function_->port_id();
    header.mailbox_offset = transport::vm::MAILBOX_OFFSET;
    header.function_mailbox_offset = transport::vm::FUNCTION_MAILBOX_OFFSET;
    header.gtt_offset = transport::vm::GTT_OFFSET;
    header.gtt_size = hsi::WINDOW_SIZE;
    header.doorbells_offset = transport::vm::DOORBELLS_OFFSET;
    header.doorbells_size = hsi::iov::VF_DB_BAR_SIZE;
    header.poll_period_us = transport::vm::POLL_PERIOD_US;
    header.guest_ram = guest_ram_size_;
    auto* published = reinterpret_cast<transport::vm::Header*>(vm_bar_ + transport::vm::HEADER_OFFSET);
    std::memcpy(published, &header, sizeof header);
    std::atomic_ref<uint32_t>(published->signature).store(transport::vm::SIGNATURE, std::memory_order_release);
    log(LogLevel::notice, "%s: attached for a VM with %llu MiB of RAM", name().c_str(),
        static_cast<unsigned long long>(guest_ram_size_ >> 20));
    const AttachVmReply r{{0, 0}, transport::vm::BAR_SIZE};
    const int fd = function_->vm_bar().fd;
    return reply(m.header, &r, sizeof r, &fd, 1);
}

bool ClientSession::on_set_msix(Message& m)
{
    const auto* req = m.body_as<SetMsix>();
    if (req == nullptr || req->count != m.nfds) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (function_ == nullptr || vm_bar_ != nullptr) /* a VM's vectors are not the launcher's */
        return reply_status(m.header, -ENODEV);
    if (req->first > function_->msix_count() || req->count > function_->msix_count() - req->first)
        return reply_status(m.header, -EINVAL);
    for (uint32_t i = 0; i < req->count; i++)
        if (!is_eventfd(m.fds[i]))
            return reply_status(m.header, -EBADF);
    for (uint32_t i = 0; i < req->count; i++) {
        if (const int rc = function_->route_msix(req->first + i, m.fds[i]); rc != 0)
            return reply_status(m.header, rc);
        routed_msix_ |= 1ull << (req->first + i);
    }
    return reply_status(m.header, 0);
}

bool ClientSession::on_dma_map(Message& m)
{
    const auto* req = m.body_as<DmaMap>();
    if (req == nullptr || req->pieces == 0 || req->pieces > MAX_DMA_PIECES || req->pieces != m.nfds) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (function_ == nullptr || vm_bar_ != nullptr) /* a VM's memory is the guest's to lend */
        return reply_status(m.header, -ENODEV);
    return reply_status(m.header, map_region(*req, m.fds));
}

/* The region is mapped here as one run of addresses, so that a DMA access
 * spanning two pieces translates as one. */
int ClientSession::map_region(const DmaMap& req, const int* fds)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < req.pieces; i++) {
        if (!piece_fits(fds[i], req.piece_offset[i], req.piece_len[i]))
            return -EINVAL;
        total += req.piece_len[i];
    }
    if (total != req.len || req.iova % PAGE != 0 || req.iova + req.len < req.iova ||
        req.len > MAX_CLIENT_MEMORY - mapped_bytes_)
        return -EINVAL;
    void* area = ::mmap(nullptr, req.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return -errno;
    auto* va = static_cast<uint8_t*>(area);
    uint64_t at = 0;
    for (uint32_t i = 0; i < req.pieces; at += req.piece_len[i], i++) {
        if (::mmap(va + at, req.piece_len[i], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fds[i],
                   static_cast<off_t>(req.piece_offset[i])) == MAP_FAILED) {
            const int rc = -errno;
            ::munmap(va, req.len);
            return rc;
        }
    }
    if (const int rc = function_->dma_map(req.iova, va, req.len); rc != 0) {
        ::munmap(va, req.len);
        return rc;
    }
    regions_[req.iova] = Region{va, req.len};
    mapped_bytes_ += req.len;
    return 0;
}

/* A range of the client's own memory it cannot lend as a file. The first
 * fd is kept for the session (a later one is the same address space's, or
 * another the client could read anyway); the range must read at both ends
 * now, so that a wrong address is refused here rather than fault later. */
bool ClientSession::on_dma_map_process(Message& m)
{
    const auto* req = m.body_as<DmaMapProcess>();
    if (req == nullptr || m.nfds != 1) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (function_ == nullptr || vm_bar_ != nullptr)
        return reply_status(m.header, -ENODEV);
    if (req->len == 0 || req->iova + req->len < req->iova || req->va + req->len < req->va)
        return reply_status(m.header, -EINVAL);
    if (process_memory_ == nullptr)
        process_memory_ = std::make_shared<ProcessMemory>(m.take_fd(0));
    uint8_t probe;
    if (!process_memory_->read(req->va, &probe, 1) || !process_memory_->read(req->va + req->len - 1, &probe, 1))
        return reply_status(m.header, -EFAULT);
    return reply_status(m.header, function_->dma_map_remote(req->iova, process_memory_, req->va, req->len));
}

bool ClientSession::on_dma_unmap(const Message& m)
{
    const auto* req = m.body_as<DmaUnmap>();
    if (req == nullptr || m.nfds != 0) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    if (function_ == nullptr || vm_bar_ != nullptr)
        return reply_status(m.header, -ENODEV);
    return reply_status(m.header, dma_unmap(req->iova, req->len));
}

int ClientSession::dma_unmap(uint64_t iova, uint64_t len)
{
    const int rc = function_->dma_unmap(iova, len);
    if (rc == 0)
        unmap_regions(iova, len);
    return rc;
}

void ClientSession::dma_unmap_all()
{
    function_->dma_unmap(0, UINT64_MAX);
    unmap_regions(0, UINT64_MAX);
}

/* The daemon's mappings of the regions wholly inside [iova, iova + len),
 * once the function's IOMMU no longer has them (and no access through them
 * is in flight). A region the range only cuts into stays, in the IOMMU as
 * here: unmapping it here alone would leave the engine a translation into
 * nothing. */
void ClientSession::unmap_regions(uint64_t iova, uint64_t len)
{
    for (auto it = regions_.lower_bound(iova); it != regions_.end() && it->first - iova < len;) {
        if (it->second.len > len - (it->first - iova)) {
            ++it;
            continue;
        }
        if (vm_bar_ == nullptr) /* a VM's regions are views of guest RAM */
            ::munmap(it->second.va, it->second.len);
        mapped_bytes_ -= it->second.len;
        it = regions_.erase(it);
    }
}

bool ClientSession::on_control(const Message& m)
{
    const auto* req = m.body_as<Control>();
    if (req == nullptr || m.nfds != 0) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    AdapterControl& ctl = owners_.adapter().control();
    const uint32_t ports = owners_.adapter().config().ports;
    ControlReply r{};
    switch (static_cast<ControlOp>(req->op)) {
    case ControlOp::set_carrier:
        if (req->port >= ports)
            return reply_status(m.header, -EINVAL);
        ctl.set_carrier(req->port, req->value != 0);
        break;
    case ControlOp::inject:
        ctl.inject(static_cast<Fault>(req->value), req->arg != 0);
        break;
    case ControlOp::set_roce_loss:
        if (req->port >= ports || req->value > 1'000'000)
            return reply_status(m.header, -EINVAL);
        ctl.set_roce_loss(req->port, req->value);
        break;
    case ControlOp::port_counters:
        if (req->port >= ports)
            return reply_status(m.header, -EINVAL);
        r.counters = ctl.port_counters(req->port);
        break;
    case ControlOp::dma_faults:
        if (req->value >= owners_.adapter().num_functions())
            return reply_status(m.header, -EINVAL);
        r.value = ctl.dma_faults(req->value);
        break;
    case ControlOp::ptp_time:
        if (req->port >= ports)
            return reply_status(m.header, -EINVAL);
        r.value = ctl.ptp_time(req->port);
        break;
    case ControlOp::ptp_step:
        if (req->port >= ports)
            return reply_status(m.header, -EINVAL);
        ctl.ptp_step(req->port, static_cast<int64_t>(uint64_t{req->arg} << 32 | req->value));
        break;
    case ControlOp::ptp_offset:
        if (req->port >= ports || req->value >= ports)
            return reply_status(m.header, -EINVAL);
        r.value = static_cast<uint64_t>(ctl.ptp_offset(req->port, req->value));
        break;
    case ControlOp::set_cable_delay:
        if (req->port >= ports)
            return reply_status(m.header, -EINVAL);
        /* The port's wire is a TAP, or the delays make no sense. */
        if (!ctl.set_cable_delay(req->port, req->value, static_cast<int32_t>(req->arg)))
            return reply_status(m.header, -EINVAL);
        break;
    default:
        return reply_status(m.header, -EOPNOTSUPP);
    }
    return reply(m.header, &r, sizeof r);
}

bool ClientSession::on_status(const Message& m)
{
    if (m.header.body_len != 0 || m.nfds != 0) {
        reply_status(m.header, -EPROTO);
        return false;
    }
    Adapter& adapter = owners_.adapter();
    StatusReply r{};
    r.functions = std::min<uint32_t>(adapter.num_functions(), hsi::MAX_PFS);
    r.ports = adapter.config().ports;
    for (uint32_t pf = 0; pf < r.functions; pf++) {
        r.pfs[pf] = PfStatus{pf, adapter.function(pf).port_id(), owners_.client_pid(FunctionId{pf}), 0};
        for (uint32_t vf = 0; vf < hsi::iov::MAX_VFS_PER_PF; vf++)
            if (const FunctionId id{pf, true, vf}; adapter.vf_function(pf, vf) != nullptr)
                r.vf_status[r.vfs++] =
                    VfStatus{static_cast<uint8_t>(pf), static_cast<uint8_t>(vf),
                             static_cast<uint16_t>(owners_.held_by_vm(id) ? VF_STATUS_VM : 0), owners_.client_pid(id)};
    }
    return reply(m.header, &r, sizeof r);
}

void ClientSession::on_kick()
{
    uint64_t count;
    [[maybe_unused]] ssize_t n = ::read(kick_fd_, &count, sizeof count);
    if (vm_bar_ != nullptr)
        serve_function_mailbox();
    Bar0Mailbox* box = mailbox();
    const uint32_t seq = std::atomic_ref<uint32_t>(box->request_seq).load(std::memory_order_acquire);
    if (seq == served_seq_)
        return;
    /* The client may rewrite the request while it is read: each field is read
     * once, and whatever they say is an access any driver could ask. */
    const uint32_t op = std::atomic_ref<uint32_t>(box->op).load(std::memory_order_relaxed);
    const uint32_t offset = std::atomic_ref<uint32_t>(box->offset).load(std::memory_order_relaxed);
    const uint32_t value = std::atomic_ref<uint32_t>(box->value).load(std::memory_order_relaxed);
    if (op == static_cast<uint32_t>(Bar0Op::write))
        function_->bar0_write(offset, value);
    else
        std::atomic_ref<uint32_t>(box->value).store(function_->bar0_read(offset), std::memory_order_relaxed);
    served_seq_ = seq;
    std::atomic_ref<uint32_t>(box->done_seq).store(seq, std::memory_order_release);
    if (done_fd_ >= 0) {
        const uint64_t one = 1;
        n = ::write(done_fd_, &one, sizeof one);
    }
}

Bar0Mailbox* ClientSession::mailbox() const
{
    return reinterpret_cast<Bar0Mailbox*>(vm_bar_ != nullptr ? vm_bar_ + transport::vm::MAILBOX_OFFSET : mailbox_->base());
}

/* A VM's DMA table and resets, asked in the VF's memory: read field by
 * field once, as the BAR0 mailbox is, since the guest may rewrite them. */
void ClientSession::serve_function_mailbox()
{
    using transport::vm::FunctionOp;
    auto* box = reinterpret_cast<transport::vm::FunctionMailbox*>(vm_bar_ + transport::vm::FUNCTION_MAILBOX_OFFSET);
    const uint32_t seq = std::atomic_ref<uint32_t>(box->request_seq).load(std::memory_order_acquire);
    if (seq == function_served_seq_)
        return;
    const auto op = static_cast<FunctionOp>(std::atomic_ref<uint32_t>(box->op).load(std::memory_order_relaxed));
    const uint64_t iova = std::atomic_ref<uint64_t>(box->iova).load(std::memory_order_relaxed);
    const uint64_t len = std::atomic_ref<uint64_t>(box->len).load(std::memory_order_relaxed);
    int status = -EINVAL;
    switch (op) {
    case FunctionOp::dma_map: status = vm_dma_map(iova, len); break;
    case FunctionOp::dma_unmap: status = dma_unmap(iova, len); break;
    case FunctionOp::reset:
        log(LogLevel::notice, "%s: the guest's driver resets the function", name().c_str());
        owners_.adapter().vf_level_reset(id_of_function_.pf, id_of_function_.vf);
        dma_unmap_all();
        status = 0;
        break;
    }
    std::atomic_ref<int32_t>(box->status).store(status, std::memory_order_relaxed);
    function_served_seq_ = seq;
    std::atomic_ref<uint32_t>(box->done_seq).store(seq, std::memory_order_release);
}

/* Guest-physical memory is guest RAM from offset 0 (vm_protocol.h). */
int ClientSession::vm_dma_map(uint64_t iova, uint64_t len)
{
    if (len == 0 || iova % PAGE != 0 || len % PAGE != 0 || iova >= guest_ram_size_ || len > guest_ram_size_ - iova)
        return -EINVAL;
    if (const int rc = function_->dma_map(iova, guest_ram_ + iova, len); rc != 0)
        return rc;
    regions_[iova] = Region{guest_ram_ + iova, len};
    mapped_bytes_ += len;
    return 0;
}

/* The function is reset, as VFIO resets a device its user let go (the
 * client may have died in the middle of anything), and what the client
 * lent it goes back: its interrupts no longer reach it, its memory leaves
 * the IOMMU (waiting out the device's accesses in flight) and this process. */
void ClientSession::detach()
{
    if (function_ == nullptr)
        return;
    if (id_of_function_.is_vf)
        owners_.adapter().vf_level_reset(id_of_function_.pf, id_of_function_.vf);
    else
        owners_.adapter().function_level_reset(id_of_function_.pf);
    for (uint32_t v = 0; v < 64; v++)
        if (routed_msix_ & (1ull << v))
            function_->route_msix(v, -1);
    routed_msix_ = 0;
    dma_unmap_all();
    if (vm_bar_ != nullptr) {
        /* The guest's driver sees its VF gone. */
        std::atomic_ref<uint32_t>(reinterpret_cast<transport::vm::Header*>(vm_bar_)->signature)
            .store(0, std::memory_order_release);
        ::munmap(guest_ram_, guest_ram_size_);
        vm_bar_ = guest_ram_ = nullptr;
        guest_ram_size_ = 0;
    }
    for (int fd : {kick_fd_, done_fd_, alive_[0], alive_[1]})
        if (fd >= 0)
            ::close(fd);
    kick_fd_ = done_fd_ = alive_[0] = alive_[1] = -1;
    mailbox_.reset();
    owners_.release(id_of_function_);
    log(LogLevel::notice, "%s: detached", name().c_str());
    function_ = nullptr;
}

} // namespace cna::adapterd
