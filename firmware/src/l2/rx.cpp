/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/rx.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "l2/checksum.h"
#include "l2/classify.h"
#include "l2/flow_key.h"
#include "l2/rss.h"
#include "l2/stats.h"
#include "pci/function.h"
#include "storm/pf_storm.h"
#include "storm/storm_ram.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;

void RxEngine::receive(std::span<PfStorm* const> pfs, const uint8_t* frame, uint32_t len, const FrameLayout* layout)
{
    FrameLayout parsed_here;
    bool parsed = true;
    if (layout == nullptr) {
        parsed = parse_frame(frame, len, parsed_here);
        layout = &parsed_here;
    }
    for (PfStorm* pf : pfs) {
        uint32_t vports = pf->started() ? pf->l2().active_rx_vports : 0;
        for (; vports != 0; vports &= vports - 1) {
            uint32_t vport_id = std::countr_zero(vports);
            if (parsed)
                deliver(*pf, vport_id, frame, len, *layout);
            else
                counter_add(pf->l2().vports[vport_id].stats->rx_error_pkts, 1); /* runt */
        }
    }
}

void RxEngine::deliver(PfStorm& pf, uint32_t vport_id, const uint8_t* frame, uint32_t len, const FrameLayout& layout)
{
    Vport& vport = pf.l2().vports[vport_id];
    Destination dst = destination(frame);
    switch (classify(vport, frame, len, layout, dst)) {
    case RxVerdict::filtered: counter_add(vport.stats->rx_filtered_pkts, 1); return;
    case RxVerdict::oversize: counter_add(vport.stats->rx_oversize_pkts, 1); return;
    case RxVerdict::accept: break;
    }
    /* Flow rules see what the vport accepted, before RSS (hsi.md section 7). */
    const FlowRule* rule = pf.flows().empty(vport_id) ? nullptr : pf.flows().match(vport_id, flow_key(frame, layout));
    if (rule != nullptr) {
        if (rule->actions & flow_action::COUNT)
            count_frame(rule->counters->hits, rule->counters->bytes, len);
        if (rule->actions & flow_action::DROP) {
            counter_add(vport.stats->rx_flow_drop_pkts, 1);
            return;
        }
    }
    Steering s;
    RxQueue* q = steer(pf, vport_id, rule, frame, layout, s);
    if (q == nullptr) {
        counter_add(vport.stats->rx_no_buffer_pkts, 1);
        return;
    }
    uint32_t queue_id = static_cast<uint32_t>(q - pf.l2().rxqs.data());
    if (place(pf, vport, *q, queue_id, frame, len, layout, s))
        count_rx(*vport.stats, dst, len);
}

RxQueue* RxEngine::steer(PfStorm& pf, uint32_t vport_id, const FlowRule* rule, const uint8_t* frame,
                         const FrameLayout& layout, Steering& s)
{
    Vport& vport = pf.l2().vports[vport_id];
    /* A rule's QUEUE or RSS replaces the vport's steering; MARK rides along. */
    const Rss& rss = rule != nullptr && (rule->actions & flow_action::RSS) ? rule->rss : vport.rss;
    if (rule != nullptr && (rule->actions & flow_action::MARK)) {
        s.marked = true;
        s.mark = rule->mark;
    }
    uint32_t queue_id;
    if (rule != nullptr && (rule->actions & flow_action::QUEUE)) {
        queue_id = rule->queue;
    } else if (rss.enabled) {
        RssResult result = rss_hash(rss, frame, layout);
        s.hash = result.hash;
        s.hash_type = static_cast<uint8_t>(result.type);
        queue_id = rss.reta[result.hash % rss::RETA_SIZE];
    } else {
        if (vport.rx_queues == 0)
            return nullptr;
        queue_id = std::countr_zero(vport.rx_queues);
    }
    RxQueue& q = pf.l2().rxqs[queue_id];
    return q.started && q.vport == vport_id ? &q : nullptr;
}

