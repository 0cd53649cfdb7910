/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: SR-IOV. A VF is a light PCI function: its reduced BAR0 holds the
 * VF-PF channel's trigger, its IGU commands and its GTT page (its own Rx
 * producers); everything else it asks of its PF.
 *
 * The channel (ecore guide, "HW channel"). The VF writes a request (TLVs,
 * below) into its own memory, the request's IOVA into CHANNEL_REQ_ADDR and
 * 1 into CHANNEL_TRIGGER. The adapter raises an event on the PF (async EQE
 * vf_message: the VF and the address); the PF copies the request by DMA with
 * the VF's identity (through the VF's IOMMU domain), processes it, writes
 * the reply to the address the request names, and tells the adapter it is
 * done (the VF may trigger again). The VF polls the reply's status, which the
 * PF writes last. A trigger while a request is pending marks the VF
 * malicious.
 *
 * The bulletin board: PF to VF, polled by the VF. The PF DMA-writes the whole
 * board whenever a field changes, with a bumped version and a CRC over the
 * rest, so the VF can tell a torn read from a new board.
 *
 * Compatibility is the TLVs': a receiver processes the parts it knows and
 * skips the rest by their length; the bulletin only ever grows at its end.
 */
#pragma once

#include "hsi_common.h"
#include "hsi_ptp.h"
#include "hsi_eth.h"

