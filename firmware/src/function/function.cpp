/* SPDX-License-Identifier: BSD-3-Clause */
#include "function/function.h"

#include "hsi_iov.h"
#include "vm_protocol.h"

#include <cstring>
#include <utility>

namespace cna::fw {

using namespace hsi;
namespace vm = transport::vm;

FunctionHw::FunctionHw(uint32_t pf, uint32_t port, uint32_t msix_vectors, RegisterSpace& grc, uint8_t* gtt,
                       int gtt_fd, ServingEngines& engines)
    : pf_(pf), port_(port), grc_(&grc), gtt_(gtt), gtt_fd_(gtt_fd), engines_(engines),
      doorbell_memory_("cna-doorbells", DB_BAR_SIZE), doorbells_(doorbell_memory_.base()),
      doorbells_size_(DB_BAR_SIZE), msix_(msix_vectors)
{
}

namespace {
uint8_t* page_of(const SharedMemory& memory, uint32_t offset)
{
    return memory.valid() ? memory.base() + offset : nullptr;
}
} // namespace

FunctionHw::FunctionHw(uint32_t pf, uint32_t vf, uint32_t port, ChannelRegisters& channel, RegisterSpace& grc,
                       ServingEngines& engines)
    : pf_(pf), vf_(vf), port_(port), grc_(&grc), channel_(&channel), vf_memory_("cna-vf-bars", vm::BAR_SIZE),
      gtt_(page_of(vf_memory_, vm::GTT_OFFSET)), gtt_fd_(vf_memory_.fd()), engines_(engines),
      doorbells_(page_of(vf_memory_, vm::DOORBELLS_OFFSET)), doorbells_size_(iov::VF_DB_BAR_SIZE),
      msix_(iov::VF_MSIX_VECTORS)
{
}

DeviceFunction::SharedBars FunctionHw::shared_bars() const
{
    if (channel_ != nullptr)
        return {vf_memory_.fd(), vm::GTT_OFFSET, vf_memory_.fd(), vm::DOORBELLS_OFFSET};
    return {gtt_fd_, 0, doorbell_memory_.fd(), 0};
}

int FunctionHw::dma_unmap(uint64_t iova, std::size_t len)
{
    const int rc = iommu_.unmap(iova, len);
    /* Done when hardware's would be: no access translated before the unmap
     * is still in flight, so the host may free or reuse the memory. */
    if (rc == 0)
        engines_.wait_passes();
    return rc;
}

bool FunctionHw::doorbell_pass(uint32_t offset)
{
    /* An L2 connection's doorbell is its cid's DB_STRIDE slot; a VF's Tx
     * goes through its port's switch, the group pass's. */
    if (channel_ == nullptr && offset % hsi::DB_STRIDE == 0 && offset < doorbells_size_)
        return engines_.tx_doorbell(pf_, offset / hsi::DB_STRIDE);
    return engines_.pass(port_, PassCause::doorbell);
}

uint32_t FunctionHw::bar0_read(uint32_t offset)
{
    if (channel_ != nullptr)
        return vf_bar0_read(offset);
    if (!decodes(offset)) {
        pglue_.bad_access(offset, 0);
        return REG_ALL_ONES;
    }
    if (offset < BAR0_IGU_CMD_BASE)
        return ptt_entries_[(offset - BAR0_PTT_ENTRY_BASE) / 4].load();
    if (offset < BAR0_WINDOW_BASE)
        return 0; /* IGU commands are write-only */
    if (offset < BAR0_GTT_BASE) {
        uint32_t ptt = (offset - BAR0_WINDOW_BASE) / WINDOW_SIZE;
        return grc_->grc_read(*this, ptt_entries_[ptt].load() + offset % WINDOW_SIZE);
    }
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(gtt_ + offset - BAR0_GTT_BASE)).load();
}

void FunctionHw::bar0_write(uint32_t offset, uint32_t value)
{
    if (channel_ != nullptr)
        return vf_bar0_write(offset, value);
    if (!decodes(offset)) {
        pglue_.bad_access(offset, reg::BAD_ACCESS_WRITE);
        return;
    }
    if (offset < BAR0_IGU_CMD_BASE) {
        ptt_entries_[(offset - BAR0_PTT_ENTRY_BASE) / 4].store(value & ~(WINDOW_SIZE - 1));
        return;
    }
    if (offset < BAR0_WINDOW_BASE) {
        igu_.command((offset - BAR0_IGU_CMD_BASE) / 4, value);
        return;
    }
    if (offset < BAR0_GTT_BASE) {
        uint32_t ptt = (offset - BAR0_WINDOW_BASE) / WINDOW_SIZE;
        grc_->grc_write(*this, ptt_entries_[ptt].load() + offset % WINDOW_SIZE, value);
        return;
    }
    std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(gtt_ + offset - BAR0_GTT_BASE)).store(value);
}

