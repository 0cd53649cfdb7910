/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL synchronisation, host-device hand-overs, delays and time.
 *
 * Spinlock guards short critical sections that the EAL interrupt thread may
 * enter (it must not sleep); Mutex guards control-path sections that may wait
 * for the device (MFW mailbox, ramrod posting).
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include <rte_pause.h>

namespace cna::osal {

/* rte_spinlock's instructions (an exchange, then pause until it looks free)
 * on std::atomic: rte_spinlock is inline assembly, which ThreadSanitizer
 * cannot see, so every section it guards looked like a race. */
class Spinlock {
public:
    Spinlock() = default;
    Spinlock(const Spinlock&) = delete;
    Spinlock& operator=(const Spinlock&) = delete;
    void lock()
    {
        while (locked_.exchange(true, std::memory_order_acquire))
            while (locked_.load(std::memory_order_relaxed))
                rte_pause();
    }
    bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }
    void unlock() { locked_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> locked_{false};
};

using Mutex = std::mutex;

/* Hand-overs between host and device. A producer, consumer or doorbell is
 * published with a release store, so everything written before it (the BDs
 * it covers, the entries it returns) reaches the device first; an index the
 * device wrote is observed with an acquire load, so what it covers is read
 * after it. On x86 both are plain moves, as rte_io_wmb/rte_io_rmb. Unlike a
 * fence beside a volatile access, they are a synchronisation in C++'s
 * memory model: the embedded adapter is another thread of this process, and
 * ThreadSanitizer checks every hand-over. */
template <typename T>
inline void publish(volatile T* addr, T value)
{
    __atomic_store_n(addr, value, __ATOMIC_RELEASE);
}
template <typename T>
inline T observe(const volatile T* addr)
{
    return __atomic_load_n(addr, __ATOMIC_ACQUIRE);
}

void udelay(uint32_t usecs); /* busy-waits: usable on the interrupt thread */
void yield();                /* lets another thread of this CPU run: for short waits on one */
void usleep(uint32_t usecs); /* sleeps: control path only */
void msleep(uint32_t msecs); /* sleeps: control path only */

/* Monotonic time. */
uint64_t time_ns();
inline uint64_t time_ms() { return time_ns() / 1000000; }

/* A bounded wait: `expired()` once `ms` milliseconds have passed. */
class Deadline {
public:
    explicit Deadline(uint32_t ms) : end_ns_(time_ns() + uint64_t{ms} * 1000000) {}
    bool expired() const { return time_ns() >= end_ns_; }

private:
    uint64_t end_ns_;
};

} // namespace cna::osal
