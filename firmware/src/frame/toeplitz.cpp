/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/toeplitz.h"

namespace cna::fw {

Toeplitz::Toeplitz(const uint8_t (&key)[KEY_BYTES])
{
    /* Input bit b (MSB first over the whole input) contributes the 32 key
     * bits starting at bit b. */
    auto key_window = [&](std::size_t bit) {
        uint32_t w = 0;
        for (std::size_t i = 0; i < 32; i++) {
            std::size_t k = bit + i;
            uint32_t kbit = k < KEY_BYTES * 8 ? (key[k / 8] >> (7 - k % 8)) & 1 : 0;
            w = w << 1 | kbit;
        }
        return w;
    };
    for (std::size_t pos = 0; pos < MAX_HASH_INPUT; pos++) {
        uint32_t windows[8];
        for (std::size_t bit = 0; bit < 8; bit++)
            windows[bit] = key_window(pos * 8 + bit);
        for (uint32_t value = 0; value < 256; value++) {
            uint32_t h = 0;
            for (std::size_t bit = 0; bit < 8; bit++)
                if (value & (0x80u >> bit))
                    h ^= windows[bit];
            table_[pos][value] = h;
        }
    }
}

} // namespace cna::fw
