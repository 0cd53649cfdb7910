/* SPDX-License-Identifier: BSD-3-Clause
 * What a guest can do to cna-adapterd through a VF it was given (vm_protocol.h):
 * write anything anywhere in the VF's BAR — the header, both mailboxes, the
 * GTT and doorbell pages — and ask the daemon's mailboxes for any BAR0
 * access, any DMA mapping of any range, and resets, in any order, while its
 * RAM holds anything. One VM session per input on a live adapter whose PF
 * enabled two VFs; whatever the guest does, the daemon answers within its
 * RAM and the session ends with the VF reset and its mappings gone.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "daemon/client_session.h"
#include "fake_driver.h"
#include "fuzz_input.h"
#include "vm_protocol.h"

using namespace cna::fw;
using namespace cna::transport::daemon;
namespace vm = cna::transport::vm;
using cna::adapterd::ClientSession;
using cna::adapterd::FunctionOwners;

namespace {

constexpr uint64_t GUEST_RAM = 1 << 20;
constexpr uint32_t VFS = 2;

struct Rig {
    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<test::FakeDriver> pf;
    std::unique_ptr<FunctionOwners> owners;
    int ram_fd = -1;

    Rig()
    {
        set_log_sink([](LogLevel, const std::string&) {});
        AdapterConfig config;
        config.name = "fuzzvm";
        config.ports = 1;
        config.link_up_delay_ms = 0;
        adapter = Adapter::create(config, nullptr);
        pf = std::make_unique<test::FakeDriver>(*adapter, 0);
        if (!test::bring_up_l2(*pf, test::L2Setup{}).empty())
            std::abort();
        pf->wr(cna::hsi::reg::IOV_NUM_VFS, VFS);
        for (uint32_t vf = 0; vf < VFS; vf++) {
            pf->wr(cna::hsi::reg::IOV_VF_SELECT, vf);
            pf->wr(cna::hsi::reg::IOV_VF_CTRL, cna::hsi::reg::IOV_VF_CTRL_ENABLE);
        }
        owners = std::make_unique<FunctionOwners>(*adapter);
        ram_fd = ::memfd_create("fuzz-guest-ram", MFD_CLOEXEC);
        if (ram_fd < 0 || ::ftruncate(ram_fd, GUEST_RAM) != 0)
            std::abort();
    }
};

Rig& rig()
{
    static Rig r;
    return r;
}

/* A VM's session over a socketpair, attached to `vf`; the BAR mapped. */
struct Vm {
    int peer = -1;
    std::unique_ptr<ClientSession> session;
    uint8_t* bar = nullptr;

    explicit Vm(uint32_t vf)
    {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
            std::abort();
        peer = sv[1];
        static uint32_t id = 0;
        session = std::make_unique<ClientSession>(sv[0], ++id, *rig().owners);
        const Hello hello{VERSION, 0, 1};
        const AttachVm attach{0, vf, GUEST_RAM};
        Message m;
        if (!exchange(MsgType::hello, &hello, sizeof hello, nullptr, m) ||
            !exchange(MsgType::attach_vm, &attach, sizeof attach, &rig().ram_fd, m) || m.nfds != 1)
            std::abort();
        void* p = ::mmap(nullptr, vm::BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m.fds[0], 0);
        if (p == MAP_FAILED)
            std::abort();
        bar = static_cast<uint8_t*>(p);
    }
    ~Vm()
    {
        session.reset();
        /* The VF taken back: its signature is gone. */
        if (std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(bar)).load() != 0)
            std::abort();
        ::munmap(bar, vm::BAR_SIZE);
        ::close(peer);
    }
    bool exchange(MsgType type, const void* body, uint32_t len, const int* fd, Message& reply)
    {
        reply.close_fds();
        return send_message(peer, static_cast<uint16_t>(type), 1, body, len, fd, fd != nullptr ? 1 : 0) == 0 &&
               session->on_message() && recv_message(peer, reply) == 0 &&
               reinterpret_cast<const Status*>(reply.body)->status == 0;
    }
    template <typename T>
    void publish(T* box, uint32_t seq)
    {
        std::atomic_ref<uint32_t>(box->request_seq).store(seq, std::memory_order_release);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    cna::fw::test::FuzzInput in(data, size);
    Vm guest(in.take<uint8_t>() % VFS);
    auto* bar0 = reinterpret_cast<Bar0Mailbox*>(guest.bar + vm::MAILBOX_OFFSET);
    auto* function = reinterpret_cast<vm::FunctionMailbox*>(guest.bar + vm::FUNCTION_MAILBOX_OFFSET);
    for (int steps = 0; !in.empty() && steps < 64; steps++) {
        switch (in.take<uint8_t>() % 4) {
        case 0:
            bar0->op = in.take<uint8_t>() % 3;
            bar0->offset = in.take<uint16_t>();
            bar0->value = in.take<uint32_t>();
            guest.publish(bar0, in.take<uint32_t>());
            break;
        case 1: {
            function->op = in.take<uint8_t>() % 5;
            /* Mostly page-aligned ranges near guest RAM, sometimes anything. */
            const bool wild = in.take<uint8_t>() < 32;
            function->iova = wild ? in.take<uint64_t>() : uint64_t{in.take<uint16_t>()} << 12;
            function->len = wild ? in.take<uint64_t>() : uint64_t{in.take<uint8_t>()} << 12;
            guest.publish(function, in.take<uint32_t>());
            break;
        }
        case 2: { /* the guest writes anywhere in the BAR */
            const uint32_t at = in.take<uint16_t>() % vm::BAR_SIZE;
            const std::vector<uint8_t> bytes = in.bytes(std::min<uint32_t>(in.take<uint8_t>(), vm::BAR_SIZE - at));
            if (!bytes.empty())
                std::memcpy(guest.bar + at, bytes.data(), bytes.size());
            break;
        }
        default: /* the daemon's poll comes round */
            break;
        }
        guest.session->on_kick();
    }
    return 0;
}
