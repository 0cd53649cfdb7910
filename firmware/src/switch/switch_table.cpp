/* SPDX-License-Identifier: BSD-3-Clause */
#include "switch/switch_table.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace cna::fw {

using namespace hsi;
using namespace hsi::eswitch;
namespace flow_hdr = hsi::eth::flow_hdr;

namespace {

constexpr uint32_t MIN_SLOTS = 16;

SwitchWords masked(const SwitchWords& key, const SwitchWords& mask)
{
    SwitchWords w;
    for (uint32_t i = 0; i < SWITCH_KEY_WORDS; i++)
        w[i] = key[i] & mask[i];
    return w;
}

uint32_t slot_rule(uint64_t slot) { return static_cast<uint32_t>(slot) - 1; }
uint32_t slot_hash(uint64_t slot) { return static_cast<uint32_t>(slot >> 32); }

} // namespace

FwReturn SwitchTable::check(const SwitchRuleAddRamrodData& d)
{
    const auto fate = static_cast<Fate>(d.fate);
    if (fate != Fate::drop && fate != Fate::forward)
        return FwReturn::invalid_param;
    if ((d.actions & ~action::ALL) || (fate == Fate::drop && (d.actions & ~action::COUNT)))
        return FwReturn::invalid_param;
    if (!flow_headers_consistent(d.headers) || !flow_mask_fits_headers(d.mask, d.headers))
        return FwReturn::invalid_param;
    if ((d.actions & (action::SET_IPV4_SRC | action::SET_IPV4_DST)) && !(d.headers & flow_hdr::IPV4))
        return FwReturn::invalid_param;
    const bool ip = d.headers & (flow_hdr::IPV4 | flow_hdr::IPV6);
    if ((d.actions & (action::DEC_TTL | action::SET_TTL)) && !ip)
        return FwReturn::invalid_param;
    if ((d.actions & (action::SET_TP_SRC | action::SET_TP_DST)) && !(d.headers & (flow_hdr::TCP | flow_hdr::UDP)))
        return FwReturn::invalid_param;
    if ((d.ip_ttl_mask != 0 && !ip) || (d.tcp_flags_mask != 0 && !(d.headers & flow_hdr::TCP)))
        return FwReturn::invalid_param;
    if ((d.actions & action::PUSH_VLAN) && d.vlan_tpid != 0x8100 && d.vlan_tpid != 0x88a8)
        return FwReturn::invalid_param;
    return FwReturn::ok;
}

void SwitchTable::resize(uint32_t max_rules)
{
    subtables_.clear();
    order_.clear();
    rules_.assign(max_rules, SwitchRule{});
    rules_.shrink_to_fit();
    free_ids_.resize(max_rules);
    for (uint32_t i = 0; i < max_rules; i++)
        free_ids_[i] = max_rules - 1 - i;
    used_ = 0;
}

uint32_t SwitchTable::hash(const SwitchWords& value)
{
    /* isa-l's CRC32C (SSE4.2 or the CPU's best): a hash of every bit of
     * the value, at a few cycles per word. */
    return crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<uint64_t*>(value.data())), sizeof(value), 0);
}

uint32_t SwitchTable::find_slot(const Subtable& st, uint32_t h, const SwitchWords& value,
                                const std::vector<SwitchRule>& rules)
{
    const uint32_t mask = static_cast<uint32_t>(st.slots.size()) - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        const uint64_t slot = st.slots[i];
        if (slot == 0 || (slot_hash(slot) == h && rules[slot_rule(slot)].value == value))
            return i;
    }
}

FwReturn SwitchTable::add(const SwitchRuleAddRamrodData& d, uint32_t* rule_id)
{
    if (FwReturn rc = check(d); rc != FwReturn::ok)
        return rc;
    if (free_ids_.empty())
        return FwReturn::no_resource;
    const uint32_t id = free_ids_.back();
    free_ids_.pop_back();
    used_++;

    const SwitchWords mask = switch_key(FlowKey{flow_words(d.mask), d.headers, d.ip_ttl_mask, d.tcp_flags_mask},
                                        d.any_source ? 0 : 0xffff);
    const SwitchWords value =
        masked(switch_key(FlowKey{flow_words(d.spec), d.headers, d.ip_ttl, d.tcp_flags}, d.source), mask);

    SwitchRule& r = rules_[id];
    r = SwitchRule{};
    r.used = true;
    r.priority = d.priority;
    r.age = next_age_++;
    r.value = value;
    r.fate = static_cast<Fate>(d.fate);
    r.destination = d.destination;
    r.actions = d.actions;
    r.vlan_tpid = d.vlan_tpid;
    r.vlan_tci = d.vlan_tci;
    std::memcpy(r.mac_src, d.mac_src, 6);
    std::memcpy(r.mac_dst, d.mac_dst, 6);
    std::memcpy(r.ipv4_src, d.ipv4_src, 4);
    std::memcpy(r.ipv4_dst, d.ipv4_dst, 4);
    r.tp_src = d.tp_src;
    r.tp_dst = d.tp_dst;
    r.ttl = d.ttl;

    Subtable& st = subtable_of(mask);
    r.subtable = &st;
    const uint16_t best = st.priorities.empty() ? UINT16_MAX : st.best_priority();
    st.priorities[r.priority]++;
    insert(st, id, hash(value));
    if (st.priorities.size() == 1 || r.priority < best)
        reorder();
    *rule_id = id;
    return FwReturn::ok;
}

