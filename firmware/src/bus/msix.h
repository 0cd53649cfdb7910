/* SPDX-License-Identifier: BSD-3-Clause
 * MSI-X vectors of a function: one eventfd each, signalled by writing 1.
 * A vector can be routed to an eventfd the host gave (a host in another
 * process: the daemon's client), as an irqfd routes it to a VM.
 */
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace cna::fw {

class Msix {
public:
    explicit Msix(uint32_t vectors);
    ~Msix();
    Msix(const Msix&) = delete;
    Msix& operator=(const Msix&) = delete;

    bool valid() const { return !own_.empty(); }
    uint32_t count() const { return static_cast<uint32_t>(own_.size()); }
    /* The vector's own eventfd (what it signals when not routed). */
    int eventfd(uint32_t vector) const { return vector < own_.size() ? own_[vector] : -1; }
    /* Signals a duplicate of `fd` instead (-1: its own again); 0 or -errno. */
    int route(uint32_t vector, int fd);
    void fire(uint32_t vector) const;

private:
    std::vector<int> own_;
    mutable std::mutex route_lock_; /* a routed fd is closed only while no fire() writes it */
    std::vector<int> routed_;       /* -1: not routed */
};

} // namespace cna::fw
