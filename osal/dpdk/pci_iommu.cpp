/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_iommu.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <iterator>
#include <utility>

#include <rte_eal_memconfig.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "osal_log.h"

namespace cna::osal {

IommuSync::IommuSync(std::string name, MapFn map, UnmapFn unmap)
    : name_(std::move(name)), map_fn_(std::move(map)), unmap_fn_(std::move(unmap))
{
}

int IommuSync::start()
{
    /* Hold the hotplug lock across registration and the walk, so that no
     * segment appears between the two unseen. */
    rte_mcfg_mem_read_lock();
    int rc = rte_mem_event_callback_register(name_.c_str(),
                                             on_mem_event, this);
    if (rc < 0 && rte_errno != ENOTSUP) {
        rte_mcfg_mem_read_unlock();
        dp_log(logtype_ecore, DpLevel::err, dp_module::IOMMU, name_.c_str(), __func__,
               "cannot register the memory hotplug callback: %s", rte_strerror(rte_errno));
        return -rte_errno;
    }
    /* ENOTSUP: legacy memory (e.g. --no-huge), which never changes. */
    registered_ = rc == 0;
    rc = rte_memseg_contig_walk_thread_unsafe(map_contig, this);
    rte_mcfg_mem_read_unlock();
    if (rc < 0) {
        stop();
        return -EIO;
    }
    dp_log(logtype_ecore, DpLevel::verbose, dp_module::IOMMU, name_.c_str(), __func__,
           "%zu IOVA ranges mapped", maps_.size());
    return 0;
}

void IommuSync::stop()
{
    if (registered_)
        rte_mem_event_callback_unregister(name_.c_str(), this);
    registered_ = false;
    std::lock_guard guard(lock_);
    for (const auto& [va, m] : maps_)
        unmap_fn_(m.iova, m.len);
    maps_.clear();
}

int IommuSync::map_contig(const rte_memseg_list* msl, const rte_memseg* ms, std::size_t len, void* arg)
{
    auto* self = static_cast<IommuSync*>(arg);
    if (ms->iova == RTE_BAD_IOVA || msl->external)
        return 0; /* no IOVA, or memory its owner maps: not ours to map */
    std::lock_guard guard(self->lock_);
    return self->map(reinterpret_cast<uintptr_t>(ms->addr), ms->iova, len) < 0 ? -1 : 0;
}

/* Maps [va, va + len) at iova, merged with the mappings it continues (in VA
 * and IOVA): the device translates a DMA only when one mapping covers all of
 * it, and a buffer may straddle segments allocated at different times. */
int IommuSync::map(uintptr_t va, uint64_t iova, std::size_t len)
{
    auto next = maps_.lower_bound(va);
    if (next != maps_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.len == va && prev->second.iova + prev->second.len == iova) {
            unmap_fn_(prev->second.iova, prev->second.len);
            va = prev->first;
            iova = prev->second.iova;
            len += prev->second.len;
            maps_.erase(prev);
        }
    }
    if (next != maps_.end() && va + len == next->first && iova + len == next->second.iova) {
        unmap_fn_(next->second.iova, next->second.len);
        len += next->second.len;
        next = maps_.erase(next);
    }
    int rc = map_fn_(iova, reinterpret_cast<void*>(va), len);
    if (rc < 0) {
        dp_log(logtype_ecore, DpLevel::err, dp_module::IOMMU, name_.c_str(), __func__,
               "cannot map IOVA 0x%" PRIx64 " (+%zu) for the device: %d", iova, len, rc);
        return rc;
    }
    maps_.emplace(va, Mapping{iova, len});
    return 0;
}

/* Newly allocated memory: map each IOVA-contiguous run of its pages. */
void IommuSync::map_range(uintptr_t va, std::size_t len)
{
    const uintptr_t end = va + len;
    while (va < end) {
        const rte_memseg* ms = rte_mem_virt2memseg(reinterpret_cast<void*>(va), nullptr);
        if (ms == nullptr || ms->iova == RTE_BAD_IOVA)
            return;
        uint64_t iova = ms->iova + (va - reinterpret_cast<uintptr_t>(ms->addr));
        std::size_t run = reinterpret_cast<uintptr_t>(ms->addr) + ms->len - va;
        while (va + run < end) {
            const rte_memseg* nx = rte_mem_virt2memseg(reinterpret_cast<void*>(va + run), nullptr);
            if (nx == nullptr || nx->iova != iova + run)
                break;
            run += nx->len;
        }
        run = std::min<std::size_t>(run, end - va);
        map(va, iova, run);
        va += run;
    }
}

/* Memory about to be freed: unmap it, re-mapping whatever part of a larger
 * mapping stays in use. */
void IommuSync::unmap_range(uintptr_t va, std::size_t len)
{
    const uintptr_t end = va + len;
    auto it = maps_.upper_bound(va);
    if (it != maps_.begin())
        it = std::prev(it);
    while (it != maps_.end() && it->first < end) {
        const uintptr_t m_va = it->first;
        const Mapping m = it->second;
        if (m_va + m.len <= va) {
            ++it;
            continue;
        }
        unmap_fn_(m.iova, m.len);
        it = maps_.erase(it);
        if (m_va < va)
            map(m_va, m.iova, va - m_va);
        if (m_va + m.len > end)
            map(end, m.iova + (end - m_va), m_va + m.len - end);
        it = maps_.lower_bound(end);
    }
}

void IommuSync::on_mem_event(rte_mem_event event, const void* addr, std::size_t len, void* arg)
{
    auto* self = static_cast<IommuSync*>(arg);
    std::lock_guard guard(self->lock_);
    if (event == RTE_MEM_EVENT_ALLOC)
        self->map_range(reinterpret_cast<uintptr_t>(addr), len);
    else
        self->unmap_range(reinterpret_cast<uintptr_t>(addr), len);
}

} // namespace cna::osal
