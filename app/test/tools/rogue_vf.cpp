/* SPDX-License-Identifier: BSD-3-Clause
 * A rogue VF driver: attaches a VF of cna-adapterd's adapter through the
 * OSAL (the remote backend), plays it at register level with DMA memory
 * from DPDK (which the OSAL lends to the VF's IOMMU) and misbehaves on the
 * VF-PF channel in one way, for the tests to see the adapter and the PF
 * react and carry on:
 *
 *   flood      triggers the channel again and again without waiting: the
 *              adapter closes the channel (malicious)
 *   truncated  a request whose TLV list is cut short (no list_end): bad_request
 *   oversized  a TLV longer than the message: bad_request
 *   unknown    a request of a type no PF knows: not_supported
 *   bad-queue  acquire, then start_rxq on a queue past the grant: bad_request
 *   acquire    acquire and release, as a well-behaved driver (after an abuse:
 *              the VF is to be had again)
 *
 * It prints a line per outcome ("acquire: success, ...", "reply status:
 * bad_request", "channel: idle" / "channel: disabled (malicious)") and exits
 * 0 when the adapter and the PF reacted as expected, 1 otherwise, 2 on a
 * usage or setup error. Going away is the VF's FLR in the daemon.
 *
 *   rogue_vf --daemon SOCKET [--pf N] --vf N --file-prefix PREFIX MODE
 */
#include <getopt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>

#include "ecore_iov_tlv.h"
#include "hsi_iov.h"
#include "pci_function.h"
#include "pci_attach.h"

using namespace cna;
using hsi::iov::ChannelState;
using hsi::iov::TlvType;
using VfStatus = hsi::iov::Status;
namespace vf_bar0 = hsi::iov::vf_bar0;

namespace {

/* The VF's memory (a memzone): request, reply, bulletin board. */
constexpr uint32_t REQUEST = 0;
constexpr uint32_t REPLY = 4096;
constexpr uint32_t BULLETIN = 8192;
constexpr uint32_t MEM_SIZE = 3 * 4096;

constexpr auto REPLY_TIMEOUT = std::chrono::seconds(5);
constexpr uint32_t FLOOD_TRIGGERS = 100000;

const char* status_str(VfStatus s)
{
    switch (s) {
    case VfStatus::pending: return "pending";
    case VfStatus::success: return "success";
    case VfStatus::failure: return "failure";
    case VfStatus::not_supported: return "not_supported";
    case VfStatus::bad_request: return "bad_request";
    case VfStatus::no_resource: return "no_resource";
    case VfStatus::forbidden: return "forbidden";
    case VfStatus::not_acquired: return "not_acquired";
    }
    return "unknown";
}

const char* state_str(ChannelState s)
{
    switch (s) {
    case ChannelState::idle: return "idle";
    case ChannelState::pending: return "pending";
    case ChannelState::disabled: return "disabled";
    case ChannelState::unattended: return "unattended";
    }
    return "unknown";
}

class RogueVf {
public:
    RogueVf(osal::PciFunction& pci, const rte_memzone& mz) : pci_(pci), mz_(mz) {}

    uint8_t* at(uint32_t offset) const { return static_cast<uint8_t*>(mz_.addr) + offset; }
    uint64_t iova(uint32_t offset) const { return mz_.iova + offset; }
    std::span<uint8_t> request() const { return {at(REQUEST), hsi::iov::CHANNEL_REQUEST_MAX}; }

    ChannelState state() { return static_cast<ChannelState>(pci_.reg_rd(vf_bar0::CHANNEL_STATE)); }

    void trigger()
    {
        pci_.reg_wr(vf_bar0::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(iova(REQUEST)));
        pci_.reg_wr(vf_bar0::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(iova(REQUEST) >> 32));
        pci_.reg_wr(vf_bar0::CHANNEL_TRIGGER, 1);
    }

    /* Waits while the channel is pending: the PF completes it after the
     * reply, so the reply is whole then. */
    void wait()
    {
        const auto deadline = std::chrono::steady_clock::now() + REPLY_TIMEOUT;
        while (state() == ChannelState::pending && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::microseconds(100));
    }

    /* The request in place: sent as a driver does; the reply's status
     * (pending if none came). */
    VfStatus send()
    {
        std::memset(at(REPLY), 0, hsi::iov::CHANNEL_REPLY_MAX);
        trigger();
        wait();
        hsi::iov::ReplyHeader reply;
        std::memcpy(&reply, at(REPLY), sizeof reply);
        return static_cast<VfStatus>(reply.status);
    }

    template <typename T> T reply() const
    {
        T out;
        std::memcpy(&out, at(REPLY), sizeof out);
        return out;
    }

