/* SPDX-License-Identifier: BSD-3-Clause */
#include "pci_iommu.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <iterator>
#include <optional>
#include <utility>

#include <rte_eal_memconfig.h>
#include <rte_errno.h>
#include <rte_memory.h>

#include "osal_log.h"

namespace cna::osal {
namespace {

bool eal_page(uintptr_t va, IommuSync::Page& page)
{
    const rte_memseg* ms = rte_mem_virt2memseg(reinterpret_cast<const void*>(va), nullptr);
    if (ms == nullptr)
        return false;
    page = {reinterpret_cast<uintptr_t>(ms->addr), ms->iova, ms->len};
    return true;
}

} // namespace

IommuSync::IommuSync(std::string name, MapFn map, UnmapFn unmap, PageFn page)
    : name_(std::move(name)), map_fn_(std::move(map)), unmap_fn_(std::move(unmap)),
      page_fn_(page ? std::move(page) : PageFn(eal_page))
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
           "%zu IOVA ranges mapped", mappings());
    return 0;
}

void IommuSync::stop()
{
    if (registered_)
        rte_mem_event_callback_unregister(name_.c_str(), this);
    registered_ = false;
    std::lock_guard guard(lock_);
    for (const auto& [va, m] : maps_)
        device_unmap(m.iova, m.len);
    maps_.clear();
}

std::size_t IommuSync::mappings() const
{
    std::lock_guard guard(lock_);
    return maps_.size();
}

/* One VA-contiguous area of EAL memory (the walk promises no more: its
 * pages need not be contiguous in IOVA). */
int IommuSync::map_contig(const rte_memseg_list* msl, const rte_memseg* ms, std::size_t len, void* arg)
{
    auto* self = static_cast<IommuSync*>(arg);
    if (msl->external)
        return 0; /* memory its owner maps: not ours to map */
    std::lock_guard guard(self->lock_);
    return self->map_area_locked(reinterpret_cast<uintptr_t>(ms->addr), len) < 0 ? -1 : 0;
}

int IommuSync::map_area(uintptr_t va, std::size_t len)
{
    std::lock_guard guard(lock_);
    return map_area_locked(va, len);
}

void IommuSync::unmap_area(uintptr_t va, std::size_t len)
{
    std::lock_guard guard(lock_);
    unmap_area_locked(va, len);
}

/* Maps each run of pages of [va, va + len) contiguous in IOVA as well; pages
 * without an IOVA are no DMA memory and stay unmapped. */
int IommuSync::map_area_locked(uintptr_t va, std::size_t len)
{
    const uintptr_t end = va + len;
    int first_error = 0;
    while (va < end) {
        Page page;
        if (!page_fn_(va, page) || page.len == 0 || va < page.va || va - page.va >= page.len) {
            dp_log(logtype_ecore, DpLevel::err, dp_module::IOMMU, name_.c_str(), __func__,
                   "no memory segment holds VA 0x%" PRIxPTR ": [0x%" PRIxPTR ", 0x%" PRIxPTR ") left unmapped",
                   va, va, end);
            return first_error != 0 ? first_error : -EFAULT;
        }
        const uintptr_t page_end = std::min<uintptr_t>(page.va + page.len, end);
        if (page.iova == RTE_BAD_IOVA) {
            va = page_end;
            continue;
        }
        const uint64_t iova = page.iova + (va - page.va);
        uintptr_t run_end = page_end;
        for (Page next; run_end < end; run_end = std::min<uintptr_t>(next.va + next.len, end)) {
            if (!page_fn_(run_end, next) || next.va != run_end || next.len == 0 || next.iova == RTE_BAD_IOVA ||
                next.iova != iova + (run_end - va))
                break;
        }
        if (const int rc = map(va, iova, run_end - va); rc < 0 && first_error == 0)
            first_error = rc;
        va = run_end;
    }
    return first_error;
}

/* Maps [va, va + len) at iova, merged with the mappings it continues (in VA
 * and IOVA): the device translates a DMA only when one mapping covers all of
 * it, and a buffer may straddle segments allocated at different times. If
 * the device refuses, the neighbours are restored as they were. */
int IommuSync::map(uintptr_t va, uint64_t iova, std::size_t len)
{
    auto next = maps_.lower_bound(va);
    std::optional<std::pair<uintptr_t, Mapping>> before, after;
    if (next != maps_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.len == va && prev->second.iova + prev->second.len == iova)
            before = *prev;
    }
    if (next != maps_.end() && va + len == next->first && iova + len == next->second.iova)
        after = *next;

    uintptr_t m_va = va;
    uint64_t m_iova = iova;
    std::size_t m_len = len;
    if (before) {
        device_unmap(before->second.iova, before->second.len);
        m_va = before->first;
        m_iova = before->second.iova;
        m_len += before->second.len;
    }
    if (after) {
        device_unmap(after->second.iova, after->second.len);
        m_len += after->second.len;
    }
    const int rc = device_map(m_va, m_iova, m_len);
    if (rc == 0) {
        if (before)
            maps_.erase(before->first);
        if (after)
            maps_.erase(after->first);
        maps_.emplace(m_va, Mapping{m_iova, m_len});
        return 0;
    }
    dp_log(logtype_ecore, DpLevel::err, dp_module::IOMMU, name_.c_str(), __func__,
           "cannot map IOVA 0x%" PRIx64 " (+0x%zx) at VA 0x%" PRIxPTR " for the device: %s%s", iova, len, va,
           rte_strerror(-rc), rc == -EEXIST ? " (it overlaps a range mapped already)" : "");
    for (const auto& kept : {before, after}) {
        if (kept && device_map(kept->first, kept->second.iova, kept->second.len) < 0)
            maps_.erase(kept->first); /* logged by device_map: the device lost it */
    }
    return rc;
}

int IommuSync::device_map(uintptr_t va, uint64_t iova, std::size_t len)
{
    const int rc = map_fn_(iova, reinterpret_cast<void*>(va), len);
    if (rc == 0)
        dp_log(logtype_ecore, DpLevel::verbose, dp_module::IOMMU, name_.c_str(), __func__,
               "IOVA 0x%" PRIx64 " (+0x%zx) -> VA 0x%" PRIxPTR, iova, len, va);
    return rc;
}

void IommuSync::device_unmap(uint64_t iova, std::size_t len)
{
    if (const int rc = unmap_fn_(iova, len); rc < 0)
        dp_log(logtype_ecore, DpLevel::err, dp_module::IOMMU, name_.c_str(), __func__,
               "cannot unmap IOVA 0x%" PRIx64 " (+0x%zx) from the device: %s", iova, len, rte_strerror(-rc));
}

/* Memory about to be freed: unmap it, re-mapping whatever part of a larger
 * mapping stays in use. */
void IommuSync::unmap_area_locked(uintptr_t va, std::size_t len)
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
        device_unmap(m.iova, m.len);
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
    if (event == RTE_MEM_EVENT_ALLOC)
        self->map_area(reinterpret_cast<uintptr_t>(addr), len);
    else
        self->unmap_area(reinterpret_cast<uintptr_t>(addr), len);
}

} // namespace cna::osal
