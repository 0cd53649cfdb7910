/* SPDX-License-Identifier: BSD-3-Clause
 * A list the slowpath appends to while the engines read it without a lock:
 * an entry is published by the count, and none is ever removed (the PFs'
 * objects from power-on, the VFs' as their PFs first enable them).
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>

namespace cna::fw {

template <typename T, std::size_t N> class PublishedList {
public:
    /* Slowpath lock held. */
    void add(T* entry)
    {
        const uint32_t n = count_.load(std::memory_order_relaxed);
        at_[n] = entry;
        count_.store(n + 1, std::memory_order_release);
    }
    std::span<T* const> view() const { return {at_.data(), count_.load(std::memory_order_acquire)}; }

private:
    std::array<T*, N> at_{};
    std::atomic<uint32_t> count_{0};
};

} // namespace cna::fw
