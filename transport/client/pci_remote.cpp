/* SPDX-License-Identifier: BSD-3-Clause
 * The remote backend. At attach the daemon hands over the function's GTT
 * window and doorbell BAR (mapped here: the fastpath stores to them as it
 * does on the embedded adapter), a BAR0 mailbox for the other registers,
 * and eventfds to kick it and to hear it done; this side gives one eventfd
 * per MSI-X vector and lends every DPDK memory segment, by the file behind
 * it, for the function's IOMMU to map at the segment's IOVA.
 */
#include "pci_remote.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include <rte_memory.h>

#include "hsi_common.h"
#include "daemon_socket.h"
#include "osal_log.h"
#include "pci_daemon_spawn.h"
#include "pci_iommu.h"

namespace cna::osal {
namespace {

using namespace transport::daemon;

/* How long a request may wait for the daemon before it counts as gone. */
constexpr int REPLY_TIMEOUT_MS = 5000;

class RemotePciFunction;

class RemoteControl final : public AdapterControl {
public:
    explicit RemoteControl(RemotePciFunction& fn) : fn_(fn) {}
    void set_carrier(uint32_t port, bool present) override;
    void inject(Fault fault, bool on) override;
    void set_roce_loss(uint32_t port, uint32_t per_million) override;
    PortCounters port_counters(uint32_t port) const override;
    uint64_t dma_faults(uint32_t pf) const override;
    uint64_t ptp_time(uint32_t port) const override;
    void ptp_step(uint32_t port, int64_t delta) override;
    int64_t ptp_offset(uint32_t port, uint32_t other) const override;
    bool set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns) override;

private:
    RemotePciFunction& fn_;
};

class RemotePciFunction final : public PciFunction {
public:
    RemotePciFunction(std::string name, int sock, bool vf)
        : PciFunction(std::move(name), vf ? VF_LAYOUT : PF_LAYOUT), sock_(sock), control_(*this),
          iommu_("cna-iommu-" + this->name(),
                 [this](uint64_t iova, void* va, std::size_t len) { return lend(iova, va, len); },
                 [this](uint64_t iova, std::size_t len) { return take_back(iova, len); })
    {
    }
    ~RemotePciFunction() override
    {
        iommu_.stop();
        for (int fd : {kick_fd_, done_fd_, alive_fd_, mem_fd_, sock_})
            if (fd >= 0)
                ::close(fd);
        for (int fd : msix_)
            ::close(fd);
    }

    int connect(const PciAttachParams& params, std::string* msg);

    uint32_t msix_count() const override { return static_cast<uint32_t>(msix_.size()); }
    int msix_eventfd(uint32_t vector) const override { return vector < msix_.size() ? msix_[vector] : -1; }
    int dma_map(uint64_t iova, void* va, std::size_t len) override { return lend(iova, va, len); }
    int dma_unmap(uint64_t iova, std::size_t len) override { return take_back(iova, len); }
    AdapterControl* control() override { return &control_; }
    int removal_fd() const override { return alive_fd_; }
    bool removed() const override;

    /* One request and its reply (of at most reply_len bytes, starting with a
     * Status): the reply's status, or -errno when the daemon did not answer. */
    int request(MsgType type, const void* body, uint32_t len, void* reply, uint32_t reply_len,
                const int* fds = nullptr, uint32_t nfds = 0, Message* reply_msg = nullptr);

protected:
    uint32_t bar0_read(uint32_t offset) override { return mailbox(Bar0Op::read, offset, 0); }
    void bar0_write(uint32_t offset, uint32_t value) override { mailbox(Bar0Op::write, offset, value); }

private:
    uint32_t mailbox(Bar0Op op, uint32_t offset, uint32_t value);
    int lend(uint64_t iova, void* va, std::size_t len);
    /* This process's memory, not a file's: the daemon copies through our /proc/self/mem. */
    int lend_own(uint64_t iova, void* va, std::size_t len);
    int take_back(uint64_t iova, std::size_t len);
    void log_err(uint32_t module, const char* func, const char* fmt, ...) __attribute__((format(printf, 4, 5)));

