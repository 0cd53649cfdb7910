/* SPDX-License-Identifier: BSD-3-Clause
 * OSAL synchronisation, barriers, delays and time.
 *
 * Spinlock guards short critical sections that the EAL interrupt thread may
 * enter (it must not sleep); Mutex guards control-path sections that may wait
 * for the device (MFW mailbox, ramrod posting).
 */
#pragma once

#include <cstdint>
#include <mutex>

#include <rte_atomic.h>
#include <rte_spinlock.h>

namespace cna::osal {

class Spinlock {
public:
    Spinlock() { rte_spinlock_init(&lock_); }
    Spinlock(const Spinlock&) = delete;
    Spinlock& operator=(const Spinlock&) = delete;
    void lock() { rte_spinlock_lock(&lock_); }
    bool try_lock() { return rte_spinlock_trylock(&lock_) != 0; }
    void unlock() { rte_spinlock_unlock(&lock_); }

private:
    rte_spinlock_t lock_;
};

using Mutex = std::mutex;

/* Ordering of host stores/loads against the device (descriptors before the
 * doorbell that publishes them, producer before the elements it covers). */
inline void wmb() { rte_wmb(); }
inline void rmb() { rte_rmb(); }
inline void mb() { rte_mb(); }

void udelay(uint32_t usecs); /* busy-waits: usable on the interrupt thread */
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
