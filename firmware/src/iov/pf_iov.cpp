/* SPDX-License-Identifier: BSD-3-Clause */
#include "iov/pf_iov.h"

#include <bit>
#include <utility>

#include "base/log.h"

namespace cna::fw {

using namespace hsi;
using namespace hsi::reg;
using iov::DmaeStatus;
using iov::MAX_VFS_PER_PF;

struct PfIov::Vf {
    Vf(PfIov& iov, uint32_t vf)
        : channel(
              vf, [&iov](uint32_t v, uint64_t iova) {
                  iov.message_[v].store(iova, std::memory_order_release);
                  iov.raise(MESSAGE, v);
              },
              [&iov](uint32_t v, const char* why) { iov.mark_malicious(v, iov::MaliciousWhy::channel_misuse, why); }),
          hw(iov.pf_.pf_id(), vf, iov.pf_.port_id(), channel, iov.grc_, iov.engines_),
          firmware(hw, iov.ram_, iov.storms_, iov.clock_, [&iov](uint32_t v, const char* what) {
              iov.vfs_[v]->channel.enable(false);
              iov.mark_malicious(v, iov::MaliciousWhy::queue_error, what);
          })
    {
    }
    /* Engine thread 0, every other held: the storms forget the VF's objects
     * and its status blocks, interrupts and doorbells. */
    void forget_objects()
    {
        firmware.reset();
        hw.cau().reset();
        hw.igu().reset();
        hw.clear_doorbells();
    }
    /* Closed to its driver: channel, bus mastering and the rest of the
     * function as at power-on. */
    void disable()
    {
        enabled = false;
        channel.enable(false);
        firmware.reset();
        hw.reset();
    }
    VfChannel channel;
    FunctionHw hw;
    VfFirmware firmware;
    bool enabled = false;
};

PfIov::PfIov(FunctionHw& pf, RegisterSpace& grc, StormRam& ram, Storms& storms, PtpClock& clock,
             ServingEngines& engines, std::function<void(VfFirmware&)> on_vf_created,
             std::function<void()> on_vfs_changed)
    : pf_(pf), grc_(grc), ram_(ram), storms_(storms), clock_(clock), engines_(engines),
      on_vf_created_(std::move(on_vf_created)),
      on_vfs_changed_(std::move(on_vfs_changed))
{
}

PfIov::~PfIov() = default;

void PfIov::mark_malicious(uint32_t vf, iov::MaliciousWhy why, const char* what)
{
    log(LogLevel::warning, "iov: pf%u vf%u malicious: %s", pf_.pf_id(), vf, what);
    malice_why_[vf].store(static_cast<uint8_t>(why));
    malicious_.fetch_or(1u << vf);
    resets_.fetch_or(1u << vf, std::memory_order_release);
    raise(MALICE, vf);
}

void PfIov::raise(Pending kind, uint32_t vf)
{
    pending_.fetch_or(1u << (kind + vf), std::memory_order_release);
}

FunctionHw* PfIov::function(uint32_t vf)
{
    return vf < num_vfs_.load(std::memory_order_acquire) ? &vfs_[vf]->hw : nullptr;
}

VfFirmware* PfIov::firmware(uint32_t vf)
{
    return vf < num_vfs_.load(std::memory_order_acquire) ? &vfs_[vf]->firmware : nullptr;
}

bool PfIov::read(uint32_t addr, uint32_t& value)
{
    const bool selected = select_ < num_vfs_.load();
    if (addr >= IOV_VF_CAU_BASE && addr < IOV_VF_PAGE)
        return selected && vfs_[select_]->hw.cau().read(CAU_BASE + (addr - IOV_VF_CAU_BASE), value);
    if (addr >= IOV_VF_PAGE && addr < IOV_VF_PAGE + WINDOW_SIZE && addr % 4 == 0) {
        value = selected ? std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(
                               const_cast<uint8_t*>(vfs_[select_]->hw.gtt_memory()) + (addr - IOV_VF_PAGE)))
                               .load(std::memory_order_relaxed)
                         : REG_ALL_ONES;
        return true;
    }
    switch (addr) {
    case IOV_MAX_VFS: value = MAX_VFS_PER_PF; return true;
    case IOV_NUM_VFS: value = num_vfs_.load(); return true;
    case IOV_VF_SELECT: value = select_; return true;
    case IOV_VF_CTRL: value = selected && vfs_[select_]->enabled ? IOV_VF_CTRL_ENABLE : 0; return true;
    case IOV_MALICIOUS: value = malicious_.load(); return true;
    case IOV_FLR_PENDING: value = flr_pending_.load(); return true;
    case IOV_VF_CHANNEL_DONE: value = 0; return true;
    case DMAE_SRC_LO: value = dmae_.src_lo; return true;
    case DMAE_SRC_HI: value = dmae_.src_hi; return true;
    case DMAE_DST_LO: value = dmae_.dst_lo; return true;
    case DMAE_DST_HI: value = dmae_.dst_hi; return true;
    case DMAE_LEN: value = dmae_.len; return true;
    case DMAE_CTRL: value = dmae_.ctrl; return true;
    case DMAE_GO: value = 0; return true;
    case DMAE_STATUS: value = static_cast<uint32_t>(dmae_.status); return true;
    default: return false;
    }
}