    int sock_;
    std::mutex request_lock_; /* one request on the socket at a time: control thread, hotplug, RDMA */
    uint32_t seq_ = 0;
    SharedBar mailbox_mem_; /* not a BAR, but memory shared the same way */
    int kick_fd_ = -1, done_fd_ = -1;
    int alive_fd_ = -1;       /* FD_ALIVE: hangs up when the daemon is gone */
    std::mutex bar0_lock_;    /* one BAR0 access at a time: control and interrupt threads */
    uint32_t bar0_seq_ = 0;
    mutable std::atomic<bool> daemon_gone_{false}; /* its pipe hung up, or it did not answer */
    std::once_flag mem_fd_once_;
    int mem_fd_ = -1; /* /proc/self/mem, for lend_own */
    std::vector<int> msix_;
    RemoteControl control_;
    IommuSync iommu_;
};

void RemotePciFunction::log_err(uint32_t module, const char* func, const char* fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    dp_log(logtype_ecore, DpLevel::err, module, name().c_str(), func, "%s", line);
}

bool RemotePciFunction::removed() const
{
    if (daemon_gone_.load(std::memory_order_relaxed))
        return true;
    pollfd p{alive_fd_, 0, 0};
    if (alive_fd_ >= 0 && ::poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)) != 0)
        daemon_gone_.store(true, std::memory_order_relaxed);
    return daemon_gone_.load(std::memory_order_relaxed);
}

int RemotePciFunction::request(MsgType type, const void* body, uint32_t len, void* reply, uint32_t reply_len,
                               const int* fds, uint32_t nfds, Message* reply_msg)
{
    if (removed())
        return -ENODEV;
    std::lock_guard guard(request_lock_);
    return transport::daemon::request(sock_, static_cast<uint16_t>(type), ++seq_, body, len, reply, reply_len,
                                REPLY_TIMEOUT_MS, fds, nfds, reply_msg);
}

/* A register outside the GTT: the request goes into the mailbox and the
 * daemon is kicked. A daemon gone, or that does not answer, reads as all
 * ones, as a device that fell off the bus does. */
