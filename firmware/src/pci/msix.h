/* SPDX-License-Identifier: BSD-3-Clause
 * MSI-X vectors of a function: one eventfd each, signalled by writing 1.
 */
#pragma once

#include <cstdint>
#include <vector>

namespace cna::fw {

class Msix {
public:
    explicit Msix(uint32_t vectors);
    ~Msix();
    Msix(const Msix&) = delete;
    Msix& operator=(const Msix&) = delete;

    bool valid() const { return !fds_.empty(); }
    uint32_t count() const { return static_cast<uint32_t>(fds_.size()); }
    int eventfd(uint32_t vector) const { return vector < fds_.size() ? fds_[vector] : -1; }
    void fire(uint32_t vector) const;

private:
    std::vector<int> fds_;
};

} // namespace cna::fw
