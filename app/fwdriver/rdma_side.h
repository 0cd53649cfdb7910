/* SPDX-License-Identifier: BSD-3-Clause
 * One side of the RoCE tests and fuzzers: a PF's fake driver and RDMA
 * driver with a registered buffer, and what the tests ask of it.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/bytes.h"
#include "fake_rdma.h"

namespace cna::fw::test {

/* One side: its PF's or VF's driver, RDMA, a CQ, a QP and a registered
 * buffer. */
struct Side {
    Side(Adapter& adapter, uint32_t pf) : drv(adapter, pf), rdma(drv) {}
    /* VF `vf` of the PF `pf` drives, its CNQ on status block cnq_sb. */
    Side(Adapter& adapter, FakeDriver& pf, uint32_t vf, uint16_t cnq_sb) : drv(adapter, pf, vf), rdma(drv, cnq_sb) {}
    FakeDriver drv;
    FakeRdma rdma;
    HostMem buf;
    uint32_t key = 0;
    uint64_t va(std::size_t off = 0) const { return FakeRdma::va_of(buf, off); }
    hsi::rdma::Sge sge(std::size_t off, uint32_t len) const { return hsi::rdma::Sge{va(off), len, key}; }
    FakeRdma::Peer peer(uint16_t qp) { return {rdma.mac(), rdma.ipv4(), hsi::rdma::qpn_of(qp)}; }
    /* The IPv4 path from this side's RoCE addresses to the other's. */
    hsi::rdma::RocePath path_to(Side& other)
    {
        hsi::rdma::RocePath path{};
        const auto to = other.rdma.mac(), from = rdma.mac();
        std::memcpy(path.dst_mac, to.data(), 6);
        std::memcpy(path.src_mac, from.data(), 6);
        path.vlan_tci = hsi::rdma::NO_VLAN;
        path.ip_version = hsi::rdma::IP_VERSION_4;
        path.hop_limit = 64;
        store_be32(path.src_ip + 12, rdma.ipv4());
        store_be32(path.dst_ip + 12, other.rdma.ipv4());
        return path;
    }
};

} // namespace cna::fw::test
