/* SPDX-License-Identifier: BSD-3-Clause
 * A VF's PCI function whose PF is the test (test_vf.cpp): its BAR0's
 * channel registers, its GTT page and doorbell page as test memory, and a
 * VF's ecore on it with the PF the test plays.
 */
#pragma once

#include "fixture.h"

#include <cstring>
#include <functional>
#include <map>
#include <vector>

#include "ecore_iov_tlv.h"
#include "ecore_vf_api.h"
#include "hsi_iov.h"

namespace test {

using cna::ecore::Status;
using cna::hsi::iov::ChannelState;
using cna::hsi::iov::ReplyHeader;
using cna::hsi::iov::RequestHeader;
using cna::hsi::iov::TlvType;
using VfStatus = cna::hsi::iov::Status;
namespace vf_bar0 = cna::hsi::iov::vf_bar0;

/* A request as the PF copied it. */
struct Received {
    std::vector<uint8_t> bytes;

    TlvType type() const { return ecore::iov::TlvReader(bytes).first_type(); }
    bool has(TlvType type) const
    {
        TlvHeader probe;
        return ecore::iov::TlvReader(bytes).find(type, &probe) == ecore::iov::TlvReader::Find::found;
    }
    template <typename T> T get(TlvType type) const
    {
        T out{};
        EXPECT_EQ(ecore::iov::TlvReader(bytes).find(type, &out), ecore::iov::TlvReader::Find::found)
            << ecore::iov::tlv_name(type);
        return out;
    }
    using TlvHeader = hsi::iov::TlvHeader;
};

/* The VF's BAR0 channel registers; its GTT page and doorbell page as test
 * memory. A trigger copies the request (IOVA is VA: the tests' EAL runs
 * with --iova-mode=va) and hands it to on_request, the test's PF, which
 * answers or does not. */
class FakeVf final : public osal::PciFunction {
public:
    FakeVf() : PciFunction("fake/pf0/vf0", VF_LAYOUT)
    {
        gtt_.view(page_, -1, 0, sizeof page_);
        doorbells_.view(doorbell_page_, -1, 0, sizeof doorbell_page_);
    }

    std::function<void(const Received&)> on_request;
    std::vector<Received> requests;
    std::vector<std::pair<uint32_t, uint32_t>> writes; /* BAR0 writes outside the GTT */
    std::vector<uint32_t> reads;
    std::atomic<uint32_t> state{static_cast<uint32_t>(ChannelState::idle)};
    int misuse = 0; /* triggers while pending or without an address: malicious */

    uint8_t* page() { return page_; }
    uint8_t* doorbell_page() { return doorbell_page_; }

    /* The reply to the last request: a ReplyHeader (filled here) and its
     * body, list_end, then the status; the channel completed unless not. */
    template <typename Body = ReplyHeader> void answer(VfStatus status, Body body = {}, bool complete = true)
    {
        auto& header = reinterpret_cast<ReplyHeader&>(body);
        header.tlv = {static_cast<uint16_t>(TlvType::reply), sizeof(Body)};
        header.request = static_cast<uint16_t>(requests.back().type());
        header.status = static_cast<uint8_t>(VfStatus::pending);
        std::memcpy(reply(), &body, sizeof body);
        const hsi::iov::TlvHeader end{static_cast<uint16_t>(TlvType::list_end), sizeof(hsi::iov::TlvHeader)};
        std::memcpy(reply() + sizeof body, &end, sizeof end);
        publish_status(status);
        if (complete)
            this->complete();
    }
    uint8_t* reply() const
    {
        RequestHeader h;
        std::memcpy(&h, requests.back().bytes.data(), sizeof h);
        return reinterpret_cast<uint8_t*>(h.reply_address);
    }
    void publish_status(VfStatus status)
    {
        osal::publish(reinterpret_cast<volatile uint8_t*>(reply() + offsetof(ReplyHeader, status)),
                      static_cast<uint8_t>(status));
    }
    void complete() { state = static_cast<uint32_t>(ChannelState::idle); }

