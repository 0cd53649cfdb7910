/* SPDX-License-Identifier: BSD-3-Clause */
#include "frame/lso.h"

#include <algorithm>
#include <cstring>

#include "frame/checksum.h"
#include "base/bytes.h"

namespace cna::fw {
namespace {

constexpr uint8_t TCP_FIN = 0x01;
constexpr uint8_t TCP_PSH = 0x08;
constexpr uint8_t TCP_CWR = 0x80;

} // namespace

LsoSegmenter::LsoSegmenter(const uint8_t* frame, uint32_t len, const FrameLayout& layout, uint16_t mss)
    : frame_(frame), layout_(layout), header_len_(layout.l4_off + layout.l4_len),
      payload_len_(len > header_len_ ? len - header_len_ : 0), mss_(mss), done_(mss == 0)
{
}

uint32_t LsoSegmenter::next(uint8_t* out)
{
    if (done_)
        return 0;
    uint32_t chunk = std::min(mss_, payload_len_ - offset_);
    bool first = index_ == 0;
    bool last = offset_ + chunk >= payload_len_;
    std::memcpy(out, frame_, header_len_);
    std::memcpy(out + header_len_, frame_ + header_len_ + offset_, chunk);

    FrameLayout seg = layout_;
    seg.l3_end = header_len_ + chunk;
    uint8_t* ip = out + seg.l2_len;
    uint32_t ip_len = seg.l3_end - seg.l2_len;
    if (seg.l3 == L3::ipv4) {
        store_be16(ip + 2, static_cast<uint16_t>(ip_len));
        store_be16(ip + 4, static_cast<uint16_t>(load_be16(frame_ + seg.l2_len + 4) + index_));
        ipv4_insert_checksum(out, seg);
    } else {
        store_be16(ip + 4, static_cast<uint16_t>(ip_len - seg.l3_len));
    }
    uint8_t* tcp = out + seg.l4_off;
    store_be32(tcp + 4, load_be32(frame_ + seg.l4_off + 4) + offset_);
    uint8_t flags = tcp[13];
    if (!last)
        flags &= static_cast<uint8_t>(~(TCP_FIN | TCP_PSH));
    if (!first)
        flags &= static_cast<uint8_t>(~TCP_CWR);
    tcp[13] = flags;
    l4_insert_checksum(out, seg);

    offset_ += chunk;
    index_++;
    done_ = offset_ >= payload_len_; /* a header-only packet is one segment */
    return header_len_ + chunk;
}

} // namespace cna::fw
