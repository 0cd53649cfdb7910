/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_status.h"

#include <cerrno>

namespace cna::ecore {

const char* status_name(Status status)
{
    switch (status) {
    case Status::success: return "success";
    case Status::inval: return "invalid argument";
    case Status::nomem: return "out of memory";
    case Status::nospc: return "no space in device table";
    case Status::noent: return "no such object";
    case Status::timeout: return "timeout";
    case Status::busy: return "busy / wrong state";
    case Status::again: return "temporarily unavailable";
    case Status::notimpl: return "not supported";
    case Status::io: return "device error";
    case Status::fault: return "DMA fault";
    case Status::nodev: return "no device";
    case Status::perm: return "not permitted";
    }
    return "unknown";
}

int status_to_errno(Status status)
{
    switch (status) {
    case Status::success: return 0;
    case Status::inval: return -EINVAL;
    case Status::nomem: return -ENOMEM;
    case Status::nospc: return -ENOSPC;
    case Status::noent: return -ENOENT;
    case Status::timeout: return -ETIMEDOUT;
    case Status::busy: return -EBUSY;
    case Status::again: return -EAGAIN;
    case Status::notimpl: return -ENOTSUP;
    case Status::io: return -EIO;
    case Status::fault: return -EFAULT;
    case Status::nodev: return -ENODEV;
    case Status::perm: return -EPERM;
    }
    return -EIO;
}

} // namespace cna::ecore
