/* SPDX-License-Identifier: BSD-3-Clause
 * The adapter daemon's transport (cna-adapterd): how a host process reaches
 * the four resources of a PCI function when the adapter runs in another
 * process, as vhost-user reaches a vhost device.
 *
 * A client speaks over a unix stream socket in messages: a Header, then
 * header.body_len bytes of the type's body, with file descriptors riding
 * along as SCM_RIGHTS. Every request gets one reply, in order; the reply's
 * type is the request's with REPLY set and its body starts with a Status.
 *
 *   hello     -> version, functions and ports of the adapter
 *   attach    -> the function's BARs (a PF, or a VF its PF has enabled):
 *                fds of the GTT window (the function's own page), the
 *                doorbell BAR and the BAR0 mailbox, the mailbox's kick and
 *                done eventfds, and the read end of the session's alive
 *                pipe, which hangs up when the daemon is gone
 *   set_msix  <- the client's eventfds, one per MSI-X vector
 *   dma_map   <- a region of client memory (fds of the files behind it)
 *                the function's IOMMU maps at an IOVA
 *   dma_map_process <- a range of the client's own address space that is
 *                not file-backed (malloc'd buffers an RDMA application
 *                registers), with the fd of the client's /proc/self/mem:
 *                the adapter copies to and from it (RDMA payload only)
 *   dma_unmap    every region inside an IOVA range
 *   control      the back door (link, faults, counters)
 *   status       the PFs and their clients
 *   attach_vm <- a VF for a virtual machine (vm_protocol.h) and the fd of the
 *                guest's RAM; -> the fd of the VF's memory, the ivshmem
 *                BAR the launcher gives QEMU. The session is the VM's: it
 *                holds the VF while its socket stays open, and the guest
 *                reaches the mailboxes in that BAR, which the daemon polls.
 *
 * BAR0 registers outside the GTT do not travel over the socket: the client
 * writes a request into the Bar0Mailbox (shared memory), publishes its
 * sequence number and writes the kick eventfd; the daemon performs the
 * access, publishes the same number as done and writes the done eventfd.
 * Closing the socket (or dying) detaches the function.
 */
#pragma once

#include <cstdint>

#include "hsi_common.h"
#include "hsi_control.h"

