/* SPDX-License-Identifier: BSD-3-Clause */
#include "slowpath/storm_ram.h"

#include <sys/mman.h>

namespace cna::fw {

using namespace hsi;

StormRam::StormRam()
{
    void* p = ::mmap(nullptr, reg::STORM_RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return;
    base_ = static_cast<uint8_t*>(p);
    for (uint32_t pf = 0; pf < MAX_PFS; pf++)
        gtt_pages_[pf] = std::make_unique<SharedMemory>("cna-gtt-page", GTT_SIZE, gtt_page(pf));
}

StormRam::~StormRam()
{
    if (base_ != nullptr)
        ::munmap(base_, reg::STORM_RAM_SIZE);
}

bool StormRam::valid() const
{
    if (base_ == nullptr)
        return false;
    for (const auto& page : gtt_pages_)
        if (!page->valid())
            return false;
    return true;
}

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

hsi::eswitch::SwitchStats& StormRam::switch_stats(uint32_t pf)
{
    return *reinterpret_cast<hsi::eswitch::SwitchStats*>(base_ + iro::switch_stats(pf));
}

} // namespace cna::fw
