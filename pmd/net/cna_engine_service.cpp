/* SPDX-License-Identifier: BSD-3-Clause
 * engine=service: the adapter's dataplane as a DPDK service, run by the
 * service cores EAL's -s gives (mapped by EAL's defaults or by the
 * application), as DPDK's software eventdev and its adapters run. Each
 * call is one pass of the port group's dataplane; passes never wait, so
 * the service is multi-thread safe, and two ports of one group may share
 * a service core or have one each.
 */
#include "cna_engine_service.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <rte_service.h>
#include <rte_service_component.h>

#include "cna_log.h"
#include "pci_function.h"

namespace cna::net {
namespace {

int32_t run_pass(void* userdata)
{
    /* -EAGAIN: nothing was done, which service statistics count as idle.
     * The service core only lends its time: the lcores' doorbells ask for
     * passes of their own. */
    auto* adapter = static_cast<osal::PciFunction*>(userdata);
    return adapter->adapter_pass(osal::PciFunction::PassCause::idle) ? 0 : -EAGAIN;
}

/* Whether a service core is mapped to the service. */
bool has_service_core(uint32_t id)
{
    uint32_t lcores[RTE_MAX_LCORE];
    const int n = rte_service_lcore_list(lcores, RTE_MAX_LCORE);
    for (int i = 0; i < n; i++)
        if (rte_service_map_lcore_get(id, lcores[i]) == 1)
            return true;
    return false;
}

} // namespace

int engine_service_register(EthPort* port)
{
    rte_service_spec spec{};
    std::snprintf(spec.name, sizeof spec.name, "cna_engine_%s", port->name.c_str());
    spec.callback = run_pass;
    spec.callback_userdata = port->pci.get();
    spec.capabilities = RTE_SERVICE_CAP_MT_SAFE;
    uint32_t id;
    if (const int rc = rte_service_component_register(&spec, &id); rc != 0) {
        PMD_LOG(ERR, port, "cannot register service %s: %s", spec.name, strerror(-rc));
        return rc;
    }
    rte_service_component_runstate_set(id, 1);
    port->engine_service = id;
    PMD_LOG(INFO, port, "the adapter's dataplane is service %s (id %u)", spec.name, id);
    return 0;
}

void engine_service_check(EthPort* port)
{
    if (!port->engine_service)
        return;
    const uint32_t id = *port->engine_service;
    if (rte_service_runstate_get(id) != 1 || !has_service_core(id))
        PMD_LOG(WARNING, port,
                "engine=service: no service core runs service %s yet, and until one does the port neither sends "
                "nor receives (EAL's -s <coremask> maps it to its service cores)",
                rte_service_get_name(id));
}

void engine_service_unregister(EthPort* port)
{
    if (!port->engine_service)
        return;
    const uint32_t id = *port->engine_service;
    rte_service_component_runstate_set(id, 0);
    /* The function the calls pass on goes with the port: none may be in
     * flight. */
    while (rte_service_may_be_active(id) == 1)
        rte_pause();
    rte_service_component_unregister(id);
    port->engine_service.reset();
}

} // namespace cna::net
