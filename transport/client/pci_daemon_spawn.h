/* SPDX-License-Identifier: BSD-3-Clause
 * Starting cna-adapterd on demand: the first net_cna port that finds no
 * daemon serving its socket starts one, detached from the port's process,
 * which leaves once no client has used it for a while.
 */
#pragma once

#include <string>
#include <vector>

namespace cna::osal {

/* A started daemon leaves this long after its last client. */
inline constexpr unsigned SPAWNED_DAEMON_IDLE_EXIT_S = 10;

/* Starts cna-adapterd serving `socket` with `options` (its flags besides
 * --socket) and returns once it serves: 0, or -errno with the reason in
 * *msg. Its log goes to `socket`.log. The program is $CNA_ADAPTERD, else
 * the one of the build tree this library belongs to, else the installed
 * one (meson install's sbindir), else cna-adapterd in PATH. */
int spawn_daemon(const std::string& socket, const std::vector<std::string>& options, std::string* msg);

} // namespace cna::osal
