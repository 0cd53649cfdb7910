/* SPDX-License-Identifier: BSD-3-Clause
 * Attentions of a function: latched causes (attn::*), write-one-to-clear.
 * A newly latched cause that ecore enabled in ATTN_MASK, or a latched cause
 * ecore newly enables, bumps SP_PI_ATTN of the slowpath status block, which
 * interrupts through vector 0 if armed.
 * Causes latch on whichever thread finds them (an engine thread, or a host
 * thread whose BAR0 access nothing decodes); the bump waits for the
 * slowpath, the one place allowed to touch every function's CAU.
 */
#pragma once

#include <atomic>
#include <cstdint>

namespace cna::fw {

class Cau;

class Attention {
public:
    explicit Attention(Cau& cau) : cau_(cau) {}

    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    /* Any thread: latch causes. */
    void raise(uint32_t causes);
    /* An enabled cause latched since the last deliver(). */
    bool undelivered() const { return undelivered_.load(std::memory_order_acquire); }
    /* Slowpath (every engine thread between passes): bump SP_PI_ATTN. */
    void deliver();
    /* Function level reset: no cause latched or enabled. */
    void reset();
    void set_fw_assert_code(uint32_t code) { fw_assert_code_.store(code); }
    uint32_t status() const { return status_.load(); }

private:
    Cau& cau_;
    std::atomic<uint32_t> status_{0};
    std::atomic<uint32_t> mask_{0};
    std::atomic<uint32_t> fw_assert_code_{0};
    std::atomic<bool> undelivered_{false};
};

} // namespace cna::fw
