/* SPDX-License-Identifier: BSD-3-Clause
 * The elementary ecore structures: the device (Dev) and its HW function
 * (Hwfn), and the hooks the upper layer implements (the guide's OSALs that
 * belong to the driver rather than to the OS).
 *
 * The upper layer owns a Dev, hands it to init_struct() and then drives it
 * through the *_api.h functions. It may read Hwfn::hw_info; everything behind
 * the unique_ptrs is ecore's own.
 */
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ecore_status.h"
#include "osal.h"

namespace cna::ecore {

struct Dev;
struct Hwfn;
struct PttPool;
struct McpInfo;
struct Spq;
struct Eq;
struct CxtMngr;
struct SpSbInfo;
struct RtData;
struct L2Info;
struct RdmaInfo;
struct VfIov;
struct PfIov;
struct SwitchInfo;

enum class IntMode { msix, poll };

/* Resources the MFW granted this PF (SHMEM). */
struct Resources {
    uint32_t num_sbs = 0;
    uint32_t num_rx_queues = 0;
    uint32_t num_tx_queues = 0;
    uint32_t num_vports = 0;
    uint32_t num_mac_filters = 0;
    uint32_t num_vlan_filters = 0;
};

/* What the upper layer asks of the PF before resc_alloc (guide: struct
 * ecore_pf_params): RDMA's objects size the ILT. */
struct RdmaPfParams {
    uint32_t num_qps = 0;   /* 0: no RDMA */
    uint32_t num_mrs = 0;
};
struct PfParams {
    RdmaPfParams rdma;
};

/* What hw_prepare learned from the registers and SHMEM. */
struct HwInfo {
    uint32_t chip_id = 0;
    uint32_t pf_id = 0;        /* absolute PF id on the adapter */
    uint32_t port_id = 0;
    uint32_t num_ports = 0;
    uint32_t num_pfs = 0;
    uint32_t mfw_version = 0;  /* major<<24 | minor<<16 | rev<<8 | eng */
    uint32_t fw_version = 0;   /* of the loaded firmware image, same packing (hw_init) */
    std::array<uint8_t, 6> mac{};
    uint16_t mtu = 0;          /* default MTU */
    uint32_t speed_capabilities = 0; /* hsi::mfw::speed_cap() bits */
    Resources resc;
};

/* Hooks into the upper layer. Each may be empty. They run without ecore
 * locks held; link_update runs on the EAL interrupt thread (must not block). */
struct UpperOps {
    /* The guide's osal_link_update(): the link changed, read mcp_get_link_state(). */
    std::function<void(Hwfn&)> link_update;
    /* OSAL_SLOWPATH_IRQ_REQ: install a handler for the slowpath vector
     * (hsi::SP_MSIX_VECTOR) that calls int_sp_dpc(). Called by hw_init in
     * MSIX mode, before interrupts are enabled. */
    std::function<Status(Hwfn&)> slowpath_irq_req;
    /* Remove that handler; called by hw_stop (and a failed hw_init) once the
     * device no longer raises slowpath interrupts. */
    std::function<void(Hwfn&)> slowpath_irq_release;
};

struct Hwfn {
    Hwfn();
    ~Hwfn();
    Hwfn(const Hwfn&) = delete;
    Hwfn& operator=(const Hwfn&) = delete;

    Dev* dev = nullptr;
    HwInfo hw_info;
    PfParams pf_params;
    IntMode int_mode = IntMode::msix;

    std::unique_ptr<PttPool> ptt_pool;
    std::unique_ptr<McpInfo> mcp_info;
    std::unique_ptr<CxtMngr> cxt_mngr; /* ILT context memory */
    std::unique_ptr<Spq> spq;
    std::unique_ptr<Eq> eq;
    std::unique_ptr<SpSbInfo> sp_sb;   /* slowpath (default) status block */
    std::unique_ptr<RtData> rt_data;   /* runtime array */
    std::unique_ptr<L2Info> l2;        /* started vports and queues */
    std::unique_ptr<RdmaInfo> rdma;    /* when pf_params.rdma asks for QPs */
    std::unique_ptr<VfIov> vf_iov;     /* a VF's channel to its PF, from hw_prepare */
    std::unique_ptr<PfIov> iov;        /* SR-IOV: the PF's VFs (iov_enable) */
    std::unique_ptr<SwitchInfo> eswitch; /* its port's switch, in switchdev mode */

    /* Serialises the slowpath DPC with ramrod waiters that process the EQ
     * themselves: whoever holds it owns the EQ consumer and the SP SB ack. */
    osal::Spinlock dpc_lock;
    /* Serialises the PTP block's two-word accesses (ecore_ptp_api.h): the
     * clock's reading and setting, a latch's stamp. */
    osal::Mutex ptp_lock;

    bool hw_prepared = false;
    bool resc_allocated = false;
    bool hw_init_done = false;  /* loaded in the MFW, PF started */
};

struct Dev {
    std::string name;                 /* log prefix, e.g. the ethdev name */
    osal::PciFunction* pci = nullptr; /* REG_RD/REG_WR, GTT, doorbells, MSI-X */
    /* The PCI function is a VF (init_struct): no PTT, MFW, SPQ, EQ or
     * slowpath SB; what the PF does through them, the VF asks its PF for
     * (ecore_vf_api.h). */
    bool is_vf = false;
    UpperOps ops;
    Hwfn hwfn;                        /* one HW function per device */
};

inline bool is_vf(const Hwfn& hwfn) { return hwfn.dev->is_vf; }

} // namespace cna::ecore
