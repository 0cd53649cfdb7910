/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's messages laid out as IBTA Vol 1, 12.6 draws them: every field a
 * run of bits in a big-endian word, at its offset from the MAD's start.
 */
#include "cm_mad.h"

#include <algorithm>
#include <cstring>

namespace cna::cm {

namespace {

/* `bits` bits, the lowest `shift` above the lowest of the big-endian
 * `size`-byte word at byte `offset` of the MAD. */
struct Field {
    uint16_t offset;
    uint8_t size;
    uint8_t shift = 0;
    uint8_t bits = 0; /* 0: the whole word */
};

constexpr Field u8(uint16_t offset) { return {offset, 1}; }
constexpr Field u16(uint16_t offset) { return {offset, 2}; }
constexpr Field u32(uint16_t offset) { return {offset, 4}; }
constexpr Field u64(uint16_t offset) { return {offset, 8}; }
constexpr Field bits8(uint16_t offset, uint8_t shift, uint8_t bits) { return {offset, 1, shift, bits}; }
constexpr Field bits32(uint16_t offset, uint8_t shift, uint8_t bits) { return {offset, 4, shift, bits}; }

constexpr uint64_t mask_of(const Field& f)
{
    const unsigned width = f.bits != 0 ? f.bits : f.size * 8u;
    return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

uint64_t get(const Mad& mad, Field f)
{
    uint64_t word = 0;
    for (unsigned i = 0; i < f.size; i++)
        word = word << 8 | mad[f.offset + i];
    return word >> f.shift & mask_of(f);
}

void set(Mad& mad, Field f, uint64_t value)
{
    uint64_t word = 0;
    for (unsigned i = 0; i < f.size; i++)
        word = word << 8 | mad[f.offset + i];
    const uint64_t mask = mask_of(f) << f.shift;
    word = (word & ~mask) | (value << f.shift & mask);
    for (unsigned i = f.size; i-- > 0; word >>= 8)
        mad[f.offset + i] = static_cast<uint8_t>(word);
}

/* A run of bytes: a GID, an ARI, private data. */
struct Area {
    uint16_t offset;
    uint16_t size;
};

void put(Mad& mad, Area a, std::span<const uint8_t> bytes)
{
    std::copy_n(bytes.begin(), std::min<std::size_t>(bytes.size(), a.size), mad.begin() + a.offset);
}

/* The first `size` bytes of the area, or all of it. */
std::vector<uint8_t> take(const Mad& mad, Area a, std::size_t size = SIZE_MAX)
{
    return {mad.begin() + a.offset, mad.begin() + a.offset + std::min<std::size_t>(size, a.size)};
}

Gid take_gid(const Mad& mad, uint16_t offset)
{
    Gid gid;
    std::memcpy(gid.data(), mad.data() + offset, gid.size());
    return gid;
}

/* The common header. */
constexpr Field BASE_VERSION = u8(0), MGMT_CLASS = u8(1), CLASS_VERSION = u8(2), METHOD = u8(3);
constexpr Field STATUS = u16(4), TRANSACTION_ID = u64(8);
constexpr Field ATTRIBUTE_ID = u16(16), ATTRIBUTE_MODIFIER = u32(20);

/* Every message but SIDR's starts with the sender's comm ID, then (but in
 * a REQ) the receiver's. */
constexpr Field LOCAL_COMM_ID = u32(24), REMOTE_COMM_ID = u32(28);

namespace req {
constexpr Field SERVICE_ID = u64(32), LOCAL_CA_GUID = u64(40), LOCAL_QKEY = u32(52);
constexpr Field LOCAL_QPN = bits32(56, 8, 24), RESPONDER_RESOURCES = bits32(56, 0, 8);
constexpr Field LOCAL_EECN = bits32(60, 8, 24), INITIATOR_DEPTH = bits32(60, 0, 8);
constexpr Field REMOTE_EECN = bits32(64, 8, 24), REMOTE_CM_RESPONSE_TIMEOUT = bits32(64, 3, 5),
                TRANSPORT = bits32(64, 1, 2), FLOW_CONTROL = bits32(64, 0, 1);
constexpr Field STARTING_PSN = bits32(68, 8, 24), LOCAL_CM_RESPONSE_TIMEOUT = bits32(68, 3, 5),
                RETRY_COUNT = bits32(68, 0, 3);
constexpr Field PKEY = u16(72);
constexpr Field PATH_MTU = bits8(74, 4, 4), RDC_EXISTS = bits8(74, 3, 1), RNR_RETRY_COUNT = bits8(74, 0, 3);
constexpr Field MAX_CM_RETRIES = bits8(75, 4, 4), SRQ = bits8(75, 3, 1), EXTENDED_TRANSPORT = bits8(75, 0, 3);
constexpr uint16_t PRIMARY_PATH = 76, ALTERNATE_PATH = 120;
constexpr Area PRIVATE_DATA{164, REQ_PRIVATE_DATA};
} // namespace req

/* A path's 44 bytes, from its start. */
namespace path {
constexpr uint16_t LOCAL_LID = 0, REMOTE_LID = 2, LOCAL_GID = 4, REMOTE_GID = 20;
constexpr uint16_t FLOW = 36, TRAFFIC_CLASS = 40, HOP_LIMIT = 41, SL = 42, ACK_TIMEOUT = 43, SIZE = 44;
} // namespace path

namespace mra {
constexpr Field MESSAGE = bits8(32, 6, 2), SERVICE_TIMEOUT = bits8(33, 3, 5);
constexpr Area PRIVATE_DATA{34, MRA_PRIVATE_DATA};
} // namespace mra

namespace rej {
constexpr Field MESSAGE = bits8(32, 6, 2), ARI_LENGTH = bits8(33, 1, 7), REASON = u16(34);
constexpr Area ARI{36, REJ_ARI_SIZE}, PRIVATE_DATA{108, REJ_PRIVATE_DATA};
} // namespace rej

namespace rep {
constexpr Field LOCAL_QKEY = u32(32), LOCAL_QPN = bits32(36, 8, 24), LOCAL_EECN = bits32(40, 8, 24),
                STARTING_PSN = bits32(44, 8, 24), RESPONDER_RESOURCES = u8(48), INITIATOR_DEPTH = u8(49);
constexpr Field TARGET_ACK_DELAY = bits8(50, 3, 5), FAILOVER_ACCEPTED = bits8(50, 1, 2), FLOW_CONTROL = bits8(50, 0, 1);
constexpr Field RNR_RETRY_COUNT = bits8(51, 5, 3), SRQ = bits8(51, 4, 1);
constexpr Field LOCAL_CA_GUID = u64(52);
constexpr Area PRIVATE_DATA{60, REP_PRIVATE_DATA};
} // namespace rep

namespace rtu {
constexpr Area PRIVATE_DATA{32, RTU_PRIVATE_DATA};
}

namespace dreq {
constexpr Field REMOTE_QPN = bits32(32, 8, 24);
constexpr Area PRIVATE_DATA{36, DREQ_PRIVATE_DATA};
} // namespace dreq

namespace drep {
constexpr Area PRIVATE_DATA{32, DREP_PRIVATE_DATA};
}

namespace sidr_req {
constexpr Field REQUEST_ID = u32(24), PKEY = u16(28), SERVICE_ID = u64(32);
constexpr Area PRIVATE_DATA{40, SIDR_REQ_PRIVATE_DATA};
} // namespace sidr_req

namespace sidr_rep {
constexpr Field REQUEST_ID = u32(24), STATUS = u8(28), INFO_LENGTH = u8(29), QPN = bits32(32, 8, 24),
                SERVICE_ID = u64(36), QKEY = u32(44);
constexpr Area INFO{48, SIDR_REP_INFO_SIZE}, PRIVATE_DATA{120, SIDR_REP_PRIVATE_DATA};
} // namespace sidr_rep

static_assert(req::PRIMARY_PATH + path::SIZE == req::ALTERNATE_PATH);
static_assert(req::ALTERNATE_PATH + path::SIZE == req::PRIVATE_DATA.offset);
static_assert(req::PRIVATE_DATA.offset + req::PRIVATE_DATA.size == MAD_SIZE);
static_assert(mra::PRIVATE_DATA.offset + mra::PRIVATE_DATA.size == MAD_SIZE);
static_assert(rej::PRIVATE_DATA.offset + rej::PRIVATE_DATA.size == MAD_SIZE);
static_assert(rep::PRIVATE_DATA.offset + rep::PRIVATE_DATA.size == MAD_SIZE);
static_assert(rtu::PRIVATE_DATA.offset + rtu::PRIVATE_DATA.size == MAD_SIZE);
static_assert(dreq::PRIVATE_DATA.offset + dreq::PRIVATE_DATA.size == MAD_SIZE);
static_assert(drep::PRIVATE_DATA.offset + drep::PRIVATE_DATA.size == MAD_SIZE);
static_assert(sidr_req::PRIVATE_DATA.offset + sidr_req::PRIVATE_DATA.size == MAD_SIZE);
static_assert(sidr_rep::PRIVATE_DATA.offset + sidr_rep::PRIVATE_DATA.size == MAD_SIZE);

Mad with_header(Attribute attribute, uint64_t transaction_id)
{
    Mad mad{};
    set(mad, BASE_VERSION, MAD_BASE_VERSION);
    set(mad, MGMT_CLASS, CM_MGMT_CLASS);
    set(mad, CLASS_VERSION, CM_CLASS_VERSION);
    set(mad, METHOD, MAD_METHOD_SEND);
    set(mad, TRANSACTION_ID, transaction_id);
    set(mad, ATTRIBUTE_ID, static_cast<uint16_t>(attribute));
    return mad;
}

/* The header and the two comm IDs every message but REQ and SIDR's starts with. */
Mad with_comm_ids(Attribute attribute, uint32_t local_comm_id, uint32_t remote_comm_id, uint64_t transaction_id)
{
    Mad mad = with_header(attribute, transaction_id);
    set(mad, LOCAL_COMM_ID, local_comm_id);
    set(mad, REMOTE_COMM_ID, remote_comm_id);
    return mad;
}

void put_path(Mad& mad, uint16_t at, const Path& p)
{
    set(mad, u16(at + path::LOCAL_LID), p.local_lid);
    set(mad, u16(at + path::REMOTE_LID), p.remote_lid);
    put(mad, {static_cast<uint16_t>(at + path::LOCAL_GID), 16}, p.local_gid);
    put(mad, {static_cast<uint16_t>(at + path::REMOTE_GID), 16}, p.remote_gid);
    set(mad, bits32(at + path::FLOW, 12, 20), p.flow_label);
    set(mad, bits32(at + path::FLOW, 0, 6), p.packet_rate);
    set(mad, u8(at + path::TRAFFIC_CLASS), p.traffic_class);
    set(mad, u8(at + path::HOP_LIMIT), p.hop_limit);
    set(mad, bits8(at + path::SL, 4, 4), p.sl);
    set(mad, bits8(at + path::SL, 3, 1), p.subnet_local);
    set(mad, bits8(at + path::ACK_TIMEOUT, 3, 5), p.local_ack_timeout);
}

Path take_path(const Mad& mad, uint16_t at)
{
    Path p;
    p.local_lid = static_cast<uint16_t>(get(mad, u16(at + path::LOCAL_LID)));
    p.remote_lid = static_cast<uint16_t>(get(mad, u16(at + path::REMOTE_LID)));
    p.local_gid = take_gid(mad, at + path::LOCAL_GID);
    p.remote_gid = take_gid(mad, at + path::REMOTE_GID);
    p.flow_label = static_cast<uint32_t>(get(mad, bits32(at + path::FLOW, 12, 20)));
    p.packet_rate = static_cast<uint8_t>(get(mad, bits32(at + path::FLOW, 0, 6)));
    p.traffic_class = static_cast<uint8_t>(get(mad, u8(at + path::TRAFFIC_CLASS)));
    p.hop_limit = static_cast<uint8_t>(get(mad, u8(at + path::HOP_LIMIT)));
    p.sl = static_cast<uint8_t>(get(mad, bits8(at + path::SL, 4, 4)));
    p.subnet_local = get(mad, bits8(at + path::SL, 3, 1)) != 0;
    p.local_ack_timeout = static_cast<uint8_t>(get(mad, bits8(at + path::ACK_TIMEOUT, 3, 5)));
    return p;
}

template <typename T> T field(const Mad& mad, Field f) { return static_cast<T>(get(mad, f)); }

} // namespace

std::optional<MadHeader> parse_cm_header(std::span<const uint8_t> bytes)
{
    if (bytes.size() != MAD_SIZE)
        return std::nullopt;
    Mad mad;
    std::copy(bytes.begin(), bytes.end(), mad.begin());
    MadHeader h;
    h.base_version = field<uint8_t>(mad, BASE_VERSION);
    h.mgmt_class = field<uint8_t>(mad, MGMT_CLASS);
    h.class_version = field<uint8_t>(mad, CLASS_VERSION);
    h.method = field<uint8_t>(mad, METHOD);
    h.status = field<uint16_t>(mad, STATUS);
    h.transaction_id = get(mad, TRANSACTION_ID);
    h.attribute = field<Attribute>(mad, ATTRIBUTE_ID);
    h.attribute_modifier = field<uint32_t>(mad, ATTRIBUTE_MODIFIER);
    if (h.base_version != MAD_BASE_VERSION || h.mgmt_class != CM_MGMT_CLASS ||
        h.class_version != CM_CLASS_VERSION || h.method != MAD_METHOD_SEND)
        return std::nullopt;
    return h;
}

uint32_t sender_comm_id(const Mad& mad) { return field<uint32_t>(mad, LOCAL_COMM_ID); }
uint32_t receiver_comm_id(const Mad& mad) { return field<uint32_t>(mad, REMOTE_COMM_ID); }

Mad format(const Req& m, uint64_t transaction_id)
{
    Mad mad = with_header(Attribute::req, transaction_id);
    set(mad, LOCAL_COMM_ID, m.local_comm_id);
    set(mad, req::SERVICE_ID, m.service_id);
    set(mad, req::LOCAL_CA_GUID, m.local_ca_guid);
    set(mad, req::LOCAL_QKEY, m.local_qkey);
    set(mad, req::LOCAL_QPN, m.local_qpn);
    set(mad, req::RESPONDER_RESOURCES, m.responder_resources);
    set(mad, req::LOCAL_EECN, m.local_eecn);
    set(mad, req::INITIATOR_DEPTH, m.initiator_depth);
    set(mad, req::REMOTE_EECN, m.remote_eecn);
    set(mad, req::REMOTE_CM_RESPONSE_TIMEOUT, m.remote_cm_response_timeout);
    set(mad, req::TRANSPORT, static_cast<uint8_t>(m.transport));
    set(mad, req::FLOW_CONTROL, m.end_to_end_flow_control);
    set(mad, req::STARTING_PSN, m.starting_psn);
    set(mad, req::LOCAL_CM_RESPONSE_TIMEOUT, m.local_cm_response_timeout);
    set(mad, req::RETRY_COUNT, m.retry_count);
    set(mad, req::PKEY, m.pkey);
    set(mad, req::PATH_MTU, m.path_mtu);
    set(mad, req::RDC_EXISTS, m.rdc_exists);
    set(mad, req::RNR_RETRY_COUNT, m.rnr_retry_count);
    set(mad, req::MAX_CM_RETRIES, m.max_cm_retries);
    set(mad, req::SRQ, m.srq);
    set(mad, req::EXTENDED_TRANSPORT, m.extended_transport);
    put_path(mad, req::PRIMARY_PATH, m.primary);
    if (m.alternate)
        put_path(mad, req::ALTERNATE_PATH, *m.alternate);
    put(mad, req::PRIVATE_DATA, m.private_data);
    return mad;
}

Req parse_req(const Mad& mad)
{
    Req m;
    m.local_comm_id = field<uint32_t>(mad, LOCAL_COMM_ID);
    m.service_id = get(mad, req::SERVICE_ID);
    m.local_ca_guid = get(mad, req::LOCAL_CA_GUID);
    m.local_qkey = field<uint32_t>(mad, req::LOCAL_QKEY);
    m.local_qpn = field<uint32_t>(mad, req::LOCAL_QPN);
    m.responder_resources = field<uint8_t>(mad, req::RESPONDER_RESOURCES);
    m.local_eecn = field<uint32_t>(mad, req::LOCAL_EECN);
    m.initiator_depth = field<uint8_t>(mad, req::INITIATOR_DEPTH);
    m.remote_eecn = field<uint32_t>(mad, req::REMOTE_EECN);
    m.remote_cm_response_timeout = field<uint8_t>(mad, req::REMOTE_CM_RESPONSE_TIMEOUT);
    m.transport = field<Transport>(mad, req::TRANSPORT);
    m.end_to_end_flow_control = get(mad, req::FLOW_CONTROL) != 0;
    m.starting_psn = field<uint32_t>(mad, req::STARTING_PSN);
    m.local_cm_response_timeout = field<uint8_t>(mad, req::LOCAL_CM_RESPONSE_TIMEOUT);
    m.retry_count = field<uint8_t>(mad, req::RETRY_COUNT);
    m.pkey = field<uint16_t>(mad, req::PKEY);
    m.path_mtu = field<uint8_t>(mad, req::PATH_MTU);
    m.rdc_exists = get(mad, req::RDC_EXISTS) != 0;
    m.rnr_retry_count = field<uint8_t>(mad, req::RNR_RETRY_COUNT);
    m.max_cm_retries = field<uint8_t>(mad, req::MAX_CM_RETRIES);
    m.srq = get(mad, req::SRQ) != 0;
    m.extended_transport = field<uint8_t>(mad, req::EXTENDED_TRANSPORT);
    m.primary = take_path(mad, req::PRIMARY_PATH);
    const Path alternate = take_path(mad, req::ALTERNATE_PATH);
    if (alternate.local_lid != 0 || alternate.local_gid != Gid{})
        m.alternate = alternate;
    m.private_data = take(mad, req::PRIVATE_DATA);
    return m;
}

Mad format(const Mra& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::mra, m.local_comm_id, m.remote_comm_id, transaction_id);
    set(mad, mra::MESSAGE, static_cast<uint8_t>(m.message));
    set(mad, mra::SERVICE_TIMEOUT, m.service_timeout);
    put(mad, mra::PRIVATE_DATA, m.private_data);
    return mad;
}

Mra parse_mra(const Mad& mad)
{
    Mra m;
    m.local_comm_id = field<uint32_t>(mad, LOCAL_COMM_ID);
    m.remote_comm_id = field<uint32_t>(mad, REMOTE_COMM_ID);
    m.message = field<MessageKind>(mad, mra::MESSAGE);
    m.service_timeout = field<uint8_t>(mad, mra::SERVICE_TIMEOUT);
    m.private_data = take(mad, mra::PRIVATE_DATA);
    return m;
}

Mad format(const Rej& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::rej, m.local_comm_id, m.remote_comm_id, transaction_id);
    set(mad, rej::MESSAGE, static_cast<uint8_t>(m.message));
    set(mad, rej::ARI_LENGTH, std::min(m.additional_info.size(), REJ_ARI_SIZE));
    set(mad, rej::REASON, static_cast<uint16_t>(m.reason));
    put(mad, rej::ARI, m.additional_info);
    put(mad, rej::PRIVATE_DATA, m.private_data);
    return mad;
}

