/* SPDX-License-Identifier: BSD-3-Clause
 * The storms' view of one PF: beyond its L2 objects (FunctionFirmware), its
 * slowpath configuration registers, the slowpath queue it consumes, the
 * event queue it produces, its RoCE firmware and flow rules; its L2 ramrods
 * that name a VF's vport run on the VF's FunctionFirmware.
 */
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hsi_eth.h"
#include "hsi_spq.h"
#include "function/function.h"
#include "roce/roce_firmware.h"
#include "l2/function_firmware.h"
#include "slowpath/resources.h"
#include "slowpath/slowpath_queue.h"
#include "slowpath/storm_ram.h"
#include "switch/eswitch.h"

namespace cna::fw {

class Storms;

class PfIov;
class VfFirmware;

class PfFirmware final : public FunctionFirmware, private SlowpathQueue::Storm {
public:
    PfFirmware(FunctionHw& hw, StormRam& ram, Storms& storms, const Grant& grant, PtpClock& clock);

    uint32_t pf() const { return pf_; }
    StormRam& ram() { return ram_; }
    roce::RoceFirmware& roce() { return roce_; }
    /* The PF's VFs, once the adapter has given the PF its IOV block. */
    void attach_iov(PfIov& iov) { iov_ = &iov; }
    /* Its port's switch, which it may manage (SWITCH_MODE). */
    void attach_switch(EmbeddedSwitch& eswitch) { eswitch_ = &eswitch; }

    /* GRC STORM_PF block (slowpath lock held). */
    bool read(uint32_t addr, uint32_t& value) const;
    bool write(uint32_t addr, uint32_t value);

    /* The PF's slowpath queue (engine thread 0, slowpath lock held; its
     * pending() lock-free). */
    SlowpathQueue& spq() { return spq_; }
    /* Engine, slowpath lock held: the RoCE firmware's and the IOV block's
     * asynchronous events onto the EQ (while it has room). */
    void post_async_events();
    /* Back to power-on state (function unloaded). */
    void reset();
    void raise_fw_assert(uint32_t code);
    /* Latches why in STORM_PF_QUEUE_ERROR and raises attn::QUEUE_ERROR;
     * the adapter's log says so too (the 1st, 2nd, 4th... time). */
    void queue_error(hsi::QueueKind kind, uint32_t queue, hsi::QueueError why) override;

private:
    /* FunctionFirmware */
    hsi::eth::VportStats& vport_stats(uint32_t vport) override;
    hsi::eth::QueueStats& rx_queue_stats(uint32_t queue) override;
    hsi::eth::QueueStats& tx_queue_stats(uint32_t queue) override;
    hsi::FwReturn open_tx_connection(const hsi::eth::TxQueueStartRamrodData& d) override;
    void close_tx_connection(const TxQueue& q, uint16_t queue_id) override;

    /* SlowpathQueue::Storm (spq.cpp) */
    hsi::FwReturn start(const hsi::PfStartRamrodData& d) override;
    void stopped() override { started_ = false; }
    hsi::FwReturn execute(const hsi::SlowPathElement& elem, uint64_t& data) override;
    void fw_assert(uint32_t code) override { raise_fw_assert(code); }
    bool read_data(uint64_t data_ptr, void* data, std::size_t len);
    /* common_ramrods.cpp */
    hsi::FwReturn pf_stop();
    hsi::FwReturn common_ramrod(uint8_t cmd, uint64_t data_ptr);
    bool write_conn_context(const hsi::ConnContext& ctx);
    /* eth_ramrods.cpp */
    hsi::FwReturn eth_ramrod(uint8_t cmd, uint64_t data_ptr);
    template <typename Data>
    hsi::FwReturn run_eth(uint64_t data_ptr, hsi::FwReturn (FunctionFirmware::*handler)(const Data&));
    template <typename Data> hsi::FwReturn run_pf(uint64_t data_ptr, hsi::FwReturn (PfFirmware::*handler)(const Data&));
    hsi::FwReturn flow_rule_add(const hsi::eth::FlowRuleAddRamrodData& d);
    hsi::FwReturn flow_rule_del(const hsi::eth::FlowRuleDelRamrodData& d);
    hsi::FwReturn switch_mode(const hsi::eswitch::SwitchModeRamrodData& d);
    hsi::FwReturn switch_rule_add(const hsi::eswitch::SwitchRuleAddRamrodData& d);
    hsi::FwReturn switch_rule_del(const hsi::eswitch::SwitchRuleDelRamrodData& d);
    /* The firmware of an enabled VF, else nullptr. */
    FunctionFirmware* vf_firmware(uint32_t vf);

    Storms& storms_;
    SlowpathQueue spq_;
    std::atomic<uint32_t> last_queue_error_{0};
    std::atomic<uint32_t> queue_errors_{0};
    uint64_t completion_data_ = 0; /* EQE data of the ramrod being executed */
    roce::RoceFirmware roce_;
    PfIov* iov_ = nullptr;
    EmbeddedSwitch* eswitch_ = nullptr;
};

} // namespace cna::fw
