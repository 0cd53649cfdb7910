/* SPDX-License-Identifier: BSD-3-Clause
 * A rogue client of cna-adapterd: attaches a PF as a driver would, then
 * tries everything it was given against the other functions of the adapter:
 *
 *   files     every fd of the attach reply that is memory (the GTT window,
 *             the doorbell BAR, the BAR0 mailbox): its size must be what
 *             the reply announced, it must not grow (ftruncate, pwrite past
 *             the end), and every byte of it is overwritten, twice, with
 *             the kick eventfd written between (the daemon then serves
 *             whatever the mailbox holds)
 *   ptt       through the BAR0 mailbox, a PTT window pointed at each page
 *             of storm RAM (bar the microcode, which every PF loads): a
 *             dword of every cache line read and overwritten; another PF's
 *             areas must read as all ones
 *
 * It prints a line per check and exits 0 when nothing of another function
 * was reachable, 1 when something was, 2 on a usage or setup error.
 *
 *   rogue_client --daemon SOCKET --pf N
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "daemon_socket.h"
#include "hsi_common.h"

using namespace cna;
using namespace cna::transport::daemon;
namespace iro = hsi::iro;
namespace reg = hsi::reg;

namespace {

constexpr int TIMEOUT_MS = 5000;
constexpr uint32_t GARBAGE = 0xa5a5a5a5;
constexpr uint32_t ALL_ONES = 0xffffffff; /* what a refused read returns */
/* A dword of each cache line: every area of storm RAM is lines, and each
 * access is a round trip to a daemon whose CPUs the forwarders keep busy. */
constexpr uint32_t STRIDE = 64;

class Rogue {
public:
    explicit Rogue(int sock) : sock_(sock) {}

    int attach(uint32_t pf)
    {
        const Hello hello{VERSION, 0, static_cast<uint32_t>(::getpid())};
        HelloReply hr;
        if (const int rc = request(sock_, static_cast<uint16_t>(MsgType::hello), ++seq_, &hello, sizeof hello, &hr,
                                   sizeof hr, TIMEOUT_MS);
            rc != 0)
            return rc;
        const Attach attach{pf, 0, 0};
        if (const int rc = request(sock_, static_cast<uint16_t>(MsgType::attach), ++seq_, &attach, sizeof attach,
                                   &reply_, sizeof reply_, TIMEOUT_MS, nullptr, 0, &fds_);
            rc != 0)
            return rc;
        if (fds_.nfds != ATTACH_FDS)
            return -EPROTO;
        box_ = static_cast<Bar0Mailbox*>(
            ::mmap(nullptr, MAILBOX_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds_.fds[FD_MAILBOX], 0));
        return box_ == MAP_FAILED ? -errno : 0;
    }

    /* Whether every memory fd is what was announced, stays so, and takes
     * any bytes without harm to anyone else. */
    bool files()
    {
        struct File {
            const char* name;
            AttachFd fd;
            uint64_t offset, size;
        };
        const File files[] = {{"gtt", FD_GTT, reply_.gtt_offset, reply_.gtt_size},
                              {"doorbells", FD_DOORBELLS, reply_.doorbells_offset, reply_.doorbells_size},
                              {"mailbox", FD_MAILBOX, 0, reply_.mailbox_size}};
        bool ok = true;
        for (const File& f : files) {
            const int fd = fds_.fds[f.fd];
            struct stat st {};
            if (::fstat(fd, &st) != 0) {
                std::printf("%s: fstat: %s\n", f.name, std::strerror(errno));
                return false;
            }
            const uint64_t size = static_cast<uint64_t>(st.st_size);
            const bool exact = f.offset == 0 && size == f.size;
            std::printf("%s: %llu bytes, %s\n", f.name, static_cast<unsigned long long>(size),
                        exact ? "as announced" : "MORE THAN ANNOUNCED");
            const bool grows = ::ftruncate(fd, static_cast<off_t>(size * 16)) == 0 ||
                               ::pwrite(fd, &GARBAGE, sizeof GARBAGE, static_cast<off_t>(size)) > 0;
            std::printf("%s: %s\n", f.name, grows ? "GROWS" : "cannot grow");
            ok = ok && exact && !grows;
            for (int pass = 0; pass < 2; pass++) {
                void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p == MAP_FAILED) {
                    std::printf("%s: mmap: %s\n", f.name, std::strerror(errno));
                    return false;
                }
                auto* words = static_cast<uint32_t*>(p);
                for (uint64_t i = 0; i < size / 4; i++)
                    std::atomic_ref<uint32_t>(words[i]).store(pass == 0 ? GARBAGE : ~GARBAGE,
                                                             std::memory_order_relaxed);
                kick();
                ::munmap(p, size);
            }
            std::printf("%s: every byte overwritten\n", f.name);
        }
        return ok;
    }

    /* Whether the PTT reaches only this PF's areas of storm RAM and the
     * shared ones. */
    bool ptt(uint32_t pf)
    {
        bar0(Bar0Op::write, reg::PGLUE_PTT_ACCESS_ENABLE, 1);
        uint32_t own = 0, refused = 0, reached = 0;
        for (uint32_t page = 0; page < reg::STORM_RAM_SIZE; page += hsi::WINDOW_SIZE) {
            if (page >= reg::STORM_MICROCODE - reg::STORM_RAM_BASE &&
                page < reg::STORM_MICROCODE - reg::STORM_RAM_BASE + reg::STORM_MICROCODE_MAX)
                continue;
            bar0(Bar0Op::write, hsi::bar0_ptt_entry(0), reg::STORM_RAM_BASE + page);
            for (uint32_t o = 0; o < hsi::WINDOW_SIZE; o += STRIDE) {
                const uint32_t owner = iro::pf_owning(page + o);
                const uint32_t before = bar0(Bar0Op::read, hsi::bar0_ptt_window(0) + o);
                bar0(Bar0Op::write, hsi::bar0_ptt_window(0) + o, GARBAGE);
                const uint32_t after = bar0(Bar0Op::read, hsi::bar0_ptt_window(0) + o);
                if (owner == pf || owner == iro::SHARED)
                    own++;
                else if (before == ALL_ONES && after == ALL_ONES)
                    refused++;
                else
                    reached++;
            }
        }
        std::printf("ptt: %u lines of its own or shared written, %u of other PFs refused, %u of other PFs %s\n", own,
                    refused, reached, reached == 0 ? "reached" : "REACHED");
        return reached == 0 && refused != 0;
    }

