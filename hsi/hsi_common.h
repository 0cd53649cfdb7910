/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the hardware/software interface shared by the driver (base/ecore,
 * pmd/...) and the adapter (firmware/). Everything the two sides of the PCI bus
 * agree on lives in this directory and nowhere else.
 *
 * All multi-byte fields are little-endian. Every struct that crosses the bus
 * carries a static_assert on its size so a layout change cannot go unnoticed.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace cna::hsi {

/* The version of this interface. The firmware image carries the version it was
 * built for; ecore refuses an image whose major differs from its own. */
inline constexpr uint8_t HSI_VERSION_MAJOR = 5; /* 2: 16-byte RxCqe; 3: VPORT_START without drop_ttl0; 4: a GTT page per PF; 5: 10 vports per PF */
inline constexpr uint8_t HSI_VERSION_MINOR = 2; /* 0: the port's switch (hsi_switch.h); 1: a VF channel's unattended state, precise time (hsi_ptp.h); 2: Rx queues' timestamps (eth::rxq_flags) */

/* Chip-wide limits. Resources are split between PFs by the MFW (SHMEM). */
inline constexpr uint32_t MAX_PORTS = 4;
inline constexpr uint32_t MAX_PFS = 8;
inline constexpr uint32_t MAX_SB_PER_PF = 64;      /* fastpath status blocks */
inline constexpr uint32_t MAX_QUEUES_PER_PF = 32;  /* per direction */
/* The PF's own, and one per VF for its representor (hsi_switch.h). */
inline constexpr uint32_t MAX_VPORTS_PER_PF = 10;
inline constexpr uint32_t MAX_MSIX_PER_PF = MAX_SB_PER_PF + 1; /* + slowpath */

/* Per-PF connection ids: one for the slowpath queue, one per Tx queue. */
inline constexpr uint32_t CID_SPQ = 0;
inline constexpr uint32_t cid_tx_queue(uint32_t queue) { return 1 + queue; }
inline constexpr uint32_t MAX_CIDS_PER_PF = 1 + MAX_QUEUES_PER_PF;
inline constexpr uint32_t CONN_CONTEXT_SIZE = 128; /* bytes of host context per cid */

/* ------------------------------------------------------------------------
 * BAR0: the reduced PF BAR (ecore guide, chapter "Register Access").
 *
 *   0x00000  PTT entries: PTT i's 32-bit register selects the 4 KiB-aligned
 *            internal (GRC) address its window points to.
 *   0x00800  IGU command space: one 32-bit register per status block.
 *   0x01000  windows, 4 KiB each: PTT_WINDOWS windows re-pointable through
 *            the PTT entries, then the GTT window fixed at the PF's own
 *            page of storm RAM (iro::gtt_page; plain memory on the host
 *            side, and nothing of another function's).
 * ---------------------------------------------------------------------- */
inline constexpr uint32_t WINDOW_SIZE = 0x1000;
inline constexpr uint32_t BAR0_PTT_ENTRY_BASE = 0x0000;
inline constexpr uint32_t BAR0_IGU_CMD_BASE = 0x0800;
inline constexpr uint32_t BAR0_WINDOW_BASE = 0x1000;
inline constexpr uint32_t PTT_WINDOWS = 16;
inline constexpr uint32_t BAR0_GTT_BASE = BAR0_WINDOW_BASE + PTT_WINDOWS * WINDOW_SIZE;
inline constexpr uint32_t GTT_SIZE = WINDOW_SIZE;
inline constexpr uint32_t BAR0_SIZE = BAR0_GTT_BASE + GTT_SIZE;

inline constexpr uint32_t bar0_ptt_entry(uint32_t ptt) { return BAR0_PTT_ENTRY_BASE + ptt * 4; }
inline constexpr uint32_t bar0_ptt_window(uint32_t ptt) { return BAR0_WINDOW_BASE + ptt * WINDOW_SIZE; }
inline constexpr uint32_t bar0_igu_cmd(uint32_t sb) { return BAR0_IGU_CMD_BASE + sb * 4; }

/* IGU command (written to bar0_igu_cmd(sb)): acknowledges a status block up
 * to sb_index and optionally changes its interrupt state. The IGU raises the
 * SB's MSI-X vector whenever enabled and producer != acknowledged index. */
inline constexpr uint32_t IGU_CMD_INDEX_MASK = 0x00ffffff;
inline constexpr uint32_t IGU_CMD_INT_SHIFT = 24;
enum class IguIntOp : uint32_t { nop = 0, enable = 1, disable = 2 };
inline constexpr uint32_t igu_cmd(uint32_t sb_index, IguIntOp op)
{
    return (sb_index & IGU_CMD_INDEX_MASK) | (static_cast<uint32_t>(op) << IGU_CMD_INT_SHIFT);
}
/* Status block id of the slowpath (default) status block; fastpath SBs are
 * 0..MAX_SB_PER_PF-1 and use MSI-X vector sb_id + 1. */
inline constexpr uint32_t SP_SB_ID = MAX_SB_PER_PF;
inline constexpr uint32_t SP_MSIX_VECTOR = 0;
inline constexpr uint32_t msix_vector_of_sb(uint32_t sb_id) { return sb_id == SP_SB_ID ? 0 : sb_id + 1; }

/* ------------------------------------------------------------------------
 * Doorbell BAR: 8 bytes per L2 connection id, then one DPI (doorbell page
 * index) page per RDMA user (hsi_rdma.h lays out its slots). A doorbell
 * carries the absolute producer, never an increment: the engine acts on
 * the latest value only.
 * ---------------------------------------------------------------------- */
inline constexpr uint32_t DB_STRIDE = 8;
inline constexpr uint32_t db_offset(uint32_t cid) { return cid * DB_STRIDE; }
inline constexpr uint32_t DPI_BASE = 0x1000;
inline constexpr uint32_t DPI_SIZE = 0x8000;
inline constexpr uint32_t MAX_DPIS = 16;
inline constexpr uint32_t dpi_offset(uint32_t dpi) { return DPI_BASE + dpi * DPI_SIZE; }
inline constexpr uint32_t DB_BAR_SIZE = DPI_BASE + MAX_DPIS * DPI_SIZE;
static_assert(MAX_CIDS_PER_PF * DB_STRIDE <= DPI_BASE, "L2 doorbells precede the DPI pages");
static_assert(DPI_BASE % 4096 == 0 && DPI_SIZE % 4096 == 0, "a DPI page can be mapped into one process alone");

struct DoorbellData {
    uint16_t prod;       /* absolute producer index */
    uint8_t agg_flags;   /* reserved, zero */
    uint8_t params;      /* reserved, zero */
};
static_assert(sizeof(DoorbellData) == 4);

/* ------------------------------------------------------------------------
 * Internal (GRC) address space, reached through PTT windows. Registers of a
 * "per-function" block act on the PF that owns the BAR; "per-port" registers
 * act on that PF's port.
 * ---------------------------------------------------------------------- */
namespace reg {
/* MISC: identity and chip control. */
inline constexpr uint32_t MISC_BASE = 0x000000;
inline constexpr uint32_t MISC_CHIP_ID = MISC_BASE + 0x00;        /* RO */
inline constexpr uint32_t MISC_PF_ID = MISC_BASE + 0x04;          /* RO: absolute PF id */
inline constexpr uint32_t MISC_PORT_ID = MISC_BASE + 0x08;        /* RO */
inline constexpr uint32_t MISC_NUM_PORTS = MISC_BASE + 0x0c;      /* RO */
inline constexpr uint32_t MISC_FW_VERSION = MISC_BASE + 0x10;     /* WO by init image, RO after */
inline constexpr uint32_t MISC_INIT_MODE = MISC_BASE + 0x14;      /* init modes chosen by ecore */
inline constexpr uint32_t MISC_SCRATCH = MISC_BASE + 0x20;        /* RW, 16 dwords, register self-test */
inline constexpr uint32_t MISC_SCRATCH_DWORDS = 16;

/* PGLUE_B: host interface of the function. */
inline constexpr uint32_t PGLUE_BASE = 0x010000;
inline constexpr uint32_t PGLUE_PF_MASTER_ENABLE = PGLUE_BASE + 0x00; /* 1: function may DMA */
inline constexpr uint32_t PGLUE_PTT_ACCESS_ENABLE = PGLUE_BASE + 0x04; /* hw_prepare opens it */
inline constexpr uint32_t PGLUE_DMA_FAULT_ADDR_LO = PGLUE_BASE + 0x10; /* RO: last faulting IOVA */
inline constexpr uint32_t PGLUE_DMA_FAULT_ADDR_HI = PGLUE_BASE + 0x14;
inline constexpr uint32_t PGLUE_DMA_FAULT_COUNT = PGLUE_BASE + 0x18;
/* RO: the last access no register decoded (attn::BAD_ACCESS): a BAR0 offset
 * or, with BAD_ACCESS_GRC, a GRC address reached through a PTT window. */
inline constexpr uint32_t PGLUE_BAD_ACCESS_ADDR = PGLUE_BASE + 0x20;
inline constexpr uint32_t PGLUE_BAD_ACCESS_INFO = PGLUE_BASE + 0x24;
inline constexpr uint32_t PGLUE_BAD_ACCESS_COUNT = PGLUE_BASE + 0x28;
inline constexpr uint32_t BAD_ACCESS_WRITE = 1u << 0; /* PGLUE_BAD_ACCESS_INFO bits */
inline constexpr uint32_t BAD_ACCESS_GRC = 1u << 1;

/* IGU/CAU: status block configuration (per function). */
inline constexpr uint32_t CAU_BASE = 0x020000;
inline constexpr uint32_t CAU_SB_STRIDE = 0x10;
inline constexpr uint32_t cau_sb_addr_lo(uint32_t sb) { return CAU_BASE + sb * CAU_SB_STRIDE + 0x0; }
inline constexpr uint32_t cau_sb_addr_hi(uint32_t sb) { return CAU_BASE + sb * CAU_SB_STRIDE + 0x4; }
/* bit 0: valid; bits 8..15: MSI-X vector */
inline constexpr uint32_t cau_sb_conf(uint32_t sb) { return CAU_BASE + sb * CAU_SB_STRIDE + 0x8; }
inline constexpr uint32_t CAU_SB_CONF_VALID = 1u << 0;
inline constexpr uint32_t CAU_SB_CONF_VECTOR_SHIFT = 8;
inline constexpr uint32_t IGU_BASE = 0x028000;
inline constexpr uint32_t IGU_INT_MODE = IGU_BASE + 0x00; /* IntMode below */
inline constexpr uint32_t IGU_SB_PROD(uint32_t sb) { return IGU_BASE + 0x100 + sb * 4; } /* RO */

/* Attentions (per function): latched causes, write-1-to-clear. */
inline constexpr uint32_t ATTN_BASE = 0x030000;
inline constexpr uint32_t ATTN_STATUS = ATTN_BASE + 0x00;
inline constexpr uint32_t ATTN_ACK = ATTN_BASE + 0x04;
inline constexpr uint32_t ATTN_MASK = ATTN_BASE + 0x08; /* 1 = enabled */
inline constexpr uint32_t ATTN_FW_ASSERT_CODE = ATTN_BASE + 0x0c; /* RO */

/* MCP: the management processor's scratchpad holds SHMEM (hsi_mfw.h). */
inline constexpr uint32_t MCP_BASE = 0x040000;
inline constexpr uint32_t MCP_SHMEM_BASE = MCP_BASE + 0x1000;
inline constexpr uint32_t MCP_SHMEM_SIZE = 0x4000;
inline constexpr uint32_t MCP_PUBLIC_ADDR = MCP_BASE + 0x00; /* RO: GRC address of SHMEM */

/* NIG: per-port MAC glue, enabled by the PORT init phase. */
inline constexpr uint32_t NIG_BASE = 0x050000;
inline constexpr uint32_t NIG_PORT_MODE = NIG_BASE + 0x00;    /* engine phase: number of ports */
inline constexpr uint32_t NIG_PORT_RX_ENABLE = NIG_BASE + 0x10;
inline constexpr uint32_t NIG_PORT_TX_ENABLE = NIG_BASE + 0x14;
inline constexpr uint32_t NIG_PORT_MAX_FRAME = NIG_BASE + 0x18;

/* Storm control (the firmware processors). */
inline constexpr uint32_t STORM_CTRL_BASE = 0x060000;
inline constexpr uint32_t STORM_FW_CRC = STORM_CTRL_BASE + 0x00;   /* expected CRC32 of microcode */
inline constexpr uint32_t STORM_FW_LEN = STORM_CTRL_BASE + 0x04;   /* microcode length in bytes */
inline constexpr uint32_t STORM_START = STORM_CTRL_BASE + 0x08;    /* write 1: verify and run */
inline constexpr uint32_t STORM_STATUS = STORM_CTRL_BASE + 0x0c;   /* StormStatus */
/* Per-function slowpath configuration, written from the runtime array. */
inline constexpr uint32_t STORM_PF_BASE = 0x068000;
inline constexpr uint32_t STORM_SPQ_BASE_LO = STORM_PF_BASE + 0x00;
inline constexpr uint32_t STORM_SPQ_BASE_HI = STORM_PF_BASE + 0x04;
inline constexpr uint32_t STORM_SPQ_SIZE = STORM_PF_BASE + 0x08;    /* elements, power of 2 */
inline constexpr uint32_t STORM_ILT_BASE_LO = STORM_PF_BASE + 0x0c; /* connection contexts */
inline constexpr uint32_t STORM_ILT_BASE_HI = STORM_PF_BASE + 0x10;
inline constexpr uint32_t STORM_ILT_CIDS = STORM_PF_BASE + 0x14;
inline constexpr uint32_t STORM_PF_ENABLE = STORM_PF_BASE + 0x18;
/* RO: the last queue protocol violation (attn::QUEUE_ERROR), queue_error(),
 * and how many there were. */
inline constexpr uint32_t STORM_PF_QUEUE_ERROR = STORM_PF_BASE + 0x1c;
inline constexpr uint32_t STORM_PF_QUEUE_ERROR_COUNT = STORM_PF_BASE + 0x20;

/* Storm RAM. Its first MAX_PFS pages are the PFs' GTT pages (iro::gtt_page). */
inline constexpr uint32_t STORM_RAM_BASE = 0x400000;
inline constexpr uint32_t STORM_RAM_SIZE = 0x40000;
inline constexpr uint32_t STORM_MICROCODE = STORM_RAM_BASE + 0x20000; /* not GTT-mapped */
inline constexpr uint32_t STORM_MICROCODE_MAX = 0x10000;
} // namespace reg

enum class StormStatus : uint32_t {
    halted = 0,        /* no microcode started yet */
    running = 1,
    bad_microcode = 2, /* CRC mismatch or empty microcode */
    bad_version = 3,   /* image built for another HSI major */
    asserted = 4,      /* firmware assert (fault injection or invariant broken) */
};

enum class IntMode : uint32_t { inta = 0, msi = 1, msix = 2, poll = 3 };

/* Attention causes (reg::ATTN_STATUS bits). */
namespace attn {
inline constexpr uint32_t MFW_EVENT = 1u << 0;  /* MFW posted a message (hsi_mfw.h) */
inline constexpr uint32_t DMA_FAULT = 1u << 1;  /* an IOVA outside the translation table */
inline constexpr uint32_t FW_ASSERT = 1u << 2;  /* storm firmware asserted */
/* The malicious-driver checks: the driver broke a queue's protocol (BDs,
 * producers); the storms dropped what it asked for. */
inline constexpr uint32_t QUEUE_ERROR = 1u << 3;
inline constexpr uint32_t BAD_ACCESS = 1u << 4; /* a BAR0 or GRC access no register decodes */
inline constexpr uint32_t ALL = MFW_EVENT | DMA_FAULT | FW_ASSERT | QUEUE_ERROR | BAD_ACCESS;
} // namespace attn

/* Why the storms refused a queue's request (reg::STORM_PF_QUEUE_ERROR). */
enum class QueueError : uint8_t {
    none = 0,
    first_bd_without_start = 1, /* a packet's first BD lacks txbd::START */
    illegal_nbds = 2,           /* a BD count of 0 or past MAX_BDS_PER_PACKET */
    insufficient_bds = 3,       /* a packet's chain runs past the producer */
    zero_size_bd = 4,
    packet_too_small = 5,       /* shorter than an Ethernet header */
    mtu_violation = 6,          /* longer than the vport's MTU allows */
    packet_too_long = 7,        /* a chain longer than the storms gather */
    illegal_lso = 8,            /* LSO without TCP, an MSS of 0 or segments past the MTU */
    prod_past_ring = 9,         /* a producer more than a ring ahead of the consumer */
    cons_past_prod = 10,        /* a completion consumer ahead of the producer */
};
enum class QueueKind : uint8_t { tx = 0, rx = 1, spq = 2 };
/* reg::STORM_PF_QUEUE_ERROR: bits 0-7 QueueError, 8-15 the queue, 16-17 QueueKind. */
inline constexpr uint32_t queue_error(QueueKind kind, uint32_t queue, QueueError why)
{
    return static_cast<uint32_t>(why) | (queue & 0xff) << 8 | static_cast<uint32_t>(kind) << 16;
}
inline constexpr QueueError queue_error_why(uint32_t v) { return static_cast<QueueError>(v & 0xff); }
inline constexpr uint32_t queue_error_queue(uint32_t v) { return (v >> 8) & 0xff; }
inline constexpr QueueKind queue_error_kind(uint32_t v) { return static_cast<QueueKind>((v >> 16) & 0x3); }

/* ------------------------------------------------------------------------
 * Storm RAM layout (IRO: internal RAM offsets), relative to STORM_RAM_BASE.
 * It starts with one GTT page per PF, what that PF's host may touch
 * directly (its producers): the page its BAR0 GTT window shows, at the
 * offsets of namespace gtt. A host in another process maps that page and
 * nothing else of storm RAM. The rest is reached through PTTs, a PF's own
 * per-PF areas only (pf_owning).
 * ---------------------------------------------------------------------- */
namespace iro {
inline constexpr uint32_t gtt_page(uint32_t pf) { return pf * GTT_SIZE; }
inline constexpr uint32_t RX_PROD_STRIDE = 8;
inline constexpr uint32_t PF_RX_PROD_SIZE = MAX_QUEUES_PER_PF * RX_PROD_STRIDE;
/* Offsets within a PF's GTT page. */
namespace gtt {
/* Per Rx queue: RxProdData (below). */
inline constexpr uint32_t rx_prod(uint32_t queue) { return queue * RX_PROD_STRIDE; }
/* The event queue consumer written by the driver (u16). */
inline constexpr uint32_t EQ_CONS = PF_RX_PROD_SIZE;
} // namespace gtt
inline constexpr uint32_t rx_prod(uint32_t pf, uint32_t queue) { return gtt_page(pf) + gtt::rx_prod(queue); }
inline constexpr uint32_t eq_cons(uint32_t pf) { return gtt_page(pf) + gtt::EQ_CONS; }
/* Statistics maintained by the storms, read by ecore through a PTT. */
inline constexpr uint32_t STATS_BASE = 0x10000;
inline constexpr uint32_t VPORT_STATS_SIZE = 0x100;
inline constexpr uint32_t QUEUE_STATS_SIZE = 0x40;
inline constexpr uint32_t vport_stats(uint32_t pf, uint32_t vport)
{
    return STATS_BASE + (pf * MAX_VPORTS_PER_PF + vport) * VPORT_STATS_SIZE;
}
inline constexpr uint32_t QUEUE_STATS_BASE = STATS_BASE + MAX_PFS * MAX_VPORTS_PER_PF * VPORT_STATS_SIZE;
inline constexpr uint32_t rx_queue_stats(uint32_t pf, uint32_t q)
{
    return QUEUE_STATS_BASE + ((pf * MAX_QUEUES_PER_PF + q) * 2) * QUEUE_STATS_SIZE;
}
inline constexpr uint32_t tx_queue_stats(uint32_t pf, uint32_t q)
{
    return rx_queue_stats(pf, q) + QUEUE_STATS_SIZE;
}
/* Per PF, per flow rule id (hsi_eth.h FLOW_MAX_RULES of them): eth::FlowCounters. */
inline constexpr uint32_t FLOW_COUNTERS_BASE = tx_queue_stats(MAX_PFS - 1, MAX_QUEUES_PER_PF - 1) + QUEUE_STATS_SIZE;
inline constexpr uint32_t FLOW_COUNTERS_SIZE = 16;
inline constexpr uint32_t FLOW_RULES_PER_PF = 64;
inline constexpr uint32_t flow_counters(uint32_t pf, uint32_t rule)
{
    return FLOW_COUNTERS_BASE + (pf * FLOW_RULES_PER_PF + rule) * FLOW_COUNTERS_SIZE;
}
/* Per PF: rdma::RoceStats, the RoCE engine's counters of the port. */
inline constexpr uint32_t ROCE_STATS_BASE = flow_counters(MAX_PFS - 1, FLOW_RULES_PER_PF - 1) + FLOW_COUNTERS_SIZE;
inline constexpr uint32_t ROCE_STATS_SIZE = 0x100;
inline constexpr uint32_t roce_stats(uint32_t pf) { return ROCE_STATS_BASE + pf * ROCE_STATS_SIZE; }
inline constexpr uint32_t ROCE_STATS_END = roce_stats(MAX_PFS);
/* Per PF: eswitch::SwitchStats, its port's switch's while it manages it (hsi_switch.h). */
inline constexpr uint32_t SWITCH_STATS_BASE = ROCE_STATS_END;
inline constexpr uint32_t SWITCH_STATS_SIZE = 0x40;
inline constexpr uint32_t switch_stats(uint32_t pf) { return SWITCH_STATS_BASE + pf * SWITCH_STATS_SIZE; }
inline constexpr uint32_t SWITCH_STATS_END = switch_stats(MAX_PFS);

/* The PF whose per-PF area holds `offset`, or SHARED: a PF's PTT reaches
 * its own areas and the shared ones (the microcode), never another PF's. */
inline constexpr uint32_t SHARED = MAX_PFS;
inline constexpr uint32_t pf_owning(uint32_t offset)
{
    if (offset < gtt_page(MAX_PFS))
        return offset / GTT_SIZE;
    if (offset >= STATS_BASE && offset < QUEUE_STATS_BASE)
        return (offset - STATS_BASE) / (MAX_VPORTS_PER_PF * VPORT_STATS_SIZE);
    if (offset >= QUEUE_STATS_BASE && offset < FLOW_COUNTERS_BASE)
        return (offset - QUEUE_STATS_BASE) / (MAX_QUEUES_PER_PF * 2 * QUEUE_STATS_SIZE);
    if (offset >= FLOW_COUNTERS_BASE && offset < ROCE_STATS_BASE)
        return (offset - FLOW_COUNTERS_BASE) / (FLOW_RULES_PER_PF * FLOW_COUNTERS_SIZE);
    if (offset >= ROCE_STATS_BASE && offset < ROCE_STATS_END)
        return (offset - ROCE_STATS_BASE) / ROCE_STATS_SIZE;
    if (offset >= SWITCH_STATS_BASE && offset < SWITCH_STATS_END)
        return (offset - SWITCH_STATS_BASE) / SWITCH_STATS_SIZE;
    return SHARED;
}
} // namespace iro
static_assert(iro::gtt::EQ_CONS + 8 <= GTT_SIZE, "a PF's producers are in its GTT page");
static_assert(iro::gtt_page(MAX_PFS) <= iro::STATS_BASE, "GTT pages precede the statistics");
static_assert(iro::SWITCH_STATS_END <= reg::STORM_MICROCODE - reg::STORM_RAM_BASE,
              "the per-PF areas end before the microcode");

/* Rx producer update: the driver writes both fields with one 32-bit store. */
struct RxProdData {
    uint16_t bd_prod;  /* absolute Rx BD producer */
    uint16_t cqe_cons; /* completions consumed by the driver (frees CQE slots) */
};
static_assert(sizeof(RxProdData) == 4);

/* ------------------------------------------------------------------------
 * Status blocks, DMA-written by the CAU into host memory.
 * ---------------------------------------------------------------------- */
inline constexpr uint32_t PIS_PER_SB = 12;
struct StatusBlock {
    uint16_t pi_array[PIS_PER_SB]; /* protocol indices */
    uint32_t prod_index;           /* running index, bumped on every SB update */
    uint32_t reserved;
};
static_assert(sizeof(StatusBlock) == 32);

/* Slowpath status block protocol indices. */
inline constexpr uint32_t SP_PI_EQ = 0;    /* event queue producer */
inline constexpr uint32_t SP_PI_ATTN = 1;  /* bumped whenever an attention is latched */
/* Fastpath status block protocol indices (L2). */
inline constexpr uint32_t L2_PI_RX = 0;    /* Rx CQE producer */
inline constexpr uint32_t L2_PI_TX = 1;    /* Tx BD consumer */

/* A 64-bit DMA address split in two little-endian halves. */
struct RegPair {
    uint32_t lo;
    uint32_t hi;
};
static_assert(sizeof(RegPair) == 8);
inline constexpr RegPair make_regpair(uint64_t v)
{
    return RegPair{static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)};
}
inline constexpr uint64_t from_regpair(RegPair p) { return (uint64_t{p.hi} << 32) | p.lo; }

/* Connection context in host memory (ILT), written back by the storms when a
 * connection starts; the driver does not interpret it beyond its size. */
struct ConnContext {
    uint32_t cid;
    uint8_t type;     /* ConnType */
    uint8_t active;
    uint16_t queue_id;
    RegPair ring_base;
    uint32_t ring_size;
    uint16_t sb_id;
    uint8_t sb_pi;
    uint8_t vport_id;
    uint8_t reserved[CONN_CONTEXT_SIZE - 24];
};
static_assert(sizeof(ConnContext) == CONN_CONTEXT_SIZE);
enum class ConnType : uint8_t { none = 0, spq = 1, eth_tx = 2 };

} // namespace cna::hsi
