/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_shared_bar.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace cna::osal {
namespace {

/* 48 TiB up: above any EAL memory (RTE_MAX_MEM_MB_PER_TYPE and the memseg
 * lists stay within the first TiBs), below the randomised mmap base (at
 * least 128 TiB less 1 TiB of ASLR and the stack gap). */
constexpr uintptr_t SLOTS_BASE = uintptr_t{48} << 40;
constexpr std::size_t SLOT_SIZE = std::size_t{64} << 20;
/* Slots taken by something else (another library's hint) are skipped; with
 * none free (a sanitizer owning the range) the kernel chooses, and a
 * secondary may then find the address taken. */
constexpr unsigned SLOT_TRIES = 64;

std::atomic<uintptr_t> next_slot{0};

} // namespace

/* address 0: wherever the kernel likes. Otherwise a hint, which the kernel
 * takes when the range is free and never at the cost of a mapping there
 * (unlike MAP_FIXED_NOREPLACE, a hint survives sanitizers that confine
 * mappings to ranges of their own: they drop it, and the slot counts as
 * taken). */
int SharedBar::map_at_hint(uintptr_t address, int fd, uint64_t offset, std::size_t len)
{
    void* p = ::mmap(reinterpret_cast<void*>(address), len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                     static_cast<off_t>(offset));
    if (p == MAP_FAILED)
        return -errno;
    if (address != 0 && reinterpret_cast<uintptr_t>(p) != address) {
        ::munmap(p, len);
        return -EADDRINUSE;
    }
    const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) {
        ::munmap(p, len);
        return -errno;
    }
    va_ = static_cast<volatile uint8_t*>(p);
    fd_ = dup;
    offset_ = offset;
    len_ = len;
    owned_ = true;
    return 0;
}

void SharedBar::view(volatile uint8_t* va, int fd, uint64_t offset, std::size_t len)
{
    unmap();
    va_ = va;
    fd_ = fd;
    offset_ = offset;
    len_ = len;
    owned_ = false;
}

int SharedBar::map(int fd, uint64_t offset, std::size_t len)
{
    if (len == 0 || len > SLOT_SIZE)
        return -EINVAL;
    int rc = -EADDRINUSE;
    for (unsigned t = 0; t < SLOT_TRIES && rc == -EADDRINUSE; t++)
        rc = map_at_hint(SLOTS_BASE + next_slot.fetch_add(1) * SLOT_SIZE, fd, offset, len);
    return rc == -EADDRINUSE ? map_at_hint(0, fd, offset, len) : rc;
}

int SharedBar::map_at(uintptr_t address, int fd, uint64_t offset, std::size_t len)
{
    if (len == 0 || address == 0 || address % ::sysconf(_SC_PAGESIZE) != 0)
        return -EINVAL;
    return map_at_hint(address, fd, offset, len);
}

void SharedBar::unmap()
{
    if (va_ == nullptr)
        return;
    if (owned_) {
        ::munmap(const_cast<uint8_t*>(va_), len_);
        ::close(fd_);
    }
    va_ = nullptr;
    fd_ = -1;
    len_ = 0;
}

} // namespace cna::osal
