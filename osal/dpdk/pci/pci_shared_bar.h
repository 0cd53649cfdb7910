/* SPDX-License-Identifier: BSD-3-Clause
 * A BAR the host reaches as a mapping of a file its backend shares (a memfd):
 * the GTT window and the doorbell BAR of a PCI function.
 *
 * The Rx and Tx queues live in DPDK memory and hold pointers into these BARs
 * (the Rx producer in the GTT, the doorbell), so a secondary process driving
 * them must map the same file at the same address, as EAL does with a real
 * device's BARs. A BAR this process maps (the daemon's) therefore goes into
 * a slot of its own, in a range far from where Linux and EAL put anything
 * (EAL's memory from 4 GiB up, libraries and mmap()s just below the stack
 * near 128 TiB). The embedded adapter's BARs are the adapter's own mappings,
 * which the host uses as they are: stores and loads of both sides at one
 * address, as ThreadSanitizer must see them to follow their ordering.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::osal {

class SharedBar {
public:
    SharedBar() = default;
    ~SharedBar() { unmap(); }
    SharedBar(const SharedBar&) = delete;
    SharedBar& operator=(const SharedBar&) = delete;

    /* Maps `len` bytes of `fd` from `offset` into a fresh slot, keeping a
     * duplicate of fd for secondaries. 0 or -errno. */
    int map(int fd, uint64_t offset, std::size_t len);
    /* A mapping of `fd` someone else in this process made and keeps (the
     * embedded adapter): described for secondaries, not owned. */
    void view(volatile uint8_t* va, int fd, uint64_t offset, std::size_t len);
    /* A secondary's mapping of the primary's BAR, at the primary's address:
     * 0, -EADDRINUSE when this process has something else there, -errno. */
    int map_at(uintptr_t address, int fd, uint64_t offset, std::size_t len);
    void unmap();

    volatile uint8_t* va() const { return va_; }
    int fd() const { return fd_; }
    uint64_t offset() const { return offset_; }
    std::size_t len() const { return len_; }

private:
    int map_at_hint(uintptr_t address, int fd, uint64_t offset, std::size_t len);

    volatile uint8_t* va_ = nullptr;
    int fd_ = -1;
    uint64_t offset_ = 0;
    std::size_t len_ = 0;
    bool owned_ = false;
};

} // namespace cna::osal