private:
    void kick()
    {
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fds_.fds[FD_KICK], &one, sizeof one);
        ::usleep(10'000);
    }

    /* One BAR0 access through the mailbox, as the OSAL's remote backend
     * makes it; all ones when the daemon does not answer. */
    uint32_t bar0(Bar0Op op, uint32_t offset, uint32_t value = 0)
    {
        const uint32_t seq = ++bar0_seq_ + 0x10000; /* clear of whatever files() left */
        box_->op = static_cast<uint32_t>(op);
        box_->offset = offset;
        box_->value = value;
        std::atomic_ref<uint32_t>(box_->request_seq).store(seq, std::memory_order_release);
        const uint64_t one = 1;
        [[maybe_unused]] ssize_t n = ::write(fds_.fds[FD_KICK], &one, sizeof one);
        for (int waited = 0; std::atomic_ref<uint32_t>(box_->done_seq).load(std::memory_order_acquire) != seq;) {
            pollfd p{fds_.fds[FD_DONE], POLLIN, 0};
            if (::poll(&p, 1, 100) == 1) {
                uint64_t done;
                n = ::read(fds_.fds[FD_DONE], &done, sizeof done);
            } else if ((waited += 100) >= TIMEOUT_MS) {
                std::printf("bar0: the daemon did not answer\n");
                std::exit(1);
            }
        }
        return std::atomic_ref<uint32_t>(box_->value).load(std::memory_order_relaxed);
    }

    int sock_;
    uint32_t seq_ = 0, bar0_seq_ = 0;
    AttachReply reply_{};
    Message fds_;
    Bar0Mailbox* box_ = nullptr;
};

} // namespace

int main(int argc, char** argv)
{
    const char* socket = nullptr;
    long pf = -1;
    static const option opts[] = {{"daemon", required_argument, nullptr, 'd'}, {"pf", required_argument, nullptr, 'p'},
                                  {nullptr, 0, nullptr, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
        switch (c) {
        case 'd': socket = optarg; break;
        case 'p': pf = std::strtol(optarg, nullptr, 0); break;
        default: return 2;
        }
    }
    if (socket == nullptr || pf < 0 || pf >= static_cast<long>(hsi::MAX_PFS)) {
        std::fprintf(stderr, "usage: rogue_client --daemon SOCKET --pf N\n");
        return 2;
    }
    const int sock = connect_socket(socket);
    if (sock < 0) {
        std::fprintf(stderr, "rogue_client: %s: %s\n", socket, std::strerror(-sock));
        return 2;
    }
    Rogue rogue(sock);
    if (const int rc = rogue.attach(static_cast<uint32_t>(pf)); rc != 0) {
        std::fprintf(stderr, "rogue_client: attach pf%ld: %s\n", pf, std::strerror(-rc));
        return 2;
    }
    std::printf("attached pf%ld\n", pf);
    const bool files = rogue.files();
    const bool ptt = rogue.ptt(static_cast<uint32_t>(pf));
    std::fflush(stdout);
    return files && ptt ? 0 : 1;
}