namespace cna::transport::daemon {

inline constexpr uint32_t MAGIC = 0x44414e43; /* "CNAD" */
inline constexpr uint16_t VERSION = 3; /* 2: doorbells_offset, attach_vm; 3: GTT page per PF, FD_ALIVE */
inline constexpr uint32_t MAX_BODY = 1024;
inline constexpr uint32_t MAX_FDS = 64;       /* per message */
inline constexpr uint32_t MAX_MSIX = 64;
inline constexpr uint32_t MAX_DMA_PIECES = 32; /* per dma_map */

enum class MsgType : uint16_t {
    hello = 1,
    attach = 2,
    set_msix = 3,
    dma_map = 4,
    dma_unmap = 5,
    control = 6,
    status = 7,
    attach_vm = 8,
    dma_map_process = 9,
};
inline constexpr uint16_t REPLY = 0x8000;

struct Header {
    uint32_t magic;
    uint16_t type;      /* MsgType, | REPLY in a reply */
    uint16_t fds;       /* file descriptors that came with the message */
    uint32_t body_len;  /* bytes after the header */
    uint32_t seq;       /* the client's; a reply carries its request's */
};
static_assert(sizeof(Header) == 16);

/* The start of every reply body: 0 or -errno. */
struct Status {
    int32_t status;
    uint32_t reserved;
};
static_assert(sizeof(Status) == 8);

struct Hello {
    uint16_t version;
    uint16_t reserved;
    uint32_t pid;
};
static_assert(sizeof(Hello) == 8);

struct HelloReply {
    Status status;
    uint16_t version;
    uint16_t functions;   /* PFs */
    uint16_t ports;
    uint16_t reserved;
    char adapter[32];     /* NUL-terminated */
};
static_assert(sizeof(HelloReply) == 48);

/* A PF, or with is_vf one of its VFs (which its PF must have enabled). */
struct Attach {
    uint32_t pf;
    uint16_t vf;
    uint16_t is_vf;
};
static_assert(sizeof(Attach) == 8);

/* The fds of an attach reply, in this order. */
/* FD_ALIVE: a pipe nobody writes, whose write end only the daemon holds: a
 * client that watches it hears the daemon's end at once (POLLHUP), however
 * the daemon ended, without a request in flight. */
enum AttachFd : uint32_t { FD_GTT = 0, FD_DOORBELLS, FD_MAILBOX, FD_KICK, FD_DONE, FD_ALIVE, ATTACH_FDS };

struct AttachReply {
    Status status;
    uint32_t msix_vectors;
    uint32_t port;
    uint64_t gtt_offset;      /* of the GTT window in its fd */
    uint64_t gtt_size;
    uint64_t doorbells_offset; /* of the doorbell BAR in its fd */
    uint64_t doorbells_size;
    uint64_t mailbox_size;
};
static_assert(sizeof(AttachReply) == 56);

/* A VF (its PF must have enabled it) for a VM whose RAM is the one fd that
 * comes with the request: guest_ram bytes of it from offset 0 at
 * guest-physical 0, at most transport::vm::MAX_GUEST_RAM. */
struct AttachVm {
    uint32_t pf;
    uint32_t vf;
    uint64_t guest_ram;
};
static_assert(sizeof(AttachVm) == 16);

/* With one fd: the VF's memory, bar_size bytes (vm_protocol.h's layout). */
struct AttachVmReply {
    Status status;
    uint64_t bar_size;
};
static_assert(sizeof(AttachVmReply) == 16);

/* Vectors first .. first + count - 1, an fd each. */
struct SetMsix {
    uint32_t first;
    uint32_t count;
};
static_assert(sizeof(SetMsix) == 8);

/* A region of client memory: the IOVA range [iova, iova + len), made of
 * pieces that follow each other, piece i being piece_len[i] bytes of the
 * i-th fd from piece_offset[i] (page-aligned). */
struct DmaMap {
    uint64_t iova;
    uint64_t len;
    uint32_t pieces;
    uint32_t reserved;
    uint64_t piece_offset[MAX_DMA_PIECES];
    uint64_t piece_len[MAX_DMA_PIECES];
};
static_assert(sizeof(DmaMap) == 24 + 16 * MAX_DMA_PIECES);
static_assert(sizeof(DmaMap) <= MAX_BODY);

/* [iova, iova + len) is the client's memory from address va; the one fd
 * that comes with it is the client's /proc/self/mem, opened read-write by
 * the client itself. */
struct DmaMapProcess {
    uint64_t iova;
    uint64_t len;
    uint64_t va;
};
static_assert(sizeof(DmaMapProcess) == 24);

struct DmaUnmap {
    uint64_t iova;
    uint64_t len;
};
static_assert(sizeof(DmaUnmap) == 16);

enum class ControlOp : uint32_t {
    set_carrier = 1,   /* port, value: present */
    inject = 2,        /* value: Fault, arg: on */
    set_roce_loss = 3, /* port, value: per million */
    port_counters = 4, /* port */
    dma_faults = 5,    /* value: PF */
    ptp_time = 6,      /* port */
    ptp_step = 7,      /* port, value | arg << 32: a signed step in ns */
    ptp_offset = 8,    /* port, value: the other port */
    set_cable_delay = 9, /* port, value: delay ns, arg: asymmetry ns (signed) */
};

struct Control {
    uint32_t op;       /* ControlOp */
    uint32_t port;
    uint32_t value;
    uint32_t arg;
};
static_assert(sizeof(Control) == 16);

struct ControlReply {
    Status status;
    uint64_t value; /* dma_faults: the PF's DMA faults; ptp_time: the port's clock, ns; ptp_offset: signed ns */
    hsi::control::PortCounters counters;
};
static_assert(sizeof(ControlReply) == 80);

/* The reply to status (no request body): each PF's port and client. */
struct PfStatus {
    uint32_t pf;
    uint32_t port;
    uint32_t client_pid;  /* 0: no client */
    uint32_t reserved;
};
static_assert(sizeof(PfStatus) == 16);

/* A VF its PF enabled, and its client. */
inline constexpr uint16_t VF_STATUS_VM = 1; /* the client is a VM's launcher (attach_vm) */
struct VfStatus {
    uint8_t pf;
    uint8_t vf;
    uint16_t flags;       /* VF_STATUS_* */
    uint32_t client_pid;  /* 0: no client */
};
static_assert(sizeof(VfStatus) == 8);

struct StatusReply {
    Status status;
    uint32_t functions;
    uint32_t ports;
    PfStatus pfs[hsi::MAX_PFS]; /* the first `functions` */
    uint32_t vfs;          /* enabled VFs, in vf_status */
    uint32_t reserved;
    VfStatus vf_status[hsi::MAX_PFS * 8]; /* MAX_VFS_PER_PF a PF (hsi_iov.h) */
};
static_assert(sizeof(StatusReply) == 144 + 8 + hsi::MAX_PFS * 8 * sizeof(VfStatus));
static_assert(sizeof(StatusReply) <= MAX_BODY);

/* ---- BAR0 mailbox (the first bytes of the mailbox fd) -------------------- */

enum class Bar0Op : uint32_t { read = 0, write = 1 };

/* The client fills op, offset and value, then publishes request_seq (release);
 * the daemon answers with value (a read's result) and publishes done_seq =
 * request_seq (release). One request at a time. */
struct Bar0Mailbox {
    uint32_t request_seq;
    uint32_t op;          /* Bar0Op */
    uint32_t offset;
    uint32_t value;
    uint32_t reserved[12];
    uint32_t done_seq;    /* a cache line of its own: the daemon's */
    uint32_t reserved2[15];
};
static_assert(sizeof(Bar0Mailbox) == 128);
inline constexpr uint64_t MAILBOX_SIZE = 4096;

} // namespace cna::transport::daemon
