/* SPDX-License-Identifier: BSD-3-Clause */
#include "osal_mem.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "osal_log.h"

namespace cna::osal {

void* zalloc(std::size_t size) { return rte_zmalloc("cna", size, 0); }

void free(void* ptr) { rte_free(ptr); }

DmaMem::DmaMem(DmaMem&& other) noexcept
    : mz_(std::exchange(other.mz_, nullptr)), slice_(std::exchange(other.slice_, {})),
      va_(std::exchange(other.va_, nullptr)),
      iova_(std::exchange(other.iova_, 0)), size_(std::exchange(other.size_, 0))
{
}

DmaMem& DmaMem::operator=(DmaMem&& other) noexcept
{
    if (this != &other) {
        release();
        mz_ = std::exchange(other.mz_, nullptr);
        slice_ = std::exchange(other.slice_, {});
        va_ = std::exchange(other.va_, nullptr);
        iova_ = std::exchange(other.iova_, 0);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

int DmaMem::alloc(std::size_t size, const char* what, std::size_t align, int socket)
{
    release();
    if (socket == SOCKET_ID_ANY && dma_pool::fits(size, align)) {
        if (int rc = dma_pool::take(size, what, &slice_); rc != 0)
            return rc;
        va_ = slice_.va;
        iova_ = slice_.iova;
        size_ = size;
        return 0;
    }
    /* Memzone names must be unique and short: a counter, not `what`. */
    static std::atomic<uint32_t> serial{0};
    char name[RTE_MEMZONE_NAMESIZE];
    snprintf(name, sizeof(name), "cna_dma_%u", serial.fetch_add(1));

    const rte_memzone* mz = rte_memzone_reserve_aligned(name, size, socket, RTE_MEMZONE_IOVA_CONTIG,
                                                        static_cast<unsigned>(align));
    if (mz == nullptr) {
        int err = rte_errno;
        dp_log(logtype_ecore, DpLevel::err, 0, "osal", __func__,
               "cannot reserve %zu bytes of DMA memory for %s: %s", size, what, rte_strerror(err));
        return -(err ? err : ENOMEM);
    }
    memset(mz->addr, 0, size);
    mz_ = mz;
    va_ = mz->addr;
    iova_ = mz->iova;
    size_ = size;
    return 0;
}

void DmaMem::release()
{
    if (mz_ != nullptr)
        rte_memzone_free(static_cast<const rte_memzone*>(mz_));
    if (slice_.arena != nullptr)
        dma_pool::give_back(slice_);
    mz_ = nullptr;
    slice_ = {};
    va_ = nullptr;
    iova_ = 0;
    size_ = 0;
}

} // namespace cna::osal
