/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the management firmware (MFW) interface. SHMEM lives in the MCP
 * scratchpad at reg::MCP_SHMEM_BASE and is read and written through PTTs.
 */
#pragma once

#include "hsi_common.h"

namespace cna::hsi::mfw {

inline constexpr uint32_t SHMEM_MAGIC = 0x4d414e43; /* "CNAM" */

/* ---- Driver -> MFW mailbox: header = command | sequence -------------- */
inline constexpr uint32_t DRV_MSG_CODE_MASK = 0xffff0000;
inline constexpr uint32_t DRV_MSG_SEQ_MASK = 0x0000ffff;
inline constexpr uint32_t DRV_MSG_CODE_LOAD_REQ = 0x10000000;
inline constexpr uint32_t DRV_MSG_CODE_LOAD_DONE = 0x11000000;
inline constexpr uint32_t DRV_MSG_CODE_UNLOAD_REQ = 0x20000000;
inline constexpr uint32_t DRV_MSG_CODE_UNLOAD_DONE = 0x21000000;
inline constexpr uint32_t DRV_MSG_CODE_INIT_PHY = 0x22000000;   /* link set, DrvPhyCfg in union */
inline constexpr uint32_t DRV_MSG_CODE_LINK_RESET = 0x23000000;
inline constexpr uint32_t DRV_MSG_CODE_GET_LINK = 0x24000000;   /* refresh port link_status */
/* SR-IOV: the PF cleaned up after a VF's function level reset (param: the
 * VF, relative to the PF; its final cleanup ramrod done): the MFW clears
 * its bit in reg::IOV_FLR_PENDING, and the VF may be enabled again. */
inline constexpr uint32_t DRV_MSG_CODE_VF_DISABLED_DONE = 0x25000000;

/* ---- MFW -> driver response: header = response | sequence ----------- */
inline constexpr uint32_t FW_MSG_CODE_MASK = 0xffff0000;
inline constexpr uint32_t FW_MSG_SEQ_MASK = 0x0000ffff;
inline constexpr uint32_t FW_MSG_CODE_DRV_LOAD_ENGINE = 0x10100000;
inline constexpr uint32_t FW_MSG_CODE_DRV_LOAD_PORT = 0x10110000;
inline constexpr uint32_t FW_MSG_CODE_DRV_LOAD_FUNCTION = 0x10120000;
inline constexpr uint32_t FW_MSG_CODE_DRV_LOAD_REFUSED = 0x10200000; /* param: LoadRefusal */
inline constexpr uint32_t FW_MSG_CODE_DRV_LOAD_DONE = 0x11100000;
inline constexpr uint32_t FW_MSG_CODE_DRV_UNLOAD_ENGINE = 0x20110000;
inline constexpr uint32_t FW_MSG_CODE_DRV_UNLOAD_PORT = 0x20120000;
inline constexpr uint32_t FW_MSG_CODE_DRV_UNLOAD_FUNCTION = 0x20130000;
inline constexpr uint32_t FW_MSG_CODE_DRV_UNLOAD_DONE = 0x21100000;
inline constexpr uint32_t FW_MSG_CODE_LINK_DONE = 0x22100000;
inline constexpr uint32_t FW_MSG_CODE_VF_DISABLED_DONE = 0x25100000;
inline constexpr uint32_t FW_MSG_CODE_INVALID_SEQUENCE = 0x0f000000; /* e.g. LOAD_DONE before LOAD_REQ */
inline constexpr uint32_t FW_MSG_CODE_UNSUPPORTED = 0x0e000000;

/* LOAD_REQ param: the HSI major the driver speaks (bits 0..7). */
enum class LoadRefusal : uint32_t { hsi_mismatch = 1, already_loaded = 2 };

/* ---- Link ---------------------------------------------------------------- */
enum class LinkSpeed : uint32_t { none = 0, s1g = 1, s10g = 2, s25g = 3, s40g = 4, s50g = 5, s100g = 6 };
inline constexpr uint32_t link_speed_mbps(LinkSpeed s)
{
    constexpr uint32_t mbps[] = {0, 1000, 10000, 25000, 40000, 50000, 100000};
    return mbps[static_cast<uint32_t>(s)];
}
/* PublicPort::link_status bits */
inline constexpr uint32_t LINK_STATUS_LINK_UP = 1u << 0;
inline constexpr uint32_t LINK_STATUS_SPEED_SHIFT = 1;     /* LinkSpeed, 4 bits */
inline constexpr uint32_t LINK_STATUS_SPEED_MASK = 0xfu << LINK_STATUS_SPEED_SHIFT;
inline constexpr uint32_t LINK_STATUS_FULL_DUPLEX = 1u << 5;
inline constexpr uint32_t LINK_STATUS_AUTONEG_ENABLED = 1u << 6;
inline constexpr uint32_t LINK_STATUS_AUTONEG_COMPLETE = 1u << 7;
inline constexpr uint32_t LINK_STATUS_TX_PAUSE = 1u << 8;
inline constexpr uint32_t LINK_STATUS_RX_PAUSE = 1u << 9;
inline constexpr uint32_t LINK_STATUS_PARTNER_DETECTED = 1u << 10;

/* Speed capability bits (PublicPort::speed_capabilities, DrvPhyCfg::adv_speeds). */
inline constexpr uint32_t speed_cap(LinkSpeed s) { return 1u << static_cast<uint32_t>(s); }

/* DrvPhyCfg::pause bits */
inline constexpr uint32_t PHY_PAUSE_AUTONEG = 1u << 0;
inline constexpr uint32_t PHY_PAUSE_RX = 1u << 1;
inline constexpr uint32_t PHY_PAUSE_TX = 1u << 2;

/* Link configuration the driver hands to INIT_PHY (in DrvMailbox::union_data). */
struct DrvPhyCfg {
    uint32_t forced_speed;   /* LinkSpeed; none = autonegotiate */
    uint32_t adv_speeds;     /* speed_cap() bits advertised when autonegotiating */
    uint32_t pause;          /* PHY_PAUSE_* */
    uint32_t loopback_mode;  /* 0: none */
};
static_assert(sizeof(DrvPhyCfg) == 16);

/* ---- MFW -> driver events: per-PF producers, acknowledged by the driver - */
enum class MfwMsg : uint32_t { link_change = 0, max = 8 };
inline constexpr uint32_t MFW_MSG_COUNT = static_cast<uint32_t>(MfwMsg::max);

/* ---- SHMEM layout --------------------------------------------------------- */
struct PublicPort {
    uint32_t link_status;          /* LINK_STATUS_* */
    uint32_t speed_capabilities;   /* speed_cap() bits */
    uint32_t default_speed;        /* LinkSpeed for autoneg result / link up */
    uint32_t media_type;           /* 0 unknown, 1 DA copper, 2 fibre, 3 virtual */
    uint32_t link_change_count;    /* bumped by the MFW on every transition */
    uint32_t reserved[3];
};
static_assert(sizeof(PublicPort) == 32);

struct PublicFunc {
    uint32_t mac_upper;            /* bytes 0..1 of the MAC in bits 15..0 */
    uint32_t mac_lower;            /* bytes 2..5 */
    uint32_t port_id;
    uint32_t mtu;                  /* default MTU */
    uint32_t num_sbs;              /* resources the MFW grants this PF */
    uint32_t num_rx_queues;
    uint32_t num_tx_queues;
    uint32_t num_vports;
    uint32_t num_mac_filters;
    uint32_t num_vlan_filters;
    uint32_t config;               /* bit 0: enabled */
    uint32_t reserved[5];
};
static_assert(sizeof(PublicFunc) == 64);

inline constexpr uint32_t MB_UNION_DWORDS = 16;
struct DrvMailbox {
    uint32_t drv_mb_header;        /* DRV_MSG_CODE_* | seq */
    uint32_t drv_mb_param;
    uint32_t fw_mb_header;         /* FW_MSG_CODE_* | seq (echoes drv seq) */
    uint32_t fw_mb_param;
    uint32_t drv_pulse;
    uint32_t mcp_pulse;
    uint32_t reserved[2];
    uint32_t union_data[MB_UNION_DWORDS]; /* command-specific payload, e.g. DrvPhyCfg */
};
static_assert(sizeof(DrvMailbox) == 96);

struct MfwMailbox {
    uint32_t msg_prod[MFW_MSG_COUNT]; /* MFW increments, then raises attn::MFW_EVENT */
    uint32_t msg_ack[MFW_MSG_COUNT];  /* driver writes back the producer it handled */
};
static_assert(sizeof(MfwMailbox) == 64);

struct Shmem {
    uint32_t magic;                /* SHMEM_MAGIC once the MFW is up */
    uint32_t mfw_version;          /* major<<24 | minor<<16 | rev<<8 | eng */
    uint32_t num_ports;
    uint32_t num_pfs;
    uint32_t reserved[4];
    PublicPort port[MAX_PORTS];
    PublicFunc func[MAX_PFS];
    DrvMailbox drv_mb[MAX_PFS];
    MfwMailbox mfw_mb[MAX_PFS];
};
static_assert(sizeof(Shmem) == 32 + 32 * MAX_PORTS + 64 * MAX_PFS + 96 * MAX_PFS + 64 * MAX_PFS);
static_assert(sizeof(Shmem) <= reg::MCP_SHMEM_SIZE);

/* GRC addresses of SHMEM fields. */
inline constexpr uint32_t shmem_addr(std::size_t field_offset)
{
    return reg::MCP_SHMEM_BASE + static_cast<uint32_t>(field_offset);
}
inline constexpr uint32_t port_addr(uint32_t port)
{
    return shmem_addr(offsetof(Shmem, port) + port * sizeof(PublicPort));
}
inline constexpr uint32_t func_addr(uint32_t pf)
{
    return shmem_addr(offsetof(Shmem, func) + pf * sizeof(PublicFunc));
}
inline constexpr uint32_t drv_mb_addr(uint32_t pf)
{
    return shmem_addr(offsetof(Shmem, drv_mb) + pf * sizeof(DrvMailbox));
}
inline constexpr uint32_t mfw_mb_addr(uint32_t pf)
{
    return shmem_addr(offsetof(Shmem, mfw_mb) + pf * sizeof(MfwMailbox));
}

} // namespace cna::hsi::mfw