uint32_t RemotePciFunction::mailbox(Bar0Op op, uint32_t offset, uint32_t value)
{
    std::lock_guard guard(bar0_lock_);
    if (removed())
        return 0xffffffff;
    auto* box = reinterpret_cast<Bar0Mailbox*>(const_cast<uint8_t*>(mailbox_mem_.va()));
    const uint32_t seq = ++bar0_seq_;
    box->op = static_cast<uint32_t>(op);
    box->offset = offset;
    box->value = value;
    std::atomic_ref<uint32_t>(box->request_seq).store(seq, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(kick_fd_, &one, sizeof one);
    for (int waited = 0; std::atomic_ref<uint32_t>(box->done_seq).load(std::memory_order_acquire) != seq;) {
        pollfd p[2] = {{done_fd_, POLLIN, 0}, {alive_fd_, 0, 0}};
        if (::poll(p, 2, 100) > 0) {
            if (p[1].revents != 0) {
                daemon_gone_ = true;
                return 0xffffffff;
            }
            uint64_t count;
            n = ::read(done_fd_, &count, sizeof count);
        } else if ((waited += 100) >= REPLY_TIMEOUT_MS) {
            daemon_gone_ = true;
            log_err(dp_module::HW, __func__, "the adapter daemon did not answer a BAR0 access within %d ms",
                    REPLY_TIMEOUT_MS);
            return 0xffffffff;
        }
    }
    return box->value;
}

/* Lends [va, va + len) to the function at iova: the files behind it, piece
 * by piece (DPDK memory is file-backed: a memfd with --no-huge, hugetlbfs
 * files otherwise), up to MAX_DMA_PIECES pieces per region; memory with no
 * file behind it (an RDMA application's malloc'd buffers) as this
 * process's own, which the adapter copies through /proc/self/mem. */
int RemotePciFunction::lend(uint64_t iova, void* va, std::size_t len)
{
    struct Piece {
        int fd;
        uint64_t offset, len;
    };
    std::vector<Piece> pieces;
    const uintptr_t start = reinterpret_cast<uintptr_t>(va);
    for (uintptr_t at = start; at < start + len;) {
        const rte_memseg* ms = rte_mem_virt2memseg(reinterpret_cast<void*>(at), nullptr);
        size_t seg_offset = 0;
        const int fd = ms != nullptr ? rte_memseg_get_fd_thread_unsafe(ms) : -1;
        if (fd < 0 || rte_memseg_get_fd_offset_thread_unsafe(ms, &seg_offset) != 0)
            return lend_own(iova, va, len);
        const uintptr_t ms_start = reinterpret_cast<uintptr_t>(ms->addr);
        const uint64_t offset = seg_offset + (at - ms_start);
        const uint64_t n = std::min<uint64_t>(ms_start + ms->len, start + len) - at;
        if (!pieces.empty() && pieces.back().fd == fd && pieces.back().offset + pieces.back().len == offset)
            pieces.back().len += n;
        else
            pieces.push_back({fd, offset, n});
        at += n;
    }
    uint64_t done = 0;
    for (std::size_t first = 0; first < pieces.size(); first += MAX_DMA_PIECES) {
        DmaMap req{};
        int fds[MAX_DMA_PIECES];
        req.iova = iova + done;
        for (std::size_t i = first; i < pieces.size() && req.pieces < MAX_DMA_PIECES; i++, req.pieces++) {
            req.piece_offset[req.pieces] = pieces[i].offset;
            req.piece_len[req.pieces] = pieces[i].len;
            fds[req.pieces] = pieces[i].fd;
            req.len += pieces[i].len;
        }
        Status st;
        if (const int rc = request(MsgType::dma_map, &req, sizeof req, &st, sizeof st, fds, req.pieces); rc != 0) {
            if (done != 0)
                take_back(iova, done);
            return rc;
        }
        done += req.len;
    }
    return 0;
}

int RemotePciFunction::lend_own(uint64_t iova, void* va, std::size_t len)
{
    std::call_once(mem_fd_once_, [this] { mem_fd_ = ::open("/proc/self/mem", O_RDWR | O_CLOEXEC); });
    if (mem_fd_ < 0) {
        log_err(dp_module::IOMMU, __func__, "cannot open /proc/self/mem for the daemon to reach this memory: %s",
                std::strerror(errno));
        return -ENOTSUP;
    }
    const DmaMapProcess req{iova, len, reinterpret_cast<uintptr_t>(va)};
    Status st;
    const int rc = request(MsgType::dma_map_process, &req, sizeof req, &st, sizeof st, &mem_fd_, 1);
    if (rc != 0)
        log_err(dp_module::IOMMU, __func__, "the daemon cannot reach VA 0x%" PRIxPTR " (%zu bytes): %s",
                reinterpret_cast<uintptr_t>(va), len, std::strerror(-rc));
    return rc;
}

int RemotePciFunction::take_back(uint64_t iova, std::size_t len)
{
    if (removed())
        return 0; /* a gone device holds nothing of ours any more */
    const DmaUnmap req{iova, len};
    Status st;
    return request(MsgType::dma_unmap, &req, sizeof req, &st, sizeof st);
}

int RemotePciFunction::connect(const PciAttachParams& params, std::string* msg)
{
    Hello hello{VERSION, 0, static_cast<uint32_t>(::getpid())};
    HelloReply hr;
    if (int rc = request(MsgType::hello, &hello, sizeof hello, &hr, sizeof hr); rc != 0) {
        *msg = "the daemon at " + params.daemon_socket + " refused hello: " + std::strerror(-rc);
        return rc;
    }
    if (params.daemon_ports != 0 && hr.ports != params.daemon_ports) {
        *msg = "the daemon at " + params.daemon_socket + " has an adapter of " + std::to_string(hr.ports) +
               " port(s), not " + std::to_string(params.daemon_ports);
        return -EINVAL;
    }
    Attach attach{params.pf, static_cast<uint16_t>(params.vf), params.is_vf};
    AttachReply ar;
    Message m;
    if (int rc = request(MsgType::attach, &attach, sizeof attach, &ar, sizeof ar, nullptr, 0, &m); rc != 0) {
        *msg = "the daemon at " + params.daemon_socket + " cannot attach " +
               (params.is_vf ? "VF " + std::to_string(params.vf) + " of " : std::string()) + "PF " +
               std::to_string(params.pf) + ": " +
               (rc == -ENODEV && params.is_vf ? std::string("its PF has not enabled it (the PF's vfs=)")
                                              : std::strerror(-rc));
        return rc;
    }
    if (m.nfds != ATTACH_FDS || ar.gtt_size < layout().gtt_size || ar.doorbells_size < layout().doorbells_size ||
        ar.mailbox_size < sizeof(Bar0Mailbox) || ar.msix_vectors == 0 || ar.msix_vectors > MAX_MSIX ||
        gtt_.map(m.fds[FD_GTT], ar.gtt_offset, ar.gtt_size) != 0 ||
        doorbells_.map(m.fds[FD_DOORBELLS], ar.doorbells_offset, ar.doorbells_size) != 0 ||
        mailbox_mem_.map(m.fds[FD_MAILBOX], 0, ar.mailbox_size) != 0) {
        *msg = "the daemon's attach reply gives no usable BARs";
        return -EPROTO;
    }
    kick_fd_ = m.take_fd(FD_KICK);
    done_fd_ = m.take_fd(FD_DONE);
    alive_fd_ = m.take_fd(FD_ALIVE);
    for (uint32_t v = 0; v < ar.msix_vectors; v++) {
        const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            *msg = std::string("eventfd: ") + std::strerror(errno);
            return -errno;
        }
        msix_.push_back(fd);
    }
    const SetMsix sm{0, ar.msix_vectors};
    Status st;
    if (int rc = request(MsgType::set_msix, &sm, sizeof sm, &st, sizeof st, msix_.data(), ar.msix_vectors); rc != 0) {
        *msg = std::string("the daemon refused the MSI-X eventfds: ") + std::strerror(-rc);
        return rc;
    }
    if (int rc = iommu_.start(); rc != 0) {
        *msg = "cannot lend DPDK memory to the IOMMU of " + name();
        return rc;
    }
    return 0;
}

