/* SPDX-License-Identifier: BSD-3-Clause */
#include "ecore_iov_tlv.h"

#include <algorithm>

#include "osal_util.h"

namespace cna::ecore::iov {
namespace {

bool known(uint16_t type) { return tlv_name(static_cast<TlvType>(type)) != nullptr; }

TlvHeader header_at(std::span<const uint8_t> message, std::size_t offset)
{
    TlvHeader h;
    std::memcpy(&h, message.data() + offset, sizeof h);
    return h;
}

uint32_t board_crc(const uint8_t* board, uint32_t size)
{
    return osal::crc32(board + hsi::iov::BULLETIN_CRC_OFFSET, size - hsi::iov::BULLETIN_CRC_OFFSET);
}

} // namespace

const char* tlv_name(TlvType type)
{
    switch (type) {
    case TlvType::acquire: return "acquire";
    case TlvType::release: return "release";
    case TlvType::close: return "close";
    case TlvType::int_cleanup: return "int_cleanup";
    case TlvType::vport_start: return "vport_start";
    case TlvType::vport_update: return "vport_update";
    case TlvType::vport_teardown: return "vport_teardown";
    case TlvType::start_rxq: return "start_rxq";
    case TlvType::start_txq: return "start_txq";
    case TlvType::stop_rxqs: return "stop_rxqs";
    case TlvType::stop_txqs: return "stop_txqs";
    case TlvType::update_rxq: return "update_rxq";
    case TlvType::ucast_filter: return "ucast_filter";
    case TlvType::update_mtu: return "update_mtu";
    case TlvType::coalesce_update: return "coalesce_update";
    case TlvType::sb_setup: return "sb_setup";
    case TlvType::vport_activate: return "vport_activate";
    case TlvType::vport_rx_mode: return "vport_rx_mode";
    case TlvType::vport_rss: return "vport_rss";
    case TlvType::vport_vlan_strip: return "vport_vlan_strip";
    case TlvType::vport_mcast: return "vport_mcast";
    case TlvType::reply: return "reply";
    case TlvType::list_end: return "list_end";
    case TlvType::none: break;
    }
    return nullptr;
}

const char* status_name(hsi::iov::Status status)
{
    using hsi::iov::Status;
    switch (status) {
    case Status::pending: return "pending";
    case Status::success: return "success";
    case Status::failure: return "failure";
    case Status::not_supported: return "not supported";
    case Status::bad_request: return "bad request";
    case Status::no_resource: return "no resource";
    case Status::forbidden: return "forbidden";
    case Status::not_acquired: return "not acquired";
    }
    return "unknown status";
}

TlvReader::TlvReader(std::span<const uint8_t> message)
{
    std::size_t offset = 0;
    TlvType first = TlvType::none;
    unsigned unknown = 0;
    for (;;) {
        if (message.size() - offset < sizeof(TlvHeader)) {
            error_ = offset == 0 ? "shorter than a TLV header" : "no list_end TLV before the end of the message";
            return;
        }
        const TlvHeader h = header_at(message, offset);
        if (h.length < sizeof(TlvHeader) || h.length % 4 != 0) {
            error_ = "a TLV length that is not a multiple of 4 of at least its header";
            return;
        }
        if (h.length > message.size() - offset) {
            error_ = "a TLV running past the end of the message";
            return;
        }
        if (static_cast<TlvType>(h.type) == TlvType::list_end)
            break;
        if (static_cast<TlvType>(h.type) == TlvType::none) {
            error_ = "a TLV of type 0";
            return;
        }
        if (offset == 0)
            first = static_cast<TlvType>(h.type);
        unknown += !known(h.type);
        offset += h.length;
    }
    if (first == TlvType::none) {
        error_ = "no TLV before list_end";
        return;
    }
    message_ = message.first(offset);
    first_ = first;
    unknown_ = unknown;
}

std::span<const uint8_t> TlvReader::locate(TlvType type) const
{
    if (error_ != nullptr)
        return {};
    for (std::size_t offset = 0; offset < message_.size();) {
        const TlvHeader h = header_at(message_, offset);
        if (static_cast<TlvType>(h.type) == type)
            return message_.subspan(offset, h.length);
        offset += h.length;
    }
    return {};
}

void bulletin_seal(hsi::iov::Bulletin& board, uint32_t size)
{
    size = std::clamp<uint32_t>(size, BULLETIN_MIN_SIZE, sizeof board);
    board.size = size;
    board.version++;
    board.crc = board_crc(reinterpret_cast<const uint8_t*>(&board), size);
}

bool bulletin_read(std::span<const uint8_t> bytes, hsi::iov::Bulletin* out)
{
    if (bytes.size() < BULLETIN_MIN_SIZE)
        return false;
    hsi::iov::Bulletin head;
    std::memcpy(&head, bytes.data(), BULLETIN_MIN_SIZE);
    if (head.size < BULLETIN_MIN_SIZE || head.size > bytes.size() || head.version == 0 ||
        board_crc(bytes.data(), head.size) != head.crc)
        return false;
    *out = hsi::iov::Bulletin{};
    std::memcpy(static_cast<void*>(out), bytes.data(), std::min<std::size_t>(head.size, sizeof *out));
    return true;
}

} // namespace cna::ecore::iov
