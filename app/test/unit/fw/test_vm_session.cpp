/* SPDX-License-Identifier: BSD-3-Clause
 * The daemon's side of the VM transport (vm_protocol.h): a VF attached for a VM
 * over the socket, its memory laid out as the ivshmem BAR with the header
 * published, the guest's BAR0 accesses and DMA mappings served from the
 * mailboxes in it, guest RAM reached by guest-physical address and nothing
 * outside it, the reset, and the VF taken back when the session ends.
 */
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "daemon/client_session.h"
#include "fake_driver.h"
#include "vm_protocol.h"
#include "function/function.h"

namespace cna::fw::test {
namespace {

using namespace transport::daemon;
namespace vm = transport::vm;
using adapterd::ClientSession;
using adapterd::FunctionOwners;

constexpr uint64_t GUEST_RAM = 4 << 20;

class VmSession : public ::testing::Test {
protected:
    void SetUp() override
    {
        AdapterConfig config;
        config.name = "vmsession";
        config.ports = 1;
        config.link_up_delay_ms = 0;
        adapter = Adapter::create(config, nullptr);
        ASSERT_NE(adapter, nullptr);
        pf = std::make_unique<FakeDriver>(*adapter, 0);
        ASSERT_EQ(bring_up_l2(*pf, L2Setup{}), "");
        pf->wr(hsi::reg::IOV_NUM_VFS, 2);
        for (uint32_t vf = 0; vf < 2; vf++) {
            pf->wr(hsi::reg::IOV_VF_SELECT, vf);
            pf->wr(hsi::reg::IOV_VF_CTRL, hsi::reg::IOV_VF_CTRL_ENABLE);
        }
        owners = std::make_unique<FunctionOwners>(*adapter);
        ram_fd = ::memfd_create("guest-ram", MFD_CLOEXEC);
        ASSERT_EQ(::ftruncate(ram_fd, GUEST_RAM), 0);
        ram = static_cast<uint8_t*>(::mmap(nullptr, GUEST_RAM, PROT_READ | PROT_WRITE, MAP_SHARED, ram_fd, 0));
        ASSERT_NE(ram, MAP_FAILED);
    }
    void TearDown() override
    {
        sessions.clear();
        if (bar != nullptr)
            ::munmap(bar, vm::BAR_SIZE);
        ::munmap(ram, GUEST_RAM);
        ::close(ram_fd);
        for (int fd : peers)
            ::close(fd);
    }

    /* A new session, greeted: its index. */
    std::size_t connect()
    {
        int sv[2];
        EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        sessions.push_back(std::make_unique<ClientSession>(sv[0], static_cast<uint32_t>(sessions.size() + 1), *owners));
        peers.push_back(sv[1]);
        const Hello hello{VERSION, 0, 4242};
        HelloReply r{};
        EXPECT_EQ(ask(sessions.size() - 1, MsgType::hello, &hello, sizeof hello, &r, sizeof r), 0);
        return sessions.size() - 1;
    }
    /* One request and its reply's status; the reply's message in *m. */
    int ask(std::size_t s, MsgType type, const void* body, uint32_t len, void* reply, uint32_t reply_len,
            const int* fds = nullptr, uint32_t nfds = 0, Message* m = nullptr)
    {
        EXPECT_EQ(send_message(peers[s], static_cast<uint16_t>(type), ++seq, body, len, fds, nfds), 0);
        EXPECT_TRUE(sessions[s]->on_message());
        Message local;
        Message& reply_msg = m != nullptr ? *m : local;
        EXPECT_EQ(recv_message(peers[s], reply_msg), 0);
        EXPECT_EQ(reply_msg.header.type, static_cast<uint16_t>(type) | REPLY);
        std::memcpy(reply, reply_msg.body, std::min<uint32_t>(reply_len, reply_msg.header.body_len));
        return reinterpret_cast<const Status*>(reply_msg.body)->status;
    }
    int attach_vm(std::size_t s, uint32_t vf, uint64_t guest_ram, int fd)
    {
        const AttachVm req{0, vf, guest_ram};
        AttachVmReply r{};
        Message m;
        const int rc = ask(s, MsgType::attach_vm, &req, sizeof req, &r, sizeof r, &fd, 1, &m);
        if (rc == 0) {
            EXPECT_EQ(m.nfds, 1u);
            EXPECT_EQ(r.bar_size, vm::BAR_SIZE);
            bar = static_cast<uint8_t*>(::mmap(nullptr, vm::BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m.fds[0], 0));
            EXPECT_NE(bar, MAP_FAILED);
        }
        return rc;
    }
    const vm::Header& header() const { return *reinterpret_cast<const vm::Header*>(bar); }
    uint32_t signature() const
    {
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(bar)).load(std::memory_order_acquire);
    }

