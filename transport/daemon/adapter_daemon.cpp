/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/adapter_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/log.h"

namespace cna::adapterd {

using namespace fw;
namespace {

/* Holds the directory of a socket path locked (flock), so that daemons
 * started together for the same path decide one by one which serves it. */
class DirectoryLock {
public:
    explicit DirectoryLock(const std::string& path)
    {
        const std::size_t slash = path.rfind('/');
        const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
        fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd_ >= 0)
            ::flock(fd_, LOCK_EX);
    }
    ~DirectoryLock()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }

private:
    int fd_;
};

/* A listening SOCK_SEQPACKET socket at `path`; a stale socket file (no
 * daemon answers on it) is replaced, a live one is not. -errno on failure. */
int listen_on(const std::string& path, std::string* error)
{
    DirectoryLock lock(path);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *error = std::string("socket: ") + std::strerror(errno);
        return -errno;
    }
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        ::close(fd);
        *error = "a daemon already serves " + path;
        return -EADDRINUSE;
    }
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        ::unlink(path.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
        const int rc = -errno;
        *error = "cannot listen on " + path + ": " + std::strerror(errno);
        ::close(fd);
        return rc;
    }
    return fd;
}

} // namespace

std::unique_ptr<AdapterDaemon> AdapterDaemon::create(const DaemonOptions& options, std::string* error)
{
    /* Blocked before any thread starts, so that only the signalfd sees them. */
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    AdapterConfig config = options.adapter;
    derive_base_mac(config.name, static_cast<uint32_t>(::getpid()), config.base_mac);
    auto adapter = Adapter::create(config, error);
    if (!adapter)
        return nullptr;
    for (uint32_t t = 0; t < options.engine_cpus.size(); t++) {
        if (adapter->set_engine_affinity(t, static_cast<int>(options.engine_cpus[t])) != 0) {
            *error = "cannot pin engine thread " + std::to_string(t) + " to CPU " +
                     std::to_string(options.engine_cpus[t]);
            return nullptr;
        }
    }
    const int listen_fd = listen_on(options.socket_path, error);
    if (listen_fd < 0)
        return nullptr;
    const int signal_fd = ::signalfd(-1, &signals, SFD_CLOEXEC);
    if (signal_fd < 0) {
        *error = std::string("signalfd: ") + std::strerror(errno);
        ::close(listen_fd);
        return nullptr;
    }
    return std::unique_ptr<AdapterDaemon>(new AdapterDaemon(options, std::move(adapter), listen_fd, signal_fd));
}

AdapterDaemon::AdapterDaemon(const DaemonOptions& options, std::unique_ptr<Adapter> adapter, int listen_fd,
                             int signal_fd)
    : options_(options), adapter_(std::move(adapter)), owners_(*adapter_), listen_fd_(listen_fd),
      signal_fd_(signal_fd)
{
}

AdapterDaemon::~AdapterDaemon()
{
    sessions_.clear(); /* every client detached before the adapter goes */
    ::close(listen_fd_);
    ::close(signal_fd_);
    ::unlink(options_.socket_path.c_str());
}

void AdapterDaemon::accept_client()
{
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
        log(LogLevel::warning, "accept: %s", std::strerror(errno));
        return;
    }
    sessions_.push_back(std::make_unique<ClientSession>(fd, next_client_id_++, owners_));
}

void AdapterDaemon::end_session(std::size_t index) { sessions_.erase(sessions_.begin() + static_cast<long>(index)); }

void AdapterDaemon::run()
{
    log(LogLevel::notice, "adapter %s: %u port(s), %u PF(s), serving on %s", adapter_->config().name.c_str(),
        adapter_->config().ports, adapter_->num_functions(), options_.socket_path.c_str());
    using Clock = std::chrono::steady_clock;
    const auto idle_limit = std::chrono::seconds(options_.idle_exit_s);
    Clock::time_point idle_since = Clock::now();
    std::vector<pollfd> fds;
    for (;;) {
        int timeout_ms = -1;
        if (options_.idle_exit_s != 0 && sessions_.empty()) {
            const auto left = idle_limit - (Clock::now() - idle_since);
            if (left <= Clock::duration::zero()) {
                log(LogLevel::notice, "no client for %u s: powering the adapter off", options_.idle_exit_s);
                return;
            }
            timeout_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
        }
        /* [signals, listener, then per session: its socket, its kick fd] */
        fds.assign({{signal_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}});
        for (const auto& s : sessions_) {
            fds.push_back({s->socket(), POLLIN, 0});
            fds.push_back({s->kick_fd(), POLLIN, 0}); /* -1 until attached: ignored by poll */
        }
        if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
            if (errno == EINTR)
                continue;
            log(LogLevel::err, "poll: %s", std::strerror(errno));
            return;
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo si;
            [[maybe_unused]] ssize_t n = ::read(signal_fd_, &si, sizeof si);
            log(LogLevel::notice, "signal %u: detaching %zu client(s) and powering the adapter off", si.ssi_signo,
                sessions_.size());
            return;
        }
        /* Sessions by index, from the last: ending one shifts only those after it. */
        for (std::size_t i = sessions_.size(); i-- > 0;) {
            const pollfd& sock = fds[2 + 2 * i];
            const pollfd& kick = fds[3 + 2 * i];
            if (kick.revents & POLLIN)
                sessions_[i]->on_kick();
            if ((sock.revents & (POLLIN | POLLHUP | POLLERR)) && !sessions_[i]->on_message()) {
                end_session(i);
                idle_since = Clock::now();
            }
        }
        if (fds[1].revents & POLLIN)
            accept_client();
    }
}

} // namespace cna::adapterd