namespace {
bool in_vf_slowpath(uint32_t offset)
{
    namespace bar = iov::vf_bar0;
    return offset % 4 == 0 && offset >= bar::SLOWPATH_BASE && offset < bar::SLOWPATH_BASE + bar::SLOWPATH_SIZE;
}
uint32_t storm_pf_twin(uint32_t offset) { return reg::STORM_PF_BASE + offset - iov::vf_bar0::SLOWPATH_BASE; }
bool in_vf_ptp(uint32_t offset)
{
    namespace bar = iov::vf_bar0;
    return offset % 4 == 0 && offset >= bar::PTP_BASE && offset < bar::PTP_BASE + hsi::ptp::BLOCK_SIZE;
}
uint32_t ptp_twin(uint32_t offset) { return reg::PTP_BASE + offset - iov::vf_bar0::PTP_BASE; }
} // namespace

uint32_t FunctionHw::vf_bar0_read(uint32_t offset)
{
    namespace bar = iov::vf_bar0;
    if (in_vf_slowpath(offset))
        return grc_->grc_read(*this, storm_pf_twin(offset));
    if (in_vf_ptp(offset))
        return grc_->grc_read(*this, ptp_twin(offset));
    if (offset % 4 == 0 && offset >= bar::GTT_BASE && offset < bar::SIZE)
        return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(gtt_ + offset - bar::GTT_BASE)).load();
    if (offset <= bar::CHANNEL_STATE && offset % 4 == 0)
        return channel_->read(offset);
    if (offset % 4 == 0 && offset >= bar::IGU_CMD_BASE && offset < bar::igu_cmd(iov::MAX_VF_SBS))
        return 0; /* IGU commands are write-only */
    pglue_.bad_access(offset, 0);
    return REG_ALL_ONES;
}

void FunctionHw::vf_bar0_write(uint32_t offset, uint32_t value)
{
    namespace bar = iov::vf_bar0;
    if (offset % 4 == 0 && offset >= bar::GTT_BASE && offset < bar::SIZE)
        std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(gtt_ + offset - bar::GTT_BASE)).store(value);
    else if (in_vf_slowpath(offset))
        grc_->grc_write(*this, storm_pf_twin(offset), value);
    else if (in_vf_ptp(offset))
        grc_->grc_write(*this, ptp_twin(offset), value);
    else if (offset <= bar::CHANNEL_STATE && offset % 4 == 0)
        channel_->write(offset, value);
    else if (offset % 4 == 0 && offset >= bar::IGU_CMD_BASE && offset < bar::igu_cmd(iov::MAX_VF_SBS))
        igu_.command((offset - bar::IGU_CMD_BASE) / 4, value);
    else
        pglue_.bad_access(offset, reg::BAD_ACCESS_WRITE);
}

bool FunctionHw::decodes(uint32_t offset)
{
    if (offset & 3 || offset >= BAR0_SIZE)
        return false;
    if (offset < BAR0_IGU_CMD_BASE)
        return (offset - BAR0_PTT_ENTRY_BASE) / 4 < PTT_WINDOWS;
    if (offset < BAR0_WINDOW_BASE)
        return (offset - BAR0_IGU_CMD_BASE) / 4 < SB_COUNT;
    return true; /* the PTT windows (their GRC addresses are checked there) and the GTT */
}

void FunctionHw::reset()
{
    pglue_.reset();
    for (auto& entry : ptt_entries_)
        entry.store(0);
    for (auto& word : scratch)
        word.store(0);
    attention_.reset();
    cau_.reset();
    igu_.reset();
    clear_doorbells();
    if (channel_ != nullptr)
        std::memset(gtt_, 0, WINDOW_SIZE); /* a VF's page: its producers and statistics */
}

void FunctionHw::clear_doorbell(uint32_t cid) { clear_doorbell_slot(db_offset(cid)); }

void FunctionHw::clear_doorbell_slot(uint32_t offset)
{
    std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(doorbells_ + offset)).store(0);
}

void FunctionHw::clear_doorbells()
{
    for (uint32_t offset = 0; offset < doorbells_size_; offset += 8)
        clear_doorbell_slot(offset);
}

} // namespace cna::fw
