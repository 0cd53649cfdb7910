/* SPDX-License-Identifier: BSD-3-Clause */
#include "base/engine.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>

namespace cna::fw {

Engine::Engine(const std::string& thread_name, Pollable& target) : target_(target)
{
    thread_ = std::thread([this] { run(); });
    pthread_setname_np(thread_.native_handle(), thread_name.c_str());
}

Engine::~Engine()
{
    stop_.store(true, std::memory_order_release);
    thread_.join();
}

int Engine::set_affinity(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0) {
        for (int c = 0; c < CPU_SETSIZE; c++)
            CPU_SET(c, &set);
    } else if (cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &set);
    } else {
        return -EINVAL;
    }
    return -pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set);
}

void Engine::run()
{
    Backoff backoff;
    while (!stop_.load(std::memory_order_acquire)) {
        if (target_.poll())
            backoff.work();
        else if (!backoff.spin())
            backoff.sleep(target_.wake_fds());
    }
}

} // namespace cna::fw