    /* What the guest's driver does: a request in a mailbox, then the
     * daemon's poll (its timer) comes round. */
    uint32_t bar0_read(std::size_t s, uint32_t offset)
    {
        auto* box = reinterpret_cast<Bar0Mailbox*>(bar + vm::MAILBOX_OFFSET);
        box->op = static_cast<uint32_t>(Bar0Op::read);
        box->offset = offset;
        std::atomic_ref<uint32_t>(box->request_seq).store(++bar0_seq, std::memory_order_release);
        sessions[s]->on_kick();
        EXPECT_EQ(std::atomic_ref<uint32_t>(box->done_seq).load(std::memory_order_acquire), bar0_seq);
        return box->value;
    }
    int function_request(std::size_t s, vm::FunctionOp op, uint64_t iova, uint64_t len)
    {
        auto* box = reinterpret_cast<vm::FunctionMailbox*>(bar + vm::FUNCTION_MAILBOX_OFFSET);
        box->op = static_cast<uint32_t>(op);
        box->iova = iova;
        box->len = len;
        std::atomic_ref<uint32_t>(box->request_seq).store(++function_seq, std::memory_order_release);
        sessions[s]->on_kick();
        EXPECT_EQ(std::atomic_ref<uint32_t>(box->done_seq).load(std::memory_order_acquire), function_seq);
        return box->status;
    }
    Iommu& vf_iommu(uint32_t vf) { return static_cast<FunctionHw*>(adapter->vf_function(0, vf))->iommu(); }

    std::unique_ptr<Adapter> adapter;
    std::unique_ptr<FakeDriver> pf;
    std::unique_ptr<FunctionOwners> owners;
    std::vector<std::unique_ptr<ClientSession>> sessions;
    std::vector<int> peers;
    int ram_fd = -1;
    uint8_t* ram = nullptr;
    uint8_t* bar = nullptr;
    uint32_t seq = 0, bar0_seq = 0, function_seq = 0;
};

TEST_F(VmSession, AttachPublishesTheHeaderAndServesBar0)
{
    const std::size_t s = connect();
    ASSERT_EQ(attach_vm(s, 1, GUEST_RAM, ram_fd), 0);
    EXPECT_TRUE(owners->held_by_vm(adapterd::FunctionId{0, true, 1}));
    EXPECT_EQ(signature(), vm::SIGNATURE);
    EXPECT_EQ(header().version, vm::VERSION);
    EXPECT_EQ(header().vf, 1u);
    EXPECT_EQ(header().guest_ram, GUEST_RAM);
    EXPECT_EQ(header().gtt_offset, vm::GTT_OFFSET);
    EXPECT_EQ(header().doorbells_offset, vm::DOORBELLS_OFFSET);
    /* The BAR's GTT and doorbell pages are the VF's own. */
    DeviceFunction* vf = adapter->vf_function(0, 1);
    EXPECT_EQ(bar0_read(s, hsi::iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(hsi::iov::ChannelState::idle));
    vf->gtt_memory()[8] = 0x5a;
    EXPECT_EQ(bar[vm::GTT_OFFSET + 8], 0x5a);
    bar[vm::DOORBELLS_OFFSET + 16] = 0xa5;
    EXPECT_EQ(vf->doorbell_memory()[16], 0xa5);
    /* A read past the reduced BAR0 reads as all ones, as on the host. */
    EXPECT_EQ(bar0_read(s, 0x7ffc), 0xffffffffu);
}

TEST_F(VmSession, GuestMemoryIsMappedByGuestPhysicalAddressAndOnlyInsideRam)
{
    const std::size_t s = connect();
    ASSERT_EQ(attach_vm(s, 0, GUEST_RAM, ram_fd), 0);
    std::memcpy(ram + 0x201000, "guest", 6);
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, 0x200000, 0x10000), 0);
    char seen[6] = {};
    EXPECT_TRUE(vf_iommu(0).copy_out(0x201000, seen, sizeof seen));
    EXPECT_STREQ(seen, "guest");
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, 0x208000, 0x1000), -EEXIST);
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, 0x300800, 0x1000), -EINVAL);    /* unaligned */
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, GUEST_RAM - 0x1000, 0x2000), -EINVAL); /* past RAM */
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, ~0ull - 0xfff, 0x1000), -EINVAL);
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_map, 0, 0), -EINVAL);
    EXPECT_EQ(function_request(s, static_cast<vm::FunctionOp>(99), 0, 0x1000), -EINVAL);
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_unmap, 0x200000, 0x10000), 0);
    EXPECT_FALSE(vf_iommu(0).copy_out(0x201000, seen, sizeof seen));
    EXPECT_EQ(function_request(s, vm::FunctionOp::dma_unmap, 0x200000, 0x10000), -ENOENT);
}

