/* SPDX-License-Identifier: BSD-3-Clause
 * The VF-PF channel's hardware end (hsi_iov.h, the ecore guide's "HW
 * channel"): a VF's channel registers in its BAR0 and the one-pending rule.
 *
 * The VF writes its request's address and then the trigger; the channel
 * raises the PF's event once per request and reads `pending` until the PF
 * says it is done. A VF that triggers again while its request is pending, or
 * triggers with no address, is malicious: the channel disables itself and
 * reports it, and only the PF (enable after the VF's FLR) opens it again.
 * A PF whose driver unloads leaving the VF enabled leaves the channel
 * unattended: triggers go nowhere, the VF's queues run on.
 * The PF's side (copying the request, writing the reply) is DMA through the
 * VF's IOMMU domain, not the channel's business.
 */
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include "function/function.h"
#include "hsi_iov.h"

namespace cna::fw {

class VfChannel final : public ChannelRegisters {
public:
    /* Called with the channel's lock held: must not call back into it. */
    using RequestEvent = std::function<void(uint32_t vf, uint64_t request_iova)>;
    using MaliciousEvent = std::function<void(uint32_t vf, const char* why)>;

    VfChannel(uint32_t vf, RequestEvent on_request, MaliciousEvent on_malicious);

    /* The PF opens the channel (iov_init_hw_for_vf) or closes it
     * (iov_release_hw_for_vf, FLR): closing forgets a pending request. */
    void enable(bool on);
    /* The PF's driver unloaded with the VF enabled: a pending request is
     * forgotten, and the channel takes none until enable() (an open channel
     * only; a closed one stays closed). */
    void unattend();

    /* The VF's BAR0 accesses at hsi::iov::vf_bar0 offsets of the channel. */
    uint32_t read(uint32_t offset) const override;
    void write(uint32_t offset, uint32_t value) override;

    /* The PF is done with the pending request: the VF may trigger again.
     * false (and nothing changes) when none was pending. */
    bool complete();

    hsi::iov::ChannelState state() const;

private:
    void mark_malicious(const char* why);

    const uint32_t vf_;
    RequestEvent on_request_;
    MaliciousEvent on_malicious_;
    mutable std::mutex lock_;
    hsi::iov::ChannelState state_ = hsi::iov::ChannelState::disabled;
    uint32_t addr_lo_ = 0;
    uint32_t addr_hi_ = 0;
};

} // namespace cna::fw
