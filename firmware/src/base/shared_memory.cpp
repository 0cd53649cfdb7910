/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace cna::fw {

SharedMemory::SharedMemory(const char* name, std::size_t size, void* at) : size_(size), placed_(at != nullptr)
{
    fd_ = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd_ < 0)
        return;
    /* Sealed at its size: whoever maps it cannot shrink it under the other
     * side's accesses. */
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 ||
        ::fcntl(fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        ::close(fd_);
        fd_ = -1;
        return;
    }
    void* p = ::mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | (placed_ ? MAP_FIXED : 0), fd_, 0);
    if (p == MAP_FAILED) {
        ::close(fd_);
        fd_ = -1;
        return;
    }
    base_ = static_cast<uint8_t*>(p);
}

SharedMemory::~SharedMemory()
{
    if (base_ != nullptr && !placed_)
        ::munmap(base_, size_);
    if (fd_ >= 0)
        ::close(fd_);
}

} // namespace cna::fw
