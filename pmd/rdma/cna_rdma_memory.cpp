/* SPDX-License-Identifier: BSD-3-Clause
 * Memory regions: the IOVA of every 4 KiB page of the range, for the
 * device's page list. DPDK's memory is already the device's (the OSAL
 * keeps every memory segment in its IOMMU); any other memory of the
 * process is mapped for the device at IOVA = VA for the region's life.
 */
#include <cerrno>
#include <cstring>

#include <rte_memory.h>

#include "cna_rdma_port.h"
#include "cna_rdma_log.h"
#include "cna_rdma_objects.h"

namespace cna::rdma {

namespace {

constexpr uint64_t PAGE = 4096;

uint8_t mr_access(int ibv_access)
{
    uint8_t a = 0;
    a |= ibv_access & IBV_ACCESS_LOCAL_WRITE ? hsi::rdma::access::LOCAL_WRITE : 0;
    a |= ibv_access & IBV_ACCESS_REMOTE_WRITE ? hsi::rdma::access::REMOTE_WRITE : 0;
    a |= ibv_access & IBV_ACCESS_REMOTE_READ ? hsi::rdma::access::REMOTE_READ : 0;
    a |= ibv_access & IBV_ACCESS_REMOTE_ATOMIC ? hsi::rdma::access::REMOTE_ATOMIC : 0;
    return a;
}

/* IBV_ACCESS_MW_BIND only allows binding memory windows, which the device
 * does not have: a region may ask for it. */
constexpr int KNOWN_ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                             IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

void release_runs(Device* dev, Mr* mr)
{
    for (uint64_t start : mr->runs) {
        auto run = dev->app_runs.find(start);
        if (--run->second.users == 0) {
            net::port_pci(dev->port).dma_unmap(start, run->second.len);
            dev->app_runs.erase(run);
        }
    }
    mr->runs.clear();
}

/* Maps the pages [first, end) of application memory for the device: the
 * runs already mapped over them are shared, the gaps between mapped as
 * runs of their own. 0 or -errno. */
int use_runs(Device* dev, Mr* mr, uint64_t first, uint64_t end)
{
    auto run = dev->app_runs.upper_bound(first);
    if (run != dev->app_runs.begin() && std::prev(run)->first + std::prev(run)->second.len > first)
        --run;
    for (uint64_t at = first; at < end;) {
        uint64_t start = at;
        if (run != dev->app_runs.end() && run->first <= at) {
            at = run->first + run->second.len;
            start = run->first;
        } else {
            const uint64_t gap_end = run != dev->app_runs.end() ? std::min(run->first, end) : end;
            if (int rc = net::port_pci(dev->port).dma_map(at, reinterpret_cast<void*>(at), gap_end - at); rc != 0) {
                release_runs(dev, mr);
                return rc;
            }
            run = dev->app_runs.emplace(at, AppRun{gap_end - at, 0}).first;
            at = gap_end;
        }
        run->second.users++;
        mr->runs.push_back(start);
        ++run;
    }
    return 0;
}

} // namespace

} // namespace cna::rdma

using namespace cna;
using namespace cna::rdma;

extern "C" {

ibv_mr* cna_rdma_reg_mr(ibv_pd* ibv_pd, void* addr, size_t length, int access)
{
    auto* pd = reinterpret_cast<Pd*>(ibv_pd);
    Device* dev = pd->dev;
    if ((access & ~KNOWN_ACCESS) != 0 || length == 0 || length > hsi::rdma::MAX_MR_SIZE ||
        ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
        RDMA_LOG(ERR, dev, "reg_mr: access 0x%x, length %zu: %s", access, length,
                 (access & ~KNOWN_ACCESS) != 0 ? "unsupported access flags"
                 : length == 0 || length > hsi::rdma::MAX_MR_SIZE ? "length out of range"
                                                                  : "remote write or atomic needs local write");
        errno = EINVAL;
        return nullptr;
    }
    const uint64_t start = reinterpret_cast<uint64_t>(addr);
    const uint64_t first = start & ~(PAGE - 1);
    const uint64_t pages = (start + length - first + PAGE - 1) / PAGE;
    auto mr = std::make_unique<Mr>();
    mr->pd = pd;

    /* The page list: DPDK's IOVAs, or the VAs once mapped for the device. */
    osal::DmaMem pbl;
    if (pbl.alloc(pages * sizeof(uint64_t), "rdma_pbl") != 0) {
        errno = ENOMEM;
        return nullptr;
    }
    auto* list = pbl.as<uint64_t>();
    if (rte_mem_virt2memseg_list(addr) != nullptr) {
        for (uint64_t i = 0; i < pages; i++) {
            const rte_iova_t iova = rte_mem_virt2iova(reinterpret_cast<void*>(first + i * PAGE));
            if (iova == RTE_BAD_IOVA) {
                errno = EFAULT;
                return nullptr;
            }
            list[i] = iova;
        }
    } else {
        if (int rc = use_runs(dev, mr.get(), first, first + pages * PAGE); rc != 0) {
            RDMA_LOG(ERR, dev, "reg_mr: cannot map %p+%zu for the device: %s", addr, length, strerror(-rc));
            errno = -rc;
            return nullptr;
        }
        for (uint64_t i = 0; i < pages; i++)
            list[i] = first + i * PAGE;
    }

    ecore::Hwfn& hwfn = *dev->hwfn;
    ecore::Status st = ecore::rdma_alloc_tid(hwfn, &mr->tid);
    ecore::RdmaRegisterTidParams p;
    p.tid = mr->tid;
    p.key = dev->next_key++;
    p.pd = pd->id;
    p.access = mr_access(access);
    p.va = start;
    p.length = length;
    p.page_shift = 12;
    p.first_page_offset = static_cast<uint32_t>(start - first);
    p.pbl_iova = pbl.iova();
    p.num_pages = static_cast<uint32_t>(pages);
    if (st == ecore::Status::success) {
        st = ecore::rdma_register_tid(hwfn, p);
        if (st != ecore::Status::success)
            ecore::rdma_free_tid(hwfn, mr->tid);
    }
    if (st != ecore::Status::success) {
        release_runs(dev, mr.get());
        errno = -ecore::status_to_errno(st);
        return nullptr;
    }
    mr->ibv.pd = ibv_pd;
    mr->ibv.addr = addr;
    mr->ibv.length = length;
    mr->ibv.handle = mr->tid;
    mr->ibv.lkey = mr->ibv.rkey = hsi::rdma::mr_key(mr->tid, p.key);
    pd->users++;
    dev->objects++;
    return &mr.release()->ibv;
}

int cna_rdma_dereg_mr(ibv_mr* ibv)
{
    auto* mr = reinterpret_cast<Mr*>(ibv);
    Device* dev = mr->pd->dev;
    if (ecore::Status st = ecore::rdma_deregister_tid(*dev->hwfn, mr->tid); st != ecore::Status::success)
        return -ecore::status_to_errno(st);
    ecore::rdma_free_tid(*dev->hwfn, mr->tid);
    release_runs(dev, mr);
    mr->pd->users--;
    dev->objects--;
    delete mr;
    return 0;
}

} // extern "C"
