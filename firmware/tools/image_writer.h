/* SPDX-License-Identifier: BSD-3-Clause
 * Encodes an init program in the image format of hsi_init_image.h: the
 * header, the phase index, the ops and the data blob, stamped with the
 * CRC32 of everything after the header. Array payloads are stored plain
 * (write_array) or as zlib streams (write_zipped, IMAGE_FLAG_ZIPPED).
 */
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hsi_init_image.h"

namespace cna::fw::tools {

struct FwVersion {
    uint8_t major, minor, rev, eng;
    uint32_t packed() const { return uint32_t{major} << 24 | uint32_t{minor} << 16 | uint32_t{rev} << 8 | eng; }
};

class InitProgram {
public:
    using Phase = hsi::init::Phase;

    void write(Phase phase, uint32_t addr, uint32_t value);
    /* count consecutive registers from runtime array entries rt.. */
    void write_rt(Phase phase, uint32_t addr, uint32_t rt, uint16_t count);
    /* bytes (a multiple of 4) copied to consecutive registers */
    void write_array(Phase phase, uint32_t addr, std::vector<uint8_t> bytes);
    /* the next `ops` ops of the phase run only if every mode bit is set */
    void if_mode(Phase phase, uint32_t modes, uint16_t ops);
    void poll(Phase phase, uint32_t addr, uint32_t value, uint16_t timeout_ms);

    std::vector<uint8_t> encode(const FwVersion& version, bool zipped) const;

private:
    struct Op {
        hsi::init::InitOp op;
        std::vector<uint8_t> payload;
    };
    void add(Phase phase, hsi::init::OpType type, uint16_t count, uint32_t addr, uint32_t value,
             std::vector<uint8_t> payload = {});

    std::array<std::vector<Op>, hsi::init::PHASE_COUNT> phases_;
};

} // namespace cna::fw::tools