namespace cna::hsi::iov {

/* VFs a PF can enable, and what one VF may be granted at most. */
inline constexpr uint32_t MAX_VFS_PER_PF = 8;
inline constexpr uint32_t MAX_VF_QUEUES = 4;       /* per direction */
inline constexpr uint32_t MAX_VF_SBS = MAX_VF_QUEUES;
inline constexpr uint32_t MAX_VF_MAC_FILTERS = 8;
inline constexpr uint32_t MAX_VF_VLAN_FILTERS = 8;
inline constexpr uint32_t MAX_VF_MCAST_FILTERS = 32;
inline constexpr uint32_t VF_MSIX_VECTORS = MAX_VF_SBS; /* one per fastpath SB; no slowpath SB */

/* ------------------------------------------------------------------------
 * VF BAR0.
 *
 *   0x0000  channel: request address (lo, hi), trigger, state
 *   0x0100  the VF's RDMA slowpath: its SPQ, ILT and enable (below)
 *   0x0800  IGU command space: one 32-bit register per VF status block
 *   0x1000  the VF's GTT page (its window of storm RAM): its Rx producers
 *           (RxProdData per queue), from 0x1100 its statistics (kept by the
 *           storms; the PF reads them through reg::IOV_VF_PAGE)
 *
 * VF doorbells: a page of the VF's own, DB_STRIDE per connection id
 * (cid_tx_queue(q) for its Tx queues) and CID_SPQ's, then its DPI page
 * (VF_DPI) for its RDMA objects' doorbells.
 *
 * RDMA on a VF. A VF's RDMA slowpath is its own, as its RDMA objects are:
 * an SPQ, an EQ and an ILT, which it sets through the registers at
 * SLOWPATH_BASE (each at the offset its reg::STORM_* twin has in a PF's
 * STORM_PF block) before it rings CID_SPQ. Its first ramrod is PF_START
 * (its EQ, on any of its status blocks; its EQ consumer is vf_page::EQ_CONS),
 * its last PF_STOP; between them the storms take its RoCE ramrods only, with
 * the limits of VF_RDMA_GRANT. Its L2 objects stay its PF's to make (the
 * channel). A violation of its SPQ's protocol makes it malicious.
 * ---------------------------------------------------------------------- */
namespace vf_bar0 {
inline constexpr uint32_t CHANNEL_REQ_ADDR_LO = 0x0000;
inline constexpr uint32_t CHANNEL_REQ_ADDR_HI = 0x0004;
inline constexpr uint32_t CHANNEL_TRIGGER = 0x0008;  /* WO: 1 sends the request */
inline constexpr uint32_t CHANNEL_STATE = 0x000c;    /* RO: ChannelState */
inline constexpr uint32_t SLOWPATH_BASE = 0x0100;
inline constexpr uint32_t SLOWPATH_SIZE = reg::STORM_PF_ENABLE + 4 - reg::STORM_PF_BASE;
/* The VF's PTP block (hsi_ptp.h), at the offsets a PF's has at reg::PTP_BASE. */
inline constexpr uint32_t PTP_BASE = 0x0200;
/* The VF's twin of a PF's STORM_SPQ_BASE_LO .. STORM_PF_ENABLE. */
inline constexpr uint32_t slowpath(uint32_t storm_pf_reg) { return SLOWPATH_BASE + storm_pf_reg - reg::STORM_PF_BASE; }
inline constexpr uint32_t IGU_CMD_BASE = 0x0800;
inline constexpr uint32_t GTT_BASE = 0x1000;
inline constexpr uint32_t SIZE = GTT_BASE + WINDOW_SIZE;
inline constexpr uint32_t igu_cmd(uint32_t sb) { return IGU_CMD_BASE + sb * 4; }
inline constexpr uint32_t rx_prod(uint32_t queue) { return GTT_BASE + queue * iro::RX_PROD_STRIDE; }
} // namespace vf_bar0
/* The VF's GTT page, offsets within it. */
namespace vf_page {
inline constexpr uint32_t rx_prod(uint32_t queue) { return queue * iro::RX_PROD_STRIDE; }
inline constexpr uint32_t VPORT_STATS = 0x100;             /* eth::VportStats */
inline constexpr uint32_t QUEUE_STATS = VPORT_STATS + iro::VPORT_STATS_SIZE;
inline constexpr uint32_t rx_queue_stats(uint32_t queue) { return QUEUE_STATS + queue * 2 * iro::QUEUE_STATS_SIZE; }
inline constexpr uint32_t tx_queue_stats(uint32_t queue) { return rx_queue_stats(queue) + iro::QUEUE_STATS_SIZE; }
inline constexpr uint32_t EQ_CONS = 0x400;    /* the RDMA slowpath's EQ consumer, as iro::gtt::EQ_CONS */
inline constexpr uint32_t ROCE_STATS = 0x500; /* rdma::RoceStats */
} // namespace vf_page
inline constexpr uint32_t VF_DPI = 0;
inline constexpr uint32_t VF_DB_BAR_SIZE = dpi_offset(VF_DPI) + DPI_SIZE;
static_assert(MAX_VF_QUEUES * iro::RX_PROD_STRIDE <= vf_page::VPORT_STATS);
static_assert(vf_page::rx_queue_stats(MAX_VF_QUEUES) <= vf_page::EQ_CONS);
static_assert(vf_page::EQ_CONS + 8 <= vf_page::ROCE_STATS);
static_assert(vf_page::ROCE_STATS + iro::ROCE_STATS_SIZE <= WINDOW_SIZE);
static_assert((1 + MAX_VF_QUEUES) * DB_STRIDE <= DPI_BASE, "the L2 doorbells precede the DPI page");
static_assert(vf_bar0::SLOWPATH_BASE > vf_bar0::CHANNEL_STATE &&
              vf_bar0::SLOWPATH_BASE + vf_bar0::SLOWPATH_SIZE <= vf_bar0::PTP_BASE &&
              vf_bar0::PTP_BASE + ptp::BLOCK_SIZE <= vf_bar0::IGU_CMD_BASE);

/* The RDMA objects one VF may create (the storms hold its ramrods to them). */
inline constexpr uint32_t VF_RDMA_QPS = 64;
inline constexpr uint32_t VF_RDMA_TIDS = 256;

enum class ChannelState : uint32_t {
    idle = 0,      /* the VF may trigger */
    pending = 1,   /* a request waits for the PF */
    disabled = 2,  /* the PF has not enabled the VF, or the VF is malicious */
    /* Enabled, its PF's driver unloaded leaving it so: the VF's queues run,
     * its channel takes no request (a trigger is ignored) until a PF's
     * driver loads and enables or disables it. */
    unattended = 3,
};

/* ------------------------------------------------------------------------
 * TLVs. A message is a list of TLVs ended by TlvType::list_end. Every TLV
 * starts with a TlvHeader whose length (bytes, the header included) is a
 * multiple of 4 and at least its type's known size; a receiver skips types
 * it does not know by that length.
 * ---------------------------------------------------------------------- */
/* The PF copies CHANNEL_REQUEST_MAX bytes from the request's address: a
 * VF's request buffer is that long, whatever its message's length. */
inline constexpr uint32_t CHANNEL_REQUEST_MAX = 1024;
inline constexpr uint32_t CHANNEL_REPLY_MAX = 512;

enum class TlvType : uint16_t {
    none = 0,
    /* requests: the first TLV of a message */
    acquire = 1,
    release = 2,
    close = 3,
    int_cleanup = 4,
    vport_start = 5,
    vport_update = 6,
    vport_teardown = 7,
    start_rxq = 8,
    start_txq = 9,
    stop_rxqs = 10,
    stop_txqs = 11,
    update_rxq = 12,
    ucast_filter = 13,
    update_mtu = 14,
    coalesce_update = 15,
    sb_setup = 16,
    /* parts of a vport_update, after its first TLV */
    vport_activate = 32,
    vport_rx_mode = 33,
    vport_rss = 34,
    vport_vlan_strip = 35,
    vport_mcast = 36,
    /* the reply's first TLV */
    reply = 64,
    list_end = 0x7fff,
};

struct TlvHeader {
    uint16_t type;   /* TlvType */
    uint16_t length; /* bytes, this header included */
};
static_assert(sizeof(TlvHeader) == 4);

/* Every request's first TLV starts so: where the PF writes the reply. */
struct RequestHeader {
    TlvHeader tlv;
    uint32_t reserved;
    uint64_t reply_address; /* IOVA in the VF's domain, CHANNEL_REPLY_MAX bytes */
};
static_assert(sizeof(RequestHeader) == 16);

enum class Status : uint8_t {
    pending = 0,        /* the VF clears the reply's status before it triggers */
    success = 1,
    failure = 2,        /* the request is valid but could not be done */
    not_supported = 3,  /* an unknown request */
    bad_request = 4,    /* malformed: lengths, ids outside the grant */
    no_resource = 5,    /* beyond what the VF was granted */
    forbidden = 6,      /* the PF's policy: forced MAC or VLAN, untrusted VF */
    not_acquired = 7,   /* anything but acquire before acquire */
};

/* The reply's first TLV (type reply). status is written last. */
struct ReplyHeader {
    TlvHeader tlv;
    uint16_t request;   /* TlvType it answers */
    uint8_t reserved;
    uint8_t status;     /* Status */
};
static_assert(sizeof(ReplyHeader) == 8);

/* ---- acquire ------------------------------------------------------------ */

struct AcquireRequest {
    RequestHeader hdr;
    uint32_t driver_version;   /* the VF driver's, for the PF's log */
    uint8_t hsi_major;         /* the VF's HSI: the PF refuses another major */
    uint8_t hsi_minor;
    uint8_t rx_queues;         /* asked for */
    uint8_t tx_queues;
    uint8_t sbs;
    uint8_t mac_filters;
    uint8_t vlan_filters;
    uint8_t mcast_filters;
    uint32_t bulletin_size;    /* bytes the VF allocated */
    uint64_t bulletin_address; /* IOVA of the VF's bulletin board */
};
static_assert(sizeof(AcquireRequest) == 40);

struct AcquireReply {
    ReplyHeader hdr;
    uint8_t pf_id;
    uint8_t vf_id;             /* relative to the PF */
    uint8_t port_id;
    uint8_t hsi_minor;         /* the PF's */
    uint8_t rx_queues;         /* granted */
    uint8_t tx_queues;
    uint8_t sbs;
    uint8_t mac_filters;
    uint8_t vlan_filters;
    uint8_t mcast_filters;
    uint16_t mtu;              /* the port's */
    uint8_t mac[6];            /* the VF's permanent address */
    uint16_t reserved;
    uint32_t fw_version;
    uint32_t bulletin_size;    /* agreed: the smaller of both sides' */
};
static_assert(sizeof(AcquireReply) == 36);

/* ---- vport and queues ---------------------------------------------------- */

/* The VF's status blocks are configured with its vport: sb_addr[i] is the
 * IOVA of status block i (hsi::StatusBlock), for i < sbs (the VF's grant);
 * the PF programs the VF's CAU with them, SB i raising MSI-X vector i. */
struct VportStartRequest {
    RequestHeader hdr;
    uint16_t mtu;
    uint8_t vlan_strip; /* strip the VLAN tag on Rx */
    uint8_t sbs;                /* addresses that follow */
    uint8_t max_bds_per_packet; /* > 1: scattered Rx (0 is 1) */
    uint8_t rx_csum;            /* checksum results in the CQEs */
    uint16_t reserved2;
    uint64_t sb_addr[MAX_VF_SBS];
};
static_assert(sizeof(VportStartRequest) == 24 + 8 * MAX_VF_SBS);

/* sb_setup (HSI 4.4): one status block outside the vport's, programmed at
 * once (sb_addr its IOVA; 0 clears it), raising MSI-X vector sb. A VF's
 * RDMA slowpath has its EQ and CNQ there: it lives on while the vport
 * stops and starts. The vport's SBs (0..sbs-1 of its vport_start) and these
 * are disjoint; close, release and FLR clear both. */
struct SbSetupRequest {
    RequestHeader hdr;
    uint64_t sb_addr;
    uint8_t sb;                 /* < the VF's sbs */
    uint8_t reserved[7];
};
static_assert(sizeof(SbSetupRequest) == 32);

/* vport_update: a RequestHeader-only first TLV, then any of these. */
struct VportActivateTlv {
    TlvHeader tlv;
    uint8_t update_rx, active_rx;
    uint8_t update_tx, active_tx;
};
static_assert(sizeof(VportActivateTlv) == 8);

struct VportRxModeTlv {
    TlvHeader tlv;
    uint8_t unicast_accept_all;   /* promiscuous: a trusted VF only */
    uint8_t multicast_accept_all; /* all-multicast: a trusted VF only */
    uint8_t broadcast_accept;
    uint8_t reserved;
};
static_assert(sizeof(VportRxModeTlv) == 8);

struct VportRssTlv {
    TlvHeader tlv;
    uint8_t enable;
    uint8_t hash_types;           /* eth::rss hash type bits */
    uint16_t reserved;
    uint32_t key[eth::rss::KEY_DWORDS];
    uint8_t reta[eth::rss::RETA_SIZE]; /* queue of each entry, < the VF's Rx queues */
};
static_assert(sizeof(VportRssTlv) == 8 + eth::rss::KEY_DWORDS * 4 + eth::rss::RETA_SIZE);

struct VportVlanStripTlv {
    TlvHeader tlv;
    uint8_t strip;
    uint8_t reserved[3];
};
static_assert(sizeof(VportVlanStripTlv) == 8);

struct VportMcastTlv {
    TlvHeader tlv;
    uint16_t count;               /* addresses that follow, <= the VF's mcast_filters */
    uint16_t reserved;
    uint8_t macs[MAX_VF_MCAST_FILTERS][6];
};
static_assert(sizeof(VportMcastTlv) == 8 + MAX_VF_MCAST_FILTERS * 6);

struct StartRxqRequest {
    RequestHeader hdr;
    uint64_t bd_ring;          /* IOVA of the BD ring */
    uint64_t cqe_ring;         /* IOVA of the CQE ring */
    uint16_t ring_size;        /* entries of both, power of two */
    uint16_t buf_size;
    uint8_t queue;             /* < the VF's rx_queues */
    uint8_t sb;                /* < the VF's sbs */
    uint8_t sb_pi;             /* protocol index of the SB the adapter bumps */
    uint8_t flags;             /* eth::rxq_flags:: (HSI 5.2; 0 before) */
};
static_assert(sizeof(StartRxqRequest) == 40);

struct StartTxqRequest {
    RequestHeader hdr;
    uint64_t bd_ring;
    uint16_t ring_size;
    uint8_t queue;
    uint8_t sb;
    uint8_t sb_pi;
    uint8_t reserved[3];
};
static_assert(sizeof(StartTxqRequest) == 32);

/* stop_rxqs / stop_txqs: queues [first, first + count). */
struct StopQueuesRequest {
    RequestHeader hdr;
    uint8_t first;
    uint8_t count;
    uint8_t reserved[6];
};
static_assert(sizeof(StopQueuesRequest) == 24);

/* start_rxq / start_txq reply: where the VF writes the queue's producer. */
struct StartQueueReply {
    ReplyHeader hdr;
    uint32_t offset;           /* rx: VF BAR0 offset of RxProdData; tx: doorbell page offset */
    uint32_t reserved;
};
static_assert(sizeof(StartQueueReply) == 16);

enum class FilterOp : uint8_t { add = 0, remove = 1, flush = 2 };
enum class FilterKind : uint8_t { mac = 0, vlan = 1 };

struct UcastFilterRequest {
    RequestHeader hdr;
    uint8_t op;                /* FilterOp */
    uint8_t kind;              /* FilterKind */
    uint8_t mac[6];
    uint16_t vlan;
    uint8_t reserved[6];
};
static_assert(sizeof(UcastFilterRequest) == 32);

struct UpdateMtuRequest {
    RequestHeader hdr;
    uint16_t mtu;
    uint8_t reserved[6];
};
static_assert(sizeof(UpdateMtuRequest) == 24);

struct CoalesceUpdateRequest {
    RequestHeader hdr;
    uint16_t rx_usecs;
    uint16_t tx_usecs;
    uint8_t queue;
    uint8_t reserved[3];
};
static_assert(sizeof(CoalesceUpdateRequest) == 24);

/* ---- the bulletin board ---------------------------------------------------- */

/* Which Bulletin fields the PF sets (the others: the VF's own choice). */
inline constexpr uint64_t BULLETIN_MAC_FORCED = 1u << 0;
inline constexpr uint64_t BULLETIN_VLAN_FORCED = 1u << 1;
inline constexpr uint64_t BULLETIN_LINK_FORCED = 1u << 2;  /* link_up is the PF's, not the port's */
inline constexpr uint64_t BULLETIN_TRUSTED = 1u << 3;
inline constexpr uint64_t BULLETIN_SPOOFCHK = 1u << 4;

struct Bulletin {
    uint32_t crc;        /* CRC-32 (as zlib's crc32) of the bytes after it, up to size */
    uint32_t size;       /* bytes of this board: the acquire's agreed size */
    uint64_t version;    /* bumped by the PF on every change; 0: never written */
    uint64_t flags;      /* BULLETIN_* */
    uint8_t mac[6];      /* with BULLETIN_MAC_FORCED: the VF's MAC */
    uint16_t port_vlan;  /* with BULLETIN_VLAN_FORCED: tagged and stripped by the adapter */
    uint8_t link_up;
    uint8_t full_duplex;
    uint16_t reserved;
    uint32_t speed_mbps;
    uint32_t tx_rate_mbps; /* 0: no limit */
    uint32_t reserved2[5];
};
static_assert(sizeof(Bulletin) == 64);
inline constexpr uint32_t BULLETIN_CRC_OFFSET = offsetof(Bulletin, size);

/* ------------------------------------------------------------------------
 * The PF's side of SR-IOV: ramrods on VF objects, the IOV and DMAE register
 * blocks (GRC, per PF), the events the adapter raises on the PF's EQ.
 * ---------------------------------------------------------------------- */

/* A PF's L2 ramrod whose vport_id is vf_vport(vf) acts on VF vf's vport (a
 * VF has one); its queue, status block and connection ids are then the
 * VF's own (0..MAX_VF_QUEUES-1, cid_tx_queue(q) in the VF's doorbell page).
 * Flow rules and filter moves are the PF's alone. */
inline constexpr uint8_t VF_VPORT_BASE = MAX_VPORTS_PER_PF;
inline constexpr uint8_t vf_vport(uint32_t vf) { return static_cast<uint8_t>(VF_VPORT_BASE + vf); }
static_assert(VF_VPORT_BASE + MAX_VFS_PER_PF <= 0xff);

} // namespace cna::hsi::iov

