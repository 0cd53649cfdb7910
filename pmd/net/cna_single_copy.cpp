/* SPDX-License-Identifier: BSD-3-Clause */
#include "cna_single_copy.h"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

#include <rte_log.h>

/* Set by the copy that serves, in the dynamic symbol table for the others
 * to read (version.map exports it). Its hidden alias is this copy's own,
 * which a lookup by name may not return. */
extern "C" {
[[gnu::visibility("default")]] extern bool cna_net_driver_serving;
bool cna_net_driver_serving = false;
[[gnu::visibility("hidden"), gnu::alias("cna_net_driver_serving")]] extern bool cna_net_driver_serving_here;
}

namespace cna::net {
namespace {

std::vector<std::string> loaded_objects()
{
    std::vector<std::string> names;
    ::dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* out) {
            if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') /* the executable has no name */
                static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
            return 0;
        },
        &names);
    return names;
}

/* The object of a copy that serves already, or empty. Constructors run one
 * at a time, so the first copy's has set its flag before a second asks.
 * Another copy need not be in the global scope (the EAL opens plugins
 * RTLD_LOCAL): each loaded object is asked by handle. */
std::string serving_elsewhere()
{
    for (const std::string& name : loaded_objects()) {
        void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD);
        if (handle == nullptr)
            continue;
        const auto* flag = static_cast<const bool*>(::dlsym(handle, "cna_net_driver_serving"));
        const bool serving = flag != nullptr && flag != &cna_net_driver_serving_here && *flag;
        ::dlclose(handle);
        if (serving)
            return name;
    }
    return {};
}

bool decide()
{
    if (const std::string other = serving_elsewhere(); !other.empty()) {
        Dl_info self{};
        ::dladdr(&cna_net_driver_serving_here, &self);
        RTE_LOG(NOTICE, PMD, "net_cna: the driver in %s serves this process; the copy in %s stays idle\n",
                other.c_str(), self.dli_fname != nullptr ? self.dli_fname : "?");
        return false;
    }
    cna_net_driver_serving_here = true;
    return true;
}

} // namespace

bool serving_copy()
{
    static const bool serving = decide();
    return serving;
}

} // namespace cna::net
