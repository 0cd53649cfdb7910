/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the VM transport. cna-adapterd exposes a VF to a QEMU guest as an
 * ivshmem PCI device (ivshmem-plain, Red Hat's 1af4:1110) whose BAR2 is the
 * VF's own memory file: the same pages a host process maps through the
 * daemon's socket (daemon_protocol.h), with the socket's part — the BAR0
 * mailbox and the DMA table — done in shared memory too, since a guest has
 * no socket to the daemon. Everything above the OSAL is the VF's unchanged.
 *
 *   0x0000  Header: signature, version, where the rest is, the VF
 *   0x1000  Bar0Mailbox (daemon_protocol.h), then FunctionMailbox
 *   0x2000  the VF's GTT page (hsi_iov.h vf_page)
 *   0x3000  the VF's doorbell BAR (its L2 doorbell page, then its DPI page)
 *
 * The daemon writes the header (signature last) when it attaches the VF to
 * a VM and clears the signature when it detaches it: a guest's driver that
 * finds no signature has no VF (another ivshmem device, or a VF its daemon
 * reset). Nothing in the header is read back by the daemon.
 *
 * DMA: the guest's DPDK runs with IOVA as PA, so an IOVA is a guest-physical
 * address. The guest's driver registers each run of its DMA memory in the
 * FunctionMailbox; the daemon maps it from the guest-RAM file into the VF's
 * IOMMU, exactly what a host process's dma_map does. The same mailbox
 * resets the function, as VFIO does when a device is opened and released:
 * a guest process that dies leaves the VF to the next one to reset. Guest RAM is the file
 * from offset 0 at guest-physical 0: the daemon serves guests of at most
 * MAX_GUEST_RAM, which a q35 machine keeps whole below its 32-bit PCI hole.
 *
 * Interrupts: none yet (the VF runs in poll mode, its link from the
 * bulletin board). Both mailboxes are polled by the daemon every
 * POLL_PERIOD_US.
 */
#pragma once

#include <cstdint>

#include "hsi_common.h"
#include "daemon_protocol.h"
#include "hsi_iov.h"

namespace cna::transport::vm {

inline constexpr uint16_t IVSHMEM_VENDOR_ID = 0x1af4;
inline constexpr uint16_t IVSHMEM_DEVICE_ID = 0x1110;
inline constexpr uint32_t BAR = 2;

inline constexpr uint32_t SIGNATURE = 0x46564e43; /* "CNVF" */
inline constexpr uint16_t VERSION = 1;

inline constexpr uint32_t HEADER_OFFSET = 0x0000;
inline constexpr uint32_t MAILBOX_OFFSET = 0x1000;
inline constexpr uint32_t FUNCTION_MAILBOX_OFFSET = MAILBOX_OFFSET + 0x80;
inline constexpr uint32_t GTT_OFFSET = 0x2000;
inline constexpr uint32_t DOORBELLS_OFFSET = 0x3000;
inline constexpr uint32_t BAR_SIZE = 0x10000; /* a power of two, as a PCI BAR */

inline constexpr uint64_t MAX_GUEST_RAM = 2ull << 30;
inline constexpr uint32_t POLL_PERIOD_US = 100;

struct Header {
    uint32_t signature;        /* SIGNATURE while a VM has the VF, else 0 */
    uint16_t version;
    uint16_t header_size;
    uint32_t pf;
    uint32_t vf;               /* relative to its PF */
    uint32_t port;
    uint32_t mailbox_offset;   /* Bar0Mailbox */
    uint32_t function_mailbox_offset;
    uint32_t gtt_offset;
    uint32_t gtt_size;
    uint32_t doorbells_offset;
    uint32_t doorbells_size;
    uint32_t poll_period_us;   /* how often the daemon looks at the mailboxes */
    uint64_t guest_ram;        /* bytes of guest RAM the daemon reaches */
};
static_assert(sizeof(Header) == 56);

enum class FunctionOp : uint32_t {
    dma_map = 1,   /* [iova, iova + len) of guest-physical memory, page-aligned,
                    * inside guest RAM, overlapping no mapping */
    dma_unmap = 2, /* every mapping inside [iova, iova + len) */
    reset = 3,     /* function level reset; every mapping goes */
};

/* One request at a time, as the Bar0Mailbox: the guest fills op, iova and
 * len, then publishes request_seq (release); the daemon answers with status
 * (0 or -errno, as the socket's replies) and publishes done_seq. */
struct FunctionMailbox {
    uint32_t request_seq;
    uint32_t op;          /* FunctionOp */
    uint64_t iova;
    uint64_t len;
    int32_t status;
    uint32_t reserved[9];
    uint32_t done_seq;    /* a cache line of its own: the daemon's */
    uint32_t reserved2[15];
};
static_assert(sizeof(FunctionMailbox) == 128);

static_assert(MAILBOX_OFFSET + sizeof(daemon::Bar0Mailbox) <= FUNCTION_MAILBOX_OFFSET);
static_assert(FUNCTION_MAILBOX_OFFSET + sizeof(FunctionMailbox) <= GTT_OFFSET);
static_assert(GTT_OFFSET + hsi::WINDOW_SIZE <= DOORBELLS_OFFSET);
static_assert(DOORBELLS_OFFSET + hsi::iov::VF_DB_BAR_SIZE <= BAR_SIZE);
static_assert((BAR_SIZE & (BAR_SIZE - 1)) == 0);

} // namespace cna::transport::vm
