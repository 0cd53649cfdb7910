/* SPDX-License-Identifier: BSD-3-Clause
 * Memory the adapter shares with a host in another process (a BAR, the
 * daemon's BAR0 mailbox): a memfd mapped here, its fd passed to whoever
 * maps it there.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::fw {

class SharedMemory {
public:
    /* `size` zeroed bytes, page-aligned; valid() tells whether it worked.
     * With `at`, mapped there, over memory its owner reserved (and unmaps):
     * a page of the owner's own that a host can map alone. */
    SharedMemory(const char* name, std::size_t size, void* at = nullptr);
    SharedMemory() = default; /* none */
    ~SharedMemory();
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;

    bool valid() const { return base_ != nullptr; }
    uint8_t* base() const { return base_; }
    std::size_t size() const { return size_; }
    int fd() const { return fd_; }

private:
    int fd_ = -1;
    uint8_t* base_ = nullptr;
    std::size_t size_ = 0;
    bool placed_ = false;
};

} // namespace cna::fw
