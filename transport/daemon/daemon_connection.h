/* SPDX-License-Identifier: BSD-3-Clause
 * A tool's connection to cna-adapterd (cna-adapterctl, cna-vm): the socket,
 * greeted, and one request at a time on it.
 */
#pragma once

#include <unistd.h>

#include <cstring>
#include <string>

#include "daemon_socket.h"

namespace cna::adapterd {

class DaemonConnection {
public:
    DaemonConnection() = default;
    ~DaemonConnection() { close(); }
    DaemonConnection(const DaemonConnection&) = delete;
    DaemonConnection& operator=(const DaemonConnection&) = delete;

    /* Connects and says hello: empty, or why it failed. */
    std::string open(const std::string& path)
    {
        sock_ = transport::daemon::connect_socket(path.c_str());
        if (sock_ < 0)
            return "cannot connect to " + path + ": " + std::strerror(-sock_);
        const transport::daemon::Hello hello{transport::daemon::VERSION, 0, static_cast<uint32_t>(::getpid())};
        if (int rc = request(transport::daemon::MsgType::hello, &hello, sizeof hello, &hello_, sizeof hello_); rc != 0)
            return std::string("hello: ") + std::strerror(-rc);
        return {};
    }
    /* The reply's status, or -errno. */
    int request(transport::daemon::MsgType type, const void* body, uint32_t len, void* reply, uint32_t reply_len,
                const int* fds = nullptr, uint32_t nfds = 0, transport::daemon::Message* reply_msg = nullptr)
    {
        return transport::daemon::request(sock_, static_cast<uint16_t>(type), ++seq_, body, len, reply, reply_len,
                                    TIMEOUT_MS, fds, nfds, reply_msg);
    }
    const transport::daemon::HelloReply& hello() const { return hello_; }
    int fd() const { return sock_; }
    void close()
    {
        if (sock_ >= 0)
            ::close(sock_);
        sock_ = -1;
    }

private:
    static constexpr int TIMEOUT_MS = 5000;
    int sock_ = -1;
    uint32_t seq_ = 0;
    transport::daemon::HelloReply hello_{};
};

} // namespace cna::adapterd
