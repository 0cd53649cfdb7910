/* SPDX-License-Identifier: BSD-3-Clause
 * The round trip of one cache line between two CPUs: a flag bounced
 * between two threads pinned to them. net_cna's driver and adapter engine
 * hand each burst over through a few dozen such transfers, so its
 * throughput follows this figure (doc/performance.md); run_bench.py reads
 * it around every net_cna process. Prints "<ns> ns".
 */
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

constexpr int ROUND_TRIPS = 200000;

alignas(64) std::atomic<int> flag{0};

bool pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

} // namespace

int main(int argc, char** argv)
{
    int cpu_a = argc > 1 ? std::atoi(argv[1]) : 0;
    int cpu_b = argc > 2 ? std::atoi(argv[2]) : 1;
    if (!pin(cpu_a)) {
        std::fprintf(stderr, "cannot pin to CPU %d\n", cpu_a);
        return 1;
    }
    bool peer_pinned = true;
    std::thread peer([&] {
        peer_pinned = pin(cpu_b);
        for (int i = 0; i < ROUND_TRIPS; i++) {
            while (flag.load(std::memory_order_acquire) != 1) {
            }
            flag.store(0, std::memory_order_release);
        }
    });
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ROUND_TRIPS; i++) {
        flag.store(1, std::memory_order_release);
        while (flag.load(std::memory_order_acquire) != 0) {
        }
    }
    auto elapsed = std::chrono::steady_clock::now() - start;
    peer.join();
    if (!peer_pinned) {
        std::fprintf(stderr, "cannot pin to CPU %d\n", cpu_b);
        return 1;
    }
    std::printf("%.0f ns\n", std::chrono::duration<double, std::nano>(elapsed).count() / ROUND_TRIPS);
    return 0;
}
