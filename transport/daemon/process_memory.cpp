/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/process_memory.h"

#include <unistd.h>

#include <cerrno>

namespace cna::adapterd {

ProcessMemory::~ProcessMemory()
{
    ::close(fd_);
}

template <typename Copy>
bool ProcessMemory::copy(uint64_t va, std::size_t len, Copy call)
{
    /* Addresses past off_t's range are no user address. */
    if (va > static_cast<uint64_t>(INT64_MAX) || len > static_cast<uint64_t>(INT64_MAX) - va)
        return false;
    for (std::size_t done = 0; done < len;) {
        const ssize_t n = call(done, static_cast<off_t>(va + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            gone_.store(true, std::memory_order_relaxed);
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

bool ProcessMemory::read(uint64_t va, void* dst, std::size_t len)
{
    auto* to = static_cast<uint8_t*>(dst);
    return copy(va, len, [&](std::size_t done, off_t at) { return ::pread(fd_, to + done, len - done, at); });
}

bool ProcessMemory::write(uint64_t va, const void* src, std::size_t len)
{
    const auto* from = static_cast<const uint8_t*>(src);
    return copy(va, len, [&](std::size_t done, off_t at) { return ::pwrite(fd_, from + done, len - done, at); });
}

} // namespace cna::adapterd