Subtable& SwitchTable::subtable_of(const SwitchWords& mask)
{
    for (const std::unique_ptr<Subtable>& st : subtables_)
        if (st->mask == mask)
            return *st;
    auto st = std::make_unique<Subtable>();
    st->mask = mask;
    st->slots.assign(MIN_SLOTS, 0);
    subtables_.push_back(std::move(st));
    return *subtables_.back();
}

void SwitchTable::insert(Subtable& st, uint32_t id, uint32_t h)
{
    if ((st.values + 1) * 2 > st.slots.size())
        grow(st);
    SwitchRule& r = rules_[id];
    const uint32_t i = find_slot(st, h, r.value, rules_);
    if (st.slots[i] == 0) {
        st.slots[i] = uint64_t{h} << 32 | (id + 1);
        st.values++;
        return;
    }
    /* Chained behind the rules of the same value it does not come before. */
    const uint32_t at = slot_rule(st.slots[i]);
    if (r.before(rules_[at])) {
        r.next = at;
        st.slots[i] = uint64_t{h} << 32 | (id + 1);
        return;
    }
    uint32_t* link = &rules_[at].next;
    while (*link != SwitchRule::NONE && !r.before(rules_[*link]))
        link = &rules_[*link].next;
    r.next = *link;
    *link = id;
}

void SwitchTable::grow(Subtable& st)
{
    std::vector<uint64_t> old(st.slots.size() * 2, 0);
    old.swap(st.slots);
    const uint32_t mask = static_cast<uint32_t>(st.slots.size()) - 1;
    for (uint64_t slot : old) {
        if (slot == 0)
            continue;
        uint32_t i = slot_hash(slot) & mask;
        while (st.slots[i] != 0)
            i = (i + 1) & mask;
        st.slots[i] = slot;
    }
}

FwReturn SwitchTable::remove(uint32_t rule_id)
{
    if (rule_id >= rules_.size() || !rules_[rule_id].used)
        return FwReturn::not_found;
    SwitchRule& r = rules_[rule_id];
    Subtable& st = *r.subtable;
    unlink(st, rule_id);
    const uint16_t best = st.best_priority();
    if (--st.priorities[r.priority] == 0)
        st.priorities.erase(r.priority);
    const bool emptied = st.priorities.empty();
    const bool reordered = emptied || st.best_priority() != best;
    if (emptied)
        std::erase_if(subtables_, [&](const std::unique_ptr<Subtable>& s) { return s.get() == &st; });
    r = SwitchRule{};
    free_ids_.push_back(rule_id);
    used_--;
    if (reordered)
        reorder();
    return FwReturn::ok;
}

void SwitchTable::unlink(Subtable& st, uint32_t id)
{
    SwitchRule& r = rules_[id];
    const uint32_t h = hash(r.value);
    const uint32_t i = find_slot(st, h, r.value, rules_);
    const uint32_t head = slot_rule(st.slots[i]);
    if (head == id) {
        if (r.next != SwitchRule::NONE)
            st.slots[i] = uint64_t{h} << 32 | (r.next + 1);
        else
            erase_slot(st, i);
        return;
    }
    uint32_t* link = &rules_[head].next;
    while (*link != id)
        link = &rules_[*link].next;
    *link = r.next;
}

void SwitchTable::erase_slot(Subtable& st, uint32_t hole)
{
    const uint32_t mask = static_cast<uint32_t>(st.slots.size()) - 1;
    st.slots[hole] = 0;
    st.values--;
    for (uint32_t i = (hole + 1) & mask; st.slots[i] != 0; i = (i + 1) & mask) {
        const uint32_t home = slot_hash(st.slots[i]) & mask;
        /* The entry stays unless its home is cyclically outside (hole, i]. */
        const bool stays = hole < i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        st.slots[hole] = st.slots[i];
        st.slots[i] = 0;
        hole = i;
    }
}

void SwitchTable::reorder()
{
    order_.clear();
    for (const std::unique_ptr<Subtable>& st : subtables_)
        order_.push_back(st.get());
    std::stable_sort(order_.begin(), order_.end(),
                     [](const Subtable* a, const Subtable* b) { return a->best_priority() < b->best_priority(); });
}

const SwitchRule* SwitchTable::lookup(const SwitchWords& key) const
{
    const SwitchRule* best = nullptr;
    for (const Subtable* st : order_) {
        if (best != nullptr && st->best_priority() > best->priority)
            break; /* no rule of this group, nor of those after it, comes first */
        const SwitchWords value = masked(key, st->mask);
        const uint32_t h = hash(value);
        const uint64_t slot = st->slots[find_slot(*st, h, value, rules_)];
        if (slot == 0)
            continue;
        const SwitchRule& r = rules_[slot_rule(slot)];
        if (best == nullptr || r.before(*best))
            best = &r;
    }
    return best;
}

} // namespace cna::fw