namespace cna::hsi::reg {
/* IOV: the PF's control of its VFs (the guide's iov_init_hw_for_vf). */
inline constexpr uint32_t IOV_BASE = 0x070000;
inline constexpr uint32_t IOV_MAX_VFS = IOV_BASE + 0x00;   /* RO: VFs the MFW lets this PF enable */
/* RW: VFs enabled (PCIe NumVFs with VF Enable): 0..IOV_MAX_VFS; lowering it
 * resets the VFs it removes. */
inline constexpr uint32_t IOV_NUM_VFS = IOV_BASE + 0x04;
inline constexpr uint32_t IOV_VF_SELECT = IOV_BASE + 0x08; /* RW: the VF the IOV_VF_* registers act on */
/* RW: IOV_VF_CTRL_* of the selected VF. ENABLE opens its channel and lets it
 * master the bus (clearing it closes both and forgets a pending request);
 * it does not take while the VF's FLR is pending. */
inline constexpr uint32_t IOV_VF_CTRL = IOV_BASE + 0x0c;
inline constexpr uint32_t IOV_VF_CTRL_ENABLE = 1u << 0;
/* WO 1: the PF is done with the selected VF's pending request. */
inline constexpr uint32_t IOV_VF_CHANNEL_DONE = IOV_BASE + 0x10;
/* RO: a bit per VF, set while the VF is malicious (its channel disabled,
 * its queues stopped) until the PF re-enables it. */
inline constexpr uint32_t IOV_MALICIOUS = IOV_BASE + 0x14;
/* RO: a bit per VF whose function level reset awaits the PF's cleanup: the
 * final cleanup ramrod (CommonCmd::vf_cleanup), then the MFW's ack
 * (DRV_MSG_CODE_VF_DISABLED_DONE), which clears it. */
inline constexpr uint32_t IOV_FLR_PENDING = IOV_BASE + 0x18;
/* The selected VF's CAU, laid out as the PF's own (reg::cau_sb_*), status
 * blocks 0..MAX_VF_SBS-1; the vector in the conf is the VF's. */
inline constexpr uint32_t IOV_VF_CAU_BASE = IOV_BASE + 0x100;
inline constexpr uint32_t iov_vf_cau(uint32_t cau_reg) { return IOV_VF_CAU_BASE + (cau_reg - CAU_BASE); }
/* RO: the selected VF's GTT page (hsi::iov::vf_page offsets): its statistics. */
inline constexpr uint32_t IOV_VF_PAGE = IOV_BASE + 0x1000;

/* DMAE: a copy between host memory of the PF and of one of its VFs, each
 * side through its own function's IOMMU (how a PF reads a VF's request and
 * writes its reply and bulletin). Synchronous: DMAE_GO returns when done. */
inline constexpr uint32_t DMAE_BASE = 0x078000;
inline constexpr uint32_t DMAE_SRC_LO = DMAE_BASE + 0x00;
inline constexpr uint32_t DMAE_SRC_HI = DMAE_BASE + 0x04;
inline constexpr uint32_t DMAE_DST_LO = DMAE_BASE + 0x08;
inline constexpr uint32_t DMAE_DST_HI = DMAE_BASE + 0x0c;
inline constexpr uint32_t DMAE_LEN = DMAE_BASE + 0x10;    /* bytes, 1..DMAE_MAX_LEN */
inline constexpr uint32_t DMAE_CTRL = DMAE_BASE + 0x14;   /* DMAE_CTRL_* */
inline constexpr uint32_t DMAE_GO = DMAE_BASE + 0x18;     /* WO 1: copy */
inline constexpr uint32_t DMAE_STATUS = DMAE_BASE + 0x1c; /* RO: DmaeStatus of the last copy */
inline constexpr uint32_t DMAE_CTRL_SRC_VF = 1u << 0;     /* the source is the VF's memory */
inline constexpr uint32_t DMAE_CTRL_DST_VF = 1u << 1;     /* the destination is */
inline constexpr uint32_t DMAE_CTRL_VF_SHIFT = 8;         /* bits 8..15: the VF */
inline constexpr uint32_t DMAE_MAX_LEN = 4096;
} // namespace cna::hsi::reg

namespace cna::hsi::iov {

enum class DmaeStatus : uint32_t {
    done = 0,
    src_fault = 1,   /* the source did not translate in its function's IOMMU */
    dst_fault = 2,
    bad_request = 3, /* a length of 0 or past DMAE_MAX_LEN, a VF not enabled */
};

/* Asynchronous EQEs (ProtocolId::iov) on the PF's EQ: echo is the VF. */
enum class IovEvent : uint8_t {
    vf_message = 1,   /* data: the request's IOVA in the VF's domain */
    vf_malicious = 2, /* data: MaliciousWhy */
    vf_flr = 3,       /* the VF was reset: IOV_FLR_PENDING has its bit until the PF's cleanup */
};

enum class MaliciousWhy : uint8_t {
    channel_misuse = 1, /* a trigger while pending, or without an address */
    queue_error = 2,    /* its queues broke their protocol (hsi::QueueError) */
};

} // namespace cna::hsi::iov
