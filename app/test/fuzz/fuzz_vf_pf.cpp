/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: a PF's processing of its VF's requests, end to end. Once per
 * process a PF of an adapter in this process is brought up through ecore
 * (the slowpath polled: the fuzzer's thread runs the DPC) with two VFs
 * enabled; VF 0 is played at register level through its device function:
 * its memory mapped in its own IOMMU, requests written there, the channel
 * registers of its BAR0 written as its driver would.
 *
 * An input is a sequence of requests separated by MARKER, each a control
 * byte and the request's bytes: bit 0 forces the first RequestHeader's
 * reply_address to the VF's reply buffer (else it is as the fuzzer made
 * it), bits 1-2 how the channel is used (SEND_*). For each: the request is
 * written, the channel triggered, and the DPC run until the channel is idle
 * or disabled (bounded). Whatever the bytes: a reply's status is one of
 * hsi::iov::Status's and answers the request's type, the VF's grant and
 * what it holds stay within hsi_iov.h's limits, the channel never stays
 * pending, a VF the adapter found malicious is known so to its PF, and the
 * PF's own ramrods still complete. After each input a VF left acquired,
 * malicious or disabled is reset (fw::Adapter::vf_level_reset and the PF's
 * FLR cleanup), and must come back pristine: a new driver acquires it and
 * starts a vport on it.
 *
 * Seeds: make_vf_pf_seeds.py.
 */
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include <rte_eal.h>
#include <rte_errno.h>

#include <cna_fw/adapter.h>

#include "ecore_dev_api.h"
#include "ecore_int_api.h"
#include "ecore_iov_api.h"
#include "ecore_iov_tlv.h"
#include "ecore_l2_api.h"
#include "ecore_spq.h"
#include "ecore_sriov.h"
#include "hsi_iov.h"
#include "osal.h"
#include "pci_function.h"
#include "pci_iommu.h"

using namespace cna;
using hsi::iov::ChannelState;
using VfStatus = hsi::iov::Status;
namespace vf_bar0 = hsi::iov::vf_bar0;

namespace {

constexpr uint8_t MARKER[] = {0xfe, 'V', 'F', 0xfe};
constexpr uint32_t MAX_REQUESTS = 16;

/* Control byte of a request. */
constexpr uint8_t FORCE_REPLY = 1u << 0;
constexpr uint8_t SEND_SHIFT = 1;
enum Send : uint8_t {
    SEND_ONCE = 0,          /* as a driver does */
    SEND_TWICE = 1,         /* a second trigger while pending: malicious */
    SEND_NO_ADDRESS = 2,    /* a trigger without a request address: malicious */
    SEND_UNMAPPED = 3,      /* a request address outside the VF's IOMMU */
};

/* The VF's memory, in its IOMMU from VF_IOVA on (the seeds' addresses). */
constexpr uint64_t VF_IOVA = 0x10000000;
constexpr uint32_t VF_MEM_SIZE = 64 * 1024;
constexpr uint32_t REQUEST = 0x0000;
constexpr uint32_t REPLY = 0x1000;
constexpr uint32_t BULLETIN = 0x2000;
constexpr uint32_t SBS = 0x3000;
constexpr uint64_t UNMAPPED_IOVA = VF_IOVA + 0x100000;

constexpr uint32_t WAIT_MS = 5000; /* the SPQ's timeout: a refused ramrod ends sooner */

void fail(const char* what)
{
    std::fprintf(stderr, "fuzz_vf_pf: %s\n", what);
    std::abort();
}

/* PF 0 of the adapter as the embedded backend presents it, but with the
 * adapter in this file's hands (its VFs' functions and their FLR). */
class PfFunction final : public osal::PciFunction {
public:
    explicit PfFunction(fw::DeviceFunction& df)
        : PciFunction("fuzzvf/pf0"), df_(df),
          iommu_(
              "cna-iommu-fuzzvf",
              [&df](uint64_t iova, void* va, std::size_t len) { return df.dma_map(iova, va, len); },
              [&df](uint64_t iova, std::size_t len) { return df.dma_unmap(iova, len); })
    {
        const fw::DeviceFunction::SharedBars bars = df_.shared_bars();
        gtt_.view(df_.gtt_memory(), bars.gtt_fd, bars.gtt_offset, hsi::GTT_SIZE);
        doorbells_.view(df_.doorbell_memory(), bars.doorbell_fd, bars.doorbell_offset, hsi::DB_BAR_SIZE);
    }
    int start() { return iommu_.start(); }

