/* SPDX-License-Identifier: BSD-3-Clause
 * Adaptive idle back-off of the engine thread: after a pass that found no
 * work it spins a little (a doorbell is most likely right behind), then
 * sleeps for doubling periods up to about a millisecond, so an idle adapter
 * costs nearly nothing and a busy one never sleeps. Work that arrives on a
 * file descriptor (a TAP wire) ends the sleep at once.
 */
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <thread>

namespace cna::fw {

/* A spin-wait iteration's hint to the CPU. */
inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
}

class Backoff {
public:
    void work() { idle_passes_ = 0; }
    /* After an idle pass: spins (true) for the first passes, inline so
     * that a doorbell right behind costs only a pause; false once it is
     * time to sleep instead. */
    bool spin()
    {
        if (++idle_passes_ > SPIN_PASSES)
            return false;
        cpu_relax();
        return true;
    }
    /* wake: fds whose POLLIN ends the sleep early (may be empty). */
    void sleep(std::span<pollfd> wake);

private:
    static constexpr uint32_t SPIN_PASSES = 256;
    static constexpr std::chrono::microseconds FIRST_SLEEP{8};
    static constexpr std::chrono::microseconds MAX_SLEEP{1000};
    uint32_t idle_passes_ = 0;
};

} // namespace cna::fw