void RemoteControl::set_carrier(uint32_t port, bool present)
{
    const Control c{static_cast<uint32_t>(ControlOp::set_carrier), port, present, 0};
    ControlReply r;
    fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r);
}

void RemoteControl::inject(Fault fault, bool on)
{
    const Control c{static_cast<uint32_t>(ControlOp::inject), 0, static_cast<uint32_t>(fault), on};
    ControlReply r;
    fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r);
}

void RemoteControl::set_roce_loss(uint32_t port, uint32_t per_million)
{
    const Control c{static_cast<uint32_t>(ControlOp::set_roce_loss), port, per_million, 0};
    ControlReply r;
    fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r);
}

PortCounters RemoteControl::port_counters(uint32_t port) const
{
    const Control c{static_cast<uint32_t>(ControlOp::port_counters), port, 0, 0};
    ControlReply r{};
    return fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r) == 0 ? r.counters : PortCounters{};
}

uint64_t RemoteControl::dma_faults(uint32_t pf) const
{
    const Control c{static_cast<uint32_t>(ControlOp::dma_faults), 0, pf, 0};
    ControlReply r{};
    return fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r) == 0 ? r.value : 0;
}

uint64_t RemoteControl::ptp_time(uint32_t port) const
{
    const Control c{static_cast<uint32_t>(ControlOp::ptp_time), port, 0, 0};
    ControlReply r{};
    return fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r) == 0 ? r.value : 0;
}

void RemoteControl::ptp_step(uint32_t port, int64_t delta)
{
    const auto bits = static_cast<uint64_t>(delta);
    const Control c{static_cast<uint32_t>(ControlOp::ptp_step), port, static_cast<uint32_t>(bits),
                    static_cast<uint32_t>(bits >> 32)};
    ControlReply r;
    fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r);
}

int64_t RemoteControl::ptp_offset(uint32_t port, uint32_t other) const
{
    const Control c{static_cast<uint32_t>(ControlOp::ptp_offset), port, other, 0};
    ControlReply r{};
    return fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r) == 0 ? static_cast<int64_t>(r.value) : 0;
}

bool RemoteControl::set_cable_delay(uint32_t port, uint64_t delay_ns, int64_t asymmetry_ns)
{
    if (!cable_delay_valid(delay_ns, asymmetry_ns)) /* the request carries 32 bits of each */
        return false;
    const Control c{static_cast<uint32_t>(ControlOp::set_cable_delay), port, static_cast<uint32_t>(delay_ns),
                    static_cast<uint32_t>(static_cast<int32_t>(asymmetry_ns))};
    ControlReply r{};
    return fn_.request(MsgType::control, &c, sizeof c, &r, sizeof r) == 0;
}

} // namespace

std::unique_ptr<PciFunction> remote_attach(const PciAttachParams& params, int* err, std::string* msg)
{
    const std::string& path = params.daemon_socket;
    if (path.empty() || path.size() >= sizeof(sockaddr_un::sun_path)) {
        *err = -EINVAL;
        *msg = "the daemon socket path must have 1 to 107 characters";
        return nullptr;
    }
    int sock = transport::daemon::connect_socket(path.c_str());
    if ((sock == -ENOENT || sock == -ECONNREFUSED) && !params.is_vf) { /* no daemon, or a dead one's socket */
        const int rc = spawn_daemon(path, params.daemon_options, msg);
        /* A port of another process may have started one at the same time:
         * then this one's start failed, and that one serves. */
        sock = transport::daemon::connect_socket(path.c_str());
        if (sock < 0 && rc != 0) {
            *err = rc;
            *msg = "no adapter daemon at " + path + ", and starting one failed: " + *msg;
            return nullptr;
        }
        if (rc == 0)
            dp_log(logtype_ecore, DpLevel::notice, dp_module::INIT, path.c_str(), __func__,
                   "no adapter daemon served it: started cna-adapterd (log: %s.log)", path.c_str());
    }
    if (sock < 0) {
        *err = sock;
        *msg = "cannot connect to the adapter daemon at " + path + ": " + std::strerror(-sock);
        return nullptr;
    }
    /* A VF's adapter is its PF's: it never starts a daemon. */
    const std::string name =
        path + "/pf" + std::to_string(params.pf) + (params.is_vf ? "/vf" + std::to_string(params.vf) : std::string());
    auto fn = std::make_unique<RemotePciFunction>(name, sock, params.is_vf);
    if (int rc = fn->connect(params, msg); rc != 0) {
        *err = rc;
        return nullptr;
    }
    *err = 0;
    return fn;
}

} // namespace cna::osal
