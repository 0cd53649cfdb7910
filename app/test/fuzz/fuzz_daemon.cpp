/* SPDX-License-Identifier: BSD-3-Clause
 * What a client can say to cna-adapterd: datagrams of any bytes or
 * well-framed messages of any type and body, with any of a few kinds of
 * fds riding along (none, memfds, eventfds, /dev/null), and BAR0 mailbox
 * requests of any op, offset and value once attached. One session per
 * input on a live two-port adapter; a session the daemon ends is replaced.
 * Whatever comes, the daemon answers or disconnects, and the adapter's
 * function is reset when the session goes.
 */
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "daemon/client_session.h"
#include "fuzz_input.h"

using namespace cna::fw;
using namespace cna::transport::daemon;
using cna::adapterd::ClientSession;
using cna::adapterd::FunctionOwners;

namespace {

Adapter& adapter()
{
    static std::unique_ptr<Adapter> a = [] {
        set_log_sink([](LogLevel, const std::string&) {});
        AdapterConfig config;
        config.name = "fuzzd";
        config.ports = 2;
        config.wire = Wire::cable;
        config.link_up_delay_ms = 0;
        return Adapter::create(config, nullptr);
    }();
    return *a;
}

/* The fds a message carries: mode's low 3 bits pick the kind, the rest the count. */
std::vector<int> make_fds(uint8_t mode)
{
    std::vector<int> fds;
    const uint32_t count = 1 + (mode >> 3) % 40;
    for (uint32_t i = 0; i < count && (mode & 7) != 0; i++) {
        int fd = -1;
        switch (mode & 7) {
        case 1:
        case 2:
            fd = ::memfd_create("fuzz", MFD_CLOEXEC);
            if (fd >= 0 && ::ftruncate(fd, (mode & 7) == 1 ? 65536 : 4096) != 0) {
                ::close(fd);
                fd = -1;
            }
            break;
        case 3:
        case 4: fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); break;
        default: fd = ::open("/dev/null", O_RDWR | O_CLOEXEC); break;
        }
        if (fd >= 0)
            fds.push_back(fd);
    }
    return fds;
}

bool send_raw(int sock, std::vector<uint8_t>& bytes, const std::vector<int>& fds)
{
    iovec iov{bytes.data(), bytes.size()};
    return send_datagram(sock, &iov, 1, fds.data(), static_cast<uint32_t>(fds.size())) >= 0;
}

struct Client {
    int peer = -1;
    std::unique_ptr<ClientSession> session;
    uint8_t* mailbox = nullptr;
    int kick = -1;
    uint32_t seq = 0;

    Client()
    {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
            std::abort();
        peer = sv[1];
        static FunctionOwners owners(adapter());
        static uint32_t id = 0;
        session = std::make_unique<ClientSession>(sv[0], ++id, owners);
    }
    ~Client()
    {
        session.reset();
        if (mailbox != nullptr)
            ::munmap(mailbox, MAILBOX_SIZE);
        if (kick >= 0)
            ::close(kick);
        ::close(peer);
    }
    /* Reads the replies; an attach reply's mailbox is mapped for kicks. */
    void drain()
    {
        Message m;
        while (::recv(peer, nullptr, 0, MSG_PEEK | MSG_DONTWAIT) >= 0 && recv_message(peer, m) == 0) {
            if (m.header.type == (uint16_t(MsgType::attach) | REPLY) && m.nfds == ATTACH_FDS && mailbox == nullptr) {
                void* p = ::mmap(nullptr, MAILBOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m.fds[FD_MAILBOX], 0);
                if (p != MAP_FAILED) {
                    mailbox = static_cast<uint8_t*>(p);
                    kick = m.take_fd(FD_KICK);
                }
            }
        }
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    cna::fw::test::FuzzInput in(data, size);
    auto client = std::make_unique<Client>();
    for (int steps = 0; !in.empty() && steps < 64; steps++) {
        const uint8_t op = in.take<uint8_t>() % 3;
        if (op == 2) {
            if (client->mailbox == nullptr)
                continue;
            auto* box = reinterpret_cast<Bar0Mailbox*>(client->mailbox);
            box->op = in.take<uint8_t>() % 3;
            box->offset = in.take<uint32_t>();
            box->value = in.take<uint32_t>();
            std::atomic_ref<uint32_t>(box->request_seq).store(++client->seq, std::memory_order_release);
            const uint64_t one = 1;
            [[maybe_unused]] ssize_t n = ::write(client->kick, &one, sizeof one);
            client->session->on_kick();
            continue;
        }
        const std::vector<int> fds = make_fds(in.take<uint8_t>());
        std::vector<uint8_t> bytes;
        if (op == 0) {
            bytes = in.bytes(in.take<uint16_t>() % (sizeof(Header) + MAX_BODY + 8));
        } else {
            const uint16_t type = in.take<uint16_t>();
            const std::vector<uint8_t> body = in.bytes(in.take<uint16_t>() % (MAX_BODY + 1));
            const Header h{MAGIC, type, static_cast<uint16_t>(fds.size()), static_cast<uint32_t>(body.size()),
                           in.take<uint32_t>()};
            bytes.resize(sizeof h);
            std::memcpy(bytes.data(), &h, sizeof h);
            bytes.insert(bytes.end(), body.begin(), body.end());
        }
        const bool sent = send_raw(client->peer, bytes, fds);
        for (int fd : fds)
            ::close(fd);
        if (!sent)
            continue;
        const bool alive = client->session->on_message();
        client->drain();
        if (!alive)
            client = std::make_unique<Client>();
    }
    return 0;
}
