/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_init_ops.h"

#include "ecore_log.h"

namespace cna::ecore {

using namespace hsi::init;

namespace {

const char* phase_name(Phase phase)
{
    switch (phase) {
    case Phase::engine: return "ENGINE";
    case Phase::port: return "PORT";
    case Phase::pf: return "PF";
    }
    return "unknown";
}

const char* storm_status_name(uint32_t status)
{
    switch (static_cast<hsi::StormStatus>(status)) {
    case hsi::StormStatus::halted: return "halted";
    case hsi::StormStatus::running: return "running";
    case hsi::StormStatus::bad_microcode: return "bad_microcode";
    case hsi::StormStatus::bad_version: return "bad_version";
    case hsi::StormStatus::asserted: return "asserted";
    }
    return "unknown";
}

/* The storms refused their microcode: no point waiting for them. */
bool storm_failed(uint32_t addr, uint32_t value)
{
    using hsi::StormStatus;
    return addr == hsi::reg::STORM_STATUS &&
           (value == static_cast<uint32_t>(StormStatus::bad_microcode) ||
            value == static_cast<uint32_t>(StormStatus::bad_version) ||
            value == static_cast<uint32_t>(StormStatus::asserted));
}

Status init_poll(Hwfn& hwfn, Ptt& ptt, const InitOp& op, Phase phase)
{
    osal::Deadline deadline(op.count);
    uint32_t value;
    for (;;) {
        value = rd(hwfn, ptt, op.addr);
        if (value == op.value)
            return Status::success;
        if (deadline.expired() || storm_failed(op.addr, value))
            break;
        osal::usleep(100);
    }
    if (op.addr == hsi::reg::STORM_STATUS)
        DP_ERR(hwfn, "%s phase: storms did not start (timeout %u ms): STORM_STATUS is %s (%u), expected %s",
               phase_name(phase), op.count, storm_status_name(value), value, storm_status_name(op.value));
    else
        DP_ERR(hwfn, "%s phase: register 0x%06x is 0x%08x after %u ms, expected 0x%08x", phase_name(phase),
               op.addr, value, op.count, op.value);
    return Status::timeout;
}

} // namespace

Status rt_data_alloc(Hwfn& hwfn)
{
    hwfn.rt_data = std::make_unique<RtData>();
    return Status::success;
}

void rt_data_free(Hwfn& hwfn) { hwfn.rt_data.reset(); }

void store_rt_reg(Hwfn& hwfn, uint32_t idx, uint32_t value)
{
    hwfn.rt_data->values[idx] = value;
    hwfn.rt_data->valid[idx] = true;
}

Status init_run(Hwfn& hwfn, Ptt& ptt, const InitImage& image, Phase phase, uint32_t modes)
{
    const PhaseIndex& index = image.phases[static_cast<uint32_t>(phase)];
    const RtData& rt = *hwfn.rt_data;
    DP_VERBOSE(hwfn, osal::dp_module::INIT, "%s phase: %u ops, modes 0x%x", phase_name(phase), index.op_count, modes);

    const uint32_t end = index.first_op + index.op_count;
    for (uint32_t i = index.first_op; i < end; i++) {
        const InitOp& op = image.ops[i];
        switch (static_cast<OpType>(op.type)) {
        case OpType::write:
            wr(hwfn, ptt, op.addr, op.value);
            break;
        case OpType::write_rt:
            for (uint32_t k = 0; k < op.count; k++)
                if (rt.valid[op.value + k])
                    wr(hwfn, ptt, op.addr + 4 * k, rt.values[op.value + k]);
            break;
        case OpType::write_array:
            for (uint32_t k = 0; k < op.count; k++)
                wr(hwfn, ptt, op.addr + 4 * k, image.array_dword(op, k));
            break;
        case OpType::write_zipped:
            for (uint32_t k = 0; k < op.count; k++)
                wr(hwfn, ptt, op.addr + 4 * k, image.inflated[i][k]);
            break;
        case OpType::zero:
            for (uint32_t k = 0; k < op.count; k++)
                wr(hwfn, ptt, op.addr + 4 * k, 0);
            break;
        case OpType::if_mode:
            if ((modes & op.value) != op.value)
                i += op.count;
            break;
        case OpType::poll: {
            Status rc = init_poll(hwfn, ptt, op, phase);
            if (rc != Status::success)
                return rc;
            break;
        }
        }
    }
    return Status::success;
}

} // namespace cna::ecore