Rej parse_rej(const Mad& mad)
{
    Rej m;
    m.local_comm_id = field<uint32_t>(mad, LOCAL_COMM_ID);
    m.remote_comm_id = field<uint32_t>(mad, REMOTE_COMM_ID);
    m.message = field<MessageKind>(mad, rej::MESSAGE);
    m.reason = field<RejReason>(mad, rej::REASON);
    m.additional_info = take(mad, rej::ARI, get(mad, rej::ARI_LENGTH));
    m.private_data = take(mad, rej::PRIVATE_DATA);
    return m;
}

Mad format(const Rep& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::rep, m.local_comm_id, m.remote_comm_id, transaction_id);
    set(mad, rep::LOCAL_QKEY, m.local_qkey);
    set(mad, rep::LOCAL_QPN, m.local_qpn);
    set(mad, rep::LOCAL_EECN, m.local_eecn);
    set(mad, rep::STARTING_PSN, m.starting_psn);
    set(mad, rep::RESPONDER_RESOURCES, m.responder_resources);
    set(mad, rep::INITIATOR_DEPTH, m.initiator_depth);
    set(mad, rep::TARGET_ACK_DELAY, m.target_ack_delay);
    set(mad, rep::FAILOVER_ACCEPTED, m.failover_accepted);
    set(mad, rep::FLOW_CONTROL, m.end_to_end_flow_control);
    set(mad, rep::RNR_RETRY_COUNT, m.rnr_retry_count);
    set(mad, rep::SRQ, m.srq);
    set(mad, rep::LOCAL_CA_GUID, m.local_ca_guid);
    put(mad, rep::PRIVATE_DATA, m.private_data);
    return mad;
}