    uint32_t msix_count() const override { return hsi::iov::VF_MSIX_VECTORS; }
    int msix_eventfd(uint32_t) const override { return -1; }
    int dma_map(uint64_t, void*, std::size_t) override { return 0; }
    int dma_unmap(uint64_t, std::size_t) override { return 0; }
    osal::AdapterControl* control() override { return nullptr; }

protected:
    uint32_t bar0_read(uint32_t offset) override
    {
        reads.push_back(offset);
        return offset == vf_bar0::CHANNEL_STATE ? state.load() : 0xffffffff;
    }
    void bar0_write(uint32_t offset, uint32_t value) override
    {
        writes.emplace_back(offset, value);
        if (offset == vf_bar0::CHANNEL_REQ_ADDR_LO)
            addr_ = (addr_ & ~uint64_t{0xffffffff}) | value;
        else if (offset == vf_bar0::CHANNEL_REQ_ADDR_HI)
            addr_ = (addr_ & 0xffffffff) | uint64_t{value} << 32;
        if (offset != vf_bar0::CHANNEL_TRIGGER || state == static_cast<uint32_t>(ChannelState::disabled))
            return;
        if (state != static_cast<uint32_t>(ChannelState::idle) || addr_ == 0) {
            misuse++;
            return;
        }
        state = static_cast<uint32_t>(ChannelState::pending);
        const auto* request = reinterpret_cast<const uint8_t*>(addr_);
        requests.push_back(Received{{request, request + hsi::iov::CHANNEL_REQUEST_MAX}});
        if (on_request)
            on_request(requests.back());
    }

private:
    alignas(64) uint8_t page_[hsi::WINDOW_SIZE]{};
    alignas(64) uint8_t doorbell_page_[hsi::iov::VF_DB_BAR_SIZE]{};
    uint64_t addr_ = 0;
};

inline hsi::iov::AcquireReply grant()
{
    hsi::iov::AcquireReply r{};
    r.pf_id = 1;
    r.vf_id = 3;
    r.port_id = 1;
    r.hsi_minor = hsi::HSI_VERSION_MINOR;
    r.rx_queues = r.tx_queues = r.sbs = 2;
    r.mac_filters = 4;
    r.vlan_filters = 2;
    r.mcast_filters = 2;
    r.mtu = 1500;
    const uint8_t mac[6] = {0x02, 0x00, 0xc0, 0xa0, 0x80, 11};
    std::memcpy(r.mac, mac, 6);
    r.fw_version = 0x01020304;
    r.bulletin_size = sizeof(hsi::iov::Bulletin);
    return r;
}

/* A VF's ecore on a FakeVf, and the PF the test plays: it grants grant(),
 * answers start_rxq/start_txq with the HSI's producer and doorbell, refuses
 * what `refusals` names, and accepts the rest. */
struct FakeVfDev {
    FakeVf pci;
    ecore::Dev dev;
    std::map<TlvType, VfStatus> refusals;
    ecore::Ptt no_ptt; /* a VF has none: what the Ptt& parameters get */

    FakeVfDev()
    {
        ecore::init_struct(dev, "fakevf", pci, {});
        pci.on_request = [this](const Received& r) { serve(r); };
    }
    ecore::Hwfn& hwfn() { return dev.hwfn; }

    void serve(const Received& r)
    {
        if (auto it = refusals.find(r.type()); it != refusals.end())
            return pci.answer(it->second);
        hsi::iov::StartQueueReply queue{};
        switch (r.type()) {
        case TlvType::acquire:
            return pci.answer(VfStatus::success, grant());
        case TlvType::start_rxq:
            queue.offset = vf_bar0::rx_prod(r.get<hsi::iov::StartRxqRequest>(TlvType::start_rxq).queue);
            return pci.answer(VfStatus::success, queue);
        case TlvType::start_txq:
            queue.offset = hsi::db_offset(hsi::cid_tx_queue(r.get<hsi::iov::StartTxqRequest>(TlvType::start_txq).queue));
            return pci.answer(VfStatus::success, queue);
        default:
            return pci.answer(VfStatus::success);
        }
    }

    Status prepare(uint32_t timeout_ms = ecore::VF_CHANNEL_TIMEOUT_MS)
    {
        ecore::VfAcquireParams params;
        params.channel_timeout_ms = timeout_ms;
        Status rc = ecore::vf_hw_prepare(hwfn(), params);
        if (rc == Status::success)
            rc = ecore::resc_alloc(dev);
        if (rc == Status::success) {
            ecore::resc_setup(dev);
            rc = ecore::hw_init(dev, ecore::HwInitParams{});
        }
        return rc;
    }
    void remove()
    {
        ecore::hw_stop(dev);
        ecore::int_disable_post_isr_release(dev);
        ecore::resc_free(dev);
        ecore::hw_remove(dev);
    }
};

} // namespace test