TEST_F(VmSession, ResetTakesTheMappingsAndTheEndOfTheSessionTheVf)
{
    const std::size_t s = connect();
    ASSERT_EQ(attach_vm(s, 0, GUEST_RAM, ram_fd), 0);
    ASSERT_EQ(function_request(s, vm::FunctionOp::dma_map, 0, GUEST_RAM), 0);
    char byte;
    EXPECT_TRUE(vf_iommu(0).copy_out(0, &byte, 1));
    EXPECT_EQ(function_request(s, vm::FunctionOp::reset, 0, 0), 0);
    EXPECT_FALSE(vf_iommu(0).copy_out(0, &byte, 1));
    /* Until its PF cleans up after the reset, the VF's channel is closed. */
    EXPECT_EQ(bar0_read(s, hsi::iov::vf_bar0::CHANNEL_STATE), static_cast<uint32_t>(hsi::iov::ChannelState::disabled));
    ASSERT_EQ(function_request(s, vm::FunctionOp::dma_map, 0, 0x1000), 0);
    sessions[s].reset(); /* QEMU gone: the launcher's socket closes */
    EXPECT_EQ(signature(), 0u);
    EXPECT_FALSE(vf_iommu(0).copy_out(0, &byte, 1));
    EXPECT_EQ(owners->client_pid(adapterd::FunctionId{0, true, 0}), 0u);
    EXPECT_FALSE(owners->held_by_vm(adapterd::FunctionId{0, true, 0}));
}

TEST_F(VmSession, RefusesWhatCannotBeAVm)
{
    const std::size_t s = connect();
    EXPECT_EQ(attach_vm(s, 5, GUEST_RAM, ram_fd), -ENODEV);                    /* not enabled */
    EXPECT_EQ(attach_vm(s, 0, GUEST_RAM * 2, ram_fd), -EINVAL);               /* RAM larger than its file */
    EXPECT_EQ(attach_vm(s, 0, vm::MAX_GUEST_RAM + 4096, ram_fd), -EINVAL);    /* beyond the PCI hole */
    EXPECT_EQ(attach_vm(s, 0, GUEST_RAM - 1, ram_fd), -EINVAL);               /* not whole pages */
    ASSERT_EQ(attach_vm(s, 0, GUEST_RAM, ram_fd), 0);
    EXPECT_EQ(attach_vm(s, 1, GUEST_RAM, ram_fd), -EALREADY);                 /* one function a session */
    const std::size_t other = connect();
    EXPECT_EQ(attach_vm(other, 0, GUEST_RAM, ram_fd), -EBUSY);
    /* The launcher's socket neither lends memory nor takes interrupts. */
    const DmaUnmap unmap{0, 4096};
    Status st;
    EXPECT_EQ(ask(s, MsgType::dma_unmap, &unmap, sizeof unmap, &st, sizeof st), -ENODEV);
}

} // namespace
} // namespace cna::fw::test
