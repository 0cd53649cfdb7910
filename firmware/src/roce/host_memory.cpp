/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/host_memory.h"

#include <algorithm>

#include "bus/dma.h"
#include "function/function.h"
#include "roce/request_checks.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

namespace {

RdmaError key_error(MrCheck c)
{
    switch (c) {
    case MrCheck::out_of_bounds: return RdmaError::lkey_bounds;
    case MrCheck::no_access: return RdmaError::lkey_access;
    default: return RdmaError::bad_lkey;
    }
}

} // namespace

bool HostMemory::copy_mr(const MemoryRegion& mr, uint64_t addr, uint8_t* buf, uint32_t len, bool to_host)
{
    Dma& dma = ctx_.hw.dma();
    return MrTable::for_each_piece(mr, addr, len, [&](uint64_t iova, uint64_t n) {
        const bool copied = to_host ? dma.write(iova, buf, n) : dma.read(iova, buf, n);
        buf += n;
        return copied;
    });
}

bool HostMemory::host_gone()
{
    return ctx_.hw.dma().host_gone();
}

uint64_t* HostMemory::map_atomic(const MemoryRegion& mr, uint64_t va)
{
    uint64_t* target = nullptr;
    MrTable::for_each_piece(mr, va, ATOMIC_SIZE, [&](uint64_t iova, uint64_t) {
        target = reinterpret_cast<uint64_t*>(ctx_.hw.dma().map(iova, ATOMIC_SIZE));
        return false;
    });
    return target;
}

template <bool TO_HOST>
bool HostMemory::copy_sges(uint16_t pd, const Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* buf, uint32_t len,
                           RdmaError& why)
{
    if (nsge > MAX_SGE) {
        why = RdmaError::bad_wqe;
        return false;
    }
    for (uint32_t i = 0; i < nsge && len != 0; i++) {
        const Sge& sge = sges[i];
        if (offset >= sge.length) {
            offset -= sge.length;
            continue;
        }
        const uint32_t n = std::min(sge.length - offset, len);
        const MemoryRegion* mr = nullptr;
        const MrCheck c = ctx_.mrs.check(sge.lkey, pd, sge.addr + offset, n, TO_HOST ? access::LOCAL_WRITE : 0, &mr);
        if (c != MrCheck::ok) {
            why = key_error(c);
            return false;
        }
        if (!copy_mr(*mr, sge.addr + offset, buf, n, TO_HOST)) {
            why = RdmaError::dma_fault;
            return false;
        }
        buf += n;
        len -= n;
        offset = 0;
    }
    if (len != 0) {
        why = RdmaError::sges_too_short;
        return false;
    }
    return true;
}

bool HostMemory::copy_from_sges(const Qp& qp, const Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* dst,
                                uint32_t len, RdmaError& why)
{
    return copy_sges<false>(qp.pd, sges, nsge, offset, dst, len, why);
}

bool HostMemory::copy_to_sges(const Qp& qp, const Sge* sges, uint32_t nsge, uint32_t offset, const uint8_t* src,
                              uint32_t len, RdmaError& why)
{
    /* Only read from: the copy's direction is TO_HOST. */
    return copy_sges<true>(qp.pd, sges, nsge, offset, const_cast<uint8_t*>(src), len, why);
}

} // namespace cna::fw::roce
