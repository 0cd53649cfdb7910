/* SPDX-License-Identifier: BSD-3-Clause
 * Common ramrods after PF_START (which the slowpath queue runs): PF_STOP,
 * EMPTY and the VF cleanup.
 */
#include "function/function.h"
#include "pf/pf_firmware.h"
#include "slowpath/storm_ram.h"
#include "iov/pf_iov.h"
#include "slowpath/storms.h"
#include "base/log.h"

namespace cna::fw {

using namespace hsi;

FwReturn PfFirmware::pf_stop()
{
    for (const Vport& vport : l2_.vports)
        if (vport.started)
            return FwReturn::bad_state;
    if (roce_.active())
        return FwReturn::bad_state;
    if (eswitch_ != nullptr)
        eswitch_->release(*this); /* its port's switch back to legacy */
    log(LogLevel::info, "storm: pf%u stopped", pf_);
    return FwReturn::ok;
}

FwReturn PfFirmware::common_ramrod(uint8_t cmd, uint64_t data_ptr)
{
    switch (static_cast<CommonCmd>(cmd)) {
    case CommonCmd::pf_stop: return pf_stop();
    case CommonCmd::empty: return FwReturn::ok;
    case CommonCmd::vf_cleanup: {
        VfCleanupRamrodData d;
        if (!read_data(data_ptr, &d, sizeof(d)))
            return FwReturn::dma_error;
        return iov_ != nullptr ? iov_->final_cleanup(d.vf) : FwReturn::invalid_param;
    }
    case CommonCmd::pf_start: break; /* handled before an EQ exists */
    }
    return FwReturn::invalid_command;
}

bool PfFirmware::write_conn_context(const ConnContext& ctx)
{
    return hw_.dma().write(spq_.ilt_base() + uint64_t{ctx.cid} * CONN_CONTEXT_SIZE, &ctx, sizeof(ctx));
}

} // namespace cna::fw
