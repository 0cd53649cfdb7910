/* SPDX-License-Identifier: BSD-3-Clause
 * The CM's messages on the wire: each field where IBTA Vol 1, 12.6 puts it
 * (offsets from the MAD's start, the 24-byte header included), and every
 * message read back as it was written.
 */
#include <gtest/gtest.h>

#include "cm_mad.h"

namespace cna::cm {
namespace {

uint32_t be32_at(const Mad& m, std::size_t at)
{
    return uint32_t{m[at]} << 24 | uint32_t{m[at + 1]} << 16 | uint32_t{m[at + 2]} << 8 | m[at + 3];
}

Gid gid_with(uint8_t seed)
{
    Gid g;
    for (unsigned i = 0; i < g.size(); i++)
        g[i] = static_cast<uint8_t>(seed + i);
    return g;
}

PrivateData bytes_from(uint8_t seed, std::size_t n)
{
    PrivateData d(n);
    for (std::size_t i = 0; i < n; i++)
        d[i] = static_cast<uint8_t>(seed + 3 * i);
    return d;
}

Req sample_req()
{
    Req r;
    r.local_comm_id = 0x11223344;
    r.service_id = 0x0000000001061d2f;
    r.local_ca_guid = 0x0123456789abcdef;
    r.local_qkey = 0xa5a5a5a5;
    r.local_qpn = 0xabcdef;
    r.responder_resources = 16;
    r.local_eecn = 0x123456;
    r.initiator_depth = 8;
    r.remote_eecn = 0x654321;
    r.remote_cm_response_timeout = 20;
    r.transport = Transport::uc;
    r.end_to_end_flow_control = true;
    r.starting_psn = 0xfedcba;
    r.local_cm_response_timeout = 19;
    r.retry_count = 6;
    r.pkey = 0xffff;
    r.path_mtu = 3;
    r.rdc_exists = false;
    r.rnr_retry_count = 5;
    r.max_cm_retries = 15;
    r.srq = true;
    r.extended_transport = 0;
    r.primary.local_lid = 0x1234;
    r.primary.remote_lid = 0x5678;
    r.primary.local_gid = gid_with(0x10);
    r.primary.remote_gid = gid_with(0x40);
    r.primary.flow_label = 0xabcde;
    r.primary.packet_rate = 0x2a;
    r.primary.traffic_class = 0x68;
    r.primary.hop_limit = 0x40;
    r.primary.sl = 5;
    r.primary.subnet_local = true;
    r.primary.local_ack_timeout = 18;
    r.private_data = bytes_from(7, REQ_PRIVATE_DATA);
    return r;
}

TEST(CmMad, HeaderIsTheCmsAndSaysWhatItIs)
{
    const Mad mad = format(sample_req(), 0x0102030405060708);
    EXPECT_EQ(mad[0], 1);    /* base version */
    EXPECT_EQ(mad[1], 0x07); /* CM class */
    EXPECT_EQ(mad[2], 2);    /* class version */
    EXPECT_EQ(mad[3], 0x03); /* Send */
    EXPECT_EQ(be32_at(mad, 8), 0x01020304u);
    EXPECT_EQ(be32_at(mad, 12), 0x05060708u);
    EXPECT_EQ(mad[16], 0x00);
    EXPECT_EQ(mad[17], 0x10); /* REQ */
    const std::optional<MadHeader> h = parse_cm_header(mad);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->attribute, Attribute::req);
    EXPECT_EQ(h->transaction_id, 0x0102030405060708u);
}

TEST(CmMad, WhatIsNotAWholeCmSendIsNotTheCms)
{
    const Mad good = format(Rtu{1, 2, {}}, 9);
    EXPECT_FALSE(parse_cm_header(std::span(good).first(255)));
    for (std::size_t byte : {0, 1, 2, 3}) {
        Mad bad = good;
        bad[byte] ^= 0x40;
        EXPECT_FALSE(parse_cm_header(bad)) << "header byte " << byte;
    }
    EXPECT_TRUE(parse_cm_header(good));
}

TEST(CmMad, ReqFieldsAreWhereIbtaPutsThem)
{
    const Mad m = format(sample_req(), 1);
    EXPECT_EQ(be32_at(m, 24), 0x11223344u);                  /* local comm ID */
    EXPECT_EQ(be32_at(m, 32), 0x00000000u);                  /* service ID, high word */
    EXPECT_EQ(be32_at(m, 36), 0x01061d2fu);
    EXPECT_EQ(be32_at(m, 40), 0x01234567u);                  /* local CA GUID */
    EXPECT_EQ(be32_at(m, 52), 0xa5a5a5a5u);                  /* Q_Key */
    EXPECT_EQ(be32_at(m, 56), 0xabcdef10u);                  /* QPN | responder resources */
    EXPECT_EQ(be32_at(m, 60), 0x12345608u);                  /* EECN | initiator depth */
    EXPECT_EQ(be32_at(m, 64), 0x65432100u | 20u << 3 | 1u << 1 | 1u); /* | timeout | UC | flow control */
    EXPECT_EQ(be32_at(m, 68), 0xfedcba00u | 19u << 3 | 6u);  /* PSN | timeout | retry count */
    EXPECT_EQ(m[72], 0xff);                                  /* P_Key */
    EXPECT_EQ(m[73], 0xff);
    EXPECT_EQ(m[74], 3 << 4 | 5);                            /* MTU | RDC | RNR retry */
    EXPECT_EQ(m[75], 15 << 4 | 1 << 3);                      /* max CM retries | SRQ */
    EXPECT_EQ(m[76], 0x12);                                  /* primary local LID */
    EXPECT_EQ(m[79], 0x78);                                  /* primary remote LID */
    EXPECT_EQ(m[80], 0x10);                                  /* primary local GID */
    EXPECT_EQ(m[96], 0x40);                                  /* primary remote GID */
    EXPECT_EQ(be32_at(m, 112), 0xabcde000u | 0x2a);          /* flow label | packet rate */
    EXPECT_EQ(m[116], 0x68);                                 /* traffic class */
    EXPECT_EQ(m[117], 0x40);                                 /* hop limit */
    EXPECT_EQ(m[118], 5 << 4 | 1 << 3);                      /* SL | subnet local */
    EXPECT_EQ(m[119], 18 << 3);                              /* local ACK timeout */
    for (std::size_t i = 120; i < 164; i++)
        EXPECT_EQ(m[i], 0) << "no alternate path, byte " << i;
    EXPECT_EQ(m[164], 7);                                    /* private data */
    EXPECT_EQ(m[255], static_cast<uint8_t>(7 + 3 * 91));
}

TEST(CmMad, EveryMessageReadsBackAsWritten)
{
    Req req = sample_req();
    Path alternate = req.primary;
    alternate.local_gid = gid_with(0x80);
    req.alternate = alternate;
    const Req req_back = parse_req(format(req, 1));
    EXPECT_EQ(req_back.local_qpn, req.local_qpn);
    EXPECT_EQ(req_back.service_id, req.service_id);
    EXPECT_EQ(req_back.starting_psn, req.starting_psn);
    EXPECT_EQ(req_back.transport, req.transport);
    EXPECT_EQ(req_back.max_cm_retries, req.max_cm_retries);
    EXPECT_EQ(req_back.srq, req.srq);
    EXPECT_EQ(req_back.primary, req.primary);
    ASSERT_TRUE(req_back.alternate);
    EXPECT_EQ(*req_back.alternate, alternate);
    EXPECT_EQ(req_back.private_data, req.private_data);

    Rep rep;
    rep.local_comm_id = 0xdeadbeef;
    rep.remote_comm_id = 0x11223344;
    rep.local_qkey = 7;
    rep.local_qpn = 0x00abcd;
    rep.starting_psn = 0xffffff;
    rep.responder_resources = 3;
    rep.initiator_depth = 9;
    rep.target_ack_delay = 31;
    rep.failover_accepted = 2;
    rep.end_to_end_flow_control = true;
    rep.rnr_retry_count = 7;
    rep.srq = true;
    rep.local_ca_guid = 0x8877665544332211;
    rep.private_data = bytes_from(1, 10);
    const Mad rep_mad = format(rep, 2);
    EXPECT_EQ(be32_at(rep_mad, 36), 0x00abcd00u);
    EXPECT_EQ(rep_mad[50], 31 << 3 | 2 << 1 | 1);
    EXPECT_EQ(rep_mad[51], 7 << 5 | 1 << 4);
    EXPECT_EQ(rep_mad[60], 1); /* private data */
    const Rep rep_back = parse_rep(rep_mad);
    EXPECT_EQ(rep_back.local_qpn, rep.local_qpn);
    EXPECT_EQ(rep_back.target_ack_delay, 31);
    EXPECT_EQ(rep_back.failover_accepted, 2);
    EXPECT_EQ(rep_back.rnr_retry_count, 7);
    EXPECT_TRUE(rep_back.srq);
    EXPECT_EQ(rep_back.local_ca_guid, rep.local_ca_guid);
    EXPECT_EQ(rep_back.private_data.size(), REP_PRIVATE_DATA);
    EXPECT_TRUE(std::equal(rep.private_data.begin(), rep.private_data.end(), rep_back.private_data.begin()));

    Rej rej{1, 2, MessageKind::rep, RejReason::consumer_reject, {0xaa, 0xbb}, bytes_from(4, REJ_PRIVATE_DATA)};
    const Mad rej_mad = format(rej, 3);
    EXPECT_EQ(rej_mad[32], 1 << 6);
    EXPECT_EQ(rej_mad[33], 2 << 1);
    EXPECT_EQ(rej_mad[35], 28);
    EXPECT_EQ(rej_mad[36], 0xaa);
    EXPECT_EQ(rej_mad[108], 4);
    const Rej rej_back = parse_rej(rej_mad);
    EXPECT_EQ(rej_back.message, MessageKind::rep);
    EXPECT_EQ(rej_back.reason, RejReason::consumer_reject);
    EXPECT_EQ(rej_back.additional_info, rej.additional_info);
    EXPECT_EQ(rej_back.private_data, rej.private_data);

    Mra mra{5, 6, MessageKind::rep, 24, bytes_from(2, MRA_PRIVATE_DATA)};
    const Mad mra_mad = format(mra, 4);
    EXPECT_EQ(mra_mad[32], 1 << 6);
    EXPECT_EQ(mra_mad[33], 24 << 3);
    const Mra mra_back = parse_mra(mra_mad);
    EXPECT_EQ(mra_back.service_timeout, 24);
    EXPECT_EQ(mra_back.private_data, mra.private_data);

    const Dreq dreq{7, 8, 0x345678, bytes_from(3, DREQ_PRIVATE_DATA)};
    const Mad dreq_mad = format(dreq, 5);
    EXPECT_EQ(be32_at(dreq_mad, 32), 0x34567800u);
    const Dreq dreq_back = parse_dreq(dreq_mad);
    EXPECT_EQ(dreq_back.remote_qpn, 0x345678u);
    EXPECT_EQ(dreq_back.private_data, dreq.private_data);

    const Drep drep{9, 10, bytes_from(5, DREP_PRIVATE_DATA)};
    const Mad drep_mad = format(drep, 6);
    EXPECT_EQ(drep_mad[17], 0x16);
    EXPECT_EQ(parse_drep(drep_mad).private_data, drep.private_data);
    const Mad rtu_mad = format(Rtu{11, 12, {}}, 7);
    EXPECT_EQ(rtu_mad[17], 0x14);
    EXPECT_EQ(sender_comm_id(rtu_mad), 11u);
    EXPECT_EQ(receiver_comm_id(rtu_mad), 12u);

    const SidrReq sreq{0x55, 0xffff, 0x0000000001110000 | 4791, bytes_from(6, SIDR_REQ_PRIVATE_DATA)};
    const Mad sreq_mad = format(sreq, 8);
    EXPECT_EQ(be32_at(sreq_mad, 24), 0x55u);
    EXPECT_EQ(be32_at(sreq_mad, 36), 0x011112b7u);
    EXPECT_EQ(sreq_mad[40], 6);
    const SidrReq sreq_back = parse_sidr_req(sreq_mad);
    EXPECT_EQ(sreq_back.service_id, sreq.service_id);
    EXPECT_EQ(sreq_back.private_data, sreq.private_data);

    SidrRep srep;
    srep.request_id = 0x55;
    srep.status = SidrStatus::valid;
    srep.qpn = 0x0000ab;
    srep.service_id = sreq.service_id;
    srep.qkey = 0x1234;
    srep.private_data = bytes_from(8, SIDR_REP_PRIVATE_DATA);
    const Mad srep_mad = format(srep, 9);
    EXPECT_EQ(be32_at(srep_mad, 32), 0x0000ab00u);
    EXPECT_EQ(be32_at(srep_mad, 44), 0x1234u);
    EXPECT_EQ(srep_mad[120], 8);
    const SidrRep srep_back = parse_sidr_rep(srep_mad);
    EXPECT_EQ(srep_back.qpn, srep.qpn);
    EXPECT_EQ(srep_back.qkey, srep.qkey);
    EXPECT_EQ(srep_back.private_data, srep.private_data);
}

TEST(CmMad, FieldsKeepToTheirBitsAndPrivateDataToItsRoom)
{
    Req r = sample_req();
    r.local_qpn = 0xffffffff;   /* 24 bits on the wire */
    r.retry_count = 0xff;       /* 3 */
    r.primary.sl = 0xff;        /* 4 */
    r.private_data = PrivateData(300, 0x5a);
    const Mad m = format(r, 1);
    EXPECT_EQ(be32_at(m, 56), 0xffffff10u); /* responder resources untouched */
    EXPECT_EQ(m[71] & 0x7, 7);
    EXPECT_EQ(m[71] >> 3, 19);              /* the timeout beside it untouched */
    EXPECT_EQ(m[118], 0xf << 4 | 1 << 3);
    const Req back = parse_req(m);
    EXPECT_EQ(back.local_qpn, 0xffffffu);
    EXPECT_EQ(back.private_data.size(), REQ_PRIVATE_DATA);

    Rej rej;
    rej.additional_info = std::vector<uint8_t>(200, 1);
    EXPECT_EQ(parse_rej(format(rej, 1)).additional_info.size(), REJ_ARI_SIZE);
}

TEST(CmMad, IbaTimesAreFourMicrosecondsDoubled)
{
    EXPECT_EQ(iba_time_ns(0), 4096u);
    EXPECT_EQ(iba_time_ns(8), 4096u * 256);
    EXPECT_EQ(iba_time_ns(20), 4096ull << 20); /* 4.3 s */
    EXPECT_EQ(iba_time_ns(40), iba_time_ns(31));
}

} // namespace
} // namespace cna::cm
