/* SPDX-License-Identifier: BSD-3-Clause
 * The RDMA PMD's environment (rdma_api.h): the EAL, and the ethdev ports
 * its devices are opened on.
 */
#include "rdma_api.h"

#include <cstdio>

#include <rte_eal.h>

#include "example_net.h"

namespace cna::examples::api {

Environment::Environment(int argc, char** argv) : args_(rte_eal_init(argc, argv))
{
    if (args_ < 0)
        std::fprintf(stderr, "EAL init failed\n");
}

Environment::~Environment()
{
    if (args_ < 0)
        return;
    /* Every port given, started or not: one that failed half-way is
     * stopped and closed too. */
    for (unsigned p = first_; p <= last_; p++)
        stop_port(static_cast<uint16_t>(p));
    rte_eal_cleanup();
}

bool Environment::start_ports(uint16_t first, uint16_t last, uint16_t mtu)
{
    first_ = first;
    last_ = last;
    for (unsigned p = first; p <= last; p++)
        if (!start_port(static_cast<uint16_t>(p), mtu)) {
            std::fprintf(stderr, "port %u: no link\n", p);
            return false;
        }
    for (unsigned p = first; p <= last; p++)
        if (!wait_link_up(static_cast<uint16_t>(p))) {
            std::fprintf(stderr, "port %u: no link\n", p);
            return false;
        }
    return true;
}

} // namespace cna::examples::api
