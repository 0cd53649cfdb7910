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
    DP_VERBOSE(hwfn, osal::dp_module::INIT, "%s phase: %u ops, modes 0x%x", phase_name(phase),
               image.phases[static_cast<uint32_t>(phase)].op_count, modes);
    struct Io {
        Hwfn& hwfn;
        Ptt& ptt;
        Phase phase;
        void write(uint32_t addr, uint32_t value) { wr(hwfn, ptt, addr, value); }
        bool runtime(uint32_t idx, uint32_t* value) const
        {
            *value = hwfn.rt_data->values[idx];
            return hwfn.rt_data->valid[idx];
        }
        bool poll(const InitOp& op) { return init_poll(hwfn, ptt, op, phase) == Status::success; }
    } io{hwfn, ptt, phase};
    return init_image_run(image, phase, modes, io) ? Status::success : Status::timeout;
}

} // namespace cna::ecore
