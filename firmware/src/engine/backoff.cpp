/* SPDX-License-Identifier: BSD-3-Clause */
#include "engine/backoff.h"

#include <algorithm>
#include <thread>

namespace cna::fw {

void Backoff::idle(std::span<pollfd> wake)
{
    if (++idle_passes_ <= SPIN_PASSES) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        std::this_thread::yield();
#endif
        return;
    }
    uint32_t doublings = std::min<uint32_t>(idle_passes_ - SPIN_PASSES, 16);
    auto sleep = std::min<std::chrono::microseconds>(FIRST_SLEEP * (1u << doublings), MAX_SLEEP);
    timespec timeout{0, static_cast<long>(std::chrono::nanoseconds(sleep).count())};
    ::ppoll(wake.data(), wake.size(), &timeout, nullptr);
}

} // namespace cna::fw