    /* A RequestHeader naming the reply buffer. */
    hsi::iov::RequestHeader header() const
    {
        hsi::iov::RequestHeader h{};
        h.reply_address = iova(REPLY);
        return h;
    }

    /* A well-formed request of one TLV. */
    template <typename T> void write(TlvType type, const T& body)
    {
        std::memset(at(REQUEST), 0, hsi::iov::CHANNEL_REQUEST_MAX);
        ecore::iov::TlvWriter writer(request());
        writer.add(type, body);
        writer.end();
    }

    VfStatus acquire()
    {
        hsi::iov::AcquireRequest req{};
        req.hdr = header();
        req.driver_version = 0x0badf00d;
        req.hsi_major = hsi::HSI_VERSION_MAJOR;
        req.hsi_minor = hsi::HSI_VERSION_MINOR;
        req.rx_queues = req.tx_queues = req.sbs = 1;
        req.mac_filters = 1;
        req.bulletin_size = sizeof(hsi::iov::Bulletin);
        req.bulletin_address = iova(BULLETIN);
        write(TlvType::acquire, req);
        const VfStatus st = send();
        std::printf("acquire: %s", status_str(st));
        if (st == VfStatus::success)
            std::printf(", %u Rx queue(s) granted", reply<hsi::iov::AcquireReply>().rx_queues);
        std::printf("\nchannel: %s\n", state_str(state()));
        return st;
    }

private:
    osal::PciFunction& pci_;
    const rte_memzone& mz_;
};

/* The reply's status and the channel after it, as expected or not. */
bool expect_reply(RogueVf& vf, VfStatus expected)
{
    const VfStatus st = vf.send();
    const ChannelState s = vf.state();
    std::printf("reply status: %s\nchannel: %s\n", status_str(st), state_str(s));
    return st == expected && s == ChannelState::idle;
}

bool flood(RogueVf& vf)
{
    hsi::iov::RequestHeader req = vf.header();
    vf.write(TlvType::int_cleanup, req);
    /* Trigger after trigger with no wait for the PF: one of them lands
     * while the request is pending, and the adapter closes the channel. */
    uint32_t n = 0;
    do {
        vf.trigger();
        n++;
    } while (n < FLOOD_TRIGGERS && vf.state() != ChannelState::disabled);
    const ChannelState s = vf.state();
    std::printf("triggers: %u\nchannel: %s%s\n", n, state_str(s), s == ChannelState::disabled ? " (malicious)" : "");
    return s == ChannelState::disabled;
}

bool truncated(RogueVf& vf)
{
    /* A vport_update whose parts fill the message to its last byte: the
     * list is cut before its list_end. */
    std::span<uint8_t> msg = vf.request();
    std::memset(msg.data(), 0, msg.size());
    ecore::iov::TlvWriter writer(msg);
    writer.add(TlvType::vport_update, vf.header());
    hsi::iov::VportActivateTlv activate{};
    while (writer.add(TlvType::vport_activate, activate)) {
    }
    return expect_reply(vf, VfStatus::bad_request);
}

bool oversized(RogueVf& vf)
{
    /* A vport_update whose RSS part claims more bytes than a message has. */
    std::span<uint8_t> msg = vf.request();
    std::memset(msg.data(), 0, msg.size());
    ecore::iov::TlvWriter writer(msg);
    writer.add(TlvType::vport_update, vf.header());
    writer.add(TlvType::vport_rss, hsi::iov::VportRssTlv{});
    writer.end();
    const hsi::iov::TlvHeader huge{static_cast<uint16_t>(TlvType::vport_rss), 0xfffc};
    std::memcpy(msg.data() + sizeof(hsi::iov::RequestHeader), &huge, sizeof huge);
    return expect_reply(vf, VfStatus::bad_request);
}

bool unknown(RogueVf& vf)
{
    vf.write(static_cast<TlvType>(0x5a5a), vf.header());
    return expect_reply(vf, VfStatus::not_supported);
}

bool bad_queue(RogueVf& vf)
{
    if (vf.acquire() != VfStatus::success)
        return false;
    hsi::iov::StartRxqRequest req{};
    req.hdr = vf.header();
    req.bd_ring = vf.iova(BULLETIN + 1024);
    req.cqe_ring = vf.iova(BULLETIN + 2048);
    req.ring_size = 64;
    req.buf_size = 2048;
    req.queue = vf.reply<hsi::iov::AcquireReply>().rx_queues; /* one past the last granted */
    vf.write(TlvType::start_rxq, req);
    return expect_reply(vf, VfStatus::bad_request);
}

bool acquire(RogueVf& vf)
{
    if (vf.acquire() != VfStatus::success)
        return false;
    vf.write(TlvType::release, vf.header());
    const VfStatus st = vf.send();
    std::printf("release: %s\nchannel: %s\n", status_str(st), state_str(vf.state()));
    return st == VfStatus::success;
}

struct Mode {
    const char* name;
    bool (*run)(RogueVf&);
};
constexpr Mode MODES[] = {{"flood", flood},     {"truncated", truncated}, {"oversized", oversized},
                          {"unknown", unknown}, {"bad-queue", bad_queue}, {"acquire", acquire}};

[[noreturn]] void usage(const char* prog)
{
    std::fprintf(stderr, "usage: %s --daemon SOCKET [--pf N] --vf N --file-prefix PREFIX MODE\nmodes:", prog);
    for (const Mode& m : MODES)
        std::fprintf(stderr, " %s", m.name);
    std::fprintf(stderr, "\n");
    std::exit(2);
}

} // namespace

