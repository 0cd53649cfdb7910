/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer: the switch's rule table against a model of it. The input is a
 * stream of SWITCH_RULE_ADDs (the ramrod's bytes as a driver wrote them),
 * deletions and frames; the table must accept exactly what its check
 * accepts, and find for every frame the rule a walk of all rules in
 * (priority, age) order finds, through insertions, chains, growth and
 * deletions. The rule's changes are made to the frame too, within bounds.
 */
#include <cstdlib>
#include <map>
#include <vector>

#include "frame/flow_key.h"
#include "fuzz_input.h"
#include "switch/rewrite.h"
#include "switch/switch_table.h"

namespace {

using namespace cna;
using namespace cna::fw;
using hsi::FwReturn;
using hsi::eswitch::SwitchRuleAddRamrodData;

constexpr uint32_t CAPACITY = 48;

struct ModelRule {
    uint64_t age;
    uint16_t priority;
    SwitchWords mask, value;
};

bool model_matches(const ModelRule& r, const SwitchWords& key)
{
    for (uint32_t i = 0; i < SWITCH_KEY_WORDS; i++)
        if ((key[i] & r.mask[i]) != r.value[i])
            return false;
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    test::FuzzInput in(data, size);
    SwitchTable table;
    table.resize(CAPACITY);
    std::map<uint32_t, ModelRule> model; /* by id */
    uint64_t age = 0;
    std::vector<uint8_t> out(REWRITE_MAX);
    while (!in.empty()) {
        switch (in.take<uint8_t>() % 3) {
        case 0: {
            auto d = in.take<SwitchRuleAddRamrodData>();
            uint32_t id = 0;
            const FwReturn rc = table.add(d, &id);
            const bool valid = SwitchTable::check(d) == FwReturn::ok;
            if (!valid && rc != FwReturn::invalid_param)
                std::abort();
            if (valid && model.size() == CAPACITY && rc != FwReturn::no_resource)
                std::abort();
            if (rc != FwReturn::ok)
                break;
            if (id >= CAPACITY || model.count(id) != 0)
                std::abort();
            ModelRule m{age++, d.priority,
                        switch_key(FlowKey{flow_words(d.mask), d.headers, d.ip_ttl_mask, d.tcp_flags_mask},
                                   d.any_source ? 0 : 0xffff),
                        {}};
            const SwitchWords spec =
                switch_key(FlowKey{flow_words(d.spec), d.headers, d.ip_ttl, d.tcp_flags}, d.source);
            for (uint32_t i = 0; i < SWITCH_KEY_WORDS; i++)
                m.value[i] = spec[i] & m.mask[i];
            model[id] = m;
            break;
        }
        case 1: {
            const uint32_t id = in.take<uint8_t>() % (CAPACITY + 2);
            const FwReturn rc = table.remove(id);
            if ((rc == FwReturn::ok) != (model.erase(id) == 1))
                std::abort();
            break;
        }
        default: {
            const auto source = in.take<uint16_t>();
            const std::vector<uint8_t> frame = in.bytes(in.take<uint8_t>());
            FrameLayout layout;
            if (!parse_any_frame(frame.data(), static_cast<uint32_t>(frame.size()), layout))
                break;
            const SwitchWords key = switch_key(flow_key(frame.data(), layout), source);
            const SwitchRule* found = table.lookup(key);
            const ModelRule* best = nullptr;
            uint32_t best_id = 0;
            for (const auto& [id, r] : model)
                if (model_matches(r, key) &&
                    (best == nullptr || r.priority < best->priority ||
                     (r.priority == best->priority && r.age < best->age))) {
                    best = &r;
                    best_id = id;
                }
            if ((found == nullptr) != (best == nullptr) || (found != nullptr && table.id_of(*found) != best_id))
                std::abort();
            if (found != nullptr) {
                const WireFrame f{frame.data(), static_cast<uint32_t>(frame.size()), true, layout, nullptr};
                if (rewrite(*found, f, out.data()) > frame.size() + 4)
                    std::abort();
            }
            break;
        }
        }
    }
    return 0;
}
