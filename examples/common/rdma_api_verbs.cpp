/* SPDX-License-Identifier: BSD-3-Clause
 * libibverbs's side of rdma_api.h: cna's devices as the provider lists
 * them, the TSC's rate without the EAL, and no environment to bring up.
 */
#include "rdma_api.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

namespace cna::examples::api {

/* The provider's devices come up when libibverbs first looks for them. */
Environment::Environment(int, char**) {}
Environment::~Environment() = default;
bool Environment::start_ports(uint16_t, uint16_t, uint16_t) { return true; }

Device* open(uint16_t index)
{
    const std::string name = "cna" + std::to_string(index);
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr) {
        std::fprintf(stderr, "No RDMA devices: %s (run under cna-rdma-run)\n", std::strerror(errno));
        return nullptr;
    }
    Device* dev = nullptr;
    for (int i = 0; i < n && dev == nullptr; i++)
        if (name == ibv_get_device_name(list[i]))
            dev = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (dev == nullptr)
        std::fprintf(stderr, "Couldn't open %s (its entry of CNA_RDMA_DEVARGS)\n", name.c_str());
    return dev;
}

double tsc_hz()
{
    static const double hz = [] {
        using clock = std::chrono::steady_clock;
        const auto t0 = clock::now();
        const uint64_t c0 = rte_rdtsc();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const uint64_t c1 = rte_rdtsc();
        const std::chrono::duration<double> elapsed = clock::now() - t0;
        return static_cast<double>(c1 - c0) / elapsed.count();
    }();
    return hz;
}

} // namespace cna::examples::api
