/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: net_cna's devargs parser. Any string either parses into values
 * within their documented ranges or fails with a message.
 */
#include <sched.h>

#include <cstdlib>
#include <string>

#include "cna_devargs.h"
#include "hsi_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string args(reinterpret_cast<const char*>(data), size);
    if (args.find('\0') != std::string::npos)
        return 0;
    cna::net::Devargs d;
    std::string error;
    if (cna::net::parse_devargs("net_cna0", args.c_str(), &d, &error) != 0) {
        if (error.empty())
            std::abort();
        return 0;
    }
    if ((d.ports != 1 && d.ports != 2 && d.ports != 4) || d.adapter.empty())
        std::abort();
    /* An embedded adapter's port, or a daemon's PF. */
    if (d.daemon.empty() ? d.port > 3 : d.port >= cna::hsi::MAX_PFS || d.daemon.size() > 107)
        std::abort();
    if (d.engine_threads < 1 || d.engine_threads > 4)
        std::abort();
    if (!d.engine_cpus.empty() && d.engine_cpus.size() != d.engine_threads)
        std::abort();
    if (d.mac && !rte_is_valid_assigned_ether_addr(&*d.mac))
        std::abort();
    for (uint32_t cpu : d.engine_cpus)
        if (cpu >= CPU_SETSIZE)
            std::abort();
    return 0;
}