    uint32_t msix_count() const override { return df_.msix_count(); }
    int msix_eventfd(uint32_t vector) const override { return df_.msix_eventfd(vector); }
    int dma_map(uint64_t iova, void* va, std::size_t len) override { return df_.dma_map(iova, va, len); }
    int dma_unmap(uint64_t iova, std::size_t len) override { return df_.dma_unmap(iova, len); }
    osal::AdapterControl* control() override { return nullptr; }

protected:
    uint32_t bar0_read(uint32_t offset) override { return df_.bar0_read(offset); }
    void bar0_write(uint32_t offset, uint32_t value) override { df_.bar0_write(offset, value); }

private:
    fw::DeviceFunction& df_;
    osal::IommuSync iommu_;
};

struct Rig {
    std::unique_ptr<fw::Adapter> adapter;
    std::unique_ptr<PfFunction> pci;
    ecore::Dev dev;
    fw::DeviceFunction* vf = nullptr;
    uint8_t* vf_mem = nullptr;
    uint16_t pf_rx_accept = 0;

    ecore::Hwfn& hwfn() { return dev.hwfn; }
    uint8_t* at(uint32_t offset) { return vf_mem + offset; }
    ChannelState channel() { return static_cast<ChannelState>(vf->bar0_read(vf_bar0::CHANNEL_STATE)); }
    ecore::IovVf snapshot()
    {
        std::lock_guard guard(hwfn().iov->lock);
        return hwfn().iov->vfs[0];
    }