bool PfIov::write(uint32_t addr, uint32_t value)
{
    const bool selected = select_ < num_vfs_.load();
    if (addr >= IOV_VF_CAU_BASE && addr < IOV_VF_PAGE)
        return !selected || vfs_[select_]->hw.cau().write(CAU_BASE + (addr - IOV_VF_CAU_BASE), value);
    if (addr >= IOV_VF_PAGE && addr < IOV_VF_PAGE + WINDOW_SIZE)
        return true; /* read-only */
    switch (addr) {
    case IOV_NUM_VFS:
        if (value <= MAX_VFS_PER_PF)
            set_num_vfs(value);
        return true;
    case IOV_VF_SELECT: select_ = value; return true;
    case IOV_VF_CTRL:
        if (selected)
            enable(select_, value & IOV_VF_CTRL_ENABLE);
        return true;
    case IOV_VF_CHANNEL_DONE:
        if (selected && value == 1)
            vfs_[select_]->channel.complete();
        return true;
    case DMAE_SRC_LO: dmae_.src_lo = value; return true;
    case DMAE_SRC_HI: dmae_.src_hi = value; return true;
    case DMAE_DST_LO: dmae_.dst_lo = value; return true;
    case DMAE_DST_HI: dmae_.dst_hi = value; return true;
    case DMAE_LEN: dmae_.len = value; return true;
    case DMAE_CTRL: dmae_.ctrl = value; return true;
    case DMAE_GO:
        if (value == 1)
            dmae_.status = static_cast<DmaeStatus>(dmae());
        return true;
    case IOV_MAX_VFS:
    case IOV_MALICIOUS:
    case IOV_FLR_PENDING:
    case DMAE_STATUS: return true; /* read-only */
    default: return false;
    }
}

uint32_t PfIov::dmae()
{
    const uint32_t vf = (dmae_.ctrl >> DMAE_CTRL_VF_SHIFT) & 0xff;
    const bool src_vf = dmae_.ctrl & DMAE_CTRL_SRC_VF;
    const bool dst_vf = dmae_.ctrl & DMAE_CTRL_DST_VF;
    if (dmae_.len == 0 || dmae_.len > DMAE_MAX_LEN || ((src_vf || dst_vf) && function(vf) == nullptr))
        return static_cast<uint32_t>(DmaeStatus::bad_request);
    FunctionHw& src = src_vf ? vfs_[vf]->hw : pf_;
    FunctionHw& dst = dst_vf ? vfs_[vf]->hw : pf_;
    std::array<uint8_t, DMAE_MAX_LEN> bounce;
    const uint64_t src_iova = uint64_t{dmae_.src_hi} << 32 | dmae_.src_lo;
    const uint64_t dst_iova = uint64_t{dmae_.dst_hi} << 32 | dmae_.dst_lo;
    if (!src.pglue().master_enabled() || !src.iommu().copy_out(src_iova, bounce.data(), dmae_.len))
        return static_cast<uint32_t>(DmaeStatus::src_fault);
    if (!dst.pglue().master_enabled() || !dst.iommu().copy_in(dst_iova, bounce.data(), dmae_.len))
        return static_cast<uint32_t>(DmaeStatus::dst_fault);
    return static_cast<uint32_t>(DmaeStatus::done);
}

