/* SPDX-License-Identifier: BSD-3-Clause
 * RoCEv2 paths: an RC QP's (IBV_QP_AV) and an address handle's, which a UD
 * QP's WQEs carry. A path is resolved once, when it is given: the MACs
 * are in it, so a datagram's WQE is all the device needs to send it.
 */
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#include "cna_rdma_log.h"
#include "cna_rdma_objects.h"

namespace cna::rdma {

int roce_path(Device* dev, const ibv_ah_attr& ah, uint32_t entropy, const char* what, hsi::rdma::RocePath* path)
{
    if (!ah.is_global) {
        RDMA_LOG(ERR, dev, "%s: RoCE needs a GRH (is_global)", what);
        return EINVAL;
    }
    if (ah.grh.sgid_index >= dev->gids.size()) {
        RDMA_LOG(ERR, dev, "%s: sgid_index %u beyond the GID table", what, ah.grh.sgid_index);
        return EINVAL;
    }
    ecore::RoceIp src, dst;
    std::memcpy(src.data(), dev->gids[ah.grh.sgid_index].raw, 16);
    std::memcpy(dst.data(), ah.grh.dgid.raw, 16);
    const bool v4 = ecore::roce_is_ipv4(src);
    if (v4 != ecore::roce_is_ipv4(dst)) {
        RDMA_LOG(ERR, dev, "%s: the source and destination GIDs are of different families", what);
        return EINVAL;
    }
    *path = hsi::rdma::RocePath{};
    const uint8_t* d = dst.data();
    const bool eui64_link_local = d[0] == 0xfe && (d[1] & 0xc0) == 0x80 && d[11] == 0xff && d[12] == 0xfe;
    if (eui64_link_local) {
        const uint8_t mac[6] = {static_cast<uint8_t>(d[8] ^ 0x02), d[9], d[10], d[13], d[14], d[15]};
        std::memcpy(path->dst_mac, mac, 6);
    } else {
        std::array<uint8_t, 6> mac;
        if (ecore::Status st = ecore::roce_resolve_neighbour(*dev->hwfn, dst, src, &mac);
            st != ecore::Status::success)
            return st == ecore::Status::timeout ? EHOSTUNREACH : -ecore::status_to_errno(st);
        std::memcpy(path->dst_mac, mac.data(), 6);
    }
    std::memcpy(path->src_mac, dev->mac.data(), 6);
    path->vlan_tci = hsi::rdma::NO_VLAN;
    path->ip_version = v4 ? hsi::rdma::IP_VERSION_4 : hsi::rdma::IP_VERSION_6;
    path->traffic_class = ah.grh.traffic_class;
    path->hop_limit = ah.grh.hop_limit != 0 ? ah.grh.hop_limit : 64;
    path->flow_label = ah.grh.flow_label & 0xfffff;
    /* ECMP entropy: a port per QP (or AH) in the range RoCEv2 recommends. */
    path->udp_src_port = static_cast<uint16_t>(0xc000 | ((entropy * 0x9e37u) & 0x3fff));
    std::memcpy(path->src_ip, src.data(), 16);
    std::memcpy(path->dst_ip, dst.data(), 16);
    return 0;
}

} // namespace cna::rdma

using namespace cna;
using namespace cna::rdma;

extern "C" {

int cna_rdma_init_ah(ibv_pd* ibv_pd, ibv_ah_attr* attr, cna_rdma_ah* ah)
{
    static std::atomic<uint32_t> made{0};
    auto* pd = reinterpret_cast<Pd*>(ibv_pd);
    Device* dev = pd->dev;
    if (attr->port_num != 1) {
        RDMA_LOG(ERR, dev, "create_ah: port_num %u: the device has port 1", attr->port_num);
        return EINVAL;
    }
    if (dev->ahs == MAX_AHS) {
        RDMA_LOG(ERR, dev, "create_ah: %u address handles exist already", MAX_AHS);
        return ENOMEM;
    }
    hsi::rdma::RocePath path;
    if (int rc = roce_path(dev, *attr, made.fetch_add(1, std::memory_order_relaxed), "create_ah", &path); rc != 0)
        return rc;
    *ah = cna_rdma_ah{};
    ah->ibv.pd = ibv_pd;
    ah->pd = ibv_pd;
    std::memcpy(ah->path, &path, sizeof(path));
    pd->users++;
    dev->ahs++;
    dev->objects++;
    return 0;
}

void cna_rdma_fini_ah(cna_rdma_ah* ah)
{
    auto* pd = reinterpret_cast<Pd*>(ah->pd);
    pd->users--;
    pd->dev->ahs--;
    pd->dev->objects--;
}

ibv_ah* cna_rdma_create_ah(ibv_pd* pd, ibv_ah_attr* attr)
{
    auto ah = std::make_unique<cna_rdma_ah>();
    if (int rc = cna_rdma_init_ah(pd, attr, ah.get()); rc != 0) {
        errno = rc;
        return nullptr;
    }
    return &ah.release()->ibv;
}

int cna_rdma_destroy_ah(ibv_ah* ibv)
{
    auto* ah = reinterpret_cast<cna_rdma_ah*>(ibv);
    cna_rdma_fini_ah(ah);
    delete ah;
    return 0;
}

} // extern "C"
