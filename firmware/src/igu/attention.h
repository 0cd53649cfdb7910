/* SPDX-License-Identifier: BSD-3-Clause
 * Attentions of a function: latched causes (attn::*), write-one-to-clear.
 * A newly latched cause that ecore enabled in ATTN_MASK bumps SP_PI_ATTN of
 * the slowpath status block, which interrupts through vector 0 if armed.
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

    /* Engine thread: latch causes. */
    void raise(uint32_t causes);
    void set_fw_assert_code(uint32_t code) { fw_assert_code_.store(code); }
    uint32_t status() const { return status_.load(); }

private:
    Cau& cau_;
    std::atomic<uint32_t> status_{0};
    std::atomic<uint32_t> mask_{0};
    std::atomic<uint32_t> fw_assert_code_{0};
};

} // namespace cna::fw
