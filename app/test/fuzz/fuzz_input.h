/* SPDX-License-Identifier: BSD-3-Clause
 * A fuzz input read as a stream of values: past its end, zeros.
 */
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace cna::fw::test {

class FuzzInput {
public:
    FuzzInput(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    bool empty() const { return pos_ >= size_; }
    template <typename T> T take()
    {
        T v{};
        std::size_t n = std::min(sizeof(T), size_ - std::min(pos_, size_));
        std::memcpy(&v, data_ + pos_, n);
        pos_ += n;
        return v;
    }
    std::vector<uint8_t> bytes(std::size_t n)
    {
        n = std::min(n, size_ - std::min(pos_, size_));
        std::vector<uint8_t> v(data_ + pos_, data_ + pos_ + n);
        pos_ += n;
        return v;
    }

private:
    const uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

} // namespace cna::fw::test