Rep parse_rep(const Mad& mad)
{
    Rep m;
    m.local_comm_id = field<uint32_t>(mad, LOCAL_COMM_ID);
    m.remote_comm_id = field<uint32_t>(mad, REMOTE_COMM_ID);
    m.local_qkey = field<uint32_t>(mad, rep::LOCAL_QKEY);
    m.local_qpn = field<uint32_t>(mad, rep::LOCAL_QPN);
    m.local_eecn = field<uint32_t>(mad, rep::LOCAL_EECN);
    m.starting_psn = field<uint32_t>(mad, rep::STARTING_PSN);
    m.responder_resources = field<uint8_t>(mad, rep::RESPONDER_RESOURCES);
    m.initiator_depth = field<uint8_t>(mad, rep::INITIATOR_DEPTH);
    m.target_ack_delay = field<uint8_t>(mad, rep::TARGET_ACK_DELAY);
    m.failover_accepted = field<uint8_t>(mad, rep::FAILOVER_ACCEPTED);
    m.end_to_end_flow_control = get(mad, rep::FLOW_CONTROL) != 0;
    m.rnr_retry_count = field<uint8_t>(mad, rep::RNR_RETRY_COUNT);
    m.srq = get(mad, rep::SRQ) != 0;
    m.local_ca_guid = get(mad, rep::LOCAL_CA_GUID);
    m.private_data = take(mad, rep::PRIVATE_DATA);
    return m;
}

