/* SPDX-License-Identifier: BSD-3-Clause
 * The VF-PF channel's messages (hsi_iov.h) as both ends of it handle them:
 * TLV lists read with every bound checked (the PF reads what a VF, perhaps
 * a guest, wrote; the VF what its PF wrote), TLV lists built within a
 * buffer, and the bulletin board's seal and check.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "hsi_iov.h"

namespace cna::ecore::iov {

using hsi::iov::TlvHeader;
using hsi::iov::TlvType;

/* For logs: a TLV type's name (nullptr for a type this side does not
 * know), a reply status's. */
const char* tlv_name(TlvType type);
const char* status_name(hsi::iov::Status status);

class TlvReader {
public:
    /* A message as received (the PF's copy of a request, the VF's of a
     * reply): its TLVs are checked here, once. */
    explicit TlvReader(std::span<const uint8_t> message);

    /* nullptr for a well-formed list: every TLV inside the message, its
     * length a multiple of 4 of at least a header, the list ended by
     * list_end. Otherwise what is wrong, for the log. */
    const char* error() const { return error_; }
    /* The type of the first TLV (the request, or reply); none if malformed. */
    TlvType first_type() const { return first_; }
    /* TLVs of types this side does not know: skipped by their length. */
    unsigned unknown() const { return unknown_; }

    enum class Find { found, absent, too_short };
    /* The first TLV of `type`, copied into *out when it has at least
     * sizeof(T) bytes (a longer one, from a newer peer, is cut to T). */
    template <typename T>
    Find find(TlvType type, T* out) const
    {
        std::span<const uint8_t> tlv = locate(type);
        if (tlv.empty())
            return Find::absent;
        if (tlv.size() < sizeof(T))
            return Find::too_short;
        std::memcpy(static_cast<void*>(out), tlv.data(), sizeof(T));
        return Find::found;
    }

private:
    std::span<const uint8_t> locate(TlvType type) const;

    std::span<const uint8_t> message_;
    const char* error_ = nullptr;
    TlvType first_ = TlvType::none;
    unsigned unknown_ = 0;
};

class TlvWriter {
public:
    explicit TlvWriter(std::span<uint8_t> buffer) : buffer_(buffer) {}

    /* Appends `value`, whose first member is its TlvHeader (set here:
     * `type`, sizeof(T)); false, appending nothing, when it does not fit. */
    template <typename T>
    bool add(TlvType type, const T& value)
    {
        static_assert(sizeof(T) % 4 == 0 && sizeof(T) >= sizeof(TlvHeader));
        if (buffer_.size() - used_ < sizeof(T))
            return false;
        uint8_t* at = buffer_.data() + used_;
        std::memcpy(at, &value, sizeof(T));
        const TlvHeader header{static_cast<uint16_t>(type), static_cast<uint16_t>(sizeof(T))};
        std::memcpy(at, &header, sizeof header);
        used_ += sizeof(T);
        return true;
    }
    /* Ends the list; false when list_end does not fit. */
    bool end() { return add(TlvType::list_end, TlvHeader{}); }
    std::size_t size() const { return used_; }

private:
    std::span<uint8_t> buffer_;
    std::size_t used_ = 0;
};

/* The bulletin board. The PF seals its board before each DMA write (the
 * next version, the agreed size, the CRC); the VF takes a board it read only
 * if it is consistent (a size it can hold, the CRC right: not torn by a write
 * in progress), zeroing what lies past the board's size in *out. */
void bulletin_seal(hsi::iov::Bulletin& board, uint32_t size);
bool bulletin_read(std::span<const uint8_t> bytes, hsi::iov::Bulletin* out);

/* A board size both ends can use: at least the fields of the first HSI. */
inline constexpr uint32_t BULLETIN_MIN_SIZE = offsetof(hsi::iov::Bulletin, reserved2);

} // namespace cna::ecore::iov
