/* SPDX-License-Identifier: BSD-3-Clause */
#include "wire/delay_line.h"

#include <cstring>

namespace cna::fw {

uint32_t DelayLine::push(const FrameBurst& burst, uint64_t sent, uint64_t delay_ns)
{
    std::lock_guard guard(lock_);
    if (slots_.empty())
        slots_.resize(SLOTS);
    uint32_t queued = queued_.load(std::memory_order_relaxed);
    uint32_t lost = 0;
    for (uint32_t i = 0; i < burst.count; i++) {
        const WireFrame& f = burst.frames[i];
        if (queued == SLOTS || f.len > MAX_FRAME) {
            lost++;
            continue;
        }
        Slot& slot = slots_[(head_ + queued) % SLOTS];
        slot.due = sent + delay_ns;
        slot.len = f.len;
        slot.parsed = f.parsed;
        slot.layout = f.layout;
        std::memcpy(slot.data.data(), f.data, f.len);
        queued++;
    }
    queued_.store(queued, std::memory_order_release);
    return lost;
}

uint32_t DelayLine::take_due(uint64_t now)
{
    std::lock_guard guard(lock_);
    out_.clear();
    const uint32_t queued = queued_.load(std::memory_order_relaxed);
    if (queued == 0 || slots_[head_].due > now)
        return 0;
    const uint64_t due = slots_[head_].due;
    for (uint32_t i = 0; i < queued && !out_.full(); i++) {
        Slot& slot = slots_[(head_ + i) % SLOTS];
        if (slot.due != due)
            break;
        out_.next_layout() = slot.layout;
        out_.join(slot.data.data(), slot.len, slot.parsed);
    }
    out_.wire_time = due;
    return out_.count;
}

void DelayLine::release(uint32_t frames)
{
    std::lock_guard guard(lock_);
    head_ = (head_ + frames) % SLOTS;
    queued_.fetch_sub(frames, std::memory_order_release);
}

} // namespace cna::fw
