/* SPDX-License-Identifier: BSD-3-Clause
 * A client's memory that is not file-backed (the buffers a verbs
 * application allocates with malloc and registers), reached by the adapter
 * by copying through the client's /proc/self/mem, which the client opened
 * and passed over its socket.
 *
 * Why its own /proc/self/mem rather than process_vm_readv(pid): the fd is
 * bound to the client's address space when the client opens it, so the
 * daemon needs no ptrace rights over it (a daemon under another user still
 * works), and a PID the kernel hands to another process once the client is
 * gone can never redirect an access: the fd then reads nothing.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cna_fw/adapter.h"

namespace cna::adapterd {

class ProcessMemory final : public fw::RemoteMemory {
public:
    /* Takes the fd. */
    explicit ProcessMemory(int mem_fd) : fd_(mem_fd) {}
    ~ProcessMemory() override;
    ProcessMemory(const ProcessMemory&) = delete;
    ProcessMemory& operator=(const ProcessMemory&) = delete;

    bool read(uint64_t va, void* dst, std::size_t len) override;
    bool write(uint64_t va, const void* src, std::size_t len) override;
    bool gone() const override { return gone_.load(std::memory_order_relaxed); }

private:
    /* A copy's system call: the bytes it moved, or 0 when it failed (an
     * address the client has not mapped: EIO; its address space torn
     * down, the process ending: end of file, which marks it gone). */
    template <typename Copy>
    bool copy(uint64_t va, std::size_t len, Copy call);

    const int fd_;
    std::atomic<bool> gone_{false};
};

} // namespace cna::adapterd
