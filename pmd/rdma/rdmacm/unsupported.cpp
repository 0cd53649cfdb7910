/* SPDX-License-Identifier: BSD-3-Clause
 * What librdmacm exports and cna's RDMA CM does not do: rsockets,
 * multicast, and ECE (a vendor's connection options). Each fails with
 * ENOSYS (EOPNOTSUPP for ECE) and says so once on stderr.
 */
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <sys/select.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace {

template <typename T> T refuse(const char* what, T result = -1, int err = ENOSYS)
{
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
        std::fprintf(stderr, "cna rdmacm: %s: not supported\n", what);
    errno = err;
    return result;
}

constexpr const char* RSOCKETS = "rsockets";
constexpr const char* MULTICAST = "multicast (rdma_join_multicast)";
constexpr const char* ECE = "ECE (rdma_set_local_ece, rdma_get_remote_ece)";

} // namespace

extern "C" {

int rsocket(int, int, int) { return refuse<int>(RSOCKETS); }
int rbind(int, const sockaddr*, socklen_t) { return refuse<int>(RSOCKETS); }
int rlisten(int, int) { return refuse<int>(RSOCKETS); }
int raccept(int, sockaddr*, socklen_t*) { return refuse<int>(RSOCKETS); }
int rconnect(int, const sockaddr*, socklen_t) { return refuse<int>(RSOCKETS); }
int rshutdown(int, int) { return refuse<int>(RSOCKETS); }
int rclose(int) { return refuse<int>(RSOCKETS); }
ssize_t rrecv(int, void*, size_t, int) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rrecvfrom(int, void*, size_t, int, sockaddr*, socklen_t*) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rrecvmsg(int, msghdr*, int) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rsend(int, const void*, size_t, int) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rsendto(int, const void*, size_t, int, const sockaddr*, socklen_t) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rsendmsg(int, const msghdr*, int) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rread(int, void*, size_t) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rreadv(int, const iovec*, int) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rwrite(int, const void*, size_t) { return refuse<ssize_t>(RSOCKETS); }
ssize_t rwritev(int, const iovec*, int) { return refuse<ssize_t>(RSOCKETS); }
int rpoll(pollfd*, nfds_t, int) { return refuse<int>(RSOCKETS); }
int rselect(int, fd_set*, fd_set*, fd_set*, timeval*) { return refuse<int>(RSOCKETS); }
int rgetpeername(int, sockaddr*, socklen_t*) { return refuse<int>(RSOCKETS); }
int rgetsockname(int, sockaddr*, socklen_t*) { return refuse<int>(RSOCKETS); }
int rsetsockopt(int, int, int, const void*, socklen_t) { return refuse<int>(RSOCKETS); }
int rgetsockopt(int, int, int, void*, socklen_t*) { return refuse<int>(RSOCKETS); }
int rfcntl(int, int, ...) { return refuse<int>(RSOCKETS); }
off_t riomap(int, void*, size_t, int, int, off_t) { return refuse<off_t>(RSOCKETS); }
int riounmap(int, void*, size_t) { return refuse<int>(RSOCKETS); }
size_t riowrite(int, const void*, size_t, off_t, int) { return refuse<size_t>(RSOCKETS, 0); }

int rdma_join_multicast(rdma_cm_id*, sockaddr*, void*) { return refuse<int>(MULTICAST); }
int rdma_leave_multicast(rdma_cm_id*, sockaddr*) { return refuse<int>(MULTICAST); }
int rdma_join_multicast_ex(rdma_cm_id*, rdma_cm_join_mc_attr_ex*, void*) { return refuse<int>(MULTICAST); }

int rdma_set_local_ece(rdma_cm_id*, ibv_ece*) { return refuse<int>(ECE, -1, EOPNOTSUPP); }
int rdma_get_remote_ece(rdma_cm_id*, ibv_ece*) { return refuse<int>(ECE, -1, EOPNOTSUPP); }

} // extern "C"
