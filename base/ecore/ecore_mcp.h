/* SPDX-License-Identifier: BSD-3-Clause
 * The MFW interface, ecore-internal part: SHMEM addresses and shadows, the
 * load/unload handshake and MFW event handling.
 */
#pragma once

#include <array>
#include <cstdint>

#include "ecore_mcp_api.h"
#include "hsi_mfw.h"
#include "osal_sync.h"

namespace cna::ecore {

struct McpInfo {
    uint32_t shmem_base = 0;   /* GRC address of SHMEM (MCP_PUBLIC_ADDR) */
    uint32_t drv_mb_addr = 0;  /* this PF's mailboxes */
    uint32_t mfw_mb_addr = 0;
    uint32_t port_addr = 0;
    uint32_t func_addr = 0;

    osal::Mutex mb_lock;       /* one outstanding command per PF */
    uint16_t drv_mb_seq = 0;   /* seq of the last command sent */
    uint32_t cmd_timeout_ms = 2000;

    /* MFW -> driver messages handled so far (copy of msg_prod). */
    std::array<uint32_t, hsi::mfw::MFW_MSG_COUNT> mfw_msg_shadow{};

    McpLinkParams link_params;
    osal::Spinlock link_lock;  /* link_state: DPC writes, upper layer reads */
    McpLinkState link_state;

    bool loaded = false;       /* LOAD_REQ granted, UNLOAD_DONE not yet sent */
};

/* hw_prepare: find SHMEM (fails with nodev if the MFW has not published it)
 * and learn the function's configuration into hwfn.hw_info. */
Status mcp_info_init(Hwfn& hwfn, Ptt& ptt);
void mcp_info_free(Hwfn& hwfn);

/* LOAD_REQ: *load_code gets FW_MSG_CODE_DRV_LOAD_ENGINE/PORT/FUNCTION. */
Status mcp_load_req(Hwfn& hwfn, Ptt& ptt, uint32_t* load_code);
Status mcp_load_done(Hwfn& hwfn, Ptt& ptt);
/* SR-IOV: the PF's cleanup after VF `vf`'s FLR is done (its final cleanup
 * ramrod completed): the MFW ends the FLR. */
Status mcp_ack_vf_flr(Hwfn& hwfn, Ptt& ptt, uint32_t vf);
/* UNLOAD_REQ then UNLOAD_DONE: the PF is no longer loaded in the MFW. */
Status mcp_unload(Hwfn& hwfn, Ptt& ptt);

/* From the DPC on attn::MFW_EVENT: handles every message whose producer
 * moved and acknowledges it. Returns whether the link changed (the DPC then
 * calls UpperOps::link_update, outside its lock). */
bool mcp_handle_events(Hwfn& hwfn, Ptt& ptt);

const char* mcp_cmd_name(uint32_t cmd);

} // namespace cna::ecore
