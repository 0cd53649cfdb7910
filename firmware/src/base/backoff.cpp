/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/backoff.h"

#include <algorithm>

namespace cna::fw {

void Backoff::sleep(std::span<pollfd> wake)
{
    uint32_t doublings = std::min<uint32_t>(idle_passes_ - SPIN_PASSES, 16);
    auto period = std::min<std::chrono::microseconds>(FIRST_SLEEP * (1u << doublings), MAX_SLEEP);
    timespec timeout{0, static_cast<long>(std::chrono::nanoseconds(period).count())};
    ::ppoll(wake.data(), wake.size(), &timeout, nullptr);
}

} // namespace cna::fw
