/* SPDX-License-Identifier: BSD-3-Clause
 * One client of cna-adapterd: a process (a net_cna port) that attached, or
 * is about to attach, one PCI function of the daemon's adapter over its
 * socket (daemon_protocol.h). The session holds what the client lent the
 * function — its MSI-X eventfds and its memory, mapped here and in the
 * function's IOMMU — and takes it all back when the client goes.
 *
 * A VM's session (attach_vm, vm_protocol.h) is held by the VM's launcher: the
 * guest's driver reaches the function through the mailboxes in the VF's
 * memory, which the session polls on a timer, and lends the function guest
 * RAM by guest-physical address.
 */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "cna_fw/adapter.h"
#include "hsi_iov.h"
#include "daemon_socket.h"
#include "base/shared_memory.h"
#include "daemon/process_memory.h"

namespace cna::adapterd {

/* A PF, or VF `vf` of PF `pf`. */
struct FunctionId {
    uint32_t pf = 0;
    bool is_vf = false;
    uint32_t vf = 0;
    std::string name() const
    {
        return "pf" + std::to_string(pf) + (is_vf ? " vf" + std::to_string(vf) : std::string());
    }
};

/* What the sessions share: the adapter, and which function (a PF, or a
 * VF of one) each session has. */
class FunctionOwners {
public:
    explicit FunctionOwners(fw::Adapter& adapter)
        : adapter_(adapter), owner_(adapter.num_functions() * (1 + hsi::iov::MAX_VFS_PER_PF))
    {
    }
    fw::Adapter& adapter() { return adapter_; }
    /* Claims a function for `session` of process `pid` (a VM's launcher
     * with `vm`): 0, -ENODEV (no such PF, or a VF its PF has not enabled) or
     * -EBUSY. */
    int claim(const FunctionId& id, const void* session, uint32_t pid, bool vm);
    void release(const FunctionId& id) { owner_.at(index(id)) = Owner{}; }
    /* The process of the function's client, 0 if none. */
    uint32_t client_pid(const FunctionId& id) const { return owner_.at(index(id)).pid; }
    bool held_by_vm(const FunctionId& id) const { return owner_.at(index(id)).vm; }

private:
    struct Owner {
        const void* session = nullptr;
        uint32_t pid = 0;
        bool vm = false;
    };
    static std::size_t index(const FunctionId& id)
    {
        return id.pf * (1 + hsi::iov::MAX_VFS_PER_PF) + (id.is_vf ? 1 + id.vf : 0);
    }
    fw::Adapter& adapter_;
    std::vector<Owner> owner_;
};

class ClientSession {
public:
    /* Takes the connected socket. */
    ClientSession(int sock, uint32_t id, FunctionOwners& owners);
    ~ClientSession();
    ClientSession(const ClientSession&) = delete;
    ClientSession& operator=(const ClientSession&) = delete;

    int socket() const { return sock_; }
    /* The eventfd the client kicks when its BAR0 mailbox holds a request (a
     * VM's: a periodic timer); -1 until attached. */
    int kick_fd() const { return kick_fd_; }
    std::string name() const;

    /* Reads and answers one message. False when the session is over: the
     * client closed the socket or broke the protocol (it was told why). */
    bool on_message();
    /* Performs the BAR0 access the mailbox holds, if a new one does (and a
     * VM's function request). */
    void on_kick();

    /* One request, answered on the socket; false: the protocol is broken
     * and the session must end. Public for the fuzzer. */
    bool handle(transport::daemon::Message& m);

private:
    struct Region {
        uint8_t* va;
        std::size_t len;
    };

    bool reply(const transport::daemon::Header& request, const void* body, uint32_t len, const int* fds = nullptr,
               uint32_t nfds = 0);
    bool reply_status(const transport::daemon::Header& request, int status);
    bool on_hello(const transport::daemon::Message& m);
    bool on_attach(const transport::daemon::Message& m);
    bool on_set_msix(transport::daemon::Message& m);
    bool on_dma_map(transport::daemon::Message& m);
    bool on_dma_map_process(transport::daemon::Message& m);
    bool on_dma_unmap(const transport::daemon::Message& m);
    bool on_control(const transport::daemon::Message& m);
    bool on_status(const transport::daemon::Message& m);
    bool on_attach_vm(transport::daemon::Message& m);
    /* Claims the function and makes the BAR0 mailbox's kick and done fds;
     * 0 or -errno, having replied nothing. */
    int claim(const FunctionId& id, bool vm);
    transport::daemon::Bar0Mailbox* mailbox() const;
    void serve_function_mailbox();
    int vm_dma_map(uint64_t iova, uint64_t len);
    int map_region(const transport::daemon::DmaMap& req, const int* fds);
    void unmap_regions(uint64_t iova, uint64_t len);
    /* The IOMMU's mappings inside [iova, iova + len), then this process's:
     * 0 or the IOMMU's -errno. */
    int dma_unmap(uint64_t iova, uint64_t len);
    /* Every mapping the client lent, from both. */
    void dma_unmap_all();
    void detach();

    int sock_;
    const uint32_t id_;
    FunctionOwners& owners_;
    uint32_t client_pid_ = 0;
    bool greeted_ = false;
    fw::DeviceFunction* function_ = nullptr;
    FunctionId id_of_function_;
    std::unique_ptr<fw::SharedMemory> mailbox_;   /* a host client's */
    int kick_fd_ = -1;
    int done_fd_ = -1;                        /* -1 for a VM: the guest polls */
    int alive_[2] = {-1, -1};                 /* a host client's alive pipe (FD_ALIVE) */
    uint32_t served_seq_ = 0;
    /* A VM's: the VF's memory (vm_protocol.h's BAR), guest RAM mapped here. */
    uint8_t* vm_bar_ = nullptr;
    uint8_t* guest_ram_ = nullptr;
    uint64_t guest_ram_size_ = 0;
    uint32_t function_served_seq_ = 0;
    uint64_t routed_msix_ = 0;                /* bit per vector routed to a client eventfd */
    std::map<uint64_t, Region> regions_;      /* by IOVA; disjoint (a VM's: views of guest RAM) */
    uint64_t mapped_bytes_ = 0;
    /* The client's memory reached by copying (dma_map_process): its
     * /proc/self/mem, whose ranges only the function's IOMMU keeps. */
    std::shared_ptr<ProcessMemory> process_memory_;
};

} // namespace cna::adapterd
