/* SPDX-License-Identifier: BSD-3-Clause
 * Host memory as the RoCE engines reach it: the bytes of a message through
 * a QP's SGE list (each SGE's local key checked), and the ranges of a
 * memory region a remote key named, piece by piece through the IOMMU.
 */
#pragma once

#include <cstdint>

#include "hsi_rdma.h"
#include "roce/context.h"

namespace cna::fw::roce {

class HostMemory {
public:
    explicit HostMemory(Context& ctx) : ctx_(ctx) {}

    /* The bytes [offset, offset + len) of the message an SGE list
     * describes, out of (or into) host memory; why: what refused it. */
    bool copy_from_sges(const Qp& qp, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* dst,
                        uint32_t len, hsi::rdma::RdmaError& why);
    bool copy_to_sges(const Qp& qp, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, const uint8_t* src,
                      uint32_t len, hsi::rdma::RdmaError& why);
    /* [addr, addr + len) of a region check() accepted, to (or from) buf. */
    bool copy_mr(const MemoryRegion& mr, uint64_t addr, uint8_t* buf, uint32_t len, bool to_host);
    /* The word an atomic works on at `va` of a region check() accepted;
     * nullptr when it does not map (memory the adapter reaches only by
     * copying, RemoteMemory, cannot take an atomic: it is refused). */
    uint64_t* map_atomic(const MemoryRegion& mr, uint64_t va);
    /* Whether the host's memory is gone with the process that owned it: the
     * function answers nothing more, as it will not once reset (a peer
     * then sees what a peer that went silent makes it see), rather than
     * NAK what it can no longer reach. */
    bool host_gone();

private:
    template <bool TO_HOST>
    bool copy_sges(uint16_t pd, const hsi::rdma::Sge* sges, uint32_t nsge, uint32_t offset, uint8_t* buf,
                   uint32_t len, hsi::rdma::RdmaError& why);

    Context& ctx_;
};

} // namespace cna::fw::roce
