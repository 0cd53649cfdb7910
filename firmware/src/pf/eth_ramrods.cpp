/* SPDX-License-Identifier: BSD-3-Clause
 * A PF's L2 ramrods: the function each acts on (the PF, or a VF by its
 * vport), the PF's flow rules, its port's switch, and its Tx queues'
 * connection contexts.
 */
#include "function/function.h"
#include "iov/pf_iov.h"
#include "pf/pf_firmware.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;
namespace iov = hsi::iov;

/* Reads the ramrod's data from host memory and runs its handler on the
 * function whose vport it names: the PF's own, or a VF's (iov::vf_vport),
 * whose ids the handler then takes as the VF's. */
template <typename Data> FwReturn PfFirmware::run_eth(uint64_t ptr, FwReturn (FunctionFirmware::*handler)(const Data&))
{
    Data data;
    if (!read_data(ptr, &data, sizeof(data)))
        return FwReturn::dma_error;
    FunctionFirmware* target = this;
    if (data.vport_id >= iov::VF_VPORT_BASE) {
        const uint32_t vf = data.vport_id - iov::VF_VPORT_BASE;
        if (vf >= iov::MAX_VFS_PER_PF)
            return FwReturn::invalid_param;
        if ((target = vf_firmware(vf)) == nullptr)
            return FwReturn::no_resource; /* a VF the PF has not enabled */
        data.vport_id = 0;
    }
    const FwReturn rc = (target->*handler)(data);
    if (target == this && eswitch_ != nullptr)
        eswitch_->vports_changed(*this); /* its representors may have started or stopped */
    return rc;
}

template <typename Data> FwReturn PfFirmware::run_pf(uint64_t ptr, FwReturn (PfFirmware::*handler)(const Data&))
{
    Data data;
    if (!read_data(ptr, &data, sizeof(data)))
        return FwReturn::dma_error;
    return (this->*handler)(data);
}

FwReturn PfFirmware::eth_ramrod(uint8_t cmd, uint64_t ptr)
{
    switch (static_cast<EthCmd>(cmd)) {
    case EthCmd::vport_start: return run_eth(ptr, &FunctionFirmware::vport_start);
    case EthCmd::vport_update: return run_eth(ptr, &FunctionFirmware::vport_update);
    case EthCmd::vport_stop: return run_eth(ptr, &FunctionFirmware::vport_stop);
    case EthCmd::rx_queue_start: return run_eth(ptr, &FunctionFirmware::rx_queue_start);
    case EthCmd::rx_queue_stop: return run_eth(ptr, &FunctionFirmware::rx_queue_stop);
    case EthCmd::tx_queue_start: return run_eth(ptr, &FunctionFirmware::tx_queue_start);
    case EthCmd::tx_queue_stop: return run_eth(ptr, &FunctionFirmware::tx_queue_stop);
    case EthCmd::filters_update: return run_eth(ptr, &FunctionFirmware::filters_update);
    case EthCmd::flow_rule_add: return run_pf(ptr, &PfFirmware::flow_rule_add);
    case EthCmd::flow_rule_del: return run_pf(ptr, &PfFirmware::flow_rule_del);
    case EthCmd::switch_mode: return run_pf(ptr, &PfFirmware::switch_mode);
    case EthCmd::switch_rule_add: return run_pf(ptr, &PfFirmware::switch_rule_add);
    case EthCmd::switch_rule_del: return run_pf(ptr, &PfFirmware::switch_rule_del);
    }
    return FwReturn::invalid_command;
}

FwReturn PfFirmware::flow_rule_add(const FlowRuleAddRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    if (d.actions & flow_action::QUEUE)
        if (FwReturn rc = check_id(d.queue, MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
            return rc;
    if (d.actions & flow_action::RSS)
        for (uint32_t i = 0; i < d.rss_queue_count && i < FLOW_MAX_RSS_QUEUES; i++)
            if (FwReturn rc = check_id(d.rss_queues[i], MAX_QUEUES_PER_PF, grant_.num_rx_queues); rc != FwReturn::ok)
                return rc;
    uint32_t rule_id = 0;
    FwReturn rc = flows_.add(d, &rule_id);
    if (rc == FwReturn::ok)
        completion_data_ = rule_id;
    return rc;
}

FwReturn PfFirmware::flow_rule_del(const FlowRuleDelRamrodData& d)
{
    if (FwReturn rc = check_vport(d.vport_id, true); rc != FwReturn::ok)
        return rc;
    return flows_.remove(d);
}

FwReturn PfFirmware::switch_mode(const eswitch::SwitchModeRamrodData& d)
{
    if (eswitch_ == nullptr || iov_ == nullptr)
        return FwReturn::invalid_command;
    return eswitch_->set_mode(*this, *iov_, d);
}

FwReturn PfFirmware::switch_rule_add(const eswitch::SwitchRuleAddRamrodData& d)
{
    if (eswitch_ == nullptr)
        return FwReturn::invalid_command;
    uint32_t rule_id = 0;
    FwReturn rc = eswitch_->add_rule(*this, d, &rule_id);
    if (rc == FwReturn::ok)
        completion_data_ = rule_id;
    return rc;
}

FwReturn PfFirmware::switch_rule_del(const eswitch::SwitchRuleDelRamrodData& d)
{
    if (eswitch_ == nullptr)
        return FwReturn::invalid_command;
    return eswitch_->remove_rule(*this, d.rule_id);
}

FunctionFirmware* PfFirmware::vf_firmware(uint32_t vf)
{
    return iov_ != nullptr ? iov_->firmware(vf) : nullptr;
}

FwReturn PfFirmware::open_tx_connection(const TxQueueStartRamrodData& d)
{
    if (d.cid == CID_SPQ || d.cid >= MAX_CIDS_PER_PF)
        return FwReturn::invalid_param;
    if (d.cid >= spq_.ilt_cids())
        return FwReturn::no_resource;
    ConnContext ctx{};
    ctx.cid = d.cid;
    ctx.type = static_cast<uint8_t>(ConnType::eth_tx);
    ctx.active = 1;
    ctx.queue_id = d.queue_id;
    ctx.ring_base = d.bd_base;
    ctx.ring_size = d.bd_ring_size;
    ctx.sb_id = d.sb_id;
    ctx.sb_pi = d.sb_pi;
    ctx.vport_id = d.vport_id;
    return write_conn_context(ctx) ? FwReturn::ok : FwReturn::dma_error;
}

void PfFirmware::close_tx_connection(const TxQueue& q, uint16_t queue_id)
{
    ConnContext ctx{};
    ctx.cid = q.cid;
    ctx.type = static_cast<uint8_t>(ConnType::eth_tx);
    ctx.queue_id = queue_id;
    ctx.vport_id = q.vport;
    write_conn_context(ctx);
}

} // namespace cna::fw