int main(int argc, char** argv)
{
    std::string socket, prefix;
    uint32_t pf = 0;
    long vf = -1;
    static const option opts[] = {{"daemon", required_argument, nullptr, 'd'},
                                  {"pf", required_argument, nullptr, 'p'},
                                  {"vf", required_argument, nullptr, 'v'},
                                  {"file-prefix", required_argument, nullptr, 'f'},
                                  {nullptr, 0, nullptr, 0}};
    for (int c; (c = getopt_long(argc, argv, "", opts, nullptr)) != -1;) {
        switch (c) {
        case 'd': socket = optarg; break;
        case 'p': pf = static_cast<uint32_t>(std::strtoul(optarg, nullptr, 0)); break;
        case 'v': vf = std::strtol(optarg, nullptr, 0); break;
        case 'f': prefix = optarg; break;
        default: usage(argv[0]);
        }
    }
    if (socket.empty() || prefix.empty() || vf < 0 || optind != argc - 1)
        usage(argv[0]);
    const Mode* mode = nullptr;
    for (const Mode& m : MODES)
        if (std::strcmp(m.name, argv[optind]) == 0)
            mode = &m;
    if (mode == nullptr)
        usage(argv[0]);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);

    std::string prefix_arg = "--file-prefix=" + prefix;
    char* eal_args[] = {argv[0],
                        const_cast<char*>("--no-huge"),
                        const_cast<char*>("-m"),
                        const_cast<char*>("64"),
                        const_cast<char*>("--no-pci"),
                        const_cast<char*>("--no-telemetry"),
                        const_cast<char*>("-l"),
                        const_cast<char*>("0"),
                        prefix_arg.data(),
                        const_cast<char*>("--log-level=lib.*:error")};
    if (rte_eal_init(static_cast<int>(std::size(eal_args)), eal_args) < 0) {
        std::fprintf(stderr, "rogue_vf: cannot initialise the EAL: %s\n", rte_strerror(rte_errno));
        return 2;
    }

    int rc = 2;
    {
        osal::PciAttachParams params;
        params.backend = osal::Backend::remote;
        params.daemon_socket = socket;
        params.pf = pf;
        params.is_vf = true;
        params.vf = static_cast<uint32_t>(vf);
        int err = 0;
        std::string msg;
        std::unique_ptr<osal::PciFunction> pci = osal::pci_attach(params, &err, &msg);
        const rte_memzone* mz =
            rte_memzone_reserve_aligned("rogue_vf", MEM_SIZE, SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG, 4096);
        if (!pci) {
            std::printf("attach: %s (%d)\n", msg.c_str(), err);
        } else if (mz == nullptr || mz->iova == RTE_BAD_IOVA) {
            std::printf("no DMA memory for the VF: %s\n", rte_strerror(rte_errno));
        } else {
            std::memset(mz->addr, 0, MEM_SIZE);
            RogueVf rogue(*pci, *mz);
            /* A VF just reset (its last driver went) is closed until its
             * PF has cleaned up after it. */
            const auto deadline = std::chrono::steady_clock::now() + REPLY_TIMEOUT;
            while (rogue.state() == ChannelState::disabled && std::chrono::steady_clock::now() < deadline)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            const ChannelState start = rogue.state();
            std::printf("attached VF %ld of PF %u, channel: %s\n", vf, pf, state_str(start));
            rc = start == ChannelState::idle && mode->run(rogue) ? 0 : 1;
            std::printf("%s: %s\n", mode->name, rc == 0 ? "as expected" : "NOT as expected");
        }
        pci.reset(); /* the VF's FLR: the adapter no longer uses the memory */
        if (mz != nullptr)
            rte_memzone_free(mz);
    }
    rte_eal_cleanup();
    return rc;
}
