/* SPDX-License-Identifier: BSD-3-Clause */
#include "l2/flow_table.h"

#include <algorithm>
#include <cstring>

#include "slowpath/storm_ram.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::eth;

bool FlowRule::matches(const FlowKey& key) const
{
    if ((headers & ~key.headers) != 0)
        return false;
    uint64_t diff = 0;
    for (uint32_t i = 0; i < FLOW_MATCH_WORDS; i++)
        diff |= (key.fields[i] & mask[i]) ^ spec[i];
    return diff == 0;
}

FlowTable::FlowTable(StormRam& ram, uint32_t pf) : ram_(ram), pf_(pf)
{
    order_.reserve(FLOW_MAX_RULES); /* inserts never allocate */
}

FwReturn FlowTable::check(const FlowRuleAddRamrodData& d) const
{
    const uint8_t a = d.actions;
    if ((a & ~flow_action::ALL) || ((a & flow_action::DROP) && (a & (flow_action::QUEUE | flow_action::RSS | flow_action::MARK))) ||
        ((a & flow_action::QUEUE) && (a & flow_action::RSS)))
        return FwReturn::invalid_param;
    if (!flow_headers_consistent(d.headers) || !flow_mask_fits_headers(d.mask, d.headers))
        return FwReturn::invalid_param;
    constexpr uint16_t ALL_HASH_TYPES =
        rss::IPV4 | rss::TCP_IPV4 | rss::UDP_IPV4 | rss::IPV6 | rss::TCP_IPV6 | rss::UDP_IPV6;
    if ((a & flow_action::RSS) && (d.rss_queue_count == 0 || d.rss_queue_count > FLOW_MAX_RSS_QUEUES ||
                                   (d.rss_hash_types & ~ALL_HASH_TYPES)))
        return FwReturn::invalid_param;
    return FwReturn::ok;
}

FwReturn FlowTable::add(const FlowRuleAddRamrodData& d, uint32_t* rule_id)
{
    if (FwReturn rc = check(d); rc != FwReturn::ok)
        return rc;
    auto free_slot = std::find_if(rules_.begin(), rules_.end(), [](const FlowRule& r) { return !r.used; });
    if (free_slot == rules_.end())
        return FwReturn::no_resource;
    const auto id = static_cast<uint32_t>(free_slot - rules_.begin());

    FlowRule& r = *free_slot;
    r = FlowRule{};
    r.used = true;
    r.vport = d.vport_id;
    r.actions = d.actions;
    r.priority = d.priority;
    r.headers = d.headers;
    r.queue = d.queue;
    r.mark = d.mark;
    r.mask = flow_words(d.mask);
    r.spec = flow_words(d.spec);
    for (uint32_t i = 0; i < FLOW_MATCH_WORDS; i++)
        r.spec[i] &= r.mask[i];
    if (d.actions & flow_action::RSS) {
        r.rss.enabled = true;
        r.rss.hash_types = d.rss_hash_types;
        for (uint32_t i = 0; i < rss::RETA_SIZE; i++)
            r.rss.reta[i] = d.rss_queues[i % d.rss_queue_count];
        uint8_t key[Toeplitz::KEY_BYTES];
        std::memcpy(key, d.rss_key, sizeof(key));
        r.rss.toeplitz = std::make_unique<Toeplitz>(key);
    }
    r.counters = &ram_.flow_counters(pf_, id);
    *r.counters = FlowCounters{};

    auto pos = std::find_if(order_.begin(), order_.end(),
                            [&](uint8_t other) { return rules_[other].priority > r.priority; });
    order_.insert(pos, static_cast<uint8_t>(id));
    per_vport_[r.vport]++;
    *rule_id = id;
    return FwReturn::ok;
}

FwReturn FlowTable::remove(const FlowRuleDelRamrodData& d)
{
    if (d.rule_id >= FLOW_MAX_RULES)
        return FwReturn::invalid_param;
    const FlowRule& r = rules_[d.rule_id];
    if (!r.used || r.vport != d.vport_id)
        return FwReturn::not_found;
    erase(d.rule_id);
    return FwReturn::ok;
}

void FlowTable::erase(uint32_t rule_id)
{
    FlowRule& r = rules_[rule_id];
    per_vport_[r.vport]--;
    std::erase(order_, static_cast<uint8_t>(rule_id));
    r = FlowRule{}; /* the counters stay readable until the id is reused */
}

void FlowTable::clear(uint8_t vport)
{
    for (uint32_t id = 0; id < FLOW_MAX_RULES; id++)
        if (rules_[id].used && rules_[id].vport == vport)
            erase(id);
}

void FlowTable::reset()
{
    for (uint32_t id = 0; id < FLOW_MAX_RULES; id++)
        if (rules_[id].used)
            erase(id);
}

const FlowRule* FlowTable::match(uint32_t vport, const FlowKey& key) const
{
    for (uint8_t id : order_) {
        const FlowRule& r = rules_[id];
        if (r.vport == vport && r.matches(key))
            return &r;
    }
    return nullptr;
}

} // namespace cna::fw
