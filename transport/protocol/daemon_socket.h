/* SPDX-License-Identifier: BSD-3-Clause
 * How the daemon transport's messages (daemon_protocol.h) travel: one message per
 * datagram of a unix SOCK_SEQPACKET socket, its fds as SCM_RIGHTS. Both
 * sides use these, so a message is framed and checked the same way on both.
 */
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon_protocol.h"

namespace cna::transport::daemon {

/* A received message; owns its fds until taken (take_fd). */
struct Message {
    Header header{};
    uint8_t body[MAX_BODY]{};
    int fds[MAX_FDS]{};
    uint32_t nfds = 0;

    Message() = default;
    Message(const Message&) = delete;
    Message& operator=(const Message&) = delete;
    ~Message() { close_fds(); }

    void close_fds()
    {
        for (uint32_t i = 0; i < nfds; i++)
            if (fds[i] >= 0)
                ::close(fds[i]);
        nfds = 0;
    }
    int take_fd(uint32_t i)
    {
        const int fd = fds[i];
        fds[i] = -1;
        return fd;
    }
    /* The body as T, if it is exactly that long. */
    template <typename T>
    const T* body_as() const
    {
        return header.body_len == sizeof(T) ? reinterpret_cast<const T*>(body) : nullptr;
    }
};

/* One datagram of the iovecs' bytes, with `nfds` fds: the bytes sent, or
 * -errno. */
inline ssize_t send_datagram(int sock, iovec* iov, std::size_t iovcnt, const int* fds, uint32_t nfds)
{
    if (nfds > MAX_FDS)
        return -EINVAL;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = iovcnt;
    if (nfds != 0) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    for (;;) {
        const ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n >= 0 || errno != EINTR)
            return n < 0 ? -errno : n;
    }
}

/* 0 or -errno. */
inline int send_message(int sock, uint16_t type, uint32_t seq, const void* body, uint32_t len, const int* fds = nullptr,
                        uint32_t nfds = 0)
{
    if (len > MAX_BODY)
        return -EINVAL;
    Header h{MAGIC, type, static_cast<uint16_t>(nfds), len, seq};
    iovec iov[2] = {{&h, sizeof h}, {const_cast<void*>(body), len}};
    const ssize_t n = send_datagram(sock, iov, len != 0 ? 2 : 1, fds, nfds);
    return n < 0 ? static_cast<int>(n) : n == static_cast<ssize_t>(sizeof h + len) ? 0 : -EIO;
}

/* One message: 0; -ECONNRESET when the peer closed; -EPROTO when what came
 * is no well-formed message (bad magic, lengths or fd count, truncated); or
 * another -errno. */
inline int recv_message(int sock, Message& m)
{
    m.close_fds();
    struct {
        Header h;
        uint8_t body[MAX_BODY];
    } buf;
    iovec iov{&buf, sizeof buf};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * MAX_FDS)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const uint32_t count = static_cast<uint32_t>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (uint32_t i = 0; i < count; i++) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (m.nfds < MAX_FDS)
                m.fds[m.nfds++] = fd;
            else
                ::close(fd);
        }
    }
    if (n == 0) { /* the peer closed (or sent an empty datagram, which no message is) */
        m.close_fds();
        return -ECONNRESET;
    }
    if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n < static_cast<ssize_t>(sizeof(Header)) ||
        buf.h.magic != MAGIC || buf.h.body_len != n - sizeof(Header) || buf.h.fds != m.nfds) {
        m.close_fds();
        return -EPROTO;
    }
    m.header = buf.h;
    std::memcpy(m.body, buf.body, buf.h.body_len);
    return 0;
}

/* A client's request and its reply: sends `type` with `seq`, waits up to
 * timeout_ms for the answer, which must be the reply to it with a body of
 * at most reply_len bytes starting with a Status (copied to `reply`; the
 * whole message, fds included, to *reply_msg if given). Returns the reply's
 * status, or -errno (-ETIMEDOUT, -EPROTO for an answer that is not the reply). */
inline int request(int sock, uint16_t type, uint32_t seq, const void* body, uint32_t len, void* reply,
                   uint32_t reply_len, int timeout_ms, const int* fds = nullptr, uint32_t nfds = 0,
                   Message* reply_msg = nullptr)
{
    if (int rc = send_message(sock, type, seq, body, len, fds, nfds); rc != 0)
        return rc;
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) != 1)
        return -ETIMEDOUT;
    Message local;
    Message& m = reply_msg != nullptr ? *reply_msg : local;
    if (int rc = recv_message(sock, m); rc != 0)
        return rc;
    if (m.header.type != (type | REPLY) || m.header.seq != seq || m.header.body_len < sizeof(Status) ||
        m.header.body_len > reply_len)
        return -EPROTO;
    std::memcpy(reply, m.body, m.header.body_len);
    return reinterpret_cast<const Status*>(m.body)->status;
}

/* A socket connected to the daemon listening at `path`, or -errno. */
inline int connect_socket(const char* path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof addr.sun_path)
        return -ENAMETOOLONG;
    std::strcpy(addr.sun_path, path);
    const int sock = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (sock < 0)
        return -errno;
    if (::connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        const int rc = -errno;
        ::close(sock);
        return rc;
    }
    return sock;
}

} // namespace cna::transport::daemon
