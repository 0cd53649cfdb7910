/* SPDX-License-Identifier: BSD-3-Clause
 * The IOV and DMAE blocks of one PF (hsi_iov.h): the VFs the PF enables,
 * each a PCI function of its own with its channel and its storm objects;
 * the events the adapter raises on the PF's EQ for them (a VF's request,
 * malice, a function level reset); and the DMAE that copies between the
 * PF's memory and a VF's, each through its own IOMMU.
 *
 * A VF is created the first time its PF enables it and lives as long as
 * the adapter: a host may keep its function, which answers nothing while
 * disabled. Its storm objects are forgotten with every engine thread held:
 * at once on an FLR or the PF's reset, and by the engine's next slowpath
 * (resets_pending / run_resets) when the VF is disabled or found malicious.
 * The VFs outlive their PF's driver when it unloads leaving them enabled
 * (unattend), and go with the PF's FLR or a new driver's IOV_NUM_VFS.
 */
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "hsi_iov.h"
#include "iov/vf_channel.h"
#include "iov/vf_firmware.h"
#include "function/function.h"

namespace cna::fw {

class StormRam;
class Storms;

class PfIov {
public:
    /* on_vf_created: a new VF's firmware, for the engines to serve;
     * on_vfs_changed: the number of enabled VFs did (slowpath lock held; the
     * engines may be running). */
    PfIov(FunctionHw& pf, RegisterSpace& grc, StormRam& ram, Storms& storms, PtpClock& clock, ServingEngines& engines,
          std::function<void(VfFirmware&)> on_vf_created, std::function<void()> on_vfs_changed);
    ~PfIov();

    /* GRC IOV and DMAE blocks (the PF's PTT windows, slowpath lock held). */
    bool read(uint32_t addr, uint32_t& value);
    bool write(uint32_t addr, uint32_t value);

    uint32_t num_vfs() const { return num_vfs_.load(std::memory_order_acquire); }
    /* An enabled VF's firmware, else nullptr. */
    FunctionHw* function(uint32_t vf);
    VfFirmware* firmware(uint32_t vf);

    /* Engine, slowpath lock held: events for the PF's EQ. post(event, vf,
     * data) returns false when the EQ has no room: the rest waits. */
    bool events_pending() const { return pending_.load(std::memory_order_acquire) != 0; }
    template <typename Post> void take_events(Post post);

    /* Every engine thread held: forget the objects of the VFs that were
     * disabled or found malicious since. */
    bool resets_pending() const { return resets_.load(std::memory_order_acquire) != 0; }
    void run_resets();
    /* Every engine thread held, slowpath lock held: a VF's function level
     * reset (its driver went away); its PF is told. */
    void function_level_reset(uint32_t vf);
    /* The PF's final cleanup ramrod after a VF's FLR (engine thread 0, every
     * other held): nothing of the VF left in the storms. */
    hsi::FwReturn final_cleanup(uint32_t vf);
    /* The MFW's ack of the PF's cleanup: the VF's FLR is over. False when
     * none was pending. */
    bool flr_done(uint32_t vf);
    /* The PF's driver unloaded (slowpath lock held): the VFs it left
     * enabled run on, their channels unattended until a PF's driver loads. */
    void unattend();
    /* The PF's FLR, every engine thread held: every VF disabled. */
    void reset();

private:
    struct Vf;
    /* A bit per VF in each, and the message address of each VF. */
    enum Pending : uint32_t { MESSAGE = 0, MALICE = hsi::iov::MAX_VFS_PER_PF, FLR = 2 * hsi::iov::MAX_VFS_PER_PF };
    static_assert(3 * hsi::iov::MAX_VFS_PER_PF <= 32);

    uint32_t dmae();
    void enable(uint32_t vf, bool on);
    void set_num_vfs(uint32_t n);
    void raise(Pending kind, uint32_t vf);
    /* A VF's channel or queues broke their protocol: its objects are to be
     * forgotten, its PF told. */
    void mark_malicious(uint32_t vf, hsi::iov::MaliciousWhy why, const char* what);

    FunctionHw& pf_;
    RegisterSpace& grc_;
    StormRam& ram_;
    Storms& storms_;
    PtpClock& clock_;
    ServingEngines& engines_;
    const std::function<void(VfFirmware&)> on_vf_created_;
    const std::function<void()> on_vfs_changed_;
    std::array<std::unique_ptr<Vf>, hsi::iov::MAX_VFS_PER_PF> vfs_;
    std::atomic<uint32_t> num_vfs_{0};
    uint32_t select_ = 0;
    std::atomic<uint32_t> malicious_{0};
    std::atomic<uint32_t> flr_pending_{0};
    std::atomic<uint32_t> pending_{0};  /* Pending bits */
    std::atomic<uint32_t> resets_{0};   /* a bit per VF */
    std::array<std::atomic<uint64_t>, hsi::iov::MAX_VFS_PER_PF> message_{};
    std::array<std::atomic<uint8_t>, hsi::iov::MAX_VFS_PER_PF> malice_why_{};
    struct Dmae {
        uint32_t src_lo = 0, src_hi = 0, dst_lo = 0, dst_hi = 0, len = 0, ctrl = 0;
        hsi::iov::DmaeStatus status = hsi::iov::DmaeStatus::done;
    } dmae_;
};

template <typename Post> void PfIov::take_events(Post post)
{
    using hsi::iov::IovEvent;
    for (uint32_t bits = pending_.load(std::memory_order_acquire); bits != 0; bits &= bits - 1) {
        const uint32_t bit = bits & -bits;
        const uint32_t index = static_cast<uint32_t>(__builtin_ctz(bit));
        const uint32_t vf = index % hsi::iov::MAX_VFS_PER_PF;
        bool posted = false;
        if (index < MALICE)
            posted = post(IovEvent::vf_message, vf, message_[vf].load(std::memory_order_acquire));
        else if (index < FLR)
            posted = post(IovEvent::vf_malicious, vf, malice_why_[vf].load(std::memory_order_relaxed));
        else
            posted = post(IovEvent::vf_flr, vf, 0);
        if (!posted)
            return;
        pending_.fetch_and(~bit, std::memory_order_acq_rel);
    }
}

} // namespace cna::fw
