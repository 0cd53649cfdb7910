/* SPDX-License-Identifier: BSD-3-Clause
 * cna HSI: the firmware image that ecore loads at hw_init.
 *
 * The image is a program for the init tool: per phase (ENGINE, PORT, PF) a
 * list of operations that write registers, the runtime array and storm
 * microcode, some of them conditional on the init mode ecore computed. The
 * adapter side authors it (firmware/tools/fwgen); ecore parses and runs it.
 *
 * Layout (little-endian):
 *   ImageHeader
 *   PhaseIndex[PHASE_COUNT]          where each phase's ops start, how many
 *   InitOp[op_count]
 *   data blob                        array payloads, addressed by InitOp::data
 * header.crc32 covers every byte after the header.
 */
#pragma once

#include "hsi_common.h"

namespace cna::hsi::init {

inline constexpr uint32_t IMAGE_MAGIC = 0x57464e43; /* "CNFW" */
inline constexpr uint32_t IMAGE_FORMAT = 1;

enum class Phase : uint8_t { engine = 0, port = 1, pf = 2 };
inline constexpr uint32_t PHASE_COUNT = 3;

/* Init modes: ecore computes a mask; IF_MODE ops test it. */
namespace mode {
inline constexpr uint32_t ASIC = 1u << 0;
inline constexpr uint32_t SF = 1u << 1;        /* single function per port */
inline constexpr uint32_t MF = 1u << 2;
inline constexpr uint32_t PORTS_1 = 1u << 3;
inline constexpr uint32_t PORTS_2 = 1u << 4;
inline constexpr uint32_t PORTS_4 = 1u << 5;
inline constexpr uint32_t MSIX = 1u << 6;
inline constexpr uint32_t POLL = 1u << 7;
} // namespace mode

enum class OpType : uint8_t {
    write = 1,        /* reg[addr] = value */
    write_rt = 2,     /* for i < count: if rt valid, reg[addr + 4i] = rt[value + i] */
    write_array = 3,  /* copy count dwords from data blob at offset data */
    write_zipped = 4, /* zlib stream of data_len bytes at data, inflating to count dwords */
    zero = 5,         /* count dwords of zero */
    if_mode = 6,      /* if (modes & value) != value skip the next count ops */
    poll = 7,         /* wait until reg[addr] == value; count = timeout in ms */
};

struct ImageHeader {
    uint32_t magic;
    uint32_t format;
    uint8_t fw_major, fw_minor, fw_rev, fw_eng; /* firmware version stamp */
    uint8_t hsi_major, hsi_minor;               /* HSI it was built for */
    uint16_t flags;                             /* IMAGE_FLAG_* */
    uint32_t op_count;
    uint32_t data_len;
    uint32_t crc32;                             /* of everything after the header */
    uint32_t reserved[3];
};
static_assert(sizeof(ImageHeader) == 40);
inline constexpr uint16_t IMAGE_FLAG_ZIPPED = 1u << 0; /* arrays are write_zipped */

struct PhaseIndex {
    uint32_t first_op;
    uint32_t op_count;
};
static_assert(sizeof(PhaseIndex) == 8);

struct InitOp {
    uint8_t type;      /* OpType */
    uint8_t reserved;
    uint16_t count;
    uint32_t addr;
    uint32_t value;
    uint32_t data;     /* offset into the data blob */
    uint32_t data_len; /* bytes at data (write_zipped) */
    uint32_t reserved2;
};
static_assert(sizeof(InitOp) == 24);

/* ------------------------------------------------------------------------
 * Runtime array: values ecore computes in resc_setup, consumed by write_rt.
 * ---------------------------------------------------------------------- */
namespace rt {
inline constexpr uint32_t SPQ_BASE_LO = 0;
inline constexpr uint32_t SPQ_BASE_HI = 1;
inline constexpr uint32_t SPQ_SIZE = 2;
inline constexpr uint32_t ILT_BASE_LO = 3;
inline constexpr uint32_t ILT_BASE_HI = 4;
inline constexpr uint32_t ILT_CIDS = 5;
inline constexpr uint32_t PORT_MAX_FRAME = 6;
inline constexpr uint32_t IGU_INT_MODE = 7;
inline constexpr uint32_t SIZE = 8;
} // namespace rt

/* The microcode blob the ENGINE phase loads into each storm begins with this. */
inline constexpr uint32_t MICROCODE_MAGIC = 0x4d524f53; /* "SORM" */

} // namespace cna::hsi::init

namespace cna::hsi::init {
/* The image compiled into the driver (generated at build time by
 * firmware/tools/fwgen, plain variant). */
extern const uint8_t builtin_image[];
extern const std::size_t builtin_image_size;
} // namespace cna::hsi::init