Mad format(const Rtu& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::rtu, m.local_comm_id, m.remote_comm_id, transaction_id);
    put(mad, rtu::PRIVATE_DATA, m.private_data);
    return mad;
}

Rtu parse_rtu(const Mad& mad)
{
    return {field<uint32_t>(mad, LOCAL_COMM_ID), field<uint32_t>(mad, REMOTE_COMM_ID),
            take(mad, rtu::PRIVATE_DATA)};
}

Mad format(const Dreq& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::dreq, m.local_comm_id, m.remote_comm_id, transaction_id);
    set(mad, dreq::REMOTE_QPN, m.remote_qpn);
    put(mad, dreq::PRIVATE_DATA, m.private_data);
    return mad;
}

Dreq parse_dreq(const Mad& mad)
{
    return {field<uint32_t>(mad, LOCAL_COMM_ID), field<uint32_t>(mad, REMOTE_COMM_ID),
            field<uint32_t>(mad, dreq::REMOTE_QPN), take(mad, dreq::PRIVATE_DATA)};
}

Mad format(const Drep& m, uint64_t transaction_id)
{
    Mad mad = with_comm_ids(Attribute::drep, m.local_comm_id, m.remote_comm_id, transaction_id);
    put(mad, drep::PRIVATE_DATA, m.private_data);
    return mad;
}

