/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci/msix.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace cna::fw {

Msix::Msix(uint32_t vectors)
{
    for (uint32_t v = 0; v < vectors; v++) {
        int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            for (int open_fd : fds_)
                ::close(open_fd);
            fds_.clear();
            return;
        }
        fds_.push_back(fd);
    }
}

Msix::~Msix()
{
    for (int fd : fds_)
        ::close(fd);
}

void Msix::fire(uint32_t vector) const
{
    if (vector >= fds_.size())
        return;
    uint64_t one = 1;
    /* The counter saturates only after 2^64 - 2 unread interrupts; a full
     * counter (EAGAIN) still leaves the fd readable, which is all we need. */
    [[maybe_unused]] ssize_t n = ::write(fds_[vector], &one, sizeof(one));
}

} // namespace cna::fw
