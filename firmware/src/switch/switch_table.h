/* SPDX-License-Identifier: BSD-3-Clause
 * The switch's transfer rules (SWITCH_RULE_ADD / SWITCH_RULE_DEL, hsi.md
 * section 13) and the lookup of a frame in them.
 *
 * A tuple space: rules are grouped by their mask (which fields they match,
 * and whether they match the source), and each group is a hash table of its
 * rules' masked values. A frame costs one masked hash lookup per distinct
 * mask, however many rules there are: Open vSwitch's flows, the table's
 * main user, come in a handful of masks (its megaflows' wildcards), and a
 * table of 100,000 rules of 3 masks is looked up as fast as one of 3 rules.
 * A linear walk (the ingress flow table's) grows with the rules, a trie
 * with the fields' bits. Priorities: each group knows its best priority,
 * groups are visited best first, and the walk stops at a group that cannot
 * beat the match it has. Rules equal in mask and value are chained in
 * (priority, age) order.
 *
 * Ramrods change the table with every pass of the port held (the
 * slowpath's), so a frame sees it wholly before or wholly after a change.
 */
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "hsi_spq.h"
#include "hsi_switch.h"
#include "frame/flow_key.h"

namespace cna::fw {

/* A frame's FlowKey fields, then its source endpoint, headers, TTL and
 * TCP flags. */
inline constexpr uint32_t SWITCH_KEY_WORDS = FLOW_MATCH_WORDS + 1;
using SwitchWords = std::array<uint64_t, SWITCH_KEY_WORDS>;

inline SwitchWords switch_key(const FlowKey& key, uint16_t source)
{
    SwitchWords w;
    for (uint32_t i = 0; i < FLOW_MATCH_WORDS; i++)
        w[i] = key.fields[i];
    w[FLOW_MATCH_WORDS] = uint64_t{source} | uint64_t{key.headers} << 16 | uint64_t{key.ip_ttl} << 32 |
                          uint64_t{key.tcp_flags} << 40;
    return w;
}

struct SwitchRule {
    static constexpr uint32_t NONE = UINT32_MAX;

    bool used = false;
    uint16_t priority = 0;
    uint64_t age = 0;          /* order of insertion: older first among equals */
    SwitchWords value{};       /* masked */
    struct Subtable* subtable = nullptr;
    uint32_t next = NONE;      /* the next rule of the same value in its subtable */
    /* What it does (hsi::eswitch::SwitchRuleAddRamrodData). */
    hsi::eswitch::Fate fate = hsi::eswitch::Fate::drop;
    uint16_t destination = 0;
    uint16_t actions = 0;
    uint16_t vlan_tpid = 0;
    uint16_t vlan_tci = 0;
    uint8_t mac_src[6]{};
    uint8_t mac_dst[6]{};
    uint8_t ipv4_src[4]{};
    uint8_t ipv4_dst[4]{};
    uint16_t tp_src = 0;
    uint16_t tp_dst = 0;
    uint8_t ttl = 0;

    /* Whether this rule is evaluated before `other`. */
    bool before(const SwitchRule& other) const
    {
        return priority != other.priority ? priority < other.priority : age < other.age;
    }
};

/* The rules of one mask: an open-addressing hash table (linear probing,
 * at most half full) of the first rule of each value. */
struct Subtable {
    SwitchWords mask{};
    std::map<uint16_t, uint32_t> priorities; /* rules per priority: the best is the first */
    std::vector<uint64_t> slots;             /* hash << 32 | rule id + 1; 0: empty */
    uint32_t values = 0;                     /* occupied slots */

    uint16_t best_priority() const { return priorities.begin()->first; }
};

class SwitchTable {
public:
    /* SWITCH_MODE: an empty table of max_rules ids; 0 frees it. */
    void resize(uint32_t max_rules);
    uint32_t size() const { return used_; }

    /* SWITCH_RULE_ADD, its endpoints already checked; *rule_id gets the
     * rule's id. no_resource when the table is full. */
    hsi::FwReturn add(const hsi::eswitch::SwitchRuleAddRamrodData& d, uint32_t* rule_id);
    hsi::FwReturn remove(uint32_t rule_id);

    bool empty() const { return used_ == 0; }
    /* The rule a frame's key matches first, nullptr for none. */
    const SwitchRule* lookup(const SwitchWords& key) const;
    uint32_t id_of(const SwitchRule& r) const { return static_cast<uint32_t>(&r - rules_.data()); }

    /* The rule's fields, as SWITCH_RULE_ADD checks them (fuzzed on its own). */
    static hsi::FwReturn check(const hsi::eswitch::SwitchRuleAddRamrodData& d);

private:
    static uint32_t hash(const SwitchWords& masked);
    /* The slot holding `value`'s chain in st, or the empty slot where it goes. */
    static uint32_t find_slot(const Subtable& st, uint32_t hash, const SwitchWords& value,
                              const std::vector<SwitchRule>& rules);
    Subtable& subtable_of(const SwitchWords& mask);
    void insert(Subtable& st, uint32_t id, uint32_t hash);
    void unlink(Subtable& st, uint32_t id);
    /* Linear probing's deletion: the slots after the hole that probed past
     * it move back, so that no lookup stops early. */
    static void erase_slot(Subtable& st, uint32_t slot);
    static void grow(Subtable& st);
    /* order_ sorted by best priority again (a subtable's changed). */
    void reorder();

    std::vector<SwitchRule> rules_;
    std::vector<uint32_t> free_ids_;   /* lowest id on top */
    uint32_t used_ = 0;
    uint64_t next_age_ = 0;
    std::vector<std::unique_ptr<Subtable>> subtables_;
    std::vector<const Subtable*> order_; /* best priority first */
};

} // namespace cna::fw
