/* SPDX-License-Identifier: BSD-3-Clause */
#include "mfw/link.h"

#include <bit>

#include "wire/nig.h"
#include "wire/tap.h"

namespace cna::fw {

using namespace hsi::mfw;

Link::Link(Nig& nig, Shmem& shmem, std::chrono::milliseconds up_delay, ChangeHandler on_change)
    : nig_(nig), shmem_(shmem), up_delay_(up_delay), on_change_(std::move(on_change)), phys_(nig.port_count())
{
}

void Link::init_phy(uint32_t port, const DrvPhyCfg& cfg)
{
    phys_[port].enabled = true;
    phys_[port].cfg = cfg;
    nig_.port(port).mac_loopback.store(cfg.loopback_mode != 0);
    need_eval_.store(true);
}

bool Link::up(uint32_t port) const { return nig_.port(port).link_up.load(); }

void Link::reset_phy(uint32_t port)
{
    phys_[port].enabled = false;
    phys_[port].negotiating = false;
    nig_.port(port).mac_loopback.store(false);
    /* Down before the MFW answers: a driver that reads the link after its
     * reset is acknowledged never finds it up from before. */
    if (nig_.port(port).link_up.load())
        set_link(port, LinkSpeed::none);
    need_eval_.store(true);
}

uint32_t Link::offered_speeds(uint32_t port) const
{
    uint32_t caps = shmem_.port[port].speed_capabilities;
    const DrvPhyCfg& cfg = phys_[port].cfg;
    if (cfg.forced_speed != static_cast<uint32_t>(LinkSpeed::none))
        return cfg.forced_speed <= static_cast<uint32_t>(LinkSpeed::s100g)
                   ? caps & speed_cap(static_cast<LinkSpeed>(cfg.forced_speed))
                   : 0;
    return cfg.adv_speeds != 0 ? caps & cfg.adv_speeds : caps;
}

LinkSpeed Link::resolve(uint32_t port) const
{
    const Port& self = nig_.port(port);
    if (!phys_[port].enabled)
        return LinkSpeed::none;
    uint32_t common = offered_speeds(port);
    if (!self.mac_loopback.load()) {
        if (!self.carrier.load())
            return LinkSpeed::none; /* cable or loopback plug pulled out */
        /* The kernel behind a TAP is always there and takes any speed. */
        const Port* partner = self.tap() != nullptr ? &self : self.wire_peer();
        if (partner != &self) {
            if (partner == nullptr || !phys_[partner->id()].enabled || !partner->carrier.load())
                return LinkSpeed::none;
            common &= offered_speeds(partner->id());
        }
    }
    if (common == 0)
        return LinkSpeed::none;
    return static_cast<LinkSpeed>(31 - std::countl_zero(common));
}

void Link::poll(Clock::time_point now)
{
    need_eval_.store(false);
    bool negotiating = false;
    for (uint32_t port = 0; port < phys_.size(); port++) {
        Phy& phy = phys_[port];
        LinkSpeed speed = resolve(port);
        bool up = nig_.port(port).link_up.load();
        if (up && speed != phy.speed) {
            set_link(port, LinkSpeed::none);
            up = false;
        }
        if (speed == LinkSpeed::none) {
            phy.negotiating = false;
            continue;
        }
        if (up)
            continue;
        if (!phy.negotiating) {
            phy.negotiating = true;
            phy.up_at = now + up_delay_;
        }
        if (now >= phy.up_at) {
            phy.negotiating = false;
            set_link(port, speed);
        } else {
            negotiating = true;
        }
    }
    if (negotiating)
        need_eval_.store(true);
}

void Link::set_link(uint32_t port, LinkSpeed speed)
{
    Phy& phy = phys_[port];
    phy.speed = speed;
    uint32_t status = 0;
    if (speed != LinkSpeed::none) {
        status = LINK_STATUS_LINK_UP | static_cast<uint32_t>(speed) << LINK_STATUS_SPEED_SHIFT |
                 LINK_STATUS_FULL_DUPLEX | LINK_STATUS_PARTNER_DETECTED;
        if (phy.cfg.forced_speed == static_cast<uint32_t>(LinkSpeed::none))
            status |= LINK_STATUS_AUTONEG_ENABLED | LINK_STATUS_AUTONEG_COMPLETE;
        if (phy.cfg.pause & PHY_PAUSE_RX)
            status |= LINK_STATUS_RX_PAUSE;
        if (phy.cfg.pause & PHY_PAUSE_TX)
            status |= LINK_STATUS_TX_PAUSE;
        shmem_.port[port].default_speed = static_cast<uint32_t>(speed);
    }
    Port& p = nig_.port(port);
    p.link_up.store(speed != LinkSpeed::none);
    if (TapWire* tap = p.tap())
        tap->set_carrier(speed != LinkSpeed::none);
    p.count_link_change();
    shmem_.port[port].link_status = status;
    shmem_.port[port].link_change_count++;
    on_change_(port);
}

} // namespace cna::fw
