/* SPDX-License-Identifier: BSD-3-Clause */
#include "bus/msix.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace cna::fw {

Msix::Msix(uint32_t vectors)
{
    for (uint32_t v = 0; v < vectors; v++) {
        int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            for (int open_fd : own_)
                ::close(open_fd);
            own_.clear();
            return;
        }
        own_.push_back(fd);
    }
    routed_.assign(own_.size(), -1);
}

Msix::~Msix()
{
    for (int fd : own_)
        ::close(fd);
    for (int fd : routed_)
        if (fd >= 0)
            ::close(fd);
}

int Msix::route(uint32_t vector, int fd)
{
    if (vector >= routed_.size())
        return -EINVAL;
    int copy = -1;
    if (fd >= 0 && (copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
        return -errno;
    std::lock_guard guard(route_lock_);
    if (routed_[vector] >= 0)
        ::close(routed_[vector]);
    routed_[vector] = copy;
    return 0;
}

void Msix::fire(uint32_t vector) const
{
    if (vector >= own_.size())
        return;
    uint64_t one = 1;
    std::lock_guard guard(route_lock_);
    const int fd = routed_[vector] >= 0 ? routed_[vector] : own_[vector];
    /* The counter saturates only after 2^64 - 2 unread interrupts; a full
     * counter (EAGAIN) still leaves the fd readable, which is all we need. */
    [[maybe_unused]] ssize_t n = ::write(fd, &one, sizeof(one));
}

} // namespace cna::fw