    /* Runs the DPC until cond() holds; false after WAIT_MS. */
    template <typename Cond> bool dpc_until(Cond cond)
    {
        osal::Deadline deadline(WAIT_MS);
        for (;;) {
            ecore::int_sp_dpc(hwfn());
            if (cond())
                return true;
            if (deadline.expired())
                return false;
            std::this_thread::yield();
        }
    }
};

Rig* rig;

void trigger(uint64_t iova)
{
    rig->vf->bar0_write(vf_bar0::CHANNEL_REQ_ADDR_LO, static_cast<uint32_t>(iova));
    rig->vf->bar0_write(vf_bar0::CHANNEL_REQ_ADDR_HI, static_cast<uint32_t>(iova >> 32));
    rig->vf->bar0_write(vf_bar0::CHANNEL_TRIGGER, 1);
}

/* What the VF holds must lie within what it was granted, and the grant
 * within the channel's limits. */
void check_grant(const ecore::IovVf& vf)
{
    using namespace hsi::iov;
    const ecore::iov::VfGrant& g = vf.grant;
    if (g.rx_queues > MAX_VF_QUEUES || g.tx_queues > MAX_VF_QUEUES || g.sbs > MAX_VF_SBS ||
        g.mac_filters > MAX_VF_MAC_FILTERS || g.vlan_filters > MAX_VF_VLAN_FILTERS ||
        g.mcast_filters > MAX_VF_MCAST_FILTERS || g.bulletin_size > sizeof(Bulletin))
        fail("a grant beyond the channel's limits");
    if (vf.acquired && (g.rx_queues == 0 || g.tx_queues == 0 || g.sbs == 0))
        fail("an acquired VF without a queue or status block");
    if (!vf.acquired && (vf.vport_started || g.rx_queues != 0))
        fail("a VF not acquired has a vport or a grant");
    if (vf.rx_started >> g.rx_queues != 0 || vf.tx_started >> g.tx_queues != 0 || vf.sbs > g.sbs)
        fail("queues or status blocks beyond the VF's grant");
    if (!vf.vport_started && (vf.rx_started != 0 || vf.tx_started != 0 || vf.sbs != 0))
        fail("queues or status blocks without a vport");
    if (vf.macs.size() > g.mac_filters || vf.vlans.size() > g.vlan_filters || vf.mcast.size() > g.mcast_filters)
        fail("more filters than the VF's grant");
    ecore::VfInfo info;
    if (ecore::iov_vf_info(rig->hwfn(), 0, &info) != ecore::Status::success ||
        info.rx_queues > MAX_VF_QUEUES || info.tx_queues > MAX_VF_QUEUES)
        fail("iov_vf_info: queues beyond MAX_VF_QUEUES");
}

/* One request: written, sent as `control` says, waited for; false when the
 * VF's channel is closed (the rest of the input would go nowhere). */
bool send(uint8_t control, std::span<const uint8_t> request)
{
    uint8_t* req = rig->at(REQUEST);
    std::memset(req, 0, hsi::iov::CHANNEL_REQUEST_MAX);
    std::memcpy(req, request.data(), std::min<std::size_t>(request.size(), hsi::iov::CHANNEL_REQUEST_MAX));
    const bool forced = control & FORCE_REPLY;
    if (forced) {
        const uint64_t reply = VF_IOVA + REPLY;
        std::memcpy(req + offsetof(hsi::iov::RequestHeader, reply_address), &reply, sizeof reply);
    }
    std::memset(rig->at(REPLY), 0, hsi::iov::CHANNEL_REPLY_MAX);
    /* The PF may write a bulletin board over the request (the VF named it
     * there): what the reply answers is read now. */
    hsi::iov::TlvHeader first;
    std::memcpy(&first, req, sizeof first);

    switch (static_cast<Send>((control >> SEND_SHIFT) & 3)) {
    case SEND_ONCE: trigger(VF_IOVA + REQUEST); break;
    case SEND_TWICE:
        trigger(VF_IOVA + REQUEST);
        rig->vf->bar0_write(vf_bar0::CHANNEL_TRIGGER, 1);
        break;
    case SEND_NO_ADDRESS: trigger(0); break;
    case SEND_UNMAPPED: trigger(UNMAPPED_IOVA); break;
    }
    if (!rig->dpc_until([] { return rig->channel() != ChannelState::pending; }))
        fail("the VF's channel stayed pending: its request was never completed");

    if (forced) {
        hsi::iov::ReplyHeader reply;
        std::memcpy(&reply, rig->at(REPLY), sizeof reply);
        if (reply.status > static_cast<uint8_t>(VfStatus::not_acquired))
            fail("a reply status that is none of hsi::iov::Status's");
        if (reply.status != static_cast<uint8_t>(VfStatus::pending) &&
            (reply.tlv.type != static_cast<uint16_t>(hsi::iov::TlvType::reply) || reply.request != first.type ||
             reply.tlv.length < sizeof reply ||
             reply.tlv.length + sizeof(hsi::iov::TlvHeader) > hsi::iov::CHANNEL_REPLY_MAX))
            fail("a reply that does not answer the request");
    }
    check_grant(rig->snapshot());
    if (rig->channel() == ChannelState::idle)
        return true;
    /* Closed: the adapter found the VF malicious, and its PF must hear of it. */
    if (!rig->dpc_until([] { return rig->snapshot().malicious; }))
        fail("the VF's channel is closed but its PF does not know it malicious");
    return false;
}

/* The PF's own slowpath still works: an empty ramrod and an update of its
 * vport complete. */
void check_pf()
{
    ecore::SpqRequest empty;
    empty.protocol = hsi::ProtocolId::common;
    empty.cmd_id = static_cast<uint8_t>(hsi::CommonCmd::empty);
    if (ecore::spq_post(rig->hwfn(), empty) != ecore::Status::success)
        fail("the PF's empty ramrod failed");
    namespace accept = hsi::eth::accept;
    rig->pf_rx_accept ^= accept::MCAST_UNMATCHED;
    if (ecore::filter_accept_cmd(rig->hwfn(), 0, accept::UCAST_MATCHED | accept::BCAST | rig->pf_rx_accept) !=
        ecore::Status::success)
        fail("the PF's vport update failed");
}

/* A well-formed request of one TLV, sent as a driver does; the reply's status. */
template <typename T> VfStatus request(hsi::iov::TlvType type, const T& body)
{
    std::array<uint8_t, hsi::iov::CHANNEL_REQUEST_MAX> message{};
    ecore::iov::TlvWriter writer(message);
    if (!writer.add(type, body) || !writer.end() || !send(FORCE_REPLY, std::span(message).first(writer.size())))
        fail("a well-formed request did not go through");
    return static_cast<VfStatus>(rig->at(REPLY)[offsetof(hsi::iov::ReplyHeader, status)]);
}

/* A VF reset is had again by a new driver: neither the PF nor the adapter
 * kept anything of the old one's in the way. Released after. */
void check_vf_usable()
{
    using hsi::iov::TlvType;
    hsi::iov::AcquireRequest acquire{};
    acquire.hsi_major = hsi::HSI_VERSION_MAJOR;
    acquire.hsi_minor = hsi::HSI_VERSION_MINOR;
    acquire.rx_queues = acquire.tx_queues = acquire.sbs = 1;
    acquire.bulletin_size = sizeof(hsi::iov::Bulletin);
    acquire.bulletin_address = VF_IOVA + BULLETIN;
    if (request(TlvType::acquire, acquire) != VfStatus::success)
        fail("a VF reset cannot be acquired again");
    hsi::iov::VportStartRequest start{};
    start.mtu = 1500;
    start.sbs = 1;
    start.sb_addr[0] = VF_IOVA + SBS;
    if (request(TlvType::vport_start, start) != VfStatus::success)
        fail("a VF reset cannot start its vport again");
    if (request(TlvType::release, hsi::iov::RequestHeader{}) != VfStatus::success)
        fail("a VF reset cannot be released");
}

/* A VF left acquired, malicious or closed: its function level reset, which
 * its PF cleans up; the VF is then as enabled anew. */
void reset_vf()
{
    const ecore::IovVf vf = rig->snapshot();
    if (!vf.acquired && !vf.malicious && rig->channel() == ChannelState::idle)
        return;
    rig->adapter->vf_level_reset(0, 0);
    if (!rig->dpc_until([] {
            const ecore::IovVf v = rig->snapshot();
            return !v.acquired && !v.malicious && rig->channel() == ChannelState::idle;
        }))
        fail("the VF is not back after its FLR");
    const ecore::IovVf after = rig->snapshot();
    if (after.vport_started || after.sbs != 0 || !after.macs.empty() || !after.mcast.empty())
        fail("the PF kept objects of a VF that was reset");
    {
        ecore::PttGuard ptt(rig->hwfn());
        if (!ptt || (ecore::rd(rig->hwfn(), *ptt, hsi::reg::IOV_MALICIOUS) & 1) != 0 ||
            (ecore::rd(rig->hwfn(), *ptt, hsi::reg::IOV_FLR_PENDING) & 1) != 0)
            fail("the VF's malicious or FLR-pending bit stayed set");
    }
    check_vf_usable();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    char prog[] = "fuzz_vf_pf";
    char* eal_args[] = {prog,
                        const_cast<char*>("--no-huge"),
                        const_cast<char*>("-m"),
                        const_cast<char*>("256"),
                        const_cast<char*>("--no-pci"),
                        const_cast<char*>("--no-shconf"),
                        const_cast<char*>("--no-telemetry"),
                        const_cast<char*>("--iova-mode=va"),
                        const_cast<char*>("--log-level=lib.*:error"),
                        /* refusals are the point: not worth a line each */
                        const_cast<char*>("--log-level=pmd.net.cna*:emerg"),
                        const_cast<char*>("--log-level=cna.adapter:emerg")};
    if (rte_eal_init(static_cast<int>(std::size(eal_args)), eal_args) < 0) {
        std::fprintf(stderr, "fuzz_vf_pf: cannot initialise the EAL: %s\n", rte_strerror(rte_errno));
        std::abort();
    }
    fw::set_log_sink([](fw::LogLevel, const std::string&) {});

    rig = new Rig;
    fw::AdapterConfig config;
    config.name = "fuzzvf";
    config.link_up_delay_ms = 0;
    std::string error;
    rig->adapter = fw::Adapter::create(config, &error);
    if (!rig->adapter)
        fail(error.c_str());
    rig->pci = std::make_unique<PfFunction>(rig->adapter->function(0));
    if (rig->pci->start() != 0)
        fail("cannot map DPDK memory into the PF's IOMMU");

    ecore::init_struct(rig->dev, "fuzzvf/pf0", *rig->pci, ecore::UpperOps{});
    if (ecore::hw_prepare(rig->dev) != ecore::Status::success || ecore::resc_alloc(rig->dev) != ecore::Status::success)
        fail("cannot prepare the PF");
    ecore::resc_setup(rig->dev);
    ecore::HwInitParams init;
    init.int_mode = ecore::IntMode::poll;
    if (ecore::hw_init(rig->dev, init) != ecore::Status::success)
        fail("cannot start the PF");
    if (ecore::sp_vport_start(rig->hwfn(), ecore::SpVportStartParams{}) != ecore::Status::success)
        fail("cannot start the PF's vport");
    if (ecore::iov_enable(rig->hwfn(), 2) != ecore::Status::success)
        fail("cannot enable VFs");

    rig->vf = rig->adapter->vf_function(0, 0);
    rig->vf_mem = static_cast<uint8_t*>(std::aligned_alloc(4096, VF_MEM_SIZE));
    if (rig->vf == nullptr || rig->vf_mem == nullptr)
        fail("no VF 0 or no memory for it");
    std::memset(rig->vf_mem, 0, VF_MEM_SIZE);
    if (rig->vf->dma_map(VF_IOVA, rig->vf_mem, VF_MEM_SIZE) != 0)
        fail("cannot map the VF's memory into its IOMMU");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    const std::span<const uint8_t> input(data, size);
    std::size_t pos = 0;
    for (uint32_t n = 0; n < MAX_REQUESTS && pos < input.size(); n++) {
        const std::span<const uint8_t> rest = input.subspan(pos);
        const auto cut = std::search(rest.begin(), rest.end(), std::begin(MARKER), std::end(MARKER));
        const std::span<const uint8_t> segment(rest.begin(), cut);
        pos += segment.size() + sizeof MARKER;
        if (segment.empty())
            continue;
        if (!send(segment[0], segment.subspan(1)))
            break;
    }
    check_pf();
    reset_vf();
    return 0;
}
