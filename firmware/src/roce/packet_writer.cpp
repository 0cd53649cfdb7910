/* SPDX-License-Identifier: BSD-3-Clause */
#include "roce/packet_writer.h"

#include <cstring>

#include "roce/encap.h"
#include "base/bytes.h"

namespace cna::fw::roce {

using namespace hsi::rdma;

uint8_t* PacketWriter::frame_buffer(FrameBurst& out) { return tx_buffers_.data() + out.count * FRAME_BUFFER; }

uint8_t* PacketWriter::begin_packet(const RocePath& path, FrameBurst& out, const Bth& bth, uint32_t ext,
                                    uint32_t payload)
{
    Bth b = bth;
    b.pad = static_cast<uint8_t>((4 - payload % 4) % 4);
    uint8_t* frame = frame_buffer(out);
    building_ = write_encap(frame, path, BTH_LEN + ext + payload + b.pad + ICRC_LEN);
    uint8_t* at = frame + building_.l4_off + UDP_HLEN;
    write_bth(at, b);
    /* The pad (0 to 3 bytes) zeroed as one word: the ICRC written after it
     * covers what it spills into. A call for a few bytes cost more. */
    static_assert(ICRC_LEN >= 4);
    std::memset(at + BTH_LEN + ext + payload, 0, 4);
    return at;
}

void PacketWriter::end_packet(FrameBurst& out)
{
    uint8_t* frame = frame_buffer(out);
    out.next_layout() = building_;
    out.join_roce(frame, building_.l3_end, frame + building_.l3_end - ICRC_LEN);
    counter_add(stats_.tx_packets, 1);
    counter_add(stats_.tx_bytes, building_.l3_end);
}

} // namespace cna::fw::roce