Drep parse_drep(const Mad& mad)
{
    return {field<uint32_t>(mad, LOCAL_COMM_ID), field<uint32_t>(mad, REMOTE_COMM_ID),
            take(mad, drep::PRIVATE_DATA)};
}

Mad format(const SidrReq& m, uint64_t transaction_id)
{
    Mad mad = with_header(Attribute::sidr_req, transaction_id);
    set(mad, sidr_req::REQUEST_ID, m.request_id);
    set(mad, sidr_req::PKEY, m.pkey);
    set(mad, sidr_req::SERVICE_ID, m.service_id);
    put(mad, sidr_req::PRIVATE_DATA, m.private_data);
    return mad;
}

SidrReq parse_sidr_req(const Mad& mad)
{
    return {field<uint32_t>(mad, sidr_req::REQUEST_ID), field<uint16_t>(mad, sidr_req::PKEY),
            get(mad, sidr_req::SERVICE_ID), take(mad, sidr_req::PRIVATE_DATA)};
}

Mad format(const SidrRep& m, uint64_t transaction_id)
{
    Mad mad = with_header(Attribute::sidr_rep, transaction_id);
    set(mad, sidr_rep::REQUEST_ID, m.request_id);
    set(mad, sidr_rep::STATUS, static_cast<uint8_t>(m.status));
    set(mad, sidr_rep::INFO_LENGTH, std::min(m.additional_info.size(), SIDR_REP_INFO_SIZE));
    set(mad, sidr_rep::QPN, m.qpn);
    set(mad, sidr_rep::SERVICE_ID, m.service_id);
    set(mad, sidr_rep::QKEY, m.qkey);
    put(mad, sidr_rep::INFO, m.additional_info);
    put(mad, sidr_rep::PRIVATE_DATA, m.private_data);
    return mad;
}

SidrRep parse_sidr_rep(const Mad& mad)
{
    SidrRep m;
    m.request_id = field<uint32_t>(mad, sidr_rep::REQUEST_ID);
    m.status = field<SidrStatus>(mad, sidr_rep::STATUS);
    m.additional_info = take(mad, sidr_rep::INFO, get(mad, sidr_rep::INFO_LENGTH));
    m.qpn = field<uint32_t>(mad, sidr_rep::QPN);
    m.service_id = get(mad, sidr_rep::SERVICE_ID);
    m.qkey = field<uint32_t>(mad, sidr_rep::QKEY);
    m.private_data = take(mad, sidr_rep::PRIVATE_DATA);
    return m;
}

} // namespace cna::cm