uint16_t RxEngine::parsing_flags(const uint8_t* frame, const FrameLayout& layout)
{
    uint16_t flags = 0;
    if (layout.l3 == L3::ipv4) {
        flags |= pars::L3_IPV4 | pars::IP_CSUM_CHECKED;
        if (!ipv4_checksum_ok(frame, layout))
            flags |= pars::IP_CSUM_BAD;
    } else if (layout.l3 == L3::ipv6) {
        flags |= pars::L3_IPV6;
    }
    if (layout.fragment)
        flags |= pars::IP_FRAGMENT;
    switch (layout.l4) {
    case L4::tcp: flags |= pars::L4_TCP; break;
    case L4::udp: flags |= pars::L4_UDP; break;
    case L4::other: flags |= pars::L4_OTHER; break;
    case L4::none: break;
    }
    if ((layout.l4 == L4::tcp || layout.l4 == L4::udp) && l4_checksum_present(frame, layout)) {
        flags |= pars::L4_CSUM_CHECKED;
        if (!l4_checksum_ok(frame, layout))
            flags |= pars::L4_CSUM_BAD;
    }
    if (layout.vlan_tags != 0)
        flags |= pars::VLAN_PRESENT;
    return flags;
}

bool RxEngine::place(PfStorm& pf, Vport& vport, RxQueue& q, uint32_t queue_id, const uint8_t* frame, uint32_t len,
                     const FrameLayout& layout, const Steering& s)
{
    RxCqe cqe{};
    cqe.type = static_cast<uint8_t>(CqeType::regular);
    cqe.pars_flags = parsing_flags(frame, layout);
    if (vport.vlan_strip && layout.vlan_tags != 0) {
        /* The outer tag moves into the CQE: MAC addresses, then the rest. */
        std::memcpy(stripped_, frame, 12);
        std::memcpy(stripped_ + 12, frame + 12 + VLAN_HLEN, len - 12 - VLAN_HLEN);
        frame = stripped_;
        len -= VLAN_HLEN;
        cqe.vlan_tag = layout.vlan_tci;
        cqe.pars_flags |= pars::VLAN_STRIPPED;
    }
    if (s.hash_type != 0) {
        cqe.rss_hash = s.hash;
        cqe.rss_hash_type = s.hash_type;
        cqe.pars_flags |= pars::RSS_HASH_VALID;
    }
    if (s.marked) {
        cqe.flow_mark = s.mark;
        cqe.pars_flags |= pars::FLOW_MARK;
    }

    RxProdData prod = pf.ram().rx_prod(pf.pf(), queue_id);
    /* Most frames fit one buffer: no division for them. */
    uint32_t nbds = len <= q.bd_max_bytes ? 1 : (len + q.bd_max_bytes - 1) / q.bd_max_bytes;
    uint16_t bds_posted = static_cast<uint16_t>(prod.bd_prod - q.bd_cons);
    uint16_t cqes_pending = static_cast<uint16_t>(q.cqe_prod - prod.cqe_cons);
    if (nbds > vport.max_bds_per_packet || nbds > bds_posted || cqes_pending >= q.cqe_mask) {
        counter_add(vport.stats->rx_no_buffer_pkts, 1);
        counter_add(q.stats->drops, 1);
        return false;
    }

    Dma& dma = pf.hw().dma();
    RxBd bds[MAX_BDS_PER_PACKET];
    uint32_t first = q.bd_cons & q.bd_mask;
    uint32_t run = std::min(nbds, uint32_t{q.bd_mask} + 1 - first); /* up to the ring's end */
    bool ok = dma.read(q.bds, first * sizeof(RxBd), bds, run * sizeof(RxBd)) &&
              (run == nbds || dma.read(q.bds, 0, bds + run, (nbds - run) * sizeof(RxBd)));
    for (uint32_t i = 0, off = 0; ok && i < nbds; i++) {
        uint32_t chunk = std::min<uint32_t>(q.bd_max_bytes, len - off);
        ok = dma.write(from_regpair(bds[i].addr), frame + off, chunk);
        off += chunk;
    }
    cqe.bd_num = static_cast<uint8_t>(nbds);
    cqe.pkt_len = static_cast<uint16_t>(len);
    cqe.len_on_first_bd = static_cast<uint16_t>(std::min<uint32_t>(len, q.bd_max_bytes));
    ok = ok && dma.write(q.cqes, uint64_t{static_cast<uint16_t>(q.cqe_prod & q.cqe_mask)} * sizeof(cqe), &cqe,
                         sizeof(cqe));
    if (!ok) {
        counter_add(vport.stats->rx_error_pkts, 1); /* DMA fault raised; buffers stay posted */
        return false;
    }
    q.bd_cons = static_cast<uint16_t>(q.bd_cons + nbds);
    q.cqe_prod++;
    pf.hw().cau().set_pi(q.sb_id, q.sb_pi, q.cqe_prod);
    count_frame(q.stats->pkts, q.stats->bytes, len);
    return true;
}

} // namespace cna::fw
