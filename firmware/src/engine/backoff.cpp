/* SPDX-License-Identifier: BSD-3-Clause */
#include "engine/backoff.h"

#include <algorithm>
#include <thread>

namespace cna::fw {

void Backoff::idle()
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
    std::this_thread::sleep_for(sleep);
}

} // namespace cna::fw
