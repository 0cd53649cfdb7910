/* SPDX-License-Identifier: BSD-3-Clause
 * Device bring-up and tear-down (guide chapter "Hardware/Firmware
 * initialization"). The upper layer calls, in order:
 *
 *   init_struct -> hw_prepare -> resc_alloc -> resc_setup -> hw_init
 *   ... protocol work (L2) ...
 *   hw_stop -> [release the slowpath IRQ] -> int_disable_post_isr_release
 *           -> resc_free -> hw_remove
 *
 * Each step undoes its own partial work when it fails.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ecore.h"
#include "ecore_hw.h"
#include "osal_log.h"

namespace cna::ecore {

/* Early initialisation of a Dev the upper layer owns: its log name, the PCI
 * function (attached by the OSAL) and the upper-layer hooks. */
void init_struct(Dev& dev, std::string name, osal::PciFunction& pci, UpperOps ops);

/* The guide's init_dp: verbosity of ecore's prints. */
void init_dp(Dev& dev, uint32_t dp_module, osal::DpLevel dp_level);

/* Opens the BAR (PTT pool, PGLUE access) and learns the configuration from
 * the registers and SHMEM into hwfn.hw_info. Fails (nodev) when the MFW has
 * not published SHMEM. */
Status hw_prepare(Dev& dev);

/* Host memory the device needs: ILT context memory for every cid, the SPQ
 * ring and its ramrod data, the EQ ring, the slowpath status block and the
 * runtime array. */
Status resc_alloc(Dev& dev);

/* Fills the runtime array from the allocated resources (the chip itself is
 * not touched: it may still be in reset). */
void resc_setup(Dev& dev);

struct HwInitParams {
    IntMode int_mode = IntMode::msix;
    /* The firmware image: empty for the one compiled into the driver, or
     * the bytes of a binary image file (plain or zipped variant). */
    std::span<const uint8_t> fw_image;
    /* Where fw_image came from (a path), for messages; empty: compiled-in. */
    std::string_view fw_name;
};

/* Validates the firmware image, then LOAD_REQ, runs the init phases the MFW
 * answer requires, initialises the slowpath status block, requests the
 * slowpath IRQ (UpperOps), sends PF_START and LOAD_DONE. On failure nothing
 * is left behind: the PF is unloaded in the MFW if it got that far. */
Status hw_init(Dev& dev, const HwInitParams& params);

/* PF_STOP, interrupts disabled, UNLOAD_REQ/UNLOAD_DONE, slowpath IRQ
 * released (UpperOps). Every vport must have been stopped before. Goes all
 * the way even when a step fails; returns the first failure. */
Status hw_stop(Dev& dev);

/* After the slowpath IRQ is released: the CAU stops writing the slowpath
 * status block, so its memory may be freed. */
void int_disable_post_isr_release(Dev& dev);

void resc_free(Dev& dev);

/* Closes what hw_prepare opened; REG_RD/REG_WR are unused afterwards. */
void hw_remove(Dev& dev);

} // namespace cna::ecore
