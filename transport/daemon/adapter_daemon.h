/* SPDX-License-Identifier: BSD-3-Clause
 * cna-adapterd: one software adapter, its PCI functions served to client
 * processes over a unix socket (daemon_protocol.h). One thread answers every
 * client's messages and BAR0 mailbox kicks; the adapter's engine threads
 * run beside it as in any process.
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daemon/client_session.h"
#include "daemon/daemon_options.h"

namespace cna::adapterd {

class AdapterDaemon {
public:
    /* Powers the adapter on and listens; nullptr with a message in *error. */
    static std::unique_ptr<AdapterDaemon> create(const DaemonOptions& options, std::string* error);
    ~AdapterDaemon();

    /* Serves until SIGTERM or SIGINT (blocked in every thread by create). */
    void run();

private:
    AdapterDaemon(const DaemonOptions& options, std::unique_ptr<fw::Adapter> adapter, int listen_fd, int signal_fd);
    void accept_client();
    void end_session(std::size_t index);

    DaemonOptions options_;
    std::unique_ptr<fw::Adapter> adapter_;
    FunctionOwners owners_;
    int listen_fd_;
    int signal_fd_;
    uint32_t next_client_id_ = 1;
    std::vector<std::unique_ptr<ClientSession>> sessions_;
};

} // namespace cna::adapterd