void PfIov::set_num_vfs(uint32_t n)
{
    for (uint32_t vf = 0; vf < n; vf++) {
        if (vfs_[vf] != nullptr)
            continue;
        vfs_[vf] = std::make_unique<Vf>(*this, vf);
        if (!vfs_[vf]->hw.valid()) {
            log(LogLevel::err, "iov: pf%u vf%u: out of memory or eventfds", pf_.pf_id(), vf);
            vfs_[vf].reset();
            n = vf;
            break;
        }
        on_vf_created_(vfs_[vf]->firmware);
    }
    for (uint32_t vf = n; vf < num_vfs_.load(); vf++)
        enable(vf, false);
    /* A VF no longer enabled has nothing pending: what an FLR or malice
     * left for a PF's driver went with it. */
    const uint32_t gone = ((1u << MAX_VFS_PER_PF) - 1) & ~((1u << n) - 1);
    pending_.fetch_and(~(gone << MESSAGE | gone << MALICE | gone << FLR));
    flr_pending_.fetch_and(~gone);
    malicious_.fetch_and(~gone);
    num_vfs_.store(n, std::memory_order_release);
    on_vfs_changed_();
    log(LogLevel::info, "iov: pf%u has %u VF(s)", pf_.pf_id(), n);
}

void PfIov::enable(uint32_t vf, bool on)
{
    Vf& v = *vfs_[vf];
    if (on && (flr_pending_.load() & 1u << vf)) {
        log(LogLevel::warning, "iov: pf%u vf%u: enabled before its FLR was cleaned up: stays disabled",
            pf_.pf_id(), vf);
        return;
    }
    if (!on && v.enabled) {
        /* Its objects are forgotten on the engine before the PF hears of
         * the VF again: any message it sends goes through the slowpath. */
        resets_.fetch_or(1u << vf, std::memory_order_release);
        pending_.fetch_and(~(1u << (MESSAGE + vf)));
    }
    v.enabled = on;
    v.channel.enable(on);
    v.hw.pglue().write(PGLUE_PF_MASTER_ENABLE, on ? 1 : 0);
    if (on)
        malicious_.fetch_and(~(1u << vf));
}

void PfIov::run_resets()
{
    for (uint32_t bits = resets_.exchange(0, std::memory_order_acq_rel); bits != 0; bits &= bits - 1)
        vfs_[std::countr_zero(bits)]->forget_objects();
}

void PfIov::function_level_reset(uint32_t vf)
{
    if (function(vf) == nullptr)
        return;
    vfs_[vf]->disable();
    pending_.fetch_and(~(1u << (MESSAGE + vf)));
    flr_pending_.fetch_or(1u << vf);
    raise(FLR, vf);
    log(LogLevel::notice, "iov: pf%u vf%u function level reset", pf_.pf_id(), vf);
}

FwReturn PfIov::final_cleanup(uint32_t vf)
{
    if (vf >= MAX_VFS_PER_PF)
        return FwReturn::invalid_param;
    if (function(vf) == nullptr || !(flr_pending_.load() & 1u << vf))
        return FwReturn::bad_state;
    vfs_[vf]->forget_objects();
    return FwReturn::ok;
}

bool PfIov::flr_done(uint32_t vf)
{
    const uint32_t bit = vf < MAX_VFS_PER_PF ? 1u << vf : 0;
    return bit != 0 && (flr_pending_.fetch_and(~bit) & bit) != 0;
}

void PfIov::unattend()
{
    for (uint32_t vf = 0; vf < num_vfs_.load(); vf++)
        vfs_[vf]->channel.unattend();
    const uint32_t all = (1u << MAX_VFS_PER_PF) - 1;
    pending_.fetch_and(~(all << MESSAGE));
    if (num_vfs_.load() != 0)
        log(LogLevel::notice, "iov: pf%u unloaded with %u VF(s) enabled: they run on, their channels unattended",
            pf_.pf_id(), num_vfs_.load());
}

void PfIov::reset()
{
    /* Every VF ever created: one disabled since may not be reset yet. */
    for (const auto& vf : vfs_)
        if (vf != nullptr)
            vf->disable();
    num_vfs_.store(0, std::memory_order_release);
    on_vfs_changed_();
    pending_.store(0);
    resets_.store(0);
    malicious_.store(0);
    flr_pending_.store(0);
    select_ = 0;
    dmae_ = Dmae{};
}

} // namespace cna::fw
