/* SPDX-License-Identifier: BSD-3-Clause */
#include "slowpath/storm_ram.h"

namespace cna::fw {

using namespace hsi;

StormRam::StormRam() : memory_("cna-storm-ram", reg::STORM_RAM_SIZE), base_(memory_.base()) {}

void StormRam::write32(uint32_t offset, uint32_t value)
{
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(base_ + offset)).store(value, std::memory_order_release);
}

void StormRam::zero(uint32_t offset, uint32_t len)
{
    for (uint32_t o = offset; o < offset + len; o += 4)
        write32(o, 0);
}

uint16_t StormRam::eq_cons(uint32_t pf) const
{
    return static_cast<uint16_t>(read32(iro::eq_cons(pf)));
}

eth::VportStats& StormRam::vport_stats(uint32_t pf, uint32_t vport)
{
    return *reinterpret_cast<eth::VportStats*>(base_ + iro::vport_stats(pf, vport));
}

eth::QueueStats& StormRam::rx_queue_stats(uint32_t pf, uint32_t queue)
{
    return *reinterpret_cast<eth::QueueStats*>(base_ + iro::rx_queue_stats(pf, queue));
}

eth::QueueStats& StormRam::tx_queue_stats(uint32_t pf, uint32_t queue)
{
    return *reinterpret_cast<eth::QueueStats*>(base_ + iro::tx_queue_stats(pf, queue));
}

eth::FlowCounters& StormRam::flow_counters(uint32_t pf, uint32_t rule)
{
    return *reinterpret_cast<eth::FlowCounters*>(base_ + iro::flow_counters(pf, rule));
}

hsi::rdma::RoceStats& StormRam::roce_stats(uint32_t pf)
{
    return *reinterpret_cast<hsi::rdma::RoceStats*>(base_ + iro::roce_stats(pf));
}

} // namespace cna::fw
