/* SPDX-License-Identifier: BSD-3-Clause
 * The port's side of its functions: which engine a frame from the wire
 * goes to (RoCEv2 or L2), and the switch between the port's functions.
 */
#pragma once

#include <span>

#include "base/clock.h"
#include "frame/frame_burst.h"
#include "l2/rx.h"
#include "wire/port.h"

namespace cna::fw {

class FunctionList;
class Storms;
namespace roce {
class RoceFirmware;
class RoceList;
}

/* What a port does with the frames its wire delivers, on the Rx engine of
 * the pass that delivers them: they go to the functions on the port while
 * the storms run — RoCEv2 to the RoCE firmware of the function whose RDMA
 * MAC they are sent to, the rest to L2. RoCEv2 one function of the port sends
 * to another's RDMA MAC reaches it without leaving the adapter. Once a PF
 * of the port has VFs, it is also the port's L2 switch (a VEB): frames a
 * function sends to another function of the port reach it the same way. */
class PortSwitch final : public FrameReceiver, public LocalSwitch {
public:
    PortSwitch(const roce::RoceList& roce, const FunctionList& functions, const Storms& storms,
               PassClock& clock)
        : roce_(roce), functions_(functions), storms_(storms), clock_(clock)
    {
    }
    void receive(const FrameBurst& burst, RxEngine& rx) override;
    const FrameBurst& switch_frames(const FrameBurst& sent, const void* source, FrameBurst& uplink,
                                    RxEngine& rx) override;
    /* Engine: the RoCE frames `source` sent. Those for another RoCE
     * firmware of the port are handed to it; returns those for the wire
     * (`sent` itself, or `uplink` filled). */
    const FrameBurst& switch_roce(const FrameBurst& sent, const roce::RoceFirmware& source, FrameBurst& uplink);

private:
    /* The RoCE firmware a RoCEv2 frame is for, nullptr for L2. */
    roce::RoceFirmware* roce_owner(const WireFrame& f) const;
    /* Whether a unicast frame is for a function of the port other than its
     * sender: one of its active vports has its destination as a MAC filter. */
    bool addressed_here(const WireFrame& f, const void* source) const;
    /* Whether some of the frame goes to the port's functions. */
    bool switched(const WireFrame& f, const void* source) const;

    const roce::RoceList& roce_; /* of the port's functions */
    const FunctionList& functions_;
    const Storms& storms_;
    PassClock& clock_; /* the port group's dataplane's */
    FrameBurst l2_;    /* a burst's L2 frames, when some were RoCE */
    FrameBurst local_; /* a sent burst's frames for the port's functions */
};

} // namespace cna::fw
