/* SPDX-License-Identifier: BSD-3-Clause
 * RSS: Toeplitz hashing in the adapter over the hash types ethdev enables,
 * a 128-entry redirection table of Rx queues and a 40-byte key. The port
 * keeps the configuration; the vport gets it at start and on every update.
 */
#include <cerrno>
#include <cstring>

#include "cna_ethdev_ops.h"
#include "cna_log.h"
#include "ecore_l2_api.h"

namespace cna::net {
namespace {

namespace rss = hsi::eth::rss;

/* A commonly used default Toeplitz key (the one of Microsoft's RSS
 * verification suite), so hashes can be checked against published values. */
constexpr std::array<uint8_t, 40> DEFAULT_KEY = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct HashTypeMap {
    uint64_t rss_hf;
    uint16_t hash_type;
};
constexpr HashTypeMap HASH_TYPES[] = {
    {RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_OTHER, rss::IPV4},
    {RTE_ETH_RSS_NONFRAG_IPV4_TCP, rss::TCP_IPV4},
    {RTE_ETH_RSS_NONFRAG_IPV4_UDP, rss::UDP_IPV4},
    {RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER, rss::IPV6},
    {RTE_ETH_RSS_NONFRAG_IPV6_TCP, rss::TCP_IPV6},
    {RTE_ETH_RSS_NONFRAG_IPV6_UDP, rss::UDP_IPV6},
};

bool rss_active(const rte_eth_dev* dev)
{
    return (dev->data->dev_conf.rxmode.mq_mode & RTE_ETH_MQ_RX_RSS_FLAG) && port_of(dev)->rss.rss_hf != 0;
}

} // namespace

uint16_t rss_hash_types(uint64_t rss_hf)
{
    uint16_t types = 0;
    for (const HashTypeMap& m : HASH_TYPES)
        if (rss_hf & m.rss_hf)
            types |= m.hash_type;
    return types;
}

uint64_t rss_offloads_supported()
{
    uint64_t hf = 0;
    for (const HashTypeMap& m : HASH_TYPES)
        hf |= m.rss_hf;
    return hf;
}

void rss_configure(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    const rte_eth_rss_conf& conf = dev->data->dev_conf.rx_adv_conf.rss_conf;
    port->rss.rss_hf = conf.rss_hf & rss_offloads_supported();
    if (conf.rss_key != nullptr && conf.rss_key_len == port->rss.key.size())
        std::memcpy(port->rss.key.data(), conf.rss_key, port->rss.key.size());
    else
        port->rss.key = DEFAULT_KEY;
    const uint16_t nb_rxq = RTE_MAX(dev->data->nb_rx_queues, uint16_t{1});
    for (uint32_t i = 0; i < port->rss.reta.size(); i++)
        port->rss.reta[i] = static_cast<uint16_t>(i % nb_rxq);
}

int rss_apply(rte_eth_dev* dev)
{
    EthPort* port = port_of(dev);
    if (!port->vport_started)
        return 0;
    ecore::RssParams params;
    params.enable = rss_active(dev);
    params.hash_types = rss_hash_types(port->rss.rss_hf);
    std::memcpy(params.key.data(), port->rss.key.data(), port->rss.key.size());
    params.reta = port->rss.reta;
    ecore::SpVportUpdateParams p;
    p.vport_id = VPORT_ID;
    p.rss_params = &params;
    const ecore::Status st = ecore::sp_vport_update(port->edev.hwfn, p);
    if (st != ecore::Status::success)
        PMD_LOG(ERR, port, "cannot program RSS: %s", ecore::status_name(st));
    return ecore::status_to_errno(st);
}

int rss_hash_update(rte_eth_dev* dev, rte_eth_rss_conf* conf)
{
    EthPort* port = port_of(dev);
    if (conf->rss_key != nullptr && conf->rss_key_len != port->rss.key.size()) {
        PMD_LOG(ERR, port, "RSS key of %u bytes: the adapter takes %zu", conf->rss_key_len, port->rss.key.size());
        return -EINVAL;
    }
    const RssConf before = port->rss;
    port->rss.rss_hf = conf->rss_hf;
    if (conf->rss_key != nullptr)
        std::memcpy(port->rss.key.data(), conf->rss_key, port->rss.key.size());
    const int rc = rss_apply(dev);
    if (rc != 0)
        port->rss = before;
    return rc;
}

int rss_hash_conf_get(rte_eth_dev* dev, rte_eth_rss_conf* conf)
{
    EthPort* port = port_of(dev);
    conf->rss_hf = port->rss.rss_hf;
    if (conf->rss_key != nullptr) {
        std::memcpy(conf->rss_key, port->rss.key.data(), port->rss.key.size());
        conf->rss_key_len = static_cast<uint8_t>(port->rss.key.size());
    }
    return 0;
}

int reta_update(rte_eth_dev* dev, rte_eth_rss_reta_entry64* reta_conf, uint16_t reta_size)
{
    EthPort* port = port_of(dev);
    if (reta_size != rss::RETA_SIZE) {
        PMD_LOG(ERR, port, "RETA of %u entries: the adapter has %u", reta_size, rss::RETA_SIZE);
        return -EINVAL;
    }
    const RssConf before = port->rss;
    for (uint16_t i = 0; i < reta_size; i++) {
        const rte_eth_rss_reta_entry64& group = reta_conf[i / RTE_ETH_RETA_GROUP_SIZE];
        const uint16_t slot = i % RTE_ETH_RETA_GROUP_SIZE;
        if (!(group.mask & (1ULL << slot)))
            continue;
        if (group.reta[slot] >= dev->data->nb_rx_queues) {
            PMD_LOG(ERR, port, "RETA entry %u: queue %u does not exist", i, group.reta[slot]);
            port->rss = before;
            return -EINVAL;
        }
        port->rss.reta[i] = group.reta[slot];
    }
    const int rc = rss_apply(dev);
    if (rc != 0)
        port->rss = before;
    return rc;
}

int reta_query(rte_eth_dev* dev, rte_eth_rss_reta_entry64* reta_conf, uint16_t reta_size)
{
    EthPort* port = port_of(dev);
    if (reta_size != rss::RETA_SIZE)
        return -EINVAL;
    for (uint16_t i = 0; i < reta_size; i++) {
        rte_eth_rss_reta_entry64& group = reta_conf[i / RTE_ETH_RETA_GROUP_SIZE];
        const uint16_t slot = i % RTE_ETH_RETA_GROUP_SIZE;
        if (group.mask & (1ULL << slot))
            group.reta[slot] = port->rss.reta[i];
    }
    return 0;
}

} // namespace cna::net
