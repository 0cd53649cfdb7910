/* SPDX-License-Identifier: BSD-3-Clause */
#include "iov/vf_channel.h"

#include <utility>

namespace cna::fw {

using hsi::iov::ChannelState;
namespace bar = hsi::iov::vf_bar0;

VfChannel::VfChannel(uint32_t vf, RequestEvent on_request, MaliciousEvent on_malicious)
    : vf_(vf), on_request_(std::move(on_request)), on_malicious_(std::move(on_malicious))
{
}

void VfChannel::enable(bool on)
{
    std::lock_guard guard(lock_);
    state_ = on ? ChannelState::idle : ChannelState::disabled;
    addr_lo_ = addr_hi_ = 0;
}

void VfChannel::unattend()
{
    std::lock_guard guard(lock_);
    if (state_ != ChannelState::disabled)
        state_ = ChannelState::unattended;
    addr_lo_ = addr_hi_ = 0;
}

uint32_t VfChannel::read(uint32_t offset) const
{
    std::lock_guard guard(lock_);
    switch (offset) {
    case bar::CHANNEL_REQ_ADDR_LO: return addr_lo_;
    case bar::CHANNEL_REQ_ADDR_HI: return addr_hi_;
    case bar::CHANNEL_STATE: return static_cast<uint32_t>(state_);
    default: return 0xffffffff; /* the trigger is write-only; the rest is no register */
    }
}

void VfChannel::write(uint32_t offset, uint32_t value)
{
    std::lock_guard guard(lock_);
    if (state_ == ChannelState::disabled || state_ == ChannelState::unattended)
        return; /* no PF's driver takes requests: writes go nowhere */
    switch (offset) {
    case bar::CHANNEL_REQ_ADDR_LO:
    case bar::CHANNEL_REQ_ADDR_HI:
        /* The PF has the pending request's address already: a new one
         * waits for the next trigger. */
        (offset == bar::CHANNEL_REQ_ADDR_LO ? addr_lo_ : addr_hi_) = value;
        return;
    case bar::CHANNEL_TRIGGER:
        if (value != 1)
            return;
        if (state_ == ChannelState::pending)
            return mark_malicious("triggered the channel while its request was pending");
        if (addr_lo_ == 0 && addr_hi_ == 0)
            return mark_malicious("triggered the channel without a request address");
        state_ = ChannelState::pending;
        on_request_(vf_, uint64_t{addr_hi_} << 32 | addr_lo_);
        return;
    default:
        return; /* read-only or no register */
    }
}

bool VfChannel::complete()
{
    std::lock_guard guard(lock_);
    if (state_ != ChannelState::pending)
        return false;
    state_ = ChannelState::idle;
    return true;
}

ChannelState VfChannel::state() const
{
    std::lock_guard guard(lock_);
    return state_;
}

void VfChannel::mark_malicious(const char* why)
{
    state_ = ChannelState::disabled;
    on_malicious_(vf_, why);
}

} // namespace cna::fw
