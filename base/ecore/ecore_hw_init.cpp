/* SPDX-License-Identifier: BSD-3-Clause
 * hw_init and hw_stop: loading the function in the MFW, running the
 * firmware image, starting the slowpath, and the reverse.
 */
#include "ecore_dev_api.h"

#include "ecore_init_image.h"
#include "ecore_init_ops.h"
#include "ecore_iov_api.h"
#include "ecore_int.h"
#include "ecore_log.h"
#include "ecore_mcp.h"
#include "ecore_spq.h"
#include "ecore_vf.h"
#include "hsi_init_image.h"

namespace cna::ecore {

using namespace hsi::init;

namespace {

/* What hw_init has done so far, undone in reverse on failure. */
struct InitProgress {
    bool loaded = false;      /* LOAD_REQ granted */
    bool sb_inited = false;   /* slowpath SB configured in the CAU */
    bool int_enabled = false;
    bool pf_started = false;
};

/* The guide's ecore_get_init_mode(). */
uint32_t get_init_mode(const Hwfn& hwfn, IntMode int_mode)
{
    uint32_t modes = mode::ASIC | mode::SF;
    switch (hwfn.hw_info.num_ports) {
    case 1: modes |= mode::PORTS_1; break;
    case 2: modes |= mode::PORTS_2; break;
    default: modes |= mode::PORTS_4; break;
    }
    modes |= int_mode == IntMode::msix ? mode::MSIX : mode::POLL;
    return modes;
}

const char* load_code_name(uint32_t load_code)
{
    switch (load_code) {
    case hsi::mfw::FW_MSG_CODE_DRV_LOAD_ENGINE: return "ENGINE";
    case hsi::mfw::FW_MSG_CODE_DRV_LOAD_PORT: return "PORT";
    default: return "FUNCTION";
    }
}

/* The phases the MFW's answer requires: ENGINE runs all three, PORT the
 * port and PF phases, FUNCTION the PF phase only. */
Status run_phases(Hwfn& hwfn, Ptt& ptt, const InitImage& image, uint32_t load_code, uint32_t modes)
{
    Status rc = Status::success;
    if (load_code == hsi::mfw::FW_MSG_CODE_DRV_LOAD_ENGINE)
        rc = init_run(hwfn, ptt, image, Phase::engine, modes);
    if (rc == Status::success && load_code != hsi::mfw::FW_MSG_CODE_DRV_LOAD_FUNCTION)
        rc = init_run(hwfn, ptt, image, Phase::port, modes);
    if (rc == Status::success)
        rc = init_run(hwfn, ptt, image, Phase::pf, modes);
    return rc;
}

/* Stops the function's storms and DMA. */
void pf_disable(Hwfn& hwfn, Ptt& ptt)
{
    wr(hwfn, ptt, hsi::reg::STORM_PF_ENABLE, 0);
    wr(hwfn, ptt, hsi::reg::PGLUE_PF_MASTER_ENABLE, 0);
}

Status hw_init_steps(Hwfn& hwfn, Ptt& ptt, const InitImage& image, IntMode int_mode, InitProgress& done)
{
    uint32_t load_code = 0;
    Status rc = mcp_load_req(hwfn, ptt, &load_code);
    if (rc != Status::success)
        return rc;
    done.loaded = true;

    const uint32_t modes = get_init_mode(hwfn, int_mode);
    DP_INFO(hwfn, "MFW granted a %s load, init modes 0x%x", load_code_name(load_code), modes);
    iov_disable_leftovers(hwfn, ptt);
    wr(hwfn, ptt, hsi::reg::MISC_INIT_MODE, modes);
    store_rt_reg(hwfn, rt::IGU_INT_MODE,
                 static_cast<uint32_t>(int_mode == IntMode::msix ? hsi::IntMode::msix : hsi::IntMode::poll));
    rc = run_phases(hwfn, ptt, image, load_code, modes);
    if (rc != Status::success)
        return rc;

    SpSbInfo& sp = *hwfn.sp_sb;
    rc = int_sb_init(hwfn, ptt, sp.info, sp.mem.va(), sp.mem.iova(), hsi::SP_SB_ID);
    if (rc != Status::success)
        return rc;
    sp.attn_idx = 0;
    done.sb_inited = true;

    if (int_mode == IntMode::msix && hwfn.dev->ops.slowpath_irq_req) {
        rc = hwfn.dev->ops.slowpath_irq_req(hwfn);
        if (rc != Status::success) {
            DP_ERR(hwfn, "the upper layer could not install the slowpath IRQ: %s", status_name(rc));
            return rc;
        }
        sp.irq_requested = true;
    }
    int_igu_enable_int(hwfn, ptt, int_mode);
    done.int_enabled = true;

    rc = spq_pf_start(hwfn, sp.info,
                      reinterpret_cast<volatile uint16_t*>(hwfn.dev->pci->gtt() + hsi::iro::gtt::EQ_CONS));
    if (rc != Status::success)
        return rc;
    done.pf_started = true;
    return mcp_load_done(hwfn, ptt);
}

void hw_init_rollback(Hwfn& hwfn, Ptt& ptt, const InitProgress& done)
{
    if (done.pf_started)
        spq_pf_stop(hwfn);
    if (done.int_enabled)
        int_igu_disable_int(hwfn, ptt);
    if (hwfn.sp_sb->irq_requested && hwfn.dev->ops.slowpath_irq_release) {
        hwfn.dev->ops.slowpath_irq_release(hwfn);
        hwfn.sp_sb->irq_requested = false;
    }
    if (done.sb_inited)
        int_sb_release(hwfn, ptt, hwfn.sp_sb->info);
    if (done.loaded) {
        pf_disable(hwfn, ptt);
        mcp_unload(hwfn, ptt);
    }
}

} // namespace

Status hw_init(Dev& dev, const HwInitParams& params)
{
    Hwfn& hwfn = dev.hwfn;
    if (!hwfn.hw_prepared || !hwfn.resc_allocated || hwfn.hw_init_done) {
        DP_ERR(hwfn, "hw_init needs a prepared device with resources, not yet initialised");
        return Status::busy;
    }
    if (dev.is_vf) {
        /* Its PF loaded the firmware and started the function. */
        hwfn.int_mode = params.int_mode;
        hwfn.hw_init_done = true;
        return Status::success;
    }

    std::span<const uint8_t> bytes = params.fw_image;
    if (bytes.empty())
        bytes = std::span<const uint8_t>(builtin_image, builtin_image_size);
    const std::string name = params.fw_name.empty() ? "compiled-in image" : std::string(params.fw_name);
    InitImage image;
    std::string why;
    ImageError err = init_image_parse(bytes, &image, &why);
    if (err != ImageError::none) {
        DP_ERR(hwfn, "firmware %s rejected (%s): %s", name.c_str(), image_error_name(err), why.c_str());
        return Status::inval;
    }
    const ImageHeader& h = image.header;
    DP_INFO(hwfn, "firmware %s: %u.%u.%u.%u for HSI %u.%u%s, %u ops", name.c_str(), h.fw_major, h.fw_minor,
            h.fw_rev, h.fw_eng, h.hsi_major, h.hsi_minor, (h.flags & IMAGE_FLAG_ZIPPED) ? " (zipped)" : "",
            h.op_count);

    hwfn.hw_info.fw_version = (uint32_t{h.fw_major} << 24) | (uint32_t{h.fw_minor} << 16) |
                              (uint32_t{h.fw_rev} << 8) | h.fw_eng;

    PttGuard ptt(hwfn);
    if (!ptt)
        return Status::again;
    hwfn.int_mode = params.int_mode;
    InitProgress done;
    Status rc = hw_init_steps(hwfn, *ptt, image, params.int_mode, done);
    if (rc != Status::success) {
        DP_ERR(hwfn, "hw_init failed: %s", status_name(rc));
        hw_init_rollback(hwfn, *ptt, done);
        return rc;
    }
    hwfn.hw_init_done = true;
    return Status::success;
}

Status hw_stop(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    if (!hwfn.hw_init_done)
        return Status::success;
    if (dev.is_vf)
        return vf_close(hwfn);
    /* The VFs' vports are the PF's ramrods' to stop, before PF_STOP. */
    iov_unload(hwfn);
    PttGuard ptt(hwfn);
    if (!ptt)
        return Status::again;

    /* A device that is gone has nothing left to stop: only the host's side
     * is undone. */
    Status first = Status::success;
    if (!device_gone(hwfn)) {
        first = spq_pf_stop(hwfn);
        int_igu_disable_int(hwfn, *ptt);
        pf_disable(hwfn, *ptt);
        const Status rc = mcp_unload(hwfn, *ptt);
        if (first == Status::success)
            first = rc;
    }
    if (hwfn.sp_sb->irq_requested && dev.ops.slowpath_irq_release)
        dev.ops.slowpath_irq_release(hwfn);
    hwfn.sp_sb->irq_requested = false;
    hwfn.hw_init_done = false;
    if (first != Status::success)
        DP_ERR(hwfn, "hw_stop completed with errors: %s", status_name(first));
    return first;
}

void int_disable_post_isr_release(Dev& dev)
{
    Hwfn& hwfn = dev.hwfn;
    if (!hwfn.sp_sb || hwfn.sp_sb->info.sb_virt == nullptr)
        return;
    PttGuard ptt(hwfn);
    if (ptt)
        int_sb_release(hwfn, *ptt, hwfn.sp_sb->info);
}

} // namespace cna::ecore
