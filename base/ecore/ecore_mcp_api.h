/* SPDX-License-Identifier: BSD-3-Clause
 * The management firmware interface (guide chapter "Management firmware
 * interface"): the driver -> MFW mailbox and the link.
 */
#pragma once

#include <cstdint>

#include "ecore.h"
#include "ecore_hw.h"

namespace cna::ecore {

/* Link configuration handed to the MFW by mcp_set_link(true). Filled from
 * SHMEM defaults in hw_prepare; the upper layer may change it before. */
struct McpLinkParams {
    uint32_t forced_speed_mbps = 0; /* 0: autonegotiate */
    uint32_t adv_speeds = 0;        /* hsi::mfw::speed_cap() bits */
    bool pause_autoneg = true;
    bool pause_rx = true;
    bool pause_tx = true;
    uint32_t loopback_mode = 0;
};

/* The link as the MFW last reported it (updated from the DPC). */
struct McpLinkState {
    bool link_up = false;
    uint32_t speed_mbps = 0;
    bool full_duplex = false;
    bool autoneg = false;
    bool autoneg_complete = false;
    bool rx_pause = false;
    bool tx_pause = false;
    bool partner_detected = false;
    uint32_t change_count = 0;      /* transitions seen by the MFW */
};

/* Sends one mailbox command and waits (bounded, 2 s) for the MFW's answer.
 * resp gets the FW_MSG_CODE_* (without seq), resp_param fw_mb_param. A
 * silent MFW gives Status::timeout. One command at a time per PF. */
Status mcp_cmd(Hwfn& hwfn, Ptt& ptt, uint32_t cmd, uint32_t param, uint32_t* resp,
               uint32_t* resp_param);

/* The link configuration (mutable), and a snapshot of the link state. */
McpLinkParams& mcp_get_link_params(Hwfn& hwfn);
McpLinkState mcp_get_link_state(Hwfn& hwfn);

/* true: INIT_PHY with the link params; false: LINK_RESET. The result comes
 * later, as a link change (UpperOps::link_update). */
Status mcp_set_link(Hwfn& hwfn, Ptt& ptt, bool link_up);

/* GET_LINK and refresh the link state from SHMEM. */
Status mcp_update_link_state(Hwfn& hwfn, Ptt& ptt);

} // namespace cna::ecore
