/* SPDX-License-Identifier: BSD-3-Clause
 * An engine: a thread that animates (part of) an adapter. Each pass polls
 * everything that can have work (the Pollable decides what: doorbells,
 * mailboxes, timers, TAP wires) and backs off while there is none.
 */
#pragma once

#include <poll.h>

#include <atomic>
#include <span>
#include <string>
#include <thread>

#include "base/backoff.h"

namespace cna::fw {

class Pollable {
public:
    /* One pass; true if anything was done. */
    virtual bool poll() = 0;
    /* Descriptors that signal work while the engine backs off. */
    virtual std::span<pollfd> wake_fds() = 0;

protected:
    ~Pollable() = default;
};

class Engine {
public:
    /* thread_name: at most 15 characters (the kernel's limit; a longer one
     * leaves the thread unnamed). */
    Engine(const std::string& thread_name, Pollable& target);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /* Pins the thread to a CPU (-1: any CPU). 0 or -errno. */
    int set_affinity(int cpu);

private:
    void run();

    Pollable& target_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

} // namespace cna::fw
